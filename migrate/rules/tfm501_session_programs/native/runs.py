"""Reads each run of the session (``sess.run``, ``t.eval``, ``op.run``) into the step it
calls: its fetches (graph names, expressions, train ops), its feeds (a dict literal, or one
bound to a name), the placeholders its fetches need; pure, over the graph ``read`` read."""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from ..syntax import _key, after_session
from . import dtypes, layers, summaries, traced
from .model import Blocker, Item, Run, Step, Training
from .syntax import _names_read


def read_runs(reader, scopes) -> Union[List[Run], Blocker]:
    """The program's runs (``plan.runs``, in ``scopes``), each with its step, or why not."""
    runs: List[Run] = []
    steps: Dict[tuple, Step] = {}
    assigns, alone = _contexts(scopes)
    for call in reader.plan.runs:
        run = read_run(reader, call, steps, assigns.get(id(call)), id(call) in alone)
        if isinstance(run, Blocker):
            return run
        if run.step is None and run.shape == "dict":
            return Blocker("a dict of fetched variables")
        if (why := unread_values(reader, run, id(call) in alone)) is not None:
            return Blocker(why)
        if run.step is not None and run.step.copies and id(call) not in alone:
            return Blocker("a run of variable copies whose values are read")
        runs.append(run)
    return runs


def read_run(reader, call: cst.Call, steps: Dict[tuple, Step], assign, alone: bool = False) -> Union[Run, Blocker]:
    """``sess.run(fetches, feed_dict)``, ``t.eval(feed_dict)`` or ``op.run(feed_dict)`` (``alone``:
    a whole expression statement, its values unread)."""
    parts = _run_parts(call, reader.plan.session, reader.self_name)
    if isinstance(parts, str):
        return Blocker(parts)
    fetched, feeds = parts
    shape, items, keys = _fetch_items(fetched)
    if any(reader.key(i) in reader.copies for i in items):
        return _copy_run(reader, call, steps, shape, items, keys, feeds)
    # (a list of variable updates is run as a train op is: TF1's values of it are not returned)
    trains = tuple(reader.key(i) in reader.trainings or reader.key(i) in reader.update_keys for i in items)
    summarized = tuple(reader.key(i) in reader.merged for i in items)
    if (any(trains) or any(summarized)) and shape == "dict":
        return Blocker("a dict of fetches with a train op or summaries")
    written = _written(reader, call, shape, items, summarized, assign, any(trains))
    if isinstance(written, Blocker):
        return written
    target = assign.targets[0].target if assign is not None and shape == "single" else None
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
    fetched = _fetched(reader, items, trains)
    if isinstance(fetched, Blocker):
        return fetched
    returns, reads, trainings, written_summaries, updated = fetched
    trained = [v for t in trainings for v in t.variables]
    if len(trained) != len({id(v) if not isinstance(v, str) else v for v in trained}):
        return Blocker("a run of train ops that update the same variables (TF1 raced them)")
    made = {expr for expr, _ in reader.variables}
    if not trainings and items and all(
            reader.key(i) in reader.state or code(i) in made for i in items):
        return Run(call, None, shape, items, keys, (), trains, None)  # read where it stands
    once = [n for n in reads if n in reader.once]
    if once:  # TF1 computed it again for the run, once for the variable made from it
        return Blocker(f"a fetch of {once[0]!r}, which a variable's initial value reads too")
    # a graph value fed in place of what it computes (`{self.a: batch_actions}`): the step's
    # parameter; what computes it is not computed
    overridden = [key for key, _ in fed if key not in reader.placeholders]
    why = overridden and _override_blocker(reader, overridden, items, trainings)
    if why:
        return Blocker(why)
    computed = traced.attach(reader, reader.slice(reads, cut=overridden), reads, traced.kind(returns, trainings))
    needed = {n for c in computed for n in c.reads} | set(reads)
    # a dict fed by name passes all its keys (TF1 took feeds its fetches do not need)
    params = tuple(p for p in reader.placeholders if p in needed or feed_name and p in dict(fed)) \
        + tuple(k for k in overridden if k in needed)
    params = tuple(sorted(params, key=lambda p: p in reader.defaults))  # (those with a default last)
    missing = [p for p in params if p not in dict(fed) and p not in reader.defaults]
    if missing:
        return Blocker(f"a run that needs the placeholder {missing[0]!r} without feeding it")
    step = _step_of(steps, tuple(returns), tuple(trainings), params, tuple(computed), needed,
                    tuple(written_summaries), written.writer if written is not None else None, updates=tuple(updated),
                    named=target.value if isinstance(target, cst.Name) else "")
    return Run(call, step, shape, items, keys, tuple(f for f in fed if f[0] in params), trains,
               assign if any(trains) and (shape != "single" or written is not None) else None, feed_name,
               written, alone)


