"""TFM409: a tf.function that calls itself."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.traced import tf_function_decorator


class RecursiveFunction(Rule):
    code = "TFM409"
    needle = needles.TF_FUNCTION
    summary = "recursive tf.function"
    lint = True
    explanation = """
Recursive tf.functions are not supported: tracing the recursive call traces the function
again from inside its own trace, which recurses until Python's limit or fails. Rewrite
the recursion as a loop (tf.while_loop / a `for` over tf.range).
"""
    before = """
import tensorflow as tf


@tf.function
def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)
"""
    after = """
import tensorflow as tf


@tf.function
def fact(n):
    result = tf.constant(1)
    for i in tf.range(2, n + 1):
        result *= i
    return result
"""

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name):
            return
        for func in self.ctx.ancestors(cst.FunctionDef):
            if func.name.value == node.func.value and tf_function_decorator(self.ctx, func) is not None:
                self.report(node, f"{func.name.value}() is a tf.function that calls itself: "
                                  "recursion is not supported in traced code")
                return
