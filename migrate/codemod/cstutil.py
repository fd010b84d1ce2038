"""Small libcst helpers shared by rules."""
from __future__ import annotations

import ast

import dataclasses
import re
from collections import Counter
from typing import Dict, Optional

import libcst as cst


def is_chain_part(node: cst.CSTNode, parent: Optional[cst.CSTNode]) -> bool:
    """True for ``tf`` and ``tf.x`` inside ``tf.x.y``, and for attribute/keyword names."""
    kind = type(parent)  # (type checks: isinstance against libcst's ABCs is slow)
    if kind is cst.Attribute:
        return parent.value is node or parent.attr is node
    if kind is cst.Arg:
        return parent.keyword is node
    return False


def string_value(node: Optional[cst.CSTNode]) -> Optional[str]:
    """The value of a plain string literal, else None."""
    if isinstance(node, cst.SimpleString):
        try:
            value = node.evaluated_value
        except Exception:
            return None
        return value if isinstance(value, str) else None
    return None


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def arg(value: cst.BaseExpression, keyword: Optional[str] = None) -> cst.Arg:
    if keyword is None:
        return cst.Arg(value)
    return cst.Arg(value, keyword=cst.Name(keyword),
                   equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))


def strip_arg(a: cst.Arg) -> cst.Arg:
    """An argument without its trailing comma/whitespace (for reuse in a new call)."""
    return a.with_changes(comma=cst.MaybeSentinel.DEFAULT,
                          whitespace_after_arg=cst.SimpleWhitespace(""))


def join_args(args) -> list:
    """``args`` separated by ``", "``, the last without a comma."""
    args = list(args)
    return [a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for a in args[:-1]] + [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args[-1:]]


def call(func: cst.BaseExpression, args) -> cst.Call:
    return cst.Call(func=func, args=join_args(strip_arg(a) for a in args))


_SKIP_FIELDS = {"lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators",
                "header", "footer", "trailing_whitespace", "equal", "colon", "dot", "operator",
                "star", "newline", "indent", "asynchronous", "default_indent", "default_newline",
                "encoding", "has_trailing_newline", "lbracket", "rbracket", "lbrace", "rbrace",
                "between", "prefix", "quote", "value_whitespace"}
_FIELDS: Dict[type, tuple] = {}
# node classes whose fields libcst declares in another order than the source has them
# (``f(kw=value)``, ``a if test else b``, a def's return annotation before its body)
_SOURCE_ORDER = {
    "Arg": ("keyword", "value"),
    "IfExp": ("body", "test", "orelse"),
    "FunctionDef": ("decorators", "name", "type_parameters", "params", "returns", "body"),
    "ClassDef": ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    "MatchCase": ("pattern", "guard", "body"),
    "ExceptHandler": ("type", "name", "body"),
    "ExceptStarHandler": ("type", "name", "body"),
    "Parameters": ("posonly_params", "posonly_ind", "params", "star_arg", "kwonly_params",
                   "star_kwarg"),
    "TypeAlias": ("name", "type_parameters", "value"),
}


