"""TFM113: TensorFlow reached through a star import of the project's own module."""
import ast
from typing import Optional, Set

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.resolver import TF_ROOTS
from migrate.codemod.rule import Rule

#: the names TF1 code calls TensorFlow by
ALIASES = ("tf",)


def _bound(tree: Optional[ast.AST]) -> Set[str]:
    """Every name the file binds itself (imports, assignments, defs, parameters, ...)."""
    if tree is None:
        return set(ALIASES)  # no proof of anything: stay silent
    names: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
    return names


class StarImportedTensorflow(Rule):
    code = "TFM113"
    needle = needles.Needle(("import *", "import*"))
    summary = "tf comes from a star import: the file cannot be migrated until it imports TensorFlow"
    fixable = False
    explanation = """
Research code often gets TensorFlow through its own package: `from model.layers import *`,
where `model/layers.py` did `import tensorflow as tf`. tf-migrate reads one file at a time
and sees no binding of `tf` here, so none of its TF1 calls could be migrated; left alone,
the file fails on TF2 at its first TF1 name (`module 'tensorflow' has no attribute 'app'`).
This finding names the star import; add `import tensorflow as tf` to the file (the star
import may stay) and run tf-migrate again, and the file is migrated like any other.
"""
    before = """
from model.layers import *

flags = tf.app.flags
"""
    after = """
from model.layers import *
import tensorflow as tf

flags = tf.compat.v1.app.flags
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.star: Optional[str] = None
        self.use: Optional[cst.CSTNode] = None

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if self.star is None and isinstance(node.names, cst.ImportStar):
            module = cst.Module([]).code_for_node(node.module) if node.module is not None else ""
            if module.split(".")[0] not in TF_ROOTS:
                self.star = "." * len(node.relative) + module

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.use is None and isinstance(node.value, cst.Name) and node.value.value in ALIASES \
                and node.value.value not in self.ctx.resolver.aliases:
            self.use = node

    def leave_Module(self, node: cst.Module) -> None:
        if self.star is None or self.use is None:
            return
        name = self.use.value.value
        if name in _bound(self.ctx.tree):
            return
        self.report(self.use, f"{name!r} comes from `from {self.star} import *`, which tf-migrate "
                              f"cannot follow: nothing in this file was migrated; add "
                              f"`import tensorflow as {name}` and run tf-migrate again")
