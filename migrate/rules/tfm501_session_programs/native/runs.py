"""Reads each run of the session (``sess.run``, ``t.eval``, ``op.run``) into the step it
calls: its fetches (graph names, expressions, train ops), its feeds (a dict literal, or one
bound to a name), the placeholders its fetches need; pure, over the graph ``read`` read."""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from . import summaries
from .model import Blocker, Item, Run, Step, Training
from .syntax import _names_read


def read_run(reader, call: cst.Call, steps: Dict[tuple, Step], assign) -> Union[Run, Blocker]:
    """``sess.run(fetches, feed_dict)``, ``t.eval(feed_dict)`` or ``op.run(feed_dict)``."""
    parts = _run_parts(call, reader.plan.session)
    if isinstance(parts, str):
        return Blocker(parts)
    fetched, feeds = parts
    shape, items, keys = _fetch_items(fetched)
    trains = tuple(isinstance(i, cst.Name) and i.value in reader.trainings for i in items)
    summarized = tuple(isinstance(i, cst.Name) and i.value in reader.merged for i in items)
    if (any(trains) or any(summarized)) and shape == "dict":
        return Blocker("a dict of fetches with a train op or summaries")
    written = _written(reader, call, shape, items, summarized, assign, any(trains))
    if isinstance(written, Blocker):
        return written
    if (written is None or shape != "single") and assign is not None \
            and not (isinstance(assign.targets[0].target, (cst.Tuple, cst.List))
                                   and len(assign.targets[0].target.elements) == len(items)
                                   and all(_ignored(e.value) for e, t in
                                           zip(assign.targets[0].target.elements, trains) if t)):
        assign = None
    # the summaries' results are not returned (the step writes them), as a train op's is not
    trains = tuple(t or f for t, f in zip(trains, summarized))
    feed_name = feeds.value if isinstance(feeds, cst.Name) and feeds.value in reader.named_feeds else None
    fed = _fed(reader, reader.named_feeds[feed_name] if feed_name else feeds)
    if isinstance(fed, Blocker):
        return fed
    returns: List[Item] = []
    reads: List[str] = []
    trainings: List[Training] = []
    written_summaries = []
    for item, train in zip(items, trains):
        if train and item.value in reader.merged:
            written_summaries += [s for s in reader.merged[item.value] if s not in written_summaries]
            reads.extend(n for s in reader.merged[item.value] for n in s.reads)
            continue
        if train:
            trainings.append(reader.trainings[item.value])
            reads.append(trainings[-1].loss)
            continue
        if isinstance(item, cst.Name):
            if item.value not in reader.computed and item.value not in reader.state:
                return Blocker(f"a fetch of {item.value!r}, which the native form cannot compute")
            if item.value in reader.state and len(reader.state[item.value]) != 1:
                return Blocker(f"a fetch of the state {item.value!r}")
            returns.append(item.value)
            reads.append(item.value)
        else:
            why = reader.forbidden(item)
            if why:
                return Blocker(f"a fetched expression uses {why}")  # (why ends its sentence)
            returns.append(item)
            reads.extend(_names_read(item))
    trained = [v for t in trainings for v in t.variables]
    if len(trained) != len({id(v) if not isinstance(v, str) else v for v in trained}):
        return Blocker("a run of train ops that update the same variables (TF1 raced them)")
    made = {expr for expr, _ in reader.variables}
    if not trainings and items and all(
            isinstance(i, cst.Name) and i.value in reader.state or code(i) in made for i in items):
        return Run(call, None, shape, items, keys, (), trains, None)  # read where it stands
    once = [n for n in reads if n in reader.once]
    if once:  # TF1 computed it again for the run, once for the variable made from it
        return Blocker(f"a fetch of {once[0]!r}, which a variable's initial value reads too")
    computed = reader.slice(reads)
    needed = {n for c in computed for n in c.reads} | set(reads)
    # a dict fed by name passes all its keys (TF1 took feeds its fetches do not need)
    params = tuple(p for p in reader.placeholders if p in needed or feed_name and p in dict(fed))
    missing = [p for p in params if p not in dict(fed)]
    if missing:
        return Blocker(f"a run that needs the placeholder {missing[0]!r} without feeding it")
    step = _step_of(steps, tuple(returns), tuple(trainings), params, tuple(computed), needed,
                    tuple(written_summaries), written.writer if written is not None else None)
    return Run(call, step, shape, items, keys, tuple(f for f in fed if f[0] in params), trains,
               assign if any(trains) and (shape != "single" or written is not None) else None, feed_name,
               written)


def _step_of(steps: Dict[tuple, Step], returns, trainings, params, computed, needed, written, writer) -> Step:
    """The step of runs that fetch, train, feed and write the same: one per kind of run."""
    signature = (tuple(r if isinstance(r, str) else code(r) for r in returns),
                 tuple(t.key for t in trainings), params, tuple(s.tag for s in written), writer)
    step = steps.get(signature)
    if step is None:
        taken = set(params) | set(needed) | {b for c in computed for b in c.binds}
        step = steps[signature] = Step(_step_name(returns, trainings, written), params, returns, computed,
                                       trainings, written, writer, "step" if "step" not in taken else "summary_step")
    return step


