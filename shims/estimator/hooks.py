"""SessionRunHook and the common hooks, for shims.estimator.

Hooks follow TF 1.15's protocol: ``begin()`` runs while the model's graph is being
built (so ``tf.compat.v1.train.get_global_step()`` and the model's tensors are there
to grab), ``before_run(run_context)`` may return ``SessionRunArgs(fetches)`` (tensors
of that graph, or tensor names), ``after_run(run_context, run_values)`` gets their
numpy values, and ``run_context.request_stop()`` ends training. There is no
Session: ``after_create_session`` and ``end`` receive a :class:`ProgramSession`, whose
``run(fetches)`` runs graph values of the program as one step (what hooks use it for:
initializing summary writers, flushing them, reading a variable).
"""
from __future__ import annotations

import collections
import logging
import time
from typing import Any, Dict, Optional

import numpy as np
from tensorflow.python.framework import ops

_log = logging.getLogger("tensorflow")  # where TF 1.x's hooks log


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    def __new__(cls, fetches, feed_dict=None, options=None):
        if feed_dict:
            raise NotImplementedError("shims.estimator: SessionRunArgs(feed_dict=...) is not "
                                      "supported (the program has no placeholders to feed)")
        return super().__new__(cls, fetches, feed_dict, options)


SessionRunValues = collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])


class SessionRunContext:
    def __init__(self, original_args=None, session=None) -> None:
        self.original_args = original_args
        self.session = session
        self._stop_requested = False

    def request_stop(self) -> None:
        self._stop_requested = True

    @property
    def stop_requested(self) -> bool:
        return self._stop_requested


class ProgramSession:
    """The session a hook's ``after_create_session(session, coord)`` and ``end(session)``
    get: ``run(fetches)`` runs the program's tensors, ops or variables (or their graph
    names) as one step and returns their numpy values, as ``session.run`` did."""

    def __init__(self, program) -> None:
        self._program = program

    @property
    def graph(self):
        return self._program._state.graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if feed_dict:
            raise NotImplementedError("shims.estimator: a hook's session.run(feed_dict=...) is not "
                                      "supported (the program has no placeholders to feed)")
        if fetches is None or (isinstance(fetches, (list, tuple, dict)) and not fetches):
            return type(fetches)() if fetches is not None else None
        names = fetch_names(fetches)
        with ops.init_scope():  # eagerly, also when called with the program's graph as default
            return self._program.run(names)


class HookRunner:
    """A run's hooks, called as TF 1.15's monitored session called them, with the program's
    graph as the default graph (a hook's ``before_run`` may look a tensor up by name there):
    ``after_create_session`` once the variables are in place, ``before_run`` (the fetches
    it asks for, by graph name) and ``after_run`` around every step, ``end`` at the end;
    ``context.request_stop()`` asks the run to stop. Used by shims.estimator's train,
    evaluate and predict and by the monitored sessions."""

    def __init__(self, program, hooks) -> None:
        self.program, self.hooks = program, list(hooks)
        self.context = SessionRunContext()
        self.session = ProgramSession(program)

    def after_create_session(self) -> None:
        with self.program.as_default():
            for hook in self.hooks:
                hook.after_create_session(self.session, None)

    def before_run(self) -> Dict[str, Any]:
        """``{hook index: fetch names}`` of the hooks that ask for something."""
        with self.program.as_default():
            requests = [hook.before_run(self.context) for hook in self.hooks]
        return {str(i): fetch_names(r.fetches) for i, r in enumerate(requests) if r is not None}

    def after_run(self, results: Dict[str, Any]) -> None:
        """``results``: what each asking hook's fetches gave, by hook index."""
        with self.program.as_default():
            for i, hook in enumerate(self.hooks):
                hook.after_run(self.context, SessionRunValues(results.get(str(i)), None, None))

    def end(self) -> None:
        with self.program.as_default():
            for hook in self.hooks:
                hook.end(self.session)

    def run(self, fetches, **feeds):
        """One step of the program with the hooks around it (their fetches in the same step)."""
        if not self.hooks:
            return self.program.run(fetches, **feeds)
        asked = self.before_run()
        out = self.program.run({"step": fetches, "hooks": asked}, **feeds)
        self.after_run(out["hooks"])
        return out["step"]


