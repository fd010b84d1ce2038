"""TFM401: Python side effects in traced code run only while tracing."""
import libcst as cst

from migrate.codemod.resolver import local_names
from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.traced import traced_function, where

MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "update", "add", "discard",
            "setdefault", "popitem", "sort", "reverse"}


class SideEffects(Rule):
    code = "TFM401"
    needle = (needles.TRACED, needles.SIDE_EFFECT)
    summary = "Python side effect in traced code runs only while tracing"
    lint = True
    explanation = """
A tf.function (and a Keras `call()`, which `fit` traces) runs its Python code once, while
tracing; later calls run the graph. `print`, appending to or mutating an outside list,
dict or set, assigning a `global`/`nonlocal`, or mutating attributes of outside objects
happen on the first call only (and again on each retrace), not on every step. Use
`tf.print` for printing, tf.Variable / tf.TensorArray for state, and return values
instead of mutating outside objects.
"""
    before = """
import tensorflow as tf

history = []


@tf.function
def train(x):
    print("step", x)
    history.append(x)
"""
    after = """
import tensorflow as tf


@tf.function
def train(x):
    tf.print("step", x)
    return x  # collect results outside the function
"""

    def visit_Call(self, node: cst.Call) -> None:
        func = traced_function(self.ctx)
        if func is None:
            return
        if isinstance(node.func, cst.Name) and node.func.value == "print" and \
                self.ctx.qualname(node.func) is None:
            self.report(node, f"print() in {where(self.ctx, func)} runs only while tracing; "
                              "use tf.print to print on every call")
            return
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in MUTATORS:
            target = node.func.value
            root = target
            while isinstance(root, (cst.Attribute, cst.Subscript)):
                root = root.value
            if not isinstance(root, cst.Name):
                return
            if root.value == "self" and func.name.value == "call":
                pass  # mutating the layer itself while tracing call()
            elif self._local(root.value, func):
                return  # a container built during tracing (closures included) is fine
            if self.ctx.qualname(root) is not None:
                return  # a TensorFlow object (tf.TensorArray etc.)
            self.report(node, f"{cst.Module([]).code_for_node(node.func)}() mutates an outside "
                              f"object in {where(self.ctx, func)}: it runs only while tracing")

    def _local(self, name: str, traced) -> bool:
        for f in self.ctx.ancestors(cst.FunctionDef):
            if name in local_names(f):
                return True
            if f is traced:
                break
        return False

    def visit_Global(self, node: cst.Global) -> None:
        self._declared(node, "global")

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self._declared(node, "nonlocal")

    def _declared(self, node, kind: str) -> None:
        func = traced_function(self.ctx)
        if func is not None:
            names = ", ".join(n.name.value for n in node.names)
            self.report(node, f"{kind} {names} in {where(self.ctx, func)}: assignments to it "
                              "happen only while tracing")