def child_fields(kind: type) -> tuple:
    """The fields of a node class that can hold expressions or statements, in source order."""
    names = _FIELDS.get(kind)
    if names is None:

        names = tuple(f.name for f in dataclasses.fields(kind)
                      if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace"))
        order = _SOURCE_ORDER.get(kind.__name__)
        if order is not None:
            names = tuple(n for n in order if n in names) + tuple(n for n in names if n not in order)
        _FIELDS[kind] = names
    return names


def _children(node: cst.CSTNode) -> list:
    """A node's expression and statement children, in source order."""
    children = []
    for name in child_fields(type(node)):
        value = getattr(node, name)
        value_type = type(value)
        if value_type is tuple or value_type is list:
            children.extend(v for v in value if is_node(v))
        elif is_node(value):
            children.append(value)
    return children


def nodes_of(root: cst.CSTNode, kind: type):
    """Every node of ``kind`` under ``root``, in source order, by a plain walk over the
    expression and statement fields (libcst's visit() costs several times more)."""
    stack = [root]
    matches: Dict[type, bool] = {}  # per node class: isinstance against libcst's ABCs is slow
    while stack:
        node = stack.pop()
        node_type = type(node)
        hit = matches.get(node_type)
        if hit is None:
            hit = matches[node_type] = isinstance(node, kind)
        if hit:
            yield node
        stack.extend(reversed(_children(node)))


_LEAVE = object()


def walk(root: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``root.visit(visitor)`` for a visitor that only reads: its ``on_visit`` and
    ``on_leave`` (so its ``visit_X`` and ``leave_X``) run as libcst runs them, over the
    expression and statement fields in source order (tokens and whitespace are not
    visited). Several times cheaper than libcst's visit, which rebuilds every node it
    passes; no recursion, so no depth limit."""
    stack: list = [root]
    while stack:
        node = stack.pop()
        if node is _LEAVE:
            visitor.on_leave(stack.pop())
            continue
        if not visitor.on_visit(node):
            visitor.on_leave(node)
            continue
        stack.append(node)
        stack.append(_LEAVE)
        stack.extend(reversed(_children(node)))


_NODE_TYPES: Dict[type, bool] = {}


def is_node(value) -> bool:
    """``isinstance(value, cst.CSTNode)``, memoized by type."""
    kind = type(value)
    known = _NODE_TYPES.get(kind)
    if known is None:
        known = _NODE_TYPES[kind] = isinstance(value, cst.CSTNode)
    return known


def identifiers(module: cst.Module) -> set:
    """Every identifier (Name node) in a module: names a new binding must avoid."""
    return {node.value for node in nodes_of(module, cst.Name)}


def _tree_identifiers(tree) -> set:
    """``identifiers`` read from CPython's tree of the same source (about 10x faster than
    a walk of libcst's): every identifier a libcst Name node holds."""
    found: set = set()
    add = found.add
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Name:
            add(node.id)
        elif kind is ast.Attribute:
            add(node.attr)
        elif kind is ast.arg:
            add(node.arg)
        elif kind is ast.keyword:
            if node.arg:
                add(node.arg)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            add(node.name)
        elif kind is ast.alias:
            if node.name != "*":
                found.update(node.name.split("."))
            if node.asname:
                add(node.asname)
        elif kind is ast.ImportFrom and node.module:
            found.update(node.module.split("."))
        elif kind in (ast.Global, ast.Nonlocal):
            found.update(node.names)
        elif kind in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
            if node.name:
                add(node.name)
        elif kind is ast.Constant:
            value = node.value
            if value is None or value is True or value is False:  # a Name in libcst's tree
                add(str(value))
        elif kind is ast.MatchMapping and node.rest:
            add(node.rest)
        elif kind is ast.MatchClass:
            found.update(node.kwd_attrs)
    return found


def taken_names(ctx) -> set:
    """Every identifier the file uses and every name reserved so far (once per file)."""
    taken = ctx.facts.identifiers
    if taken is None:
        taken = ctx.facts.identifiers = source_identifiers(ctx)
    return taken


def reuse_name(ctx, name: str) -> bool:
    """Claim ``name``, a name of the file's own code whose every use an edit removes, for a
    new binding of that edit; False when another edit claimed it first."""
    if name in ctx.facts.reused:
        return False
    ctx.facts.reused.add(name)
    taken_names(ctx).add(name)
    return True


def source_identifiers(ctx) -> set:
    """Every identifier the file's own code uses (not the names edits reserved since)."""
    return identifiers(ctx.module) if ctx.tree is None else _tree_identifiers(ctx.tree)


def fresh_name(ctx, wanted: str) -> str:
    """An identifier based on ``wanted`` that no Name in the module uses yet (and reserve it)."""

    taken = taken_names(ctx)
    base = re.sub(r"\W", "_", wanted) or "value"
    if base[0].isdigit():
        base = "layer_" + base
    candidate = unused_name(base, taken)
    taken.add(candidate)
    return candidate


def unused_name(base: str, taken: set) -> str:
    """``base``, else ``base_1``, ``base_2``, ...: the first not in ``taken``."""
    candidate, n = base, 1
    while candidate in taken:
        candidate = f"{base}_{n}"
        n += 1
    return candidate


class NameReads(cst.CSTVisitor):
    """Counts the names code reads: bare names and the roots of attribute chains (``tf``
    in ``tf.x.y``), not attribute names, keyword names, or anything in imports."""

    def __init__(self) -> None:
        super().__init__()
        self.uses: Counter = Counter()

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.uses[node.value] += 1


def names_read(*nodes: cst.CSTNode) -> Counter:
    visitor = NameReads()
    for node in nodes:
        walk(node, visitor)
    return visitor.uses
