"""TFM404: Python values from a loop passed to a tf.function retrace it every call."""
import libcst as cst

from migrate import needles
from migrate.rule import Rule
from migrate.traced import has_input_signature, module_facts


def _loop_targets(target: cst.BaseExpression) -> set:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_loop_targets(e.value) for e in target.elements))
    return set()


class PythonArguments(Rule):
    code = "TFM404"
    needle = needles.TF_FUNCTION
    summary = "a Python value that changes every call retraces the tf.function"
    lint = True
    explanation = """
tf.function specializes on the value of each Python argument: passing a Python loop
variable (an int from `range`, an item of a list) traces a new graph for every distinct
value, which is slow and grows memory. Pass a tensor (`tf.constant(i)`), or give the
function an `input_signature`.
"""
    before = """
for i in range(10):
    train(num_steps=i)
"""
    after = """
for i in tf.range(10):
    train(num_steps=i)
"""

    def visit_Call(self, node: cst.Call) -> None:
        if not isinstance(node.func, cst.Name):
            return
        facts = module_facts(self.ctx)
        func = facts.tf_functions.get(node.func.value)
        if func is None or self.ctx.resolver.is_shadowed(node.func.value):
            return
        from migrate.traced import tf_function_decorator

        if has_input_signature(tf_function_decorator(self.ctx, func)):
            return
        loop_vars = set()
        for loop in self.ctx.ancestors(cst.For):
            iterable = loop.iter
            if isinstance(iterable, cst.Call) and self.ctx.qualname(iterable.func):
                continue  # tf.range(...) and other TensorFlow iterables give tensors
            loop_vars |= _loop_targets(loop.target)
        for a in node.args:
            if isinstance(a.value, cst.Name) and a.value.value in loop_vars:
                label = f"{a.keyword.value}=" if a.keyword else "an argument"
                self.report(node, f"{node.func.value}() gets the Python loop value "
                                  f"{a.value.value} as {label}: a new trace for every value "
                                  "(pass a tensor or set input_signature)")
                return
