"""TFM402: globals read in a tf.function are frozen at trace time."""
import libcst as cst

from migrate.codemod.resolver import local_names
from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.traced import module_facts, traced_function, where


class FrozenGlobals(Rule):
    code = "TFM402"
    needle = needles.TF_FUNCTION
    summary = "a Python global read in traced code is frozen into the trace"
    lint = True
    explanation = """
A tf.function captures the value a Python global (or closure variable) has when it is
traced; reassigning the global later does not change what the function computes until
something forces a retrace. Reported for module globals that are reassigned somewhere
(a `global` assignment in a function, or more than one binding at module level). Pass
the value as an argument, or keep it in a tf.Variable and `assign` to it.
"""
    before = """
import tensorflow as tf

foo = 1


@tf.function
def add():
    return 1 + foo


print(add())  # 2
foo = 2
print(add())  # still 2: foo was read once, when add was traced
"""
    after = """
import tensorflow as tf

foo = tf.Variable(1)


@tf.function
def add():
    return 1 + foo  # reads the variable on every call


print(add())  # 2
foo.assign(2)
print(add())  # 3
"""

    def visit_Name(self, node: cst.Name) -> None:
        func = traced_function(self.ctx)
        if func is None:
            return
        parent = self.ctx.parent()
        if (isinstance(parent, cst.Attribute) and parent.attr is node) or (
                isinstance(parent, cst.Arg) and parent.keyword is node):
            return  # an attribute or keyword name, not a read of the global
        if isinstance(parent, (cst.AssignTarget, cst.Param, cst.FunctionDef, cst.ClassDef,
                               cst.NameItem, cst.ImportAlias, cst.AsName)):
            return
        facts = module_facts(self.ctx)
        if node.value not in facts.reassigned:
            return
        for f in self.ctx.ancestors(cst.FunctionDef):
            if node.value in local_names(f):
                return
            if f is func:
                break
        self.report(node, f"global {node.value} is frozen into {where(self.ctx, func)} when it "
                          "is traced; later reassignments are ignored (pass it in, or use a tf.Variable)")
