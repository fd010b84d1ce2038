"""Where statements are in the source, from CPython's tree: positions and splicing.

libcst knows positions only by laying out (generating the code of) a whole module,
and writes a file only by generating all of it. Both cost as much as the parse again.
CPython's parser (~20x faster) gives every statement's first line, so:

- ``Layout.position(node)`` lays out only the innermost statement holding ``node`` (just
  its header when ``node`` is in one: a ``def``'s parameters, not its body), starting at
  that statement's line with the indentation of its blocks: exactly what libcst's
  PositionProvider gives for the whole module.
- ``Layout.code(module)`` generates a rewritten module, taking every statement the
  rewrite kept (the very same node, at the same indentation) from the source text.

A statement's text is the source from its first line (its leading comments and blank
lines included) to the first line of the next statement in its block, which is how
libcst divides the text between statements. When the two parsers do not agree on the
statements, or a node is outside any statement, the whole-module ways are used.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

_BLOCK_OWNERS = (cst.Module, cst.IndentedBlock)
_NEWLINE = re.compile(r"\r\n?|\n")
_STUB = cst.IndentedBlock([cst.SimpleStatementLine([cst.Pass()])])
# compound statements whose header (what precedes the body) can be laid out alone
_HEADERED = (cst.FunctionDef, cst.ClassDef, cst.If, cst.For, cst.While, cst.With)


@dataclass
class Pos:
    line: int
    column: int


class _Holder:
    """What PositionProvidingCodegenState writes positions into."""

    def __init__(self) -> None:
        self._computed: Dict[cst.CSTNode, object] = {}


@dataclass(frozen=True)
class _Verbatim(cst.BaseStatement):
    """An unchanged statement at the indentation it had: generates its source text."""

    text: str

    def _visit_and_replace_children(self, visitor):  # pragma: no cover - never visited
        return self

    def _codegen_impl(self, state: CodegenState, **kwargs) -> None:
        # the line end is a token of its own, as libcst writes it: a module without a
        # final newline drops its last token, which is this one if the rewrite removed
        # the statements after this one
        text = self.text
        cut = len(text) - (2 if text.endswith("\r\n") else 1)
        state.add_token(text[:cut])
        state.add_token(text[cut:])


class Layout:
    def __init__(self, module: cst.Module, source: str, tree, parents: Dict[int, cst.CSTNode]) -> None:
        self.module, self.source, self.tree, self.parents = module, source, tree, parents
        self._lists: Dict[int, Optional[list]] = {}  # id(block) -> its CPython statements
        self._index: Dict[int, Dict[int, int]] = {}  # id(block) -> id(statement) -> CPython index
        self._order: Dict[int, Dict[int, int]] = {}  # id(block) -> id(statement) -> its index
        self._done: Dict[tuple, tuple] = {}  # (id(statement), header only) -> (positions, copy)
        self._whole = None
        self._line_starts: Optional[List[int]] = None

    # -- the CPython statement of a libcst statement -------------------------------
    def _parent(self, node):
        return self.parents.get(id(node))

    def _statements_of(self, block) -> Optional[list]:
        """The CPython statement list that ``block`` (Module or IndentedBlock) holds."""
        key = id(block)
        if key in self._lists:
            return self._lists[key]
        found = self._find_list(block)
        if found is not None:  # the two parsers must agree on the statement count
            count = sum(len(s.body) if isinstance(s, cst.SimpleStatementLine) else 1
                        for s in block.body)
            if count != len(found):
                found = None
        self._lists[key] = found
        return found

    def _find_list(self, block) -> Optional[list]:
        if self.tree is None:
            return None
        if block is self.module:
            return self.tree.body
        owner = self._parent(block)
        if owner is None:
            return None
        if isinstance(owner, cst.Else):
            outer = self._compound(self._parent(owner))
            return getattr(outer, "orelse", None)
        if isinstance(owner, cst.Finally):
            outer = self._compound(self._parent(owner))
            return getattr(outer, "finalbody", None)
        if isinstance(owner, (cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase)):
            holder = self._parent(owner)
            outer = self._compound(holder)
            if outer is None:
                return None
            items = holder.cases if isinstance(owner, cst.MatchCase) else holder.handlers
            theirs = outer.cases if isinstance(owner, cst.MatchCase) else outer.handlers
            for i, item in enumerate(items):
                if item is owner:
                    return theirs[i].body if i < len(theirs) else None
            return None
        if getattr(owner, "body", None) is block:
            outer = self._compound(owner)
            return outer.body if outer is not None else None
        return None

    def _compound(self, node):
        """The CPython node of a compound statement (an ``elif`` included)."""

        if node is None:
            return None
        parent = self._parent(node)
        if isinstance(parent, cst.If) and parent.orelse is node:  # elif
            outer = self._compound(parent)
            if outer is None or len(outer.orelse) != 1 or not isinstance(outer.orelse[0], ast.If):
                return None
            return outer.orelse[0]
        return self._cpython(node)

    def _cpython(self, stmt):
        """The CPython statement where ``stmt`` (in a block) starts, or None."""

        block = self._parent(stmt)
        if not isinstance(block, _BLOCK_OWNERS):
            return None
        statements = self._statements_of(block)
        if statements is None:
            return None
        index = self._index.get(id(block))
        if index is None:
            index, i = {}, 0
            for s in block.body:
                index[id(s)] = i
                i += len(s.body) if isinstance(s, cst.SimpleStatementLine) else 1
            self._index[id(block)] = index
        i = index.get(id(stmt))
        if i is None:
            return None
        found = statements[i]
        compound = isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If,
                                      ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith,
                                      ast.Try, ast.Match, getattr(ast, "TryStar", ast.Try)))
        if compound == isinstance(stmt, cst.SimpleStatementLine):
            return None
        return found

    def _first_line(self, stmt) -> Optional[int]:
        """The line ``stmt``'s code starts on (its first decorator; not its leading
        comments and blank lines)."""
        found = self._cpython(stmt)
        if found is None:
            return None
        decorators = getattr(found, "decorator_list", None)
        return decorators[0].lineno if decorators else found.lineno

    def _start_line(self, stmt) -> Optional[int]:
        """The first line of ``stmt``'s text, its leading lines included."""
        line = self._first_line(stmt)
        return None if line is None else line - len(stmt.leading_lines)

    def _indent(self, stmt) -> Tuple[str, ...]:
        """The indentation libcst's codegen has in force when it writes ``stmt``."""
        tokens = []
        node = self._parent(stmt)
        while node is not None and node is not self.module:
            if isinstance(node, (cst.IndentedBlock, cst.Match)):  # a match indents its cases
                tokens.append(self._indent_of(node))
            node = self._parent(node)
        return tuple(reversed(tokens))

    def _indent_of(self, node) -> str:
        """What an IndentedBlock (or a match, for its cases) adds to the indentation."""
        return self.module.default_indent if node.indent is None else node.indent

    # -- positions -------------------------------------------------------------------
    def position(self, node: cst.CSTNode) -> Pos:
        """Where ``node`` starts (1-based line, 0-based column), as PositionProvider says."""
        below, stmt = None, node
        while stmt is not None:
            parent = self._parent(stmt)
            if isinstance(parent, _BLOCK_OWNERS) and isinstance(stmt, cst.BaseStatement):
                break
            below, stmt = stmt, parent
        if stmt is None:
            return self._whole_position(node)
        header = self._in_header(stmt, below)
        entry = self._done.get((id(stmt), header))
        if entry is None:
            entry = self._lay_out(stmt, header)
            if entry is None:
                return self._whole_position(node)
            self._done[(id(stmt), header)] = entry
        positions, copy = entry
        found = positions.get(copy if node is stmt else node)
        if found is None:
            return self._whole_position(node)
        return Pos(found.start.line, found.start.column)

    @staticmethod
    def _in_header(stmt, below) -> bool:
        """Is the path into ``stmt`` through the part written before its body?"""
        if not isinstance(stmt, _HEADERED):
            return False
        if below is None:
            return True
        return below is not stmt.body and below is not getattr(stmt, "orelse", None)

    def _lay_out(self, stmt, header: bool):
        line = self._start_line(stmt)
        if line is None:
            return None
        copy = stmt
        if header:  # the body does not move the header: lay out a one-line body instead
            changes = {"body": _STUB}
            if getattr(stmt, "orelse", None) is not None:
                changes["orelse"] = None
            copy = stmt.with_changes(**changes)
        holder = _Holder()
        state = PositionProvidingCodegenState(default_indent=self.module.default_indent,
                                              default_newline=self.module.default_newline,
                                              provider=holder)
        state.indent_tokens = list(self._indent(stmt))
        state.line = line
        copy._codegen(state)
        return holder._computed, copy

    def _whole_position(self, node) -> Pos:
        if self._whole is None:
            self._whole = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        start = self._whole[node].start
        return Pos(start.line, start.column)

    # -- code ------------------------------------------------------------------------
    def code(self, module: cst.Module) -> str:
        """``module.code`` for a rewrite of this layout's module: the statements the
        rewrite kept come from the source text."""
        if self.tree is None:
            return module.code
        spliced = self._splice_block(module, ())
        return (module if spliced is None else spliced).code

    def _text(self, stmt, indent: Tuple[str, ...]) -> Optional[str]:
        """The source text of an original statement written at ``indent``: only for a
        statement that is followed by another in its block (where its text ends)."""
        block = self._parent(stmt)
        if not isinstance(block, _BLOCK_OWNERS) or self._indent(stmt) != indent:
            return None
        body = block.body
        order = self._order.get(id(block))
        if order is None:
            order = self._order[id(block)] = {id(s): i for i, s in enumerate(body)}
        position = order.get(id(stmt))
        if position is None or position + 1 >= len(body):
            return None
        start, end = self._start_line(stmt), self._start_line(body[position + 1])
        if start is None or end is None or not 0 < start < end:
            return None
        starts = self._starts()
        if end - 1 >= len(starts):
            return None
        return self.source[starts[start - 1]:starts[end - 1]]

    def _starts(self) -> List[int]:
        """Offsets where each line begins (lines end as the tokenizer ends them)."""
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(self.source)]
        return self._line_starts

    def _is_original(self, node) -> bool:
        """Is ``node`` a statement of the source's tree? (Those are alive while the layout
        is, so no new node can share an id with one.)"""
        return isinstance(self.parents.get(id(node)), _BLOCK_OWNERS)

    def _splice_block(self, block, indent: Tuple[str, ...]):
        """``block`` (Module or IndentedBlock) with spliced statements, or None if none."""
        if isinstance(block, cst.IndentedBlock):
            indent = indent + (self._indent_of(block),)
        out, changed = [], False
        for stmt in block.body:
            new = None
            if self._is_original(stmt):
                text = self._text(stmt, indent)
                if text is not None:
                    new = _Verbatim(text)
            if new is None:
                new = self._splice_statement(stmt, indent)
            changed = changed or new is not None
            out.append(stmt if new is None else new)
        return block.with_changes(body=out) if changed else None

    def _splice_statement(self, stmt, indent: Tuple[str, ...]):
        """A compound statement with its blocks spliced, or None if nothing changed."""
        if not isinstance(stmt, cst.BaseCompoundStatement):
            return None
        changes = {}
        body = getattr(stmt, "body", None)
        if isinstance(body, cst.IndentedBlock):
            new = self._splice_block(body, indent)
            if new is not None:
                changes["body"] = new
        if isinstance(stmt, cst.Match):  # a match indents its cases
            field, clause_indent = "cases", indent + (self._indent_of(stmt),)
        else:
            field, clause_indent = "handlers", indent
        items = getattr(stmt, field, None)
        if items:
            new_items = [self._splice_clause(item, clause_indent) for item in items]
            if any(n is not None for n in new_items):
                changes[field] = [n or item for n, item in zip(new_items, items)]
        for name in ("orelse", "finalbody"):
            clause = getattr(stmt, name, None)
            if clause is None:
                continue
            new = (self._splice_statement(clause, indent) if isinstance(clause, cst.If)
                   else self._splice_clause(clause, indent))
            if new is not None:
                changes[name] = new
        return stmt.with_changes(**changes) if changes else None

    def _splice_clause(self, clause, indent: Tuple[str, ...]):
        """An else/finally/except/case clause with its block spliced, or None."""
        body = getattr(clause, "body", None)
        if not isinstance(body, cst.IndentedBlock):
            return None
        new = self._splice_block(body, indent)
        return None if new is None else clause.with_changes(body=new)
