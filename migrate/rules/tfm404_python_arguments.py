"""TFM404: Python values from a loop passed to a tf.function retrace it every call."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.traced import (
    has_input_signature,
    module_facts,
    tf_function_decorator,
)


def _names(target: cst.BaseExpression) -> set:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_names(e.value) for e in target.elements))
    return set()


_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)


def _python_values(iterable: cst.BaseExpression, target: cst.BaseExpression, builtin) -> set:
    """The loop variables that are certainly Python values: items of ``range(...)``,
    literal lists of numbers or strings, ``enumerate``'s index, ``zip`` of those.
    Anything else (a tf.data.Dataset, a list of tensors, a name) may yield tensors,
    which do not retrace: nothing is reported for it."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and builtin(iterable.func.value):
        name, args = iterable.func.value, [a.value for a in iterable.args if a.keyword is None]
        if name == "range":
            return _names(target)
        parts = target.elements if isinstance(target, (cst.Tuple, cst.List)) else None
        if name == "enumerate" and args and parts is not None and len(parts) == 2:
            return _names(parts[0].value) | _python_values(args[0], parts[1].value, builtin)
        if name == "zip" and parts is not None and len(parts) == len(args):
            return set().union(*(_python_values(a, p.value, builtin) for a, p in zip(args, parts)))
        return set()
    if isinstance(iterable, (cst.List, cst.Tuple, cst.Set)) and iterable.elements and all(
            isinstance(e.value, _LITERALS) or (isinstance(e.value, cst.UnaryOperation)
                                               and isinstance(e.value.expression, _LITERALS))
            for e in iterable.elements):
        return _names(target)
    return set()


class PythonArguments(Rule):
    code = "TFM404"
    needle = needles.TF_FUNCTION
    summary = "a Python value that changes every call retraces the tf.function"
    lint = True
    explanation = """
tf.function specializes on the value of each Python argument: passing a Python loop
variable (an int from `range`, an item of a list of numbers) traces a new graph for every
distinct value, which is slow and grows memory. Pass a tensor (`tf.constant(i)`), or give
the function an `input_signature`. Loops over a `tf.data.Dataset`, `tf.range` or anything
else that may yield tensors are not reported: tensors of one shape share a trace.
"""
    before = """
import tensorflow as tf


@tf.function
def train(num_steps):
    return tf.constant(num_steps)


for i in range(10):
    train(num_steps=i)
"""
    after = """
import tensorflow as tf


@tf.function
def train(num_steps):
    return tf.constant(num_steps)


for i in range(10):
    train(num_steps=tf.constant(i))  # one trace for every step count
"""

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name):
            return
        facts = module_facts(self.ctx)
        func = facts.tf_functions.get(node.func.value)
        if func is None or self.ctx.resolver.is_shadowed(node.func.value):
            return

        if has_input_signature(tf_function_decorator(self.ctx, func)):
            return
        loop_vars = set()

        def builtin(name: str) -> bool:
            return not self.ctx.resolver.is_shadowed(name) and not self.ctx.qualname(cst.Name(name))

        for loop in self.ctx.ancestors(cst.For):
            loop_vars |= _python_values(loop.iter, loop.target, builtin)
        for a in node.args:
            if isinstance(a.value, cst.Name) and a.value.value in loop_vars:
                label = f"{a.keyword.value}=" if a.keyword else "an argument"
                self.report(node, f"{node.func.value}() gets the Python loop value "
                                  f"{a.value.value} as {label}: a new trace for every value "
                                  "(pass a tensor or set input_signature)")
                return
