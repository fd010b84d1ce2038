"""TFM406: .numpy() / float(tensor) in traced code."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.traced import traced_function, where


class PythonValues(Rule):
    code = "TFM406"
    needle = (needles.TRACED, needles.PYTHON_VALUE)
    summary = "a tensor turned into a Python value inside traced code"
    lint = True
    explanation = """
Inside a tf.function tensors are symbolic: `.numpy()` fails, and `float(t)`, `int(t)`,
`bool(t)` on a tensor argument fail or freeze a trace-time value. Keep the computation in
TensorFlow ops (`tf.cast`, `tf.cond`, `tf.where`) or move it outside the function.
Shapes are fine: `int(x.shape[-1])` is a Python value at trace time.
"""
    before = """
import tensorflow as tf


@tf.function
def f(x):
    return x.numpy() * 2
"""
    after = """
import tensorflow as tf


@tf.function
def f(x):
    return x * 2
"""

    def visit_Call(self, node: cst.Call) -> None:
        func = traced_function(self.ctx)
        if func is None:
            return
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "numpy" and not node.args:
            self.report(node, f".numpy() in {where(self.ctx, func)}: tensors are symbolic "
                              "while tracing")
            return
        if isinstance(node.func, cst.Name) and node.func.value in ("float", "int", "bool") \
                and len(node.args) == 1 and isinstance(node.args[0].value, cst.Name):
            params = {p.name.value for p in func.params.params[(1 if func.name.value == "call" else 0):]}
            if node.args[0].value.value in params:
                self.report(node, f"{node.func.value}() of the argument "
                                  f"{node.args[0].value.value} in {where(self.ctx, func)}: "
                                  "a tensor has no Python value while tracing")
