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
``after_create_session`` and ``end`` get a ``ProgramSession`` whose ``run`` runs graph
values of the program). Checkpoints are TF1 name-based; the program's summary writers
are flushed when the session closes.

A ``scaffold`` (a ``tf.train.Scaffold``, or the name the build function returned it under)
gives the session its ``init_fn``, run when nothing was restored (after the variables took
their initial values, as TF1's session manager ran it), and its saver's ``max_to_keep``;
its other fields (``init_op``, ``summary_op``, ...) are one clear error.

A worker of a synchronous cluster program (``GraphProgram.on_workers``: every worker runs
the program on ``MultiWorkerMirroredStrategy``) may be ``is_chief=False``, as in TF1: it
restores like the chief, then every worker takes the chief's values of the variables; it
writes no checkpoint and runs no ``chief_only_hooks``. A worker lost mid-step stops the
others with one ``RuntimeError`` naming the checkpoint the job resumes from.
"""
from __future__ import annotations

import contextlib
import os
import time
from typing import Any, Optional

import tensorflow as tf

from shims import _coordinated, _replicas
from shims._saving import CheckpointSaver
from shims.estimator.hooks import (ChiefSessionCreator, HookRunner, check_hook, check_scaffold,
                                   scaffold_init, scaffold_keep)

_DEFAULT = object()  # TF1's USE_DEFAULT
STEP_AFTER = "global_step_after"  # shims.estimator's name for the step a run reached

__all__ = ["MonitoredSession", "MonitoredTrainingSession", "SingularMonitoredSession", "Supervisor"]


class MonitoredTrainingSession:
    """A chief monitored session over a GraphProgram (a context manager, as in TF1)."""

    def __init__(self, program, master="", is_chief=True, checkpoint_dir=None, scaffold=None,
                 hooks=None, chief_only_hooks=None, save_checkpoint_secs=_DEFAULT,
                 save_summaries_steps=_DEFAULT, save_summaries_secs=_DEFAULT, config=None,
                 stop_grace_period_secs=120, log_step_count_steps=100, max_wait_secs=7200,
                 save_checkpoint_steps=_DEFAULT, summary_dir=None):
        if not is_chief and getattr(program, "workers", None) is None:
            raise NotImplementedError("shims.MonitoredTrainingSession runs the chief only (one "
                                      "process); distributed workers are not supported")
        if save_checkpoint_steps is _DEFAULT and save_checkpoint_secs is _DEFAULT:
            save_checkpoint_steps, save_checkpoint_secs = None, 600
        elif save_checkpoint_secs is _DEFAULT:
            save_checkpoint_secs = None
        elif save_checkpoint_steps is _DEFAULT:
            save_checkpoint_steps = None
        self._program = program
        # a worker of a synchronous cluster program (GraphProgram.on_workers) that is not the
        # chief restores as the chief does but writes nothing and runs no chief-only hooks, as TF1
        self._chief = bool(is_chief)
        if not is_chief:
            chief_only_hooks = ()
        self._scaffold = scaffold  # a tf.train.Scaffold, or the name build returned it under
        self._checkpoint_dir = checkpoint_dir
        self._schedule = (save_checkpoint_steps, save_checkpoint_secs)
        self._hooks = HookRunner(program, [*(chief_only_hooks or ()), *(hooks or ())])
        self._closed = False
        self._saver: Optional[CheckpointSaver] = None  # TF1's chief CheckpointSaverHook
        self._start()

    # -- the session's life -------------------------------------------------------------
    def _start(self) -> None:
        program = self._program
        for hook in self._hooks.hooks:
            check_hook(hook, "shims.MonitoredTrainingSession")
            hook.begin()
        program.function((), tuple(program._state.specs))  # builds the graph: every variable
        scaffold = program.build_value(self._scaffold) if isinstance(self._scaffold, str) \
            else self._scaffold
        check_scaffold(scaffold, type(self).__name__)
        saving = bool(self._checkpoint_dir and any(self._schedule)) and self._chief
        if saving and self._global_step() is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        latest = self._restore_from()
        if latest is not None:
            program.restore(latest)
        else:  # TF1's session manager: the scaffold's init_fn when nothing was restored
            scaffold_init(scaffold, program)
        if getattr(program, "workers", None) is not None:  # the chief's values are every worker's
            _replicas.from_chief(program)
        self._hooks.after_create_session()
        if saving:  # it saves the state the run starts from, with the scaffold's saver's max_to_keep
            self._saver = CheckpointSaver(program, self._checkpoint_dir, self._global_step(),
                                          *self._schedule, scaffold_keep(scaffold, 5))

    def _restore_from(self) -> Optional[str]:
        return tf.train.latest_checkpoint(self._checkpoint_dir) if self._checkpoint_dir else None

    def _global_step(self) -> Optional[int]:
        return _global_step(self._program)

    # -- what programs call --------------------------------------------------------------
    def run(self, fetches, /, **feeds):
        """One step: the hooks' before_run, the run, the checkpoint schedule, their after_run."""
        if self._closed:
            raise RuntimeError("Run called on a closed MonitoredTrainingSession")
        asked = self._hooks.before_run()
        # the global step the run reached (StopAtStepHook's fetch) is read after the run
        after = {i: r for i, r in asked.items() if r == STEP_AFTER}
        asked = {i: r for i, r in asked.items() if i not in after}
        try:
            out: Any = self._program.run({"fetches": fetches, "hooks": asked} if asked else
                                         {"fetches": fetches}, **feeds)
            results = dict(out.get("hooks", {}))
            if after:
                step = self._global_step()
                results.update({i: step for i in after})
            if self._saver is not None:  # TF1's chief saver hook comes before the program's hooks
                self._saver.after_step(self._global_step())
        except _replicas.LOST_WORKER_ERRORS as error:
            lost = self._lost(error)
            if lost is None:
                raise
            self._closed = True  # no final checkpoint: the others may be mid-step
            raise lost from None
        self._hooks.after_run(results)
        return out["fetches"]

    def _lost(self, error) -> Optional[RuntimeError]:
        """The error a cluster's lost task gives (see ``_replicas.worker_lost`` and
        ``_coordinated.server_lost``), or None for a program on one process."""
        program, runner = self._program, "shims.MonitoredTrainingSession"
        if program.parameter_servers is not None:
            if not _coordinated.parameter_server_failure(error):
                return None  # (a lost worker's steps go to the others: not this)
            return _coordinated.server_lost(error, program.parameter_servers, self._checkpoint_dir, runner)
        if program.strategy is None or _replicas.workers(program.strategy) == 1:
            return None
        writes = bool(getattr(program.strategy.extended, "should_checkpoint", True))
        return _replicas.worker_lost(error, self._checkpoint_dir, runner, writes_checkpoints=writes)

    def should_stop(self) -> bool:
        return self._hooks.context.stop_requested or self._closed

    def close(self) -> None:
        """Ends the hooks, the chief's saver first (the last step's checkpoint), as TF1."""
        if self._closed:
            return
        self._closed = True
        if self._saver is not None:
            self._saver.end(self._global_step())
        self._hooks.end()
        self._program.flush_summary_writers()

    def __enter__(self) -> "MonitoredTrainingSession":
        return self

    def __exit__(self, kind, value, traceback) -> bool:
        if kind is None or issubclass(kind, tf.errors.OutOfRangeError):
            self.close()
            return kind is not None  # the input ran out: TF1 ends the block quietly
        self._closed = True  # an error: no final checkpoint, as TF1's close on error
        return False


def _global_step(program) -> Optional[int]:
    try:
        return int(program.variable("global_step").numpy())
    except KeyError:
        return None


class SingularMonitoredSession(MonitoredTrainingSession):
    """``tf.train.SingularMonitoredSession`` over a GraphProgram: it restores the latest
    checkpoint in ``checkpoint_dir`` (or ``checkpoint_filename_with_path``) and runs the
    hooks; unlike ``MonitoredTrainingSession`` it saves nothing (TF1 added no saver)."""

    def __init__(self, program, hooks=None, scaffold=None, master="", config=None,
                 checkpoint_dir=None, stop_grace_period_secs=120,
                 checkpoint_filename_with_path=None):
        self._checkpoint_path = checkpoint_filename_with_path
        super().__init__(program, checkpoint_dir=checkpoint_dir, scaffold=scaffold, hooks=hooks,
                         save_checkpoint_secs=None, save_checkpoint_steps=None)

    def _restore_from(self) -> Optional[str]:
        return self._checkpoint_path or super()._restore_from()


class MonitoredSession(SingularMonitoredSession):
    """``tf.train.MonitoredSession(session_creator=ChiefSessionCreator(...), hooks=...)``
    over a GraphProgram: it restores what the creator names (``checkpoint_filename_with_path``,
    else the latest checkpoint in ``checkpoint_dir``), runs the hooks and, as in TF1 (no
    default hooks), saves nothing. A ``WorkerSessionCreator`` waits for a chief in another
    process: one clear error."""

    def __init__(self, program, session_creator=None, hooks=None, stop_grace_period_secs=120):
        creator = ChiefSessionCreator() if session_creator is None else session_creator
        if not isinstance(creator, ChiefSessionCreator):
            raise NotImplementedError(
                f"shims.MonitoredSession: session_creator={type(creator).__name__} is not "
                "supported; one process is its own chief (shims.estimator.ChiefSessionCreator)")
        super().__init__(program, hooks=hooks, scaffold=creator.scaffold,
                         checkpoint_dir=creator.checkpoint_dir,
                         checkpoint_filename_with_path=creator.checkpoint_filename_with_path)


class _SupervisorSaver:
    """``sv.saver``: TF1 name-based checkpoints of the program (``save(sess, path, step)``)."""

    def __init__(self, program, max_to_keep: int = 5) -> None:
        self._program = program
        self._max_to_keep = max_to_keep  # the Saver the TF1 program gave the supervisor

    def save(self, sess, save_path, global_step=None, **kwargs):
        return self._program.save(save_path, global_step=global_step, max_to_keep=self._max_to_keep)

    def restore(self, sess, save_path) -> None:
        self._program.restore(save_path)


class _SupervisedSession:
    """What ``sv.managed_session()`` gives: runs the program, saving on the supervisor's
    schedule (TF1's checkpoint thread, here between steps)."""

    def __init__(self, supervisor: "Supervisor") -> None:
        self._supervisor = supervisor

    def run(self, fetches, /, **feeds):
        out = self._supervisor._program.run(fetches, **feeds)
        self._supervisor._after_step()
        return out

    def close(self) -> None:
        self._supervisor._program.flush_summary_writers()


class Supervisor:
    """``tf.train.Supervisor`` (the chief) over a GraphProgram, with TF 1.15's semantics:
    ``managed_session()`` restores the latest checkpoint in ``logdir`` (else the variables
    keep their initial values); with a ``logdir`` and ``save_model_secs`` (600 by default)
    it saves ``<logdir>/<checkpoint_basename>-<global step>`` when the session starts and
    then every ``save_model_secs`` (TF1's checkpoint thread; here between steps), and
    nothing when it stops. An exception in the block stops the supervisor and is raised
    again, except ``OutOfRangeError``, which ends the block quietly (TF1's Coordinator).
    ``sv.saver.save(sess, path, global_step=sv.global_step)`` saves the program. Summary
    threads, ``graph.pbtxt`` and event files are not written (a ``summary_op`` is taken
    and not run). What TFM501 gives it for the TF1 program's graph values: ``global_step``
    by graph name, ``max_to_keep`` for the program's ``saver``; the ``init_op`` goes (the
    variables start from their initializers, as TF1's init_op set them)."""

    def __init__(self, program, graph=None, ready_op=_DEFAULT, is_chief=True, init_op=_DEFAULT,
                 init_feed_dict=None, local_init_op=_DEFAULT, logdir=None, summary_op=_DEFAULT,
                 saver=_DEFAULT, global_step=_DEFAULT, save_summaries_secs=120, save_model_secs=600,
                 recovery_wait_secs=30, stop_grace_secs=120, checkpoint_basename="model.ckpt",
                 session_manager=None, summary_writer=_DEFAULT, init_fn=None,
                 local_init_run_options=None, max_to_keep=5):
        if not is_chief:
            raise NotImplementedError("shims.Supervisor runs the chief only (one process)")
        if init_fn is not None:
            raise NotImplementedError("shims.Supervisor: an init_fn (it is given a TF1 Session) is "
                                      "not supported; restore in the program instead")
        for name, given in (("ready_op", ready_op), ("local_init_op", local_init_op)):
            if given is not _DEFAULT:
                raise NotImplementedError(f"shims.Supervisor: {name} is not supported (the program's "
                                          "variables are ready once it is built)")
        self._program = program
        self._logdir = logdir
        self._save_model_secs = save_model_secs
        # the step the checkpoints are numbered by: the program's variable of that graph name
        self._step_name = global_step if isinstance(global_step, str) else None
        self.save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
        self.saver = _SupervisorSaver(program, max_to_keep) if saver is not None else None
        self.coord = tf.train.Coordinator(clean_stop_exception_types=(tf.errors.OutOfRangeError,))
        self._last_save: Optional[float] = None

    @property
    def global_step(self) -> Optional[int]:
        """The program's global step (TF1 gave its tensor; savers read its value)."""
        if self._step_name is not None:
            return int(self._program.run(self._step_name))
        return _global_step(self._program)

    @property
    def is_chief(self) -> bool:
        return True

    def should_stop(self) -> bool:
        return self.coord.should_stop()

    def request_stop(self, ex=None) -> None:
        self.coord.request_stop(ex)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False) -> None:
        self.coord.request_stop()
        self.coord.join(threads or [], stop_grace_period_secs=0)

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        program = self._program
        program.function((), tuple(program._state.specs))  # builds the graph: every variable
        latest = tf.train.latest_checkpoint(self._logdir) if self._logdir else None
        if latest is not None:
            program.restore(latest)
        if start_standard_services and self.save_path and self.saver and self._save_model_secs:
            self._save()
        return _SupervisedSession(self)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        try:
            yield self.prepare_or_wait_for_session(master, config,
                                                   start_standard_services=start_standard_services)
        except Exception as exc:  # noqa: BLE001 - TF1 hands every exception to the coordinator
            self.request_stop(exc)
        finally:
            self.stop(close_summary_writer=close_summary_writer)  # raises what was requested

    def _save(self) -> None:
        self.saver.save(None, self.save_path, global_step=self.global_step)
        self._last_save = time.time()

    def _after_step(self) -> None:
        if self._last_save is not None and time.time() - self._last_save >= self._save_model_secs:
            self._save()
