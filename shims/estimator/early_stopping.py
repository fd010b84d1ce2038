"""Early stopping for shims.estimator, with TF 1.15's semantics.

TF 1.15's ``tf.estimator.experimental.stop_if_*_hook`` (also ``tf.contrib.estimator``) read
the metrics evaluation wrote to the estimator's ``eval_dir()`` as summary events, and stop
training when a predicate over them holds: checked on the first step and then every
``run_every_secs`` seconds (or ``run_every_steps`` steps). ``Estimator.evaluate`` here writes
those events the way TF1 did (``events.out.tfevents.*`` with ``simple_value`` scalars at
the evaluated global step), so an eval folder written by TF 1.15 is read the same way, and
the early-stopping flag is the TF1 checkpoint variable ``signal_early_stopping/STOP``.
"""
from __future__ import annotations

import collections
import glob
import logging
import operator
import os
import socket
import time
from typing import Callable, Dict, Optional

import tensorflow as tf

from shims.estimator.hooks import SessionRunArgs, SessionRunHook

_log = logging.getLogger("tensorflow")

__all__ = ["make_early_stopping_hook", "read_eval_metrics", "stop_if_higher_hook",
           "stop_if_lower_hook", "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]


def read_eval_metrics(eval_dir: str) -> "collections.OrderedDict[int, Dict[str, float]]":
    """Global step -> {metric: value} from the summary events in ``eval_dir`` (TF1's)."""
    found: Dict[int, Dict[str, float]] = collections.defaultdict(dict)
    for path in sorted(glob.glob(os.path.join(eval_dir, "events.out.tfevents.*"))):
        for event in tf.compat.v1.train.summary_iterator(path):
            if not event.HasField("summary"):
                continue
            metrics = {v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")}
            if metrics:
                found[event.step].update(metrics)
    return collections.OrderedDict(sorted(found.items()))


def write_eval_metrics(eval_dir: str, step: int, results: Dict[str, object]) -> None:
    """What TF 1.15's Estimator.evaluate wrote: one event at ``step`` with every scalar
    result but global_step as a ``simple_value`` (the file TensorBoard and
    ``read_eval_metrics`` read)."""
    values = []
    for key in sorted(results):
        if key == tf.compat.v1.GraphKeys.GLOBAL_STEP:
            continue
        value = results[key]
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue  # TF1 logs and skips non-scalar results
        values.append(tf.compat.v1.Summary.Value(tag=key, simple_value=number))
    os.makedirs(eval_dir, exist_ok=True)
    name = f"events.out.tfevents.{time.time():.6f}.{socket.gethostname()}.{os.getpid()}"
    path = os.path.join(eval_dir, name)
    wall = time.time()
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(tf.compat.v1.Event(wall_time=wall, file_version="brain.Event:2").SerializeToString())
        event = tf.compat.v1.Event(wall_time=wall, step=int(step),
                                   summary=tf.compat.v1.Summary(value=values))
        writer.write(event.SerializeToString())


class _Timer:
    """TF 1.15's SecondOrStepTimer: the first step triggers, then every N secs or steps."""

    def __init__(self, every_secs=None, every_steps=None) -> None:
        self._every_secs, self._every_steps = every_secs, every_steps
        self._last_step: Optional[int] = None
        self._last_time: Optional[float] = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_time + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step: int) -> None:
        self._last_step, self._last_time = step, time.time()

    def last_triggered_step(self) -> Optional[int]:
        return self._last_step


def _stop_variable():
    """TF1's ``signal_early_stopping/STOP``: in the checkpoint as TF 1.15 saved it."""
    with tf.compat.v1.variable_scope("signal_early_stopping", reuse=tf.compat.v1.AUTO_REUSE):
        return tf.compat.v1.get_variable(
            "STOP", shape=[], dtype=tf.bool, initializer=tf.compat.v1.constant_initializer(False),
            collections=[tf.compat.v1.GraphKeys.GLOBAL_VARIABLES], trainable=False)


class _StopOnPredicateHook(SessionRunHook):
    def __init__(self, should_stop_fn: Callable[[], bool], run_every_secs=60, run_every_steps=None):
        if not callable(should_stop_fn):
            raise TypeError("`should_stop_fn` must be callable.")
        self._should_stop_fn = should_stop_fn
        self._timer = _Timer(every_secs=run_every_secs, every_steps=run_every_steps)
        self._stop_var = None

    def begin(self) -> None:
        self._stop_var = _stop_variable()

    def before_run(self, run_context):
        return SessionRunArgs("global_step")

    def after_run(self, run_context, run_values) -> None:
        step = int(run_values.results)
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._should_stop_fn():
                _log.info("Requesting early stopping at global step %d", step)
                self._stop_var.assign(True)
                run_context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60, run_every_steps=None):
    """A hook that stops training when ``should_stop_fn()`` returns True (TF 1.15's)."""
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of `run_every_secs` and `run_every_steps` can be passed.")
    if not getattr(estimator.config, "is_chief", True):
        raise NotImplementedError("shims.estimator: early stopping on a non-chief worker is "
                                  "not supported (programs here run on one machine)")
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


