"""TFM305: tf.compat.v1.get_variable in eager TF2 code outside a shim scope."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import code
from migrate.codemod.keras_weights import add_shim_decorator
from migrate.codemod.rule import Rule
from migrate.codemod.traced import is_keras_call, tf_function_decorator

GET_VARIABLE = {"tensorflow.compat.v1.get_variable", "tensorflow.get_variable",
                "tensorflow.compat.v1.layers.Layer.add_weight"}


class GetVariableEager(Rule):
    code = "TFM305"
    needle = (needles.Needle(("get_variable",)), needles.TRACED)
    summary = "get_variable in eager code outside a shim scope creates a new variable per call"
    fixable = True
    lint = True
    explanation = """
Outside TF1 graph mode, `tf.compat.v1.get_variable` has no variable store to reuse from:
called from a Keras `call()` or a tf.function it creates a new, untracked variable on every
call (or fails under tf.function). Methods of Keras layers/models get
`@shims.track_tf1_style_variables`, which gives them a store: the variables are created
once, tracked and checkpointed under their TF1 names. In a tf.function, run the code
through `shims.legacy_layer(fn)` instead.
"""
    before = """
import tensorflow as tf

class Head(tf.keras.layers.Layer):
    def call(self, x):
        w = tf.compat.v1.get_variable("w", [4, 2])
        return tf.matmul(x, w)
"""
    after = """
import shims.keras2
import tensorflow as tf

class Head(tf.keras.layers.Layer):
    @shims.track_tf1_style_variables
    def call(self, x):
        w = tf.compat.v1.get_variable("w", [4, 2])
        return tf.matmul(x, w)
"""

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.qualname(node.func) not in GET_VARIABLE:
            return
        funcs = self.ctx.ancestors(cst.FunctionDef)
        if not funcs:
            return
        if any("track_tf1_style_variables" in code(d.decorator) for f in funcs for d in f.decorators):
            return  # already in a shim scope
        method = next((f for f in funcs if is_keras_call(self.ctx, f)), None)
        if method is not None:
            finding = self.report(node, "get_variable in Keras call() outside a shim scope: a new "
                                        "variable on every call; the method gets "
                                        "@shims.track_tf1_style_variables")
            add_shim_decorator(self.ctx, finding, method)
            return
        traced = next((f for f in funcs if tf_function_decorator(self.ctx, f) is not None), None)
        if traced is not None:
            self.report(node, f"get_variable in tf.function {traced.name.value}() outside a shim "
                              "scope: run the code through shims.legacy_layer(fn)")
