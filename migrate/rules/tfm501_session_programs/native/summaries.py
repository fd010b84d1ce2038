"""The native form of a program's summaries: ``tf.summary`` v2 in the steps that wrote them.

Read (pure): ``tf.summary.scalar("cost", cost)`` (``histogram``, ``image``) in the graph is a
summary of a graph value, with TF1's tag (its name scopes, made unique as TF1 made them);
``merged = tf.summary.merge_all()`` (or ``merge([...])``) the summaries made before it. A run
fetching one (``s, _ = sess.run([merged, train], feed)``) whose result only a later
``writer.add_summary(s, step)`` of the same block reads, the writer made as
``writer = tf.summary.FileWriter(logdir[, graph])``, is a step that writes them itself:
``train_step(x, y, step=<step>)``, its summaries under ``with writer.as_default(step=step):``
after what it computes and before the update (the values TF1's run read); the writer is
``tf.summary.create_file_writer(logdir)``, ``add_summary`` and ``add_graph`` go.
"""
from __future__ import annotations

import json
from typing import Callable, List, Optional, Sequence, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from ..syntax import _key
from .model import Blocker, Summary, Written
from .syntax import _arguments, _bound, _names_read

OPS = {"tf.summary.scalar": ("name", "tensor", "collections", "family"),
       "tf.summary.histogram": ("name", "values", "collections", "family"),
       "tf.summary.image": ("name", "tensor", "max_outputs", "collections", "family")}
MERGES = {"tf.summary.merge_all", "tf.summary.merge", "tf.merge_all_summaries"}
WRITER = "tf.summary.FileWriter"


def statement(reader, stmt, binds, value: cst.Call) -> Optional[str]:
    """A summary op or a merge of them, among the graph statements. Why it is not written
    natively, else None."""
    called = reader.call_name(value)
    if binds is not None and len(binds) != 1:
        return "summaries unpacked from one statement"
    key = binds[0] if binds else None
    if called in MERGES:
        if key is None:
            return "a merged summary bound to no name"
        if called != "tf.summary.merge":
            made = tuple(reader.summaries) if not value.args else None
        else:
            listed = value.args[0].value if len(value.args) == 1 and value.args[0].keyword is None else None
            names = [e.value.value for e in getattr(listed, "elements", ()) if isinstance(e.value, cst.Name)]
            made = tuple(s for n in names for s in reader.merged.get(n, ())) \
                if listed is not None and len(names) == len(listed.elements) \
                and all(n in reader.merged for n in names) else None
        if not made:
            return f"a merge of summaries the native form cannot read ({code(value)[:40]})"
        reader.merged[key] = made
        reader.dropped.append(stmt)
        return None
    params = OPS[called]
    args = _arguments(value, params)
    if args is None or set(args) - set(params[:3] if called.endswith("image") else params[:2]):
        return f"a {called} with arguments the native form does not write"
    name, data = args.get("name"), args.get(params[1])
    if not isinstance(name, cst.SimpleString) or data is None:
        return f"a {called} named by an expression"
    why = reader.forbidden(data)
    if why:
        return f"a summary of {why}"
    tag, k = "/".join([*reader.name_scopes, name.evaluated_value]), 0
    unique = tag
    while unique.lower() in reader.tags:  # TF1's summary ops are named, and tagged, uniquely
        k += 1
        unique = f"{tag}_{k}"
    reader.tags.add(unique.lower())
    made = Summary(stmt, value, called.rsplit(".", 1)[-1], unique, _names_read(data), key)
    reader.summaries.append(made)
    if key is not None:
        reader.merged[key] = (made,)
    reader.dropped.append(stmt)
    return None


