"""``tf.train.MonitoredTrainingSession`` for a converted program, with TF 1.15's semantics.

A TF1 program trained with a monitored session::

    with tf.train.MonitoredTrainingSession(checkpoint_dir=d, hooks=[...]) as mon_sess:
        while not mon_sess.should_stop():
            mon_sess.run(train_op)

becomes, once TFM501 has moved its graph into a build function run by a
:class:`shims.GraphProgram`::

    with shims.MonitoredTrainingSession(program, checkpoint_dir=d, hooks=[...]) as mon_sess:
        while not mon_sess.should_stop():
            mon_sess.run("train_op")

As TF 1.15's chief session: entering restores the latest checkpoint in ``checkpoint_dir``
(else the variables keep their initial values) and saves the starting state; the chief's
checkpoint saver runs before the program's hooks (every ``save_checkpoint_secs``, 600 by
default, or ``save_checkpoint_steps``), then the hooks in the order given
(``chief_only_hooks`` first); a hook's ``request_stop()`` makes ``should_stop()`` true;
leaving the block ends the hooks and saves the last step. Hooks follow
``shims.estimator``'s protocol (fetches by graph name; there is no Session, so
``after_create_session`` and ``end`` get ``None``). Checkpoints are TF1 name-based.
"""
from __future__ import annotations

from typing import Any, Optional

import tensorflow as tf

from shims._saving import CheckpointSaver
from shims.estimator.hooks import SessionRunContext, SessionRunValues, check_hook, fetch_names

_DEFAULT = object()  # TF1's USE_DEFAULT
STEP_AFTER = "global_step_after"  # shims.estimator's name for the step a run reached

__all__ = ["MonitoredTrainingSession"]


class MonitoredTrainingSession:
    """A chief monitored session over a GraphProgram (a context manager, as in TF1)."""

    def __init__(self, program, master="", is_chief=True, checkpoint_dir=None, scaffold=None,
                 hooks=None, chief_only_hooks=None, save_checkpoint_secs=_DEFAULT,
                 save_summaries_steps=_DEFAULT, save_summaries_secs=_DEFAULT, config=None,
                 stop_grace_period_secs=120, log_step_count_steps=100, max_wait_secs=7200,
                 save_checkpoint_steps=_DEFAULT, summary_dir=None):
        if not is_chief:
            raise NotImplementedError("shims.MonitoredTrainingSession runs the chief only (one "
                                      "process); distributed workers are not supported")
        if scaffold is not None:
            raise NotImplementedError("shims.MonitoredTrainingSession: a Scaffold is not supported")
        if save_checkpoint_steps is _DEFAULT and save_checkpoint_secs is _DEFAULT:
            save_checkpoint_steps, save_checkpoint_secs = None, 600
        elif save_checkpoint_secs is _DEFAULT:
            save_checkpoint_secs = None
        elif save_checkpoint_steps is _DEFAULT:
            save_checkpoint_steps = None
        self._program = program
        self._checkpoint_dir = checkpoint_dir
        self._schedule = (save_checkpoint_steps, save_checkpoint_secs)
        self._hooks = [*(chief_only_hooks or ()), *(hooks or ())]
        self._context = SessionRunContext()
        self._closed = False
        self._saver: Optional[CheckpointSaver] = None  # TF1's chief CheckpointSaverHook
        self._start()

    # -- the session's life -------------------------------------------------------------
    def _start(self) -> None:
        program = self._program
        for hook in self._hooks:
            check_hook(hook, "shims.MonitoredTrainingSession")
            hook.begin()
        program.function((), tuple(program._state.specs))  # builds the graph: every variable
        saving = bool(self._checkpoint_dir and any(self._schedule))
        if saving and self._global_step() is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        if self._checkpoint_dir:
            latest = tf.train.latest_checkpoint(self._checkpoint_dir)
            if latest is not None:
                program.restore(latest)
        for hook in self._hooks:
            hook.after_create_session(None, None)
        if saving:  # it saves the state the run starts from
            self._saver = CheckpointSaver(program, self._checkpoint_dir, self._global_step(),
                                          *self._schedule)

    def _global_step(self) -> Optional[int]:
        try:
            return int(self._program.variable("global_step").numpy())
        except KeyError:
            return None

    # -- what programs call --------------------------------------------------------------
    def run(self, fetches, /, **feeds):
        """One step: the hooks' before_run, the run, the checkpoint schedule, their after_run."""
        if self._closed:
            raise RuntimeError("Run called on a closed MonitoredTrainingSession")
        requests = [hook.before_run(self._context) for hook in self._hooks]
        asked = {str(i): fetch_names(r.fetches) for i, r in enumerate(requests) if r is not None}
        # the global step the run reached (StopAtStepHook's fetch) is read after the run
        after = {i: r for i, r in asked.items() if r == STEP_AFTER}
        asked = {i: r for i, r in asked.items() if i not in after}
        out: Any = self._program.run({"fetches": fetches, "hooks": asked} if asked else
                                     {"fetches": fetches}, **feeds)
        results = dict(out.get("hooks", {}))
        if after:
            step = self._global_step()
            results.update({i: step for i in after})
        if self._saver is not None:  # TF1's chief saver hook comes before the program's hooks
            self._saver.after_step(self._global_step())
        for i, hook in enumerate(self._hooks):
            hook.after_run(self._context, SessionRunValues(results.get(str(i)), None, None))
        return out["fetches"]

    def should_stop(self) -> bool:
        return self._context.stop_requested or self._closed

    def close(self) -> None:
        """Ends the hooks, the chief's saver first (the last step's checkpoint), as TF1."""
        if self._closed:
            return
        self._closed = True
        if self._saver is not None:
            self._saver.end(self._global_step())
        for hook in self._hooks:
            hook.end(None)

    def __enter__(self) -> "MonitoredTrainingSession":
        return self

    def __exit__(self, kind, value, traceback) -> bool:
        if kind is None or issubclass(kind, tf.errors.OutOfRangeError):
            self.close()
            return kind is not None  # the input ran out: TF1 ends the block quietly
        self._closed = True  # an error: no final checkpoint, as TF1's close on error
        return False
