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
# np.reshape(a, newshape=...): {function: {keyword: {"replacement", "message"}}}
KEYWORDS: Dict[str, Dict[str, dict]] = upgrade_tables().get("numpy_removed_keywords", {})
# `import numpy as np`, also one of several (`import os, numpy as np`)
IMPORTED = re.compile(r"\bimport\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*numpy(?:\s+as\s+(\w+))?\b")
NUMPY = Needle(("numpy",), IMPORTED.pattern)
# `np.int`, not `tf.cast`: many removed names (cast, math, compat, float) are common attributes
NAMES = ImportedAttribute(IMPORTED, "numpy", sorted(set(REMOVED) | set(KEYWORDS)))
# a replacement that is an expression of its own (`-np.inf`, `-0.0`) keeps its meaning
# unparenthesized only where it stands alone
ALONE = (cst.Arg, cst.Element, cst.DictElement, cst.AssignTarget, cst.Assign, cst.AnnAssign,
         cst.Return, cst.ComparisonTarget, cst.Expr)


TAKEN = "is gone from today's numpy, which TF 2 needs (TF 1.15's numpy 1.18 took it)"


class NumpyRemoved(Rule):
    code = "TFM122"
    needle = (NUMPY, NAMES)
    summary = "a numpy name or keyword TF 1.15's numpy had and today's numpy has not (np.int, np.NaN, newshape=)"
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

Keywords numpy removed fail the same way (`np.reshape(a, newshape=(2, 3))`: "unexpected
keyword argument"). Their table is generated from the two numpys' signatures: a keyword
whose place in the signature a new name of the same kind took is renamed (`newshape` ->
`shape`, `interpolation` -> `method`), one numpy 1.18 documented as "Has no effect" is
dropped (`np.corrcoef(..., bias=1)`), and the others are reported with what numpy 1.18's
documentation said of them (`np.histogram(normed=)`).
"""
    before = """
import numpy as np

labels = labels.astype(np.int)
scores = np.zeros(3, dtype=np.float_)
worst = -np.Inf
grid = np.reshape(scores, newshape=(3, 1))
"""
    after = """
import numpy as np

labels = labels.astype(int)
scores = np.zeros(3, dtype=np.float64)
worst = -np.inf
grid = np.reshape(scores, shape=(3, 1))
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

    def _numpy(self, node: cst.BaseExpression) -> Optional[str]:
        """The alias of ``np.f`` when ``np`` is surely numpy here, else None."""
        if not isinstance(node, cst.Attribute) or not isinstance(node.value, cst.Name) \
                or node.value.value not in self._imported_as():
            return None
        if self._aliases is None:
            self._read_module()
        return node.value.value if node.value.value in self._aliases else None

    def visit_Call(self, node: cst.Call) -> None:
        """Keywords numpy removed (``np.reshape(a, newshape=...)``): renamed where numpy
        renamed them, dropped where numpy 1.18 said they had no effect, else reported with
        what numpy 1.18 said of them."""
        table = KEYWORDS.get(node.func.attr.value) if isinstance(node.func, cst.Attribute) else None
        if not table or self._numpy(node.func) is None:
            return
        fixed, first = [], None
        for arg in node.args:
            entry = table.get(arg.keyword.value) if arg.keyword is not None else None
            if entry is None:
                continue
            gone = f"{code(node.func)}({arg.keyword.value}=)"
            if entry["replacement"] is None:
                self.report(arg, f"error: {gone} {TAKEN}; {entry['message']}")
                continue
            first = first or arg
            fixed.append(f"{gone} {TAKEN}: {entry['message']}" + ("" if entry["replacement"] else " (dropped)"))
        if first is not None:  # one finding, one edit of the call (as its arguments' fixes left it)
            self.report(first, "; ".join(fixed)).replace(node, lambda call: _keywords_fixed(call, table))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        entry = REMOVED.get(node.attr.value)
        alias = self._numpy(node) if entry is not None else None
        if alias is None:
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


def _keywords_fixed(call: cst.Call, table: Dict[str, dict]) -> cst.Call:
    """``call`` with the keywords numpy renamed given their new names and those it dropped
    left out (the others stay, reported)."""
    args = []
    for arg in call.args:
        entry = table.get(arg.keyword.value) if arg.keyword is not None else None
        if entry is None or entry["replacement"] is None:
            args.append(arg)
        elif entry["replacement"]:
            args.append(arg.with_changes(keyword=cst.Name(entry["replacement"])))
    if args and len(args) < len(call.args):
        args[-1] = args[-1].with_changes(comma=call.args[-1].comma)
    return call.with_changes(args=args)
