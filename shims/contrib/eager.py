"""tf.contrib.eager (``tfe``) on TF2, where eager is the default and most of it moved into
``tf``: ``tfe.defun`` is ``tf.function``, ``tfe.Variable`` ``tf.Variable``, ... The
gradient helpers that TF2 dropped (``gradients_function``, ``implicit_gradients``, ...)
are rebuilt on ``tf.GradientTape`` with TF 1.x's signatures, so ``tfe = tf.contrib.eager``
code keeps working through ``tfe = shims.contrib.eager``.

``__all__`` is literal: tf-migrate reads it without importing TensorFlow.
"""
from __future__ import annotations

import inspect

import tensorflow as tf

__all__ = [
    "defun", "function", "Variable", "Checkpoint", "GradientTape", "Iterator", "Saver",
    "executing_eagerly", "in_eager_mode", "enable_eager_execution", "num_gpus", "list_devices",
    "py_func", "make_template", "metrics", "run", "gradients_function",
    "value_and_gradients_function", "implicit_gradients", "implicit_value_and_gradients",
]

defun = function = tf.function
Variable = tf.Variable
Checkpoint = tf.train.Checkpoint
GradientTape = tf.GradientTape
Saver = tf.compat.v1.train.Saver
executing_eagerly = in_eager_mode = tf.executing_eagerly
py_func = tf.py_function
make_template = tf.compat.v1.make_template
metrics = tf.keras.metrics
run = tf.compat.v1.app.run


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Eager execution is TF2's default: nothing to enable."""


def num_gpus() -> int:
    return len(tf.config.list_physical_devices("GPU"))


def list_devices():
    return tf.config.list_logical_devices()


def Iterator(dataset):  # noqa: N802 - tfe.Iterator was a class
    """``tfe.Iterator(dataset)``: a Python iterator over the dataset, as ``iter(dataset)``."""
    return iter(dataset)


def _indices(f, params):
    if params is None:
        return None
    names = list(inspect.signature(f).parameters)
    return [p if isinstance(p, int) else names.index(p) for p in params]


def value_and_gradients_function(f, params=None):
    """``f``'s value and its gradients with respect to its arguments (``params``: the
    positions or names to differentiate; all by default). ``dy=`` seeds the output."""
    def decorated(*args, **kwargs):
        dy = kwargs.pop("dy", None)
        args = [tf.convert_to_tensor(a) if not isinstance(a, tf.Variable) else a for a in args]
        chosen = _indices(f, params)
        chosen = range(len(args)) if chosen is None else chosen
        with tf.GradientTape(persistent=False) as tape:
            for i in chosen:
                tape.watch(args[i])
            value = f(*args, **kwargs)
        return value, tape.gradient(value, [args[i] for i in chosen], output_gradients=dy)
    return decorated


def gradients_function(f, params=None):
    """The gradients of ``f`` with respect to its arguments (see value_and_gradients_function)."""
    def decorated(*args, **kwargs):
        return value_and_gradients_function(f, params)(*args, **kwargs)[1]
    return decorated


def implicit_value_and_gradients(f):
    """``f``'s value and ``[(gradient, variable)]`` for every trainable variable it read."""
    def decorated(*args, **kwargs):
        with tf.GradientTape() as tape:
            value = f(*args, **kwargs)
        variables = [v for v in tape.watched_variables() if v.trainable]
        if not variables:
            raise ValueError("No trainable variables were accessed while the function was being "
                             "computed.")
        return value, list(zip(tape.gradient(value, variables), variables))
    return decorated


def implicit_gradients(f):
    """``[(gradient, variable)]`` for every trainable variable ``f`` read."""
    def decorated(*args, **kwargs):
        return implicit_value_and_gradients(f)(*args, **kwargs)[1]
    return decorated
