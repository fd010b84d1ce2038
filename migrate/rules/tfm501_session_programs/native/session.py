"""What a native program's session does beside its runs (pure): its Saver's saves and
restores, a second session restoring, assignments of Python values, summary writers; each
form's reading is its own module's (``checkpoints``, ``runs``, ``summaries``)."""
from __future__ import annotations

from typing import Optional, Union

import libcst as cst

from migrate.codemod.cstutil import nodes_of

from ..plan import Plan
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
    why = _writers_handled(plan, writers, graph_adds)
    if why:
        return Blocker(why)
    return dict(saver=saver, saves=saves, assigns=assigns, writers=writers, graph_adds=graph_adds)


def _writers_handled(plan: Plan, writers, graph_adds) -> Optional[str]:
    """Every summary writer of the program, and every use of the session's graph, is one the
    steps write with (``FileWriter(logdir, sess.graph)``, ``writer.add_graph(sess.graph)``)."""
    mine = {_binds(w)[0] for w in writers}
    if any(key not in mine for key, _, _ in plan.writers):
        return "a summary writer no run's summaries are written with"
    inside = {id(n) for stmt in (*writers, *graph_adds) for n in nodes_of(stmt, (cst.Attribute,))}
    if any(id(a) not in inside for a in plan.session_graphs):
        return "the session's graph is used"
    return None