def _written(reader, call, shape: str, items, summarized, assign, trains: bool):
    """A run fetching summaries (``s, _ = sess.run([merged, train])``): where they are
    written (``writer.add_summary(s, step)``, see ``summaries.written``), None for a run
    of none, or a Blocker."""
    if not any(summarized):
        return None
    target = assign.targets[0].target if assign is not None else None
    if target is None and shape == "single":  # (add_summary's own argument)
        return summaries.written(reader, reader.blocks, call, [], trains)
    targets = [target] if shape == "single" else [
        e.value for e, fetched in zip(getattr(target, "elements", ()), summarized) if fetched]
    if target is None or shape != "single" and len(getattr(target, "elements", ())) != len(items):
        return Blocker("fetched summaries not assigned to names")
    return summaries.written(reader, reader.blocks, call, targets, trains)


def _fed(reader, feeds) -> Union[List[Tuple[str, cst.BaseExpression]], Blocker]:
    """(placeholder, value) of a run's feed dict literal (or one bound to a name)."""
    fed: List[Tuple[str, cst.BaseExpression]] = []
    if feeds is None:
        return fed
    if not isinstance(feeds, cst.Dict):
        return Blocker(f"a feed dict that is not written in the run ({code(feeds)[:40]})")
    for element in feeds.elements:
        if not (isinstance(element, cst.DictElement) and isinstance(element.key, cst.Name)
                and element.key.value in reader.placeholders):
            return Blocker("a feed of something other than a placeholder")
        fed.append((element.key.value, element.value))
    return fed


def _ignored(target) -> bool:
    """``_`` (or ``_x``): a name for a value nobody reads, as a train op's None is."""
    return isinstance(target, cst.Name) and target.value.startswith("_")


def _contexts(scope):
    """{id(value): assignment} of ``a, b = <call>``, and the ids of calls that are a whole
    expression statement."""
    assigns, alone = {}, set()
    for stmt in scope:
        for assign in nodes_of(stmt, (cst.Assign,)):
            if len(assign.targets) == 1:
                assigns[id(assign.value)] = assign
        for expr in nodes_of(stmt, (cst.Expr,)):
            alone.add(id(expr.value))
    return assigns, alone


def _run_parts(call: cst.Call, session: str):
    """(what is fetched, the feed dict or None), or why the run cannot be read."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return "a run that is not a method call"
    allowed = ("fetches", "feed_dict") if isinstance(func.value, cst.Name) and func.value.value == session \
        and func.attr.value == "run" else ("feed_dict", "session")
    args: Dict[str, cst.BaseExpression] = {}
    for at, arg in enumerate(call.args):
        name = arg.keyword.value if arg.keyword else (allowed[at] if at < len(allowed) and not arg.star else None)
        if name is None or name not in allowed or name in args:
            return f"a run with {code(arg)[:40]!r}"
        args[name] = arg.value
    if allowed[0] == "fetches":
        if "fetches" not in args:
            return "a run without fetches"
        return args["fetches"], args.get("feed_dict")
    return func.value, args.get("feed_dict")  # t.eval(...) / op.run(...)


def _fetch_items(fetched):
    if isinstance(fetched, (cst.List, cst.Tuple)):
        return ("list" if isinstance(fetched, cst.List) else "tuple",
                tuple(e.value for e in fetched.elements), tuple(None for _ in fetched.elements))
    if isinstance(fetched, cst.Dict) and all(isinstance(e, cst.DictElement) for e in fetched.elements):
        return "dict", tuple(e.value for e in fetched.elements), tuple(code(e.key) for e in fetched.elements)
    return "single", (fetched,), (None,)


def _step_name(returns, trainings, written=()) -> str:
    if trainings:
        return "train_step"
    if written and not returns:
        return "write_summaries"
    names = [r for r in returns if isinstance(r, str)]
    if names:
        return "compute_" + "_".join(names[:2])
    calls = [r for r in returns if isinstance(r, cst.Call) and isinstance(r.func, (cst.Name, cst.Attribute))]
    if calls:
        func = calls[0].func
        return "compute_" + (func.value if isinstance(func, cst.Name) else func.attr.value)
    return "compute"


def _train_runs_merged(runs: List[Run]) -> List[Run]:
    """A run of train ops alone (``train.run(feed)``) calls the step of a run fetching the
    same train ops and their losses with the same feeds (``sess.run([train, loss], feed)``):
    the losses are computed to train anyway, so one step serves both."""
    steps = [r.step for r in runs if r.step is not None]
    serving = {}
    for step in steps:
        if step.returns or not step.trainings or step.summaries:
            continue
        keys = [t.key for t in step.trainings]
        serving[id(step)] = next((other for other in steps if other is not step
                                  and [t.key for t in other.trainings] == keys and other.params == step.params
                                  and set(other.returns) <= {t.loss for t in other.trainings}), None)
    return [replace(r, step=serving[id(r.step)]) if serving.get(id(r.step)) is not None else r for r in runs]


def _assigns(reader, plan, stmts) -> Union[tuple, Blocker]:
    """``sess.run(last_epoch.assign(epoch + 1))`` (a Python value into one variable of the
    state): the variable's own ``assign``, eagerly where the run was."""
    alone = {id(e.value) for stmt in stmts for e in nodes_of(stmt, (cst.Expr,))}
    out = []
    for call, key, how in plan.assigns:
        if len(reader.state.get(key, ())) != 1:
            return Blocker(f"a run assigning {key!r}, which is not one variable of the state")
        out.append((call, key, how, id(call) not in alone))
    return tuple(out)
