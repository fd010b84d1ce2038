"""Statements of the graph code that bind nothing and read graph values (pure)::

    Y_one_hot = tf.one_hot(Y, nb_classes)
    print("one_hot:", Y_one_hot)
    assert hypothesis.shape.as_list() == Y.shape.as_list()

TF1 ran them once, when it built the graph, on symbolic tensors (the print showed the
tensor's name, shape and dtype). In the native form such a statement moves into the first
kind of run that computes everything it reads, where it stood among that step's statements:
it runs when the step is traced -- once, on the same symbolic tensors and static shapes.
A statement no run computes the values of keeps the program off the native form.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import libcst as cst

from migrate.codemod.cstutil import code

from .model import Computed

Kind = Tuple[str, ...]
NOTE = "# tf-migrate: ignore[TFM401] printed once, when traced, as TF1 printed it building the graph"


def is_traced(stmt) -> bool:
    """One expression (``print(...)``) or ``assert`` on a line of its own."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
        and isinstance(stmt.body[0], (cst.Expr, cst.Assert))


def kind(returns: Sequence, trainings: Sequence) -> Kind:
    """What identifies a kind of run before its statements are chosen: what it returns and trains."""
    return (*(r if isinstance(r, str) else code(r) for r in returns), "|", *(t.key for t in trainings))


def attach(reader, computed: List[Computed], reads: Sequence[str], run_kind: Kind) -> List[Computed]:
    """``computed`` and the traced statements this kind of run computes first (or already
    took), in the program's order."""
    taken = {id(c) for c in computed}
    needed = {n for c in computed for n in c.reads} | set(reads)
    at = {id(c): n for n, c in enumerate(reader.order)}
    out = list(computed)
    for stmt in reader.traced:
        owner = reader.traced_by.get(id(stmt))
        if owner is None and _covered(reader, stmt, taken, needed, at):
            reader.traced_by[id(stmt)] = owner = run_kind
        if owner == run_kind:
            out.append(stmt)
    return sorted(out, key=lambda c: at[id(c)])


def _covered(reader, stmt: Computed, taken: set, needed: set, at: dict) -> bool:
    """Whether every graph value ``stmt`` reads is computed (as bound above it) or fed in
    the step."""
    for name in stmt.reads:
        if name in reader.placeholders:
            if name not in needed:
                return False
            continue
        made = next((c for c in reversed(reader.order[:at[id(stmt)]]) if name in c.binds), None)
        if made is not None and id(made) not in taken:
            return False
    return True


def noted(computed: Computed, stmt: cst.SimpleStatementLine) -> cst.SimpleStatementLine:
    """A print moved into a step says that it prints when the step is traced, as TF1 printed
    while building the graph (TFM401 would otherwise ask for ``tf.print``, every call)."""
    if computed.binds or not (isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)
                              and code(stmt.body[0].value.func) == "print"):
        return stmt
    own = stmt.trailing_whitespace.comment
    note = f"{own.value + '  ' if own is not None else ''}{NOTE}"
    return stmt.with_changes(trailing_whitespace=cst.TrailingWhitespace(
        whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(note)))


def unplaced(reader) -> Optional[str]:
    """Why a traced statement is left without a step, else None."""
    for stmt in reader.traced:
        if id(stmt) not in reader.traced_by:
            first = code(stmt.stmt).strip().splitlines()[0][:60]
            return f"the graph statement {first!r} reads values no run computes"
    return None


__all__ = ["NOTE", "attach", "is_traced", "kind", "noted", "unplaced"]