def _fetched(reader, items, trains):
    """What a run's fetches are: (what the step returns, the graph names it reads, the train
    ops, the summaries it writes, the variable updates it runs), or a Blocker."""
    returns: List[Item] = []
    reads: List[str] = []
    updated: List[str] = []  # variable updates it runs
    trainings: List[Training] = []
    written_summaries = []
    for item, train in zip(items, trains):
        key = reader.key(item)
        if train and key in reader.merged:
            written_summaries += [s for s in reader.merged[key] if s not in written_summaries]
            reads.extend(n for s in reader.merged[key] for n in s.reads)
            continue
        if train and key in reader.update_keys:
            reads.append(key)
            updated.append(key)
            continue
        if train:
            trainings.append(reader.trainings[key])
            reads.append(trainings[-1].loss)
            if trainings[-1].applied is not None:  # apply_gradients(clipped): what it applies
                reads.extend(_names_read(trainings[-1].applied, reader.self_name))
            continue
        if key is not None:
            if key not in reader.computed and key not in reader.state:
                return Blocker(f"a fetch of {key!r}, which the native form cannot compute")
            if key in reader.state and len(reader.state[key]) != 1:
                return Blocker(f"a fetch of the state {key!r}")
            returns.append(key)
            reads.append(key)
        else:
            why = reader.forbidden(item)
            if why:
                return Blocker(f"a fetched expression uses {why}")  # (why ends its sentence)
            returns.append(item)
            reads.extend(_names_read(item, reader.self_name))
    return returns, reads, trainings, written_summaries, updated


def unread_values(reader, run: Run, alone: bool) -> Optional[str]:
    """Why a run fetching train ops (or variable updates) is not native where their values
    are read: TF1 gave None for a train op (a list of fetches read other than by unpacking
    it), the new values for updates (a native step runs them as train ops, returning none)."""
    if not any(run.trains) or alone or run.shape != "single" and run.unpacked is not None:
        return None
    updated = next((k for k, t in zip(map(reader.key, run.items), run.trains) if t and k in reader.update_keys), None)
    if updated is not None:
        return f"a run's values are read, those of {updated!r} among them: variable updates, whose new values " \
               "TF1 gave (a native step runs them as a train op, returning none)"
    if run.shape == "single" or run.trains.count(False) == 1:  # (a list as TF1 gave it: None for the train op)
        return None
    return "a list of fetches with train ops and several values, read other than by unpacking it"


def _copy_run(reader, call, steps, shape, items, keys, feeds) -> Union[Run, Blocker]:
    """A run of variable copies (target networks replaced): a step of them, returning nothing."""
    copied = [reader.copies[k] for k in (reader.key(i) for i in items) if k in reader.copies]
    if len(copied) != len(items) or feeds is not None or shape == "dict":
        return Blocker("a run of variable copies with other fetches or feeds")
    step = _step_of(steps, (), (), (), (), set(), (), None, tuple(copied))
    return Run(call, step, shape, items, keys, (), tuple(True for _ in items), None)


def _step_of(steps: Dict[tuple, Step], returns, trainings, params, computed, needed, written, writer,
             copies=(), updates=(), named: str = "") -> Step:
    """The step of runs that fetch, train, feed, write, copy and update the same: one per
    kind of run (``named``: the name its value is assigned to, for an expression's step)."""
    signature = (tuple(r if isinstance(r, str) else code(r) for r in returns),
                 tuple(t.key for t in trainings), params, tuple(s.tag for s in written), writer,
                 tuple(c.key for c in copies), updates)
    step = steps.get(signature)
    if step is None:
        taken = set(params) | set(needed) | {b for c in computed for b in c.binds}
        name = copies[0].key.rpartition(".")[2] if copies else _step_name(returns, trainings, written, updates)
        if name == "compute" and named and not named.startswith("_"):  # `testing_cost = sess.run(a / b)`
            name = f"compute_{named}"
        step = steps[signature] = Step(name, params, returns, computed, trainings, written, writer,
                                       "step" if "step" not in taken else "summary_step", tuple(copies))
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
        key = reader.key(element.key) if isinstance(element, cst.DictElement) else None
        if key not in reader.placeholders and key not in reader.plan.overrides:
            return Blocker("a feed of something other than a placeholder")
        if key not in reader.placeholders and key not in reader.computed:
            return Blocker(f"a feed of {key!r}, which is not a value the graph computes")
        fed.append((key, element.value))
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