def written(reader, run_stmts, call: cst.Call, targets: Sequence[Optional[cst.BaseExpression]],
            trains: bool) -> Union[Written, Blocker]:
    """What a run fetching summaries writes: the one ``writer.add_summary(s, step)`` that
    reads each fetched summary's result (``targets``: what each is assigned to), in the
    run's block after it. ``run_stmts`` is the program's statement lists (see ``blocks``)."""
    block, at = _block_of(run_stmts, call)
    if block is not None and not targets:  # `writer.add_summary(s.eval(feed), step)`: one statement
        add = _value_of(block[at])
        if isinstance(add, cst.Call) and isinstance(add.func, cst.Attribute) and add.func.attr.value == "add_summary" \
                and add.args and add.args[0].value is call and _step_argument(add) is not None:
            return _checked(reader, Written(code(add.func.value), _step_argument(add), (), add), (), trains)
    names = [t.value for t in targets if isinstance(t, cst.Name)]
    if len(names) != len(targets) or not names:
        return Blocker("a fetched summary not assigned to a name")
    if block is None:
        return Blocker("a run of summaries in an expression the native form does not read")
    adds = []
    for name in names:
        found = [(i, c) for i, s in enumerate(block[at + 1:], at + 1) for c in nodes_of(s, (cst.Call,))
                 if isinstance(c.func, cst.Attribute) and c.func.attr.value == "add_summary"
                 and c.args and isinstance(c.args[0].value, cst.Name) and c.args[0].value.value == name]
        uses = [n for s in block[at + 1:] for n in nodes_of(s, (cst.Name,)) if n.value == name]
        if len(found) != 1 or len(uses) != 1 or not _alone(block[found[0][0]], found[0][1]):
            return Blocker(f"the summary {name!r} is read other than by one add_summary() after its run")
        adds.append(found[0])
    writers = {code(c.func.value) for _, c in adds}
    if len(writers) != 1 or len(adds) != 1 and len({code(c) for _, c in adds}) != 1:
        return Blocker("summaries of one run written by two add_summary() calls")
    index, add = adds[0]
    step = _step_argument(add)
    if step is None:
        return Blocker("an add_summary() without a step")
    return _checked(reader, Written(writers.pop(), step, tuple(block[i] for i, _ in adds)),
                    block[at + 1:index], trains)


def _checked(reader, written: Written, between, trains: bool) -> Union[Written, Blocker]:
    """The step add_summary was given is the run's, computed before it (the statements
    ``between`` the two bind nothing it reads; no TensorFlow, no variable the run trains)."""
    step = written.step
    if written.step is None:
        return Blocker("an add_summary() without a step")
    read = set(_names_read(step))
    bound = _bound(between)
    if read & bound:
        return Blocker(f"an add_summary() step read from {sorted(read & bound)[0]!r}, bound after the run")
    if read & set(reader.state) and trains:
        return Blocker("an add_summary() step read from a variable the run updates")
    if any(reader.call_name(c) for c in nodes_of(step, (cst.Call,))) or any(
            isinstance(c.func, cst.Attribute) and c.func.attr.value in ("run", "eval")
            for c in nodes_of(step, (cst.Call,))):
        return Blocker("an add_summary() step computed by TensorFlow")
    return written


def _value_of(stmt):
    return stmt.body[0].value if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
        and isinstance(stmt.body[0], cst.Expr) else None


def _alone(stmt, call) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
        and isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is call


def _step_argument(add: cst.Call) -> Optional[cst.BaseExpression]:
    args = _arguments(add, ("summary", "global_step"))
    return None if args is None else args.get("global_step")


def _block_of(blocks, node) -> Tuple[Optional[list], int]:
    """The statement list holding the statement that holds ``node``, and its index there."""
    for block in blocks:
        for at, stmt in enumerate(block):
            if any(n is node for n in nodes_of(stmt, (cst.Call,))):
                inner = [list(b.body) for b in nodes_of(stmt, (cst.IndentedBlock,))]
                found, where = _block_of(inner, node) if inner else (None, 0)
                return (found, where) if found is not None else (list(block), at)
    return None, 0


def writers(reader, stmts, module: cst.Module, steps, more=()) -> Union[Tuple[Tuple[cst.SimpleStatementLine, ...], tuple], Blocker]:
    """The writers the steps write with (and ``more``, the program's other FileWriters):
    each bound once, by ``tf.summary.FileWriter(logdir[, graph])``, used only by the steps'
    add_summary, add_graph, flush and close. (Their statements, the add_graph statements
    that go.)"""
    names = {step.writer for step in steps if step.writer is not None} | set(more)
    made, graphs = [], []
    for name in sorted(names):
        binding = [s for s in _statements(stmts) if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                   and isinstance(s.body[0], cst.Assign) and code(s.body[0].targets[0].target) == name]
        if len(binding) != 1 or reader.call_name(binding[0].body[0].value) != WRITER:
            return Blocker(f"the summary writer {name!r} is not one tf.summary.FileWriter")
        for use in (n for n in nodes_of(module, (cst.Attribute,)) if code(n.value) == name):
            if use.attr.value not in ("add_summary", "add_graph", "flush", "close") or \
                    use.attr.value == "add_summary" and not any(step.writer == name for step in steps):
                return Blocker(f"the summary writer's {use.attr.value}")
        graphs += [s for s in _statements(stmts) if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                   and isinstance(s.body[0], cst.Expr) and isinstance(s.body[0].value, cst.Call)
                   and code(s.body[0].value.func) == f"{name}.add_graph"]
        made.append(binding[0])
    return tuple(made), tuple(graphs)


