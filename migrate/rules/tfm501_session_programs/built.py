"""Values the graph code read when TF1 built the graph, bound again before a converted
program would read them.

TF1 built the graph where its statements stood: a Python value or object the graph code
read (``scaled = x * lr``) was read then. A converted program builds it later, when a step
is first traced (``shims.GraphProgram`` and the native form alike): after the rest of the
block ran. Where a name the graph code reads is bound again in between (``lr = 0.5`` after
the graph, or in the session's block), the converted program would compute with the new
value; such a program stays in graph mode, and the finding names the binding. Pure: nodes in,
a reason or None out.
"""
from __future__ import annotations

import builtins
from typing import Optional, Sequence, Set

import libcst as cst

from migrate.codemod.cstutil import nodes_of

from .native.syntax import _binds, _bound, _names_read
from .plan import Plan


def rebound_after_build(stmts: Sequence[cst.BaseStatement], session_at: int, plan: Plan) -> Optional[str]:
    """Why the converted program would read a value the graph code read at build time
    anew, else None."""
    graph = [stmts[i] for i in plan.graph] + list(plan.hoisted)
    made: Set[str] = set()
    for stmt in graph:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            made.add(stmt.name.value)
        made |= set(_binds(stmt) or ()) | _bound([stmt])
    ids = {id(s) for s in graph}
    later = _bound([s for s in stmts[session_at:] if id(s) not in ids]) - made
    python = set(dir(builtins))
    for at, stmt in enumerate(stmts[:session_at]):
        if id(stmt) not in ids:
            continue
        read = set(_reads(stmt)) - made - python
        again = sorted(read & (later | _bound([s for s in stmts[at + 1:session_at] if id(s) not in ids])))
        if again:
            return (f"{again[0]!r}, which the graph code read when TF1 built the graph, is bound again "
                    "before the program runs (a converted program would read the new value)")
    return None


def _reads(stmt) -> Sequence[str]:
    """The names a graph statement reads from outside it (a function: from the module)."""
    if isinstance(stmt, cst.FunctionDef):
        own = {p.name.value for p in nodes_of(stmt.params, (cst.Param,))} | _bound(list(stmt.body.body))
        return [n for n in _names_read(stmt.body) if n not in own]
    return _names_read(stmt)