def _run_parts(call: cst.Call, session: str, self_name: Optional[str] = None):
    """(what is fetched, the feed dict or None), or why the run cannot be read."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return "a run that is not a method call"
    allowed = ("fetches", "feed_dict") if _key(func.value, self_name) == session \
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


def _step_name(returns, trainings, written=(), updates=()) -> str:
    if trainings:
        return "train_step"
    if updates:  # ``update = W.assign(...)``: update; ``step = [tf.assign(...), ...]``: update_step
        name = updates[0].rpartition(".")[2]
        return name if name.startswith("update") else f"update_{name}"
    if written and not returns:
        return "write_summaries"
    names = [r.rpartition(".")[2] for r in returns if isinstance(r, str)]  # (``self.q``: q)
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


def _override_blocker(reader, overridden, items, trainings) -> Optional[str]:
    """Why a run cannot feed these graph values to its step: it fetches one (TF1 gave the fed
    value back), what computes one binds more, or it trains variables one is computed from
    (TF1's gradients still flowed through what computes it; a parameter has none)."""
    fetched = {reader.key(i) for i in items}
    for key in overridden:
        if key in fetched:
            return f"a run fetching {key!r}, which it feeds"
        if len(reader.computed[key].binds) != 1:
            return f"a feed of {key!r}, computed by a statement binding more"
        used = layers.variables_read(reader, reader.slice([key]))
        trained = [v for t in trainings for v in t.variables]
        if any(v in used if isinstance(v, str) else any(v is u for u in used) for v in trained):
            return f"a run feeding {key!r} while training variables it is computed from"
    return None


def fed_dtype(reader, key: str) -> Optional[str]:
    """The dtype of a graph value a run feeds, where proven (``dtypes.float32``), else None."""
    return "float32" if dtypes.float32(reader, [key]) else None


def fed_values(reader, steps) -> Union[Tuple[Tuple[str, str], ...], Blocker]:
    """The graph values the steps take as parameters (runs feed them): (key, dtype)."""
    fed = tuple((k, fed_dtype(reader, k)) for k in reader.plan.overrides if any(k in s.params for s in steps))
    unproven = next((k for k, dtype in fed if dtype is None), None)
    if unproven is not None:
        return Blocker(f"a feed of {unproven!r}, computed by more than layers and float32 arithmetic (the "
                       "dtype its step parameter takes is not proven)")
    return fed


def fed_builders(program) -> Union[List[Step], str]:
    """The steps to trace where the program is made, before any taking a fed graph value (its
    signature gives that parameter no shape, and a Keras layer builds its variables from the
    shape of its first input): for each layer such a step calls on what it computes from that
    value, the first step calling it fed no such value; or why there is none."""
    fed = {key for key, _ in program.overrides}
    out: List[Step] = []
    for step in (s for s in program.steps if fed & set(s.params)):
        tainted, reached = set(fed & set(step.params)), []
        for computed in step.computed:  # (what the step computes from the fed values)
            if tainted & set(computed.reads):
                tainted |= set(computed.binds)
                reached.append(computed)
        for layer in (layer for layer in program.layers if layers.calls_layer(reached, layer)):
            builder = next((s for s in program.steps if not fed & set(s.params) and layers.calls_layer(s.computed, layer)), None)
            if builder is None:
                return (f"the layer {layer.scoped!r} is called on a fed graph value "
                        f"({sorted(fed & set(step.params))[0]!r}) by the only steps calling it, whose "
                        "signatures do not give its shape")
            if builder not in out:
                out.append(builder)
    return out


def python_reads(plan, runs: Sequence[Run], stmts, session_at: int) -> Optional[str]:
    """Why a fetched expression reading Python values (``plan.python_fetches``: ``... / (2 *
    test_X.shape[0])``) is not proven the same in its step, else None. TF1 built it from
    their values at its run; the step, traced at its first call, reads them then (as a
    function of the block reads its names). The same when that run is its step's only
    caller and runs once: a statement of the session's block (or its scope) itself, not
    in a loop or a function (the names are the graph's Python values, never the step's
    parameters or what it computes)."""
    if not plan.python_fetches:
        return None
    tops = after_session(stmts, session_at)
    once = {id(c) for s in tops if isinstance(s, cst.SimpleStatementLine) for c in nodes_of(s, (cst.Call,))}
    for fetch, python in plan.python_fetches:
        if plan.session in python:
            return f"it reads the session {plan.session!r}"
        run = next((r for r in runs if any(item is fetch for item in r.items)), None)
        if run is None or run.step is None:
            return f"{code(fetch)[:40]} is not fetched by a step"
        if id(run.call) not in once:
            return "its run is in a loop, a block or a function (the step would keep the values of its first run)"
        if sum(r.step is run.step for r in runs) > 1:
            return "another run calls the same step (it would keep the values of the first run)"
    return None
