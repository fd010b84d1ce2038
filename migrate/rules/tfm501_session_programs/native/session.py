"""What a native program's session does beside its runs (pure): its Saver's saves and
restores, a second session restoring, assignments of Python values, summary writers; each
form's reading is its own module's (``checkpoints``, ``runs``, ``summaries``)."""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import nodes_of

from ..plan import Plan
from ..syntax import _shadowed
from . import checkpoints, summaries
from .model import Blocker
from .runs import _assigns
from .syntax import _binds


def beside_runs(reader, plan: Plan, stmts, session_at: int, module, call_name, steps) -> Union[dict, Blocker]:
    """What the session does beside its runs: saves and restores (its Saver), a second
    session restoring, assignments, summary writers. The program's fields, or a Blocker."""
    saver, saves = reader.saver, ()
    if saver is not None:
        done = checkpoints.saves(saver, plan.saves, stmts, session_at, module, call_name)
        if isinstance(done, Blocker):
            return done
        saver, saves = done
    why = checkpoints.reopened(reader, plan)
    if why:
        return Blocker(why)
    assigns = _assigns(reader, plan, stmts)
    if isinstance(assigns, Blocker):
        return assigns
    made = summaries.writers(reader, stmts, module, steps, [key for key, _, _ in plan.writers])
    if isinstance(made, Blocker):
        return made
    writers, graph_adds = made
    graph_writes = summaries.graph_writes(reader.call_name, stmts) if steps else ()
    why = _writers_handled(plan, writers, (*graph_adds, *graph_writes))
    if why:
        return Blocker(why)
    return dict(saver=saver, saves=saves, assigns=assigns, writers=writers, graph_adds=graph_adds,
                graph_writes=graph_writes)


def _writers_handled(plan: Plan, writers, graph_adds) -> Optional[str]:
    """Every summary writer of the program, and every use of the session's graph, is one the
    steps write with (``FileWriter(logdir, sess.graph)``, ``writer.add_graph(sess.graph)``),
    or writes a step's graph (a FileWriter of the graph alone)."""
    mine = {_binds(w)[0] for w in writers}
    if any(key not in mine for key, _, _ in plan.writers):
        return "a summary writer no run's summaries are written with"
    inside = {id(n) for stmt in (*writers, *graph_adds) for n in nodes_of(stmt, (cst.Attribute,))}
    if any(id(a) not in inside for a in plan.session_graphs):
        return "the session's graph is used"
    return None


def renamed(block: Sequence[cst.BaseStatement], names: Sequence[str]) -> Union[Tuple[Tuple[cst.Name, str], ...], str]:
    """The session's block binding a name of the graph's state (``b = (step % 8) * 32``, ``b =
    sess.run(hypothesis)``): TF1's graph kept the variable, the block's ``b`` was a Python
    value from then on. The block's occurrences of it, renamed (their nodes and the name),
    when the planner's proof holds (``_shadowed``: its first mention binds it without
    reading it, every later one follows in the same statements); else why not."""
    proven = _shadowed(list(block), names)
    out: List[Tuple[cst.Name, str]] = []
    for name in names:
        found = _occurrences(block, name)
        if name not in proven:
            bound = found and _first_binds(block, found[0])
            return f"the session's block rebinds {name!r}, which the graph reads, and reads it elsewhere" \
                if bound else f"the session's block uses {name!r}, the graph's, before binding it in its statements"
        out += [(n, name) for n in found]
    return tuple(out)


def _occurrences(block, name: str) -> List[cst.Name]:
    """The Name nodes of ``name`` in the block, in source order (attributes and keywords aside)."""
    skip = {id(a.attr) for stmt in block for a in nodes_of(stmt, (cst.Attribute,))}
    skip |= {id(a.keyword) for stmt in block for a in nodes_of(stmt, (cst.Arg,)) if a.keyword is not None}
    return [n for stmt in block for n in nodes_of(stmt, (cst.Name,)) if n.value == name and id(n) not in skip]


def _first_binds(block, first: cst.Name) -> bool:
    """Whether ``first`` is the target of ``name = ...`` in a statement list of the block (its
    top, a ``with`` or ``for`` body in it): the refusal says which proof failed."""
    lists = [list(block)] + [list(n.body.body) for stmt in block for n in nodes_of(stmt, (cst.With, cst.For))
                             if isinstance(n.body, cst.IndentedBlock)]
    return any(isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
               and isinstance(stmt.body[0], cst.Assign) and any(t.target is first for t in stmt.body[0].targets)
               for statements in lists for stmt in statements)


def named_feeds(stmts, feed_dicts) -> dict:
    """Feed dicts bound to a name once (``feed_dict = {X: batch_xs, ...}``, in the program's
    block or a method of its class): name -> the dict; a name bound to two is left out."""
    found: dict = {}
    for stmt in stmts:
        for assign in nodes_of(stmt, (cst.Assign,)):
            target = assign.targets[0].target
            if id(assign.value) in feed_dicts and isinstance(target, cst.Name):
                found.setdefault(target.value, []).append(assign.value)
    return {name: values[0] for name, values in found.items() if len(values) == 1}
