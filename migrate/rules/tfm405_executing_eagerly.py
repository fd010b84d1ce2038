"""TFM405: tf.executing_eagerly() in traced code is False."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.traced import traced_function, where


class ExecutingEagerly(Rule):
    code = "TFM405"
    needle = (needles.TRACED, needles.EXECUTING_EAGERLY)
    summary = "tf.executing_eagerly() is False inside traced code"
    lint = True
    explanation = """
Inside a tf.function, and inside a Keras layer's `call()` when `fit`/`predict` trace it,
`tf.executing_eagerly()` returns False, so a branch on it takes the graph path in
training. To debug eagerly use `model.compile(run_eagerly=True)` or
`tf.config.run_functions_eagerly(True)`; to run setup code eagerly from inside a function
use `tf.init_scope()`.
"""
    before = """
import tensorflow as tf


class Probe(tf.keras.layers.Layer):
    def call(self, x):
        if tf.executing_eagerly():
            print(x.numpy())
        return x
"""
    after = """
import tensorflow as tf


class Probe(tf.keras.layers.Layer):
    def call(self, x):
        tf.print(x)  # or debug with model.compile(run_eagerly=True)
        return x
"""

    def visit_Call(self, node: cst.Call) -> None:
        func = traced_function(self.ctx)
        if func is None:
            return
        if self.ctx.v1(node.func) in ("tf.executing_eagerly", "tf.compat.v1.executing_eagerly"):
            self.report(node, f"tf.executing_eagerly() is False in {where(self.ctx, func)} "
                              "under tf.function/fit (see run_eagerly, tf.init_scope)")