class ChiefSessionCreator:
    """``tf.train.ChiefSessionCreator``'s arguments, for ``shims.MonitoredSession``: where
    the session's variables come from (``checkpoint_filename_with_path``, else the latest
    checkpoint in ``checkpoint_dir``, else their initializers). There is no session to
    create; ``master`` and ``config`` have nothing to configure in one eager process."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None) -> None:
        self.scaffold, self.master, self.config = scaffold, master, config
        self.checkpoint_dir = checkpoint_dir
        self.checkpoint_filename_with_path = checkpoint_filename_with_path


# what a Scaffold may carry here: init_fn (run when there is no checkpoint to resume) and a
# saver (its max_to_keep); the ops a TF1 session manager ran in a Session have no place
_SCAFFOLD_OPS = ("init_op", "init_feed_dict", "ready_op", "ready_for_local_init_op",
                 "local_init_op", "local_init_feed_dict", "summary_op", "copy_from_scaffold")


def check_scaffold(scaffold, where: str) -> None:
    """One clear error for a Scaffold field shims cannot honour."""
    if scaffold is None:
        return
    given = [f for f in _SCAFFOLD_OPS if getattr(scaffold, "_" + f, getattr(scaffold, f, None)) is not None]
    if given:
        raise NotImplementedError(
            f"shims: {where}(scaffold=Scaffold({given[0]}=...)) is not supported (init_fn and "
            "saver are); initialize from a checkpoint with init_fn, tf.train.init_from_checkpoint "
            "or Estimator(warm_start_from=...) instead")


def scaffold_init(scaffold, program) -> None:
    """TF 1.15's session manager, for a session that restored nothing: the scaffold's
    ``init_fn(session)`` after the variables' initializers (here: after they were created),
    with a session whose ``run`` runs program values; called eagerly, so a
    ``tf.train.Saver(...).restore(session, path)`` in it restores the program's variables."""
    init_fn = getattr(scaffold, "init_fn", None)
    if init_fn is not None:
        init_fn(ProgramSession(program))


def scaffold_keep(scaffold, default: int) -> int:
    """How many checkpoints stay: the scaffold saver's ``max_to_keep``, as TF1's saver hook
    used the scaffold's saver."""
    saver = getattr(scaffold, "saver", None)
    keep = getattr(saver, "_max_to_keep", None)
    return default if keep is None else keep


class SessionRunHook:
    """Base of training hooks (TF 1.15's methods; override what you need)."""

    def begin(self) -> None:
        pass

    def after_create_session(self, session, coord) -> None:
        pass

    def before_run(self, run_context) -> Optional[SessionRunArgs]:
        return None

    def after_run(self, run_context, run_values) -> None:
        pass

    def end(self, session) -> None:
        pass


def tensor_name(value) -> str:
    """The graph name of a fetch (a tensor, a variable, an op, or a name)."""
    if isinstance(value, str):
        return value
    name = getattr(value, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"shims.estimator: a hook fetch must be a tensor or a tensor name, "
                        f"not {type(value).__name__}")
    return name


def fetch_names(fetches):
    """A hook's fetches (tensors, ops, names; nested) as graph names."""
    if isinstance(fetches, dict):
        return {k: fetch_names(v) for k, v in fetches.items()}
    if isinstance(fetches, (list, tuple)):
        return type(fetches)(fetch_names(v) for v in fetches)
    return tensor_name(fetches)


