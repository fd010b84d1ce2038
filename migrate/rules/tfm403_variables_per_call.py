"""TFM403: a tf.Variable, Keras layer or optimizer created on every tf.function call."""
import re

import libcst as cst

from migrate.codemod.cstutil import code
from migrate.codemod.keras_weights import is_layer_call, is_variable_call
from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.traced import is_keras_call, traced_function, where


class VariablesPerCall(Rule):
    code = "TFM403"
    needle = needles.TF_FUNCTION
    summary = "new variable/layer/optimizer on every call of a tf.function"
    lint = True
    explanation = """
A tf.function may create variables only on its first trace: a `tf.Variable`, a Keras layer
or an optimizer created in its body fails with "tf.function only supports singleton
tf.Variables created on the first call" (or silently makes new state on each retrace).
Create it once outside the function (or in `__init__`/`build`), or use the create-once
pattern `if self.v is None: self.v = tf.Variable(...)`. Keras `call()` is TFM303's.
"""
    before = """
import tensorflow as tf


@tf.function
def step(x):
    v = tf.Variable(1.0)
    return v * x
"""
    after = """
import tensorflow as tf

v = tf.Variable(1.0)


@tf.function
def step(x):
    return v * x
"""

    def visit_Call(self, node: cst.Call) -> None:
        func = traced_function(self.ctx)
        if func is None or is_keras_call(self.ctx, func):
            return
        kind = None
        if is_variable_call(self.ctx, node):
            kind = "tf.Variable"
        elif is_layer_call(self.ctx, node):
            kind = "Keras layer/model"
        else:
            name = self.ctx.keras(node.func) or ""
            if name.startswith("keras.optimizers.") and name.rsplit(".", 1)[-1][:1].isupper():
                kind = "optimizer"
        if kind is None:
            return
        for branch in self.ctx.ancestors(cst.If):
            if re.search(r"\bis None\b|\bnot hasattr\b", code(branch.test)):
                return
        self.report(node, f"a new {kind} on every call of {where(self.ctx, func)}: "
                          "create it once outside the function")
