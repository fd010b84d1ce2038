"""Rule base class, findings and edits.

A rule is a class in its own file under ``migrate/rules/`` with a stable code.
It defines ``visit_<Node>``/``leave_<Node>`` methods like a libcst visitor,
reads the tree through ``self.ctx`` (see ``migrate.codemod.engine.FileContext``) and
records findings with ``self.report(...)``. A finding may carry edits; the
engine applies every edit of a file in one pass and manages imports.
"""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple, Type, Union

import libcst as cst

from migrate.codemod.cstutil import is_chain_part
from migrate.codemod.needles import TF1_CODE
from migrate.codemod.report import Reported  # noqa: F401  (rules and the engine name it here too)

Replacement = Union[cst.CSTNode, Callable[[cst.CSTNode], cst.CSTNode]]


@dataclass
class Finding:
    code: str
    message: str
    node: cst.CSTNode
    replacements: List[Tuple[cst.CSTNode, Replacement]] = field(default_factory=list)
    # statements (or a callable returning them, run once the whole file is rewritten)
    inserts: List[Tuple[cst.CSTNode, object]] = field(default_factory=list)
    appends: List[Tuple[cst.CSTNode, object]] = field(default_factory=list)
    removals: List[cst.CSTNode] = field(default_factory=list)
    imports: List[str] = field(default_factory=list)  # "import shims", "import tensorflow as tf"
    names: Dict[str, str] = field(default_factory=dict)  # TF1 prefix -> new object path

    @property
    def fixable(self) -> bool:
        return bool(self.replacements or self.inserts or self.appends or self.removals)

    # -- edits (chainable) ---------------------------------------------------
    def replace(self, node: cst.CSTNode, new: Replacement) -> "Finding":
        self.replacements.append((node, new))
        return self

    def insert_before(self, stmt: cst.CSTNode, stmts) -> "Finding":
        """Statements to put before ``stmt``: a list, or a callable returning one that
        runs once the whole file was rewritten (so it sees every fix, also those of
        statements below ``stmt``, in FileFacts)."""
        self.inserts.append((stmt, stmts if callable(stmts) else list(stmts)))
        return self

    def insert_after(self, stmt: cst.CSTNode, stmts) -> "Finding":
        self.appends.append((stmt, stmts if callable(stmts) else list(stmts)))
        return self

    def remove(self, stmt: cst.CSTNode) -> "Finding":
        self.removals.append(stmt)
        return self

    def add_import(self, statement: str) -> "Finding":
        self.imports.append(statement)
        return self


class Rule:
    """Base of every rule. Subclasses set the class attributes below."""

    code: str = ""
    summary: str = ""
    explanation: str = ""
    before: str = ""
    after: str = ""
    fixable: bool = False
    #: run by ``tf-migrate lint`` (pitfall checks); all rules run on ``upgrade``
    lint: bool = False
    #: a cheap text test: the rule can only fire on sources it matches (None: always);
    #: a tuple means every pattern must match. A file no selected rule can fire on is
    #: never parsed.
    needle: Optional[object] = None
    #: applies TF1 -> TF2 tables: runs only on files that use TF1-only APIs, since the same
    #: spelling in TF2 code means the TF2 API (tf.nn.convolution's argument order, ...)
    tf1_only: bool = False

    @classmethod
    def applies(cls, text: str, memo: Optional[dict] = None) -> bool:
        """Can this rule fire on ``text``? ``memo`` shares needle results between rules."""

        needles = () if cls.needle is None else (
            cls.needle if isinstance(cls.needle, tuple) else (cls.needle,))
        if cls.tf1_only:
            needles = (*needles, TF1_CODE)
        memo = {} if memo is None else memo
        for needle in needles:
            hit = memo.get(id(needle))
            if hit is None:
                hit = memo[id(needle)] = needle.search(text)
            if not hit:
                return False
        return True

    def __init__(self, ctx) -> None:
        self.ctx = ctx

    def report(self, node: cst.CSTNode, message: Optional[str] = None) -> Finding:
        finding = Finding(self.code, message or self.summary, node)
        self.ctx.findings.append(finding)
        return finding


class SymbolRule(Rule):
    """A rule about references to TensorFlow symbols: ``check(node)`` gets every maximal
    dotted name (``tf.train.Saver``, not ``tf.train``) or bare name outside imports."""

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._maybe(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._maybe(node)

    def _maybe(self, node) -> None:

        if self.ctx.in_import or is_chain_part(node, self.ctx.parent()):
            return
        self.check(node)

    def check(self, node) -> None:
        raise NotImplementedError


_REGISTRY: Optional[Dict[str, Type[Rule]]] = None


def all_rules() -> Dict[str, Type[Rule]]:
    """Every rule class under ``migrate.rules``, by code (discovered, not listed)."""
    global _REGISTRY
    if _REGISTRY is None:
        import migrate.rules as package  # the rules import this module: discovered at first use

        found: Dict[str, Type[Rule]] = {}
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for value in vars(module).values():
                if (isinstance(value, type) and issubclass(value, Rule) and value is not Rule
                        and value.code and value.__module__ == module.__name__):
                    if value.code in found:
                        raise RuntimeError(f"duplicate rule code {value.code}")
                    found[value.code] = value
        _REGISTRY = dict(sorted(found.items()))
    return _REGISTRY