def check_hook(hook, runner: str) -> None:
    """A hook has TF 1.15's four methods (a SessionRunHook, or anything shaped like one)."""
    missing = [m for m in ("begin", "before_run", "after_run", "end") if not hasattr(hook, m)]
    if missing:
        raise TypeError(f"{runner}: a hook must be a SessionRunHook; "
                        f"{type(hook).__name__} has no {missing[0]}()")


class LoggingTensorHook(SessionRunHook):
    """Logs the given tensors every N steps (or seconds), as TF1 did."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None) -> None:
        if (every_n_iter is None) == (every_n_secs is None) and not at_end:
            raise ValueError("LoggingTensorHook: give exactly one of every_n_iter and every_n_secs")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"LoggingTensorHook: every_n_iter must be positive, got {every_n_iter}")
        if not isinstance(tensors, dict):
            self._tag_order = [tensor_name(t) for t in tensors]
            tensors = {name: name for name in self._tag_order}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = {tag: tensor_name(t) for tag, t in tensors.items()}
        self._every_n_iter, self._every_n_secs = every_n_iter, every_n_secs
        self._at_end, self._formatter = at_end, formatter
        self._iter = 0
        self._last_time: Optional[float] = None
        self._should_trigger = False
        self._last_values: Dict[str, Any] = {}

    def begin(self) -> None:
        self._iter = 0

    def before_run(self, run_context):
        if self._every_n_iter is not None:
            self._should_trigger = self._iter % self._every_n_iter == 0
        elif self._every_n_secs is not None:
            self._should_trigger = self._last_time is None or \
                time.time() - self._last_time >= self._every_n_secs
        else:
            self._should_trigger = False
        if self._should_trigger or self._at_end:
            return SessionRunArgs(dict(self._tensors))
        return None

    def _log(self, values) -> None:
        if self._formatter:
            _log.info(self._formatter(values))
        else:
            _log.info(", ".join(f"{tag} = {np.asarray(values[tag])}" for tag in self._tag_order))

    def after_run(self, run_context, run_values) -> None:
        if run_values.results is not None:
            self._last_values = run_values.results
        if self._should_trigger:
            self._log(run_values.results)
            self._last_time = time.time()
        self._iter += 1

    def end(self, session) -> None:
        if self._at_end and self._last_values:
            self._log(self._last_values)


class StopAtStepHook(SessionRunHook):
    """Requests a stop after ``num_steps`` more steps, or at ``last_step``."""

    def __init__(self, num_steps=None, last_step=None) -> None:
        if (num_steps is None) == (last_step is None):
            raise ValueError("StopAtStepHook: give exactly one of num_steps and last_step")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self) -> None:
        self._first = True

    def before_run(self, run_context):
        # the step the train op reached (ordered after it; "global_step:0" read in the same
        # run may give the value before or after the increment, in TF 1.x too)
        return SessionRunArgs("global_step_after")

    def after_run(self, run_context, run_values) -> None:
        step = int(run_values.results)
        if self._last_step is None:
            self._last_step = step - 1 + self._num_steps
        if step >= self._last_step:
            run_context.request_stop()


class CheckpointSaverHook(SessionRunHook):
    """Accepted for compatibility: shims.estimator saves checkpoints itself, on the
    RunConfig's schedule (save_checkpoints_steps / save_checkpoints_secs)."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None) -> None:
        if saver is not None or scaffold is not None or listeners:
            raise NotImplementedError("shims.estimator: CheckpointSaverHook with a saver, scaffold "
                                      "or listeners is not supported; use RunConfig's "
                                      "save_checkpoints_steps instead")
        self.checkpoint_dir = checkpoint_dir


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self) -> str:
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Fails (or stops) when the loss is NaN, as TF 1.15's did."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True) -> None:
        self._loss = tensor_name(loss_tensor)
        self._fail = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values) -> None:
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail:
                _log.error(message)
                raise NanLossDuringTrainingError
            _log.warning(message)
            run_context.request_stop()
