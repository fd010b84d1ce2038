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
    summary = "tf comes from a star import of the project's own module: read there, imported here"
    fixable = True
    explanation = """
Research code often gets TensorFlow through its own package: `from model.layers import *`,
where `model/layers.py` did `import tensorflow as tf`. tf-migrate follows such a star import
to the project file it names (next to this file, or in a folder above it for an absolute
name; read with Python's parser, never imported, following its own star imports three
levels deep), so this file's TF1 calls are migrated like any other's, and the file gets
`import tensorflow as tf` of its own: it no longer depends on what that module keeps
importing (the other rules migrate `tf.app.flags` and the rest in the same run). When the module cannot be found or read, this finding names the star import;
add the import by hand and run tf-migrate again.
"""
    before = """
from model.layers import *

flags = tf.app.flags
"""
    after = """
from model.layers import *
import tensorflow as tf

flags = tf.app.flags
"""
    #: the project files the documented example reads (tests/test_rule_docs.py writes them)
    project = {"model/__init__.py": "", "model/layers.py": "import tensorflow as tf\n"}
    #: the packages a star import may bring that the file can import itself
    IMPORTABLE = ("tensorflow", "tensorflow.compat.v1", "tensorflow.compat.v2")

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.star: Optional[str] = None
        self.use: Optional[cst.CSTNode] = None
        self.star_used: dict = {}  # name a project star import binds -> its first use

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if self.star is None and isinstance(node.names, cst.ImportStar):
            module = cst.Module([]).code_for_node(node.module) if node.module is not None else ""
            if module.split(".")[0] not in TF_ROOTS:
                self.star = "." * len(node.relative) + module

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if not isinstance(node.value, cst.Name):
            return
        name = node.value.value
        if name in self.ctx.facts.star_names and name not in self.ctx.resolver.bindings:
            self.star_used.setdefault(name, node)
        elif self.use is None and name in ALIASES and name not in self.ctx.resolver.aliases:
            self.use = node

    def leave_Module(self, node: cst.Module) -> None:
        for name in self.star_used:
            qualname, line = self.ctx.facts.star_names[name]
            if qualname not in self.IMPORTABLE:
                continue
            finding = self.report(line.body[0], f"{name!r} comes from this star import (its module "
                                                 f"imports {qualname} as {name}): read there, and "
                                                 "imported here too")
            statement = f"import {qualname} as {name}\n" if name != qualname else f"import {name}\n"
            finding.insert_after(line, [cst.parse_statement(statement)])
        if self.star is None or self.use is None:
            return
        name = self.use.value.value
        if name in _bound(self.ctx.tree):
            return
        self.report(self.use, f"{name!r} comes from `from {self.star} import *`, which tf-migrate "
                              f"cannot follow: nothing in this file was migrated; add "
                              f"`import tensorflow as {name}` and run tf-migrate again")
