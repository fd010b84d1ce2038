"""TFM122: numpy names TF 1.15's numpy had and the numpy TF 2.21 runs on has not."""
import ast
import re
from typing import Dict, Optional, Set

import libcst as cst

from migrate.codemod.cstutil import code
from migrate.codemod.needles import ImportedAttribute, Needle
from migrate.codemod.rule import Rule
from migrate.codemod.tables import upgrade_tables

REMOVED: Dict[str, dict] = upgrade_tables().get("numpy_removed", {})
# `import numpy as np`, also one of several (`import os, numpy as np`)
IMPORTED = re.compile(r"\bimport\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*numpy(?:\s+as\s+(\w+))?\b")
NUMPY = Needle(("numpy",), IMPORTED.pattern)
# `np.int`, not `tf.cast`: many removed names (cast, math, compat, float) are common attributes
NAMES = ImportedAttribute(IMPORTED, "numpy", sorted(REMOVED))
# a replacement that is an expression of its own (`-np.inf`, `-0.0`) keeps its meaning
# unparenthesized only where it stands alone
ALONE = (cst.Arg, cst.Element, cst.DictElement, cst.AssignTarget, cst.Assign, cst.AnnAssign,
         cst.Return, cst.ComparisonTarget, cst.Expr)


class NumpyRemoved(Rule):
    code = "TFM122"
    needle = (NUMPY, NAMES)
    summary = "a numpy name TF 1.15's numpy had and today's numpy has not (np.int, np.float_, np.NaN)"
    fixable = True
    explanation = """
TF 1.15 ran on numpy 1.18; TensorFlow 2.21 needs a numpy of today (2.x), which removed
names TF1-era code used every day: the aliases of builtins (`np.int`, `np.float`,
`np.bool`'s siblings `np.object`, `np.str`, `np.unicode`), old spellings (`np.float_`,
`np.complex_`, `np.string_`, `np.NaN`, `np.Inf`, `np.bool8`) and functions (`np.asscalar`,
`np.product`). Migrated code calling them fails on TF 2.21 with `module 'numpy' has no
attribute 'int'`, often in a data loader that never imports TensorFlow. Each is replaced by
what numpy's own tables of removed names say to use (`int`, `np.float64`, `np.nan`), or by
the name it was an alias of in numpy 1.18, which means the same on both; the rest
(`np.asscalar(x)`: `x.item()`) are reported with numpy's message. The table is generated
from numpy 1.18 (TF 1.15's interpreter) and the installed numpy, never typed by hand. A
builtin the module rebinds (a parameter named `str`) is taken from `builtins`. Modules that
never import TensorFlow are migrated for this too (a data loader's `astype(np.int)`).
"""
    before = """
import numpy as np

labels = labels.astype(np.int)
scores = np.zeros(3, dtype=np.float_)
worst = -np.Inf
"""
    after = """
import numpy as np

labels = labels.astype(int)
scores = np.zeros(3, dtype=np.float64)
worst = -np.inf
"""

    _imported: Optional[Set[str]] = None
    _aliases: Optional[Set[str]] = None
    _bound: Optional[Set[str]] = None

    def _imported_as(self) -> Set[str]:
        """The names an ``import numpy [as np]`` line may bind, read from the text (cheap:
        most attributes this rule sees are TensorFlow's, ``tf.compat``, ``tf.math``)."""
        if self._imported is None:
            self._imported = {m.group(1) or "numpy" for m in IMPORTED.finditer(self.ctx.source)}
        return self._imported

    def _read_module(self) -> None:
        """The names ``numpy`` is imported as, and every name the module binds (once)."""
        self._aliases, self._bound = set(), set()
        try:
            tree = self.ctx.tree if self.ctx.tree is not None else ast.parse(self.ctx.source)
        except SyntaxError:
            return
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == "numpy":
                        self._aliases.add(alias.asname or "numpy")
                    self._bound.add((alias.asname or alias.name).split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                self._bound.update(a.asname or a.name for a in node.names)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self._bound.add(node.id)
            elif isinstance(node, ast.arg):
                self._bound.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._bound.add(node.name)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self._bound.add(node.name)
        self._aliases -= {n for n in self._aliases if self._rebound(n, tree)}

    @staticmethod
    def _rebound(name: str, tree) -> bool:
        """``np`` also assigned (``np = None``): not surely numpy."""
        return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                   for n in ast.walk(tree))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        entry = REMOVED.get(node.attr.value)
        if entry is None or not isinstance(node.value, cst.Name) or node.value.value not in self._imported_as():
            return
        if self._aliases is None:
            self._read_module()
        alias = node.value.value
        if alias not in self._aliases:
            return
        name, replacement = f"{alias}.{node.attr.value}", entry["replacement"]
        gone = f"{name} is gone from today's numpy, which TF 2 needs (TF 1.15's numpy 1.18 had it)"
        if replacement is None:
            self.report(node, f"{gone}: {entry['message']}")
            return
        new = replacement.replace("np.", f"{alias}.", 1)
        shadowed = new.isidentifier() and new in self._bound  # `def f(str): ... np.str(str)`
        if shadowed:
            new = f"builtins.{new}"
        finding = self.report(node, f"{gone}: {new}")
        if shadowed:
            finding.add_import("import builtins")
        expression = cst.parse_expression(new)
        if not isinstance(expression, (cst.Name, cst.Attribute, cst.Float)) \
                and not isinstance(self.ctx.parent(), ALONE):
            expression = cst.parse_expression(f"({code(expression)})")
        finding.replace(node, expression)