def graph_writes(call_name: Callable, stmts, session: Optional[str] = None
                 ) -> Tuple[cst.SimpleStatementLine, ...]:
    """``tf.summary.FileWriter("logs/", sess.graph)`` as a statement of its own, at any depth
    of ``stmts`` (the writer not kept, or only closed: ``logdir`` and ``graph`` only; with
    ``session``, the graph that session's): TF1 wrote the session's graph for TensorBoard
    (``graph_written``). ``call_name`` gives a call's TensorFlow name."""
    out = []
    for stmt in _statements(stmts):
        call = _written(stmt)
        args = _arguments(call, ("logdir", "graph")) if call is not None and call_name(call) == WRITER else None
        if not args or "logdir" not in args or not set(args) <= {"logdir", "graph"}:
            continue
        graph = args.get("graph")
        if session is None or isinstance(graph, cst.Attribute) and graph.attr.value == "graph" \
                and _key(graph.value, None) == session:
            out.append(stmt)
    return tuple(out)


def _written(stmt) -> Optional[cst.Call]:
    """The call of an expression statement ``FileWriter(...)`` or ``FileWriter(...).close()``."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return None
    call = stmt.body[0].value
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "close" \
            and not call.args:
        call = call.func.value
    return call if isinstance(call, cst.Call) else None


def _statements(stmts):
    for stmt in stmts:
        yield stmt
        for block in nodes_of(stmt, (cst.IndentedBlock,)):
            yield from block.body


# -- emit --------------------------------------------------------------------------------
def writer_made(tf: str):
    """``tf.summary.FileWriter(logdir, graph)`` -> ``tf.summary.create_file_writer(logdir)``."""
    def rewrite(updated: cst.Assign) -> cst.Assign:
        logdir = next(a for a in updated.value.args if a.keyword is None or a.keyword.value == "logdir")
        return updated.with_changes(value=cst.Call(cst.parse_expression(f"{tf}.summary.create_file_writer"),
                                                   [cst.Arg(logdir.value)]))
    return rewrite


def graph_written(stmt: cst.SimpleStatementLine, steps: Sequence[str], tf: str):
    """``tf.summary.FileWriter(logdir, sess.graph)`` -> ``with
    tf.summary.create_file_writer(logdir).as_default(): tf.summary.graph(<a step's graph>)``
    for each of ``steps``: TF2 has no session graph; the steps that train (else the first)
    are what TensorBoard shows of the program."""
    def rewrite(updated: cst.SimpleStatementLine) -> cst.With:
        logdir = _arguments(_written(updated), ("logdir", "graph"))["logdir"]
        graphs = "".join(f"    {tf}.summary.graph({step}.get_concrete_function().graph)\n" for step in steps)
        made = cst.parse_statement(f"with {tf}.summary.create_file_writer({code(logdir)}).as_default():\n{graphs}")
        return made.with_changes(leading_lines=updated.leading_lines)
    return rewrite


def block(summaries: Sequence[Summary], writer: str, step: str, tf: str, moved) -> cst.With:
    """``with writer.as_default(step=step):`` + each summary, v2, with TF1's tag; ``moved``
    gives a summary's statement as the other edits left it (its data)."""
    lines: List[cst.BaseStatement] = []
    for summary in summaries:
        call = moved(summary.stmt)
        params = OPS[f"tf.summary.{summary.kind}"]
        args = _arguments(call, params) or {}
        rest = ", max_outputs=" + code(args["max_outputs"]) if "max_outputs" in args else ""
        lines.append(cst.parse_statement(
            f"{tf}.summary.{summary.kind}({json.dumps(summary.tag)}, {code(args[params[1]])}{rest})\n"))
    made = cst.parse_statement(f"with {writer}.as_default(step={step}):\n    pass\n")
    return made.with_changes(body=cst.IndentedBlock(lines))