def _no_improvement(estimator, metric_name, max_steps_without_improvement, higher_is_better,
                    eval_dir, min_steps, run_every_secs, run_every_steps):
    eval_dir = eval_dir if eval_dir is not None else estimator.eval_dir()
    better = operator.gt if higher_is_better else operator.lt
    change = "increase" if higher_is_better else "decrease"

    def stop_if_no_metric_improvement_fn() -> bool:
        best_value = best_step = None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if best_value is None or better(value, best_value):
                best_value, best_step = value, step
            if step - best_step >= max_steps_without_improvement:
                _log.info('No %s in metric "%s" for %s steps, which is greater than or equal to '
                          "max steps (%s) configured for early stopping.", change, metric_name,
                          step - best_step, max_steps_without_improvement)
                return True
        return False

    return make_early_stopping_hook(estimator, stop_if_no_metric_improvement_fn,
                                    run_every_secs=run_every_secs, run_every_steps=run_every_steps)


def _threshold_crossed(estimator, metric_name, threshold, higher_is_better, eval_dir, min_steps,
                       run_every_secs, run_every_steps):
    eval_dir = eval_dir if eval_dir is not None else estimator.eval_dir()
    better = operator.gt if higher_is_better else operator.lt
    side = "greater than" if higher_is_better else "less than"

    def stop_if_threshold_crossed_fn() -> bool:
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            value = metrics[metric_name]
            if better(value, threshold):
                _log.info('At step %s, metric "%s" has value %s which is %s the configured '
                          "threshold (%s) for early stopping.", step, metric_name, value, side,
                          threshold)
                return True
        return False

    return make_early_stopping_hook(estimator, stop_if_threshold_crossed_fn,
                                    run_every_secs=run_every_secs, run_every_steps=run_every_steps)


def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                        run_every_secs=60, run_every_steps=None):
    """Stops training once ``metric_name`` was above ``threshold`` in an evaluation."""
    return _threshold_crossed(estimator, metric_name, threshold, True, eval_dir, min_steps,
                              run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                       run_every_secs=60, run_every_steps=None):
    """Stops training once ``metric_name`` was below ``threshold`` in an evaluation."""
    return _threshold_crossed(estimator, metric_name, threshold, False, eval_dir, min_steps,
                              run_every_secs, run_every_steps)


def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase, eval_dir=None,
                             min_steps=0, run_every_secs=60, run_every_steps=None):
    """Stops training when ``metric_name`` has not risen for that many global steps."""
    return _no_improvement(estimator, metric_name, max_steps_without_increase, True, eval_dir,
                           min_steps, run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease, eval_dir=None,
                             min_steps=0, run_every_secs=60, run_every_steps=None):
    """Stops training when ``metric_name`` has not fallen for that many global steps."""
    return _no_improvement(estimator, metric_name, max_steps_without_decrease, False, eval_dir,
                           min_steps, run_every_secs, run_every_steps)
