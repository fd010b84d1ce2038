"""TFM407: Python loops over Python data unroll inside a tf.function."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.traced import module_facts, tf_function_decorator, traced_function

UNROLL_WARN = 20  # range(N) with a literal N at least this large


class UnrolledLoops(Rule):
    code = "TFM407"
    needle = needles.TF_FUNCTION
    summary = "a Python loop over Python data is unrolled into the graph"
    lint = True
    explanation = """
AutoGraph turns a `for` loop into a graph loop only when it iterates a tensor
(`tf.range`, a tensor, a tf.data dataset). A loop over a Python list, a literal
`range(N)` or a module-level Python list is unrolled: the graph gets one copy of the body
per item, which makes tracing slow and the graph large. Iterate a tensor instead.
"""
    before = """
import tensorflow as tf


@tf.function
def f(x):
    for _ in range(1000):
        x = x + 1
    return x
"""
    after = """
import tensorflow as tf


@tf.function
def f(x):
    for _ in tf.range(1000):
        x = x + 1
    return x
"""

    def visit_For(self, node: cst.For) -> None:
        func = traced_function(self.ctx)
        if func is None or tf_function_decorator(self.ctx, func) is None:
            return
        iterable = node.iter
        if isinstance(iterable, (cst.List, cst.Tuple)) and len(iterable.elements) > 1:
            self.report(node, f"loop over a Python {type(iterable).__name__.lower()} literal is "
                              f"unrolled into {func.name.value}()'s graph")
        elif isinstance(iterable, cst.Name) and iterable.value in module_facts(self.ctx).python_lists:
            self.report(node, f"loop over the Python list {iterable.value} is unrolled into "
                              f"{func.name.value}()'s graph")
        elif isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
                and iterable.func.value == "range" and self.ctx.qualname(iterable.func) is None:
            sizes = [a.value for a in iterable.args]
            if sizes and all(isinstance(s, cst.Integer) for s in sizes):
                count = int(sizes[0].value) if len(sizes) == 1 else int(sizes[1].value) - int(sizes[0].value)
                if count >= UNROLL_WARN:
                    self.report(node, f"range({count}) in a tf.function unrolls {count} copies of "
                                      "the loop body; use tf.range")
