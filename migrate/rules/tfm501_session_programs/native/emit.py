"""Writes a :class:`~.model.NativeProgram` as TF2 code.

The state stays where it was; placeholders, initializers and the graph's computations go;
each optimizer is made where the TF1 one was (the Keras optimizer proven equal, else the
TF1 one); before the session, the computation several steps share as one plain function
(``forward``), then one ``@tf.function`` step per kind of run (``steps`` writes them); the
session's block follows, its runs calling the steps (their results as numpy, as
``sess.run`` gave them). A class's program (``classes``): its layers made where it called
them, the steps its methods after ``__init__``, their signatures and the traces copies need
where its graph was complete.
"""
from __future__ import annotations

from itertools import groupby
from typing import Callable, Dict, Optional, Set

import libcst as cst

from migrate.codemod.cstutil import code, fresh_name, nodes_of, reuse_name, source_identifiers, unused_name
from migrate.codemod.rule import Finding
from migrate.codemod.tf1_layers import LAYERS

from ..convert import _assigned_value
from ..syntax import _ids, _key, _numpy, _value
from . import (batchnorm, checkpoints, classes, gradients, initializers, losses, optimizers, regularizers, state,
               steps, summaries, updates)
from .model import Layer, NativeProgram, Optimizer, Run
from .runs import _fetch_items, _run_parts
from .layers import CALL_ARGS


def emit(ctx, finding: Finding, stmts, session_at: int, session: str, program: NativeProgram,
         statement_of: Callable, at_module: bool, form: Optional[classes.ClassForm] = None) -> None:
    """The edits that write ``program`` natively, on ``finding`` (the rule's, at the session;
    ``form``: the class whose ``__init__`` holds it, its steps methods of the class)."""
    anchor = stmts[session_at]
    tf = code(ctx.tf(finding, ""))
    names = _step_names(ctx, program, form)
    ref = form.ref if form is not None else (lambda name: name)
    method = classes.Methods(form, classes.local_names(form, program, session), classes.module_names(ctx.module)) \
        if form is not None else None
    param = method.param if method is not None else (lambda key: key)
    layers = {id(layer): ref(fresh_name(ctx, f"{layer.makes}_layer")) for layer in program.layers}
    made_layers: Dict[int, cst.Call] = {}  # id(layer) -> its call as the fixes left it
    for layer in program.layers:
        finding.replace(layer.call, _layer_call(layer, layers[id(layer)], made_layers))
    made = {id(o.stmt): _optimizer_name(ctx, o, program, form) for o in program.optimizers}
    captured: Dict[int, cst.BaseExpression] = {}  # id(fetched expression) -> as the fixes left it
    gone = {id(s) for s in program.dropped} | {id(statement_of(c, stmts)) for c in program.removals}
    for optimizer in program.optimizers:
        finding.replace(optimizer.stmt.body[0], _optimizer_maker(optimizer, made[id(optimizer.stmt)], tf))
        at = next((i for i, s in enumerate(stmts) if s is optimizer.stmt), None)
        before = next((s for s in reversed(stmts[:at or 0]) if id(s) not in gone), None)
        if at_module and isinstance(before, (cst.FunctionDef, cst.ClassDef)):
            finding.replace(optimizer.stmt, lambda updated: updated.with_changes(
                leading_lines=_blank_lines(updated.leading_lines)))
    tracked = checkpoints.keywords(program, made, layers)
    checkpoint_lines = checkpoints.emit(ctx, finding, program, tracked, tf)
    finding.names.update(checkpoints.names(program, tracked))
    for stmt in program.seeds:
        finding.replace(_value(stmt).func, cst.parse_expression(f"{tf}.random.set_seed"))
    for call in program.variable_scopes:
        finding.replace(call.func, cst.parse_expression(f"{tf}.name_scope"))
    _removals(finding, program, stmts, statement_of)
    for call in program.initializers:
        finding.replace(call, lambda updated: initializers.native(updated, tf))
    _eager_edits(finding, program, tf, form, param)
    _writer_edits(finding, program, tf, {id(step): ref(names[id(step)]) for step in program.steps})
    _layer_function_edits(ctx, finding, program, layers, made_layers, tf)
    regularizers.edits(finding, program, layers, tf)
    _block_renames(ctx, finding, program)
    for run in program.runs:
        _run_edit(finding, run, ref(names[id(run.step)]) if run.step is not None else "", session,
                  captured, form, param, {key for key, _ in program.defaults})
    local = _local_names(ctx, ("tape", "variables", "gradients", "loss"))
    gradients.taped_edits(finding, program, local["tape"])
    specs = steps.specs(program, tf)
    given = {key: made.value for key, made in program.defaults}  # the steps' parameters' defaults
    forward = (program.forward, fresh_name(ctx, "forward")) if program.forward else None

    def functions() -> list:  # the forward function and the steps (a class's: its methods)
        out = [steps.forward_function(ctx, *forward, tf, method)] if forward is not None else []
        out += [steps.step_function(ctx, step, names[id(step)], tf, local, made, captured, layers, specs, forward,
                                    method, given) for step in program.steps]
        above = _blank_lines([]) if at_module else [cst.EmptyLine(indent=False)] if method else []
        return [f.with_changes(leading_lines=above) for f in out]

    if form is not None:  # a class's layers: made where it called them
        _made_where_called(finding, form, program, layers, made_layers, tf, gone)

    def definitions() -> list:
        out = [_layer_maker(layer, layers[id(layer)], made_layers, tf) for layer in program.layers
               if layer.owner is None and form is None]
        out += checkpoint_lines
        if out and at_module:
            out[0] = out[0].with_changes(leading_lines=_blank_lines([]))
        traced = steps.traced_steps(ctx, program, {id(step): ref(names[id(step)]) for step in program.steps}, made,
                                    tf, at_module)
        if method is not None:  # the steps are the class's methods, signatures given here if dynamic
            return out + method.signatures(program.steps, names, specs, tf) + traced
        return out + functions() + traced

    if method is not None:  # a class's: where its graph was complete; the steps follow __init__
        finding.insert_after(classes.complete(form, anchor), definitions)
        finding.remove(anchor)
        finding.insert_after(form.init, functions)
    else:
        _place(finding, stmts, session_at, program, definitions, gone, at_module)
    moved = {id(c.stmt) for step in program.steps for c in step.computed}
    _keep_leading_lines(finding, stmts[:program.defined_at or session_at], gone | {id(anchor)}, moved)
    _drop_superseded(ctx, finding, program, anchor, tf)


def _place(finding: Finding, stmts, session_at: int, program: NativeProgram, definitions: Callable, gone,
           at_module: bool) -> None:
    """The definitions where the session was (its block's statements after them), or for a
    session made before the graph, where the graph ends; the session goes."""
    anchor = stmts[session_at]
    if isinstance(anchor, cst.With):
        finding.replace(anchor, lambda updated: cst.FlattenSentinel(
            [*definitions(), *_after_definitions(list(updated.body.body), at_module, updated.leading_lines)]))
        return
    place = stmts[program.defined_at] if program.defined_at is not None else anchor
    finding.insert_before(place, definitions)
    finding.remove(anchor)
    after = program.defined_at if program.defined_at is not None else session_at + 1
    following = next((s for s in stmts[after:] if id(s) not in gone), None)
    if following is not None and at_module:
        finding.replace(following, lambda updated: _on_first(updated, lambda node: node.with_changes(
            leading_lines=_blank_lines(node.leading_lines))))


def _made_where_called(finding: Finding, form: classes.ClassForm, program: NativeProgram, layers: Dict[int, str],
                       made_layers: Dict[int, cst.Call], tf: str, gone) -> None:
    """A class's layers made before the statement of ``__init__`` or of its build method
    that called them (``self.e1_layer = tf.keras.layers.Dense(...)``); a build method left
    with nothing to do goes, with its call."""
    homes = classes.homes(form, program.layers)
    placed: Dict[int, tuple] = {}
    for layer in program.layers:
        if layer.owner is None:
            placed.setdefault(id(homes[id(layer)]), (homes[id(layer)], []))[1].append(layer)
    for home, made in placed.values():
        finding.insert_before(home, lambda made=made: [_layer_maker(layer, layers[id(layer)], made_layers, tf)
                                                       for layer in made])
    for call, method in form.built:
        if all(id(stmt) in gone for stmt in method.body.body) and not any(
                id(home) in _ids(method) for home, _ in placed.values()):
            finding.remove(method)
            finding.remove(call)


def _removals(finding: Finding, program: NativeProgram, stmts, statement_of: Callable) -> None:
    """The graph code, initializer runs and ``close()`` go (an ``else:`` left empty too)."""
    for stmt in program.dropped:
        finding.remove(stmt)
    removed = {id(statement_of(call, stmts)) for call in program.removals}
    for call in program.removals:
        finding.remove(statement_of(call, stmts))
    for branch in (n for stmt in stmts for n in nodes_of(stmt, (cst.If,))):  # `else: sess.run(init)`
        if isinstance(branch.orelse, cst.Else) and all(id(s) in removed for s in branch.orelse.body.body):
            finding.replace(branch, lambda updated: updated.with_changes(orelse=None))


def _run_edit(finding: Finding, run: Run, step: str, session: str, captured: Dict[int, cst.BaseExpression],
              form: Optional[classes.ClassForm], param: Callable[[str], str], defaults=frozenset()) -> None:
    """A run of the session: the call of its step (``step``), its results as numpy; a run
    reading variables only: their values where it was (``W.numpy()``)."""
    if run.step is None:
        finding.replace(run.call, lambda updated: _read_values(run, updated, session, form))
        return
    caller = _caller(run, step, session, captured, form, param, defaults)
    if run.unpacked is not None:
        finding.replace(run.unpacked, lambda updated: _unpacked(updated, run, caller))
    else:
        finding.replace(run.call, lambda updated: _result(run, caller(updated)))


def _layer_function_edits(ctx, finding: Finding, program: NativeProgram, layers: Dict[int, str],
                          made_layers: Dict[int, cst.Call], tf: str) -> None:
    """A module function making layers: its layers made before it (module state), its
    variable scopes name scopes (TensorFlow names the variables a layer makes in one as TF1
    did: ``Generator/dense/kernel``; Keras 3's own paths leave the scopes out), its ``if
    reuse: scope.reuse_variables()`` gone (the layers are made once)."""
    scope = f"{tf}.name_scope"
    for function in program.layer_functions:
        def makers(function=function) -> list:
            out = [_layer_maker(layer, layers[id(layer)], made_layers, tf) for layer in function.layers]
            return [out[0].with_changes(leading_lines=_blank_lines([])), *out[1:]]
        finding.insert_before(function.func, makers)
        for item in function.scopes:
            name = item.item.args[0].value
            finding.replace(item, lambda updated, name=name: updated.with_changes(
                item=cst.Call(cst.parse_expression(scope), [cst.Arg(name)]), asname=None))
        for stmt in function.reuses:
            finding.remove(stmt)


def _block_renames(ctx, finding: Finding, program: NativeProgram) -> None:
    """The session block's own binding of a state name, renamed (``b`` -> ``b_1``): the
    steps read the graph's variable by its name, as TF1's graph held it."""
    new = {old: fresh_name(ctx, old) for old in dict.fromkeys(name for _, name in program.renames)}
    for node, old in program.renames:
        finding.replace(node, lambda updated, name=new[old]: updated.with_changes(value=name))


def _writer_edits(finding: Finding, program: NativeProgram, tf: str, steps: Dict[int, str]) -> None:
    """Summary writers: ``tf.summary.create_file_writer``; their add_summary and add_graph go
    (the steps write their summaries themselves); one writing the graph alone writes the
    graph of the step that trains (else the first; ``steps``: each step's reference)."""
    for stmt in program.writers:  # tf.summary.FileWriter(logdir): tf.summary.create_file_writer(logdir)
        finding.replace(stmt.body[0], summaries.writer_made(tf))
    shown = next((s for s in program.steps if s.trainings), program.steps[0] if program.steps else None)
    for stmt in program.graph_writes:
        finding.replace(stmt, summaries.graph_written(stmt, [steps[id(shown)]], tf))
    for stmt in [*program.graph_adds, *(s for r in program.runs if r.written for s in r.written.adds)]:
        finding.remove(stmt)
    for run in program.runs:  # writer.add_summary(<run>, step): the run's step call, which writes
        if run.written is not None and run.written.inline is not None:
            finding.replace(run.written.inline, lambda updated: updated.args[0].value)


def _eager_edits(finding: Finding, program: NativeProgram, tf: str, form=None, param: Callable = str) -> None:
    """What runs eagerly where it was: ``tf.get_variable`` as ``tf.Variable`` (their lists of
    collections gone; a class's kept on the object), feed dicts keyed by strings, TensorFlow
    on Python values (``sess.run(tf.argmax(y, 1))``), a variable assigned a Python value, a
    second session's body; the Keras of batch norm declared."""
    if any(layer.function == batchnorm.BATCH_NORM for layer in program.layers):
        finding.add_import(batchnorm.KERAS)  # (tf_keras' BatchNormalization is TF 1.15's)
    for call in program.get_variables:
        finding.replace(call, _as_variable(call, tf))
    for call, name in program.losses:  # tf.losses.*: the mean TF1 computed, as TF2 writes it
        finding.replace(call, lambda updated, name=name: losses.native(updated, name, tf))
    for stmt, variables in program.listed:  # `tvars = tf.trainable_variables()`: the list TF1 gave
        finding.replace(_value(stmt), cst.parse_expression(f"[{', '.join(variables)}]"))
    for call in program.global_steps:  # TF1's: an int64 scalar named global_step, not trained
        finding.replace(call, cst.parse_expression(f'{tf}.Variable(0, dtype={tf}.int64, trainable=False, '
                                                   'name="global_step")'))
    for stmt, names in groupby(sorted(program.collection_lists, key=lambda p: id(p[0])), key=lambda p: p[0]):
        finding.replace(stmt, lambda updated, gone={n for _, n in names}: _unbound(updated, gone))
    if form is not None:
        classes.kept_edits(finding, form)
    for literal in program.feed_literals:  # fed as keyword arguments: `train_step(**feed_dict)`
        finding.replace(literal, lambda updated: _string_keys(updated, lambda key: param(_key(key, form and form.self_name))))
    for call in program.evaluated:
        finding.replace(call, lambda updated: _numpy(updated.args[0].value))
    updates.edits(finding, program)
    for call, key, how, used in program.assigns:  # sess.run(v.assign(value)): v.assign(value)
        finding.replace(call, lambda updated, key=key, how=how, used=used: _assigned(updated, key, how, used))
    for stmt in (*program.reopened, *program.unscoped):  # a second session restoring the program's
        # variables, a name scope left around an optimizer alone: their bodies
        finding.replace(stmt, lambda updated: cst.FlattenSentinel([updated.body.body[0].with_changes(
            leading_lines=[*updated.leading_lines, *updated.body.body[0].leading_lines]), *updated.body.body[1:]]))


def _listed(stmt: cst.SimpleStatementLine, name: str) -> cst.CSTNode:
    """What ``_unbound`` removes of ``stmt`` for ``name``: its value (the statement where it
    binds ``name`` alone)."""
    target, value = stmt.body[0].targets[0].target, stmt.body[0].value
    if isinstance(target, cst.Name):
        return stmt
    at = next(i for i, e in enumerate(target.elements) if isinstance(e.value, cst.Name) and e.value.value == name)
    return value.elements[at].value


def _unbound(updated: cst.SimpleStatementLine, gone: Set[str]):
    """``c_names, n_l1 = [...], 10`` without ``gone`` (``n_l1 = 10``); a statement binding
    nothing else goes."""
    assign = updated.body[0]
    target, value = assign.targets[0].target, assign.value
    if isinstance(target, cst.Name):
        return cst.RemovalSentinel.REMOVE if target.value in gone else updated
    kept = [(t, v) for t, v in zip(target.elements, value.elements)
            if not (isinstance(t.value, cst.Name) and t.value.value in gone)]
    if not kept:
        return cst.RemovalSentinel.REMOVE
    if len(kept) == 1:
        assign = assign.with_changes(targets=[assign.targets[0].with_changes(target=kept[0][0].value)],
                                     value=kept[0][1].value)
    else:
        last = len(kept) - 1
        assign = assign.with_changes(
            targets=[assign.targets[0].with_changes(target=target.with_changes(elements=[
                t.with_changes(comma=cst.MaybeSentinel.DEFAULT if i == last else t.comma)
                for i, (t, _) in enumerate(kept)]))],
            value=value.with_changes(elements=[
                v.with_changes(comma=cst.MaybeSentinel.DEFAULT if i == last else v.comma)
                for i, (_, v) in enumerate(kept)]))
    return updated.with_changes(body=[assign])


def _step_names(ctx, program: NativeProgram, form=None) -> Dict[int, str]:
    """Each step's name: ``train_step`` even where the TF1 train op was called so (the
    tutorials' ``train_step = optimizer.minimize(loss)``), when every use of that name is
    this program's and goes with the edit (the train op's statement, the runs of it); else
    a name the file does not use (a class's: one its own methods and attributes do not)."""
    if form is not None:
        return classes.method_names(form, program)
    wanted = {step.name for step in program.steps}
    gone = [*program.dropped, *(t.stmt for s in program.steps for t in s.trainings), *(r.call for r in program.runs)]
    uses = [n for n in nodes_of(ctx.module, (cst.Name,)) if n.value in wanted]
    ours = {id(n) for node in gone for n in nodes_of(node, (cst.Name,)) if n.value in wanted}
    out: Dict[int, str] = {}
    for step in program.steps:
        name = step.name
        mine = [n for n in uses if n.value == name]
        free = bool(mine) and all(id(n) in ours for n in mine) and reuse_name(ctx, name)
        out[id(step)] = name if free else fresh_name(ctx, name)
    return out


def _local_names(ctx, wanted) -> Dict[str, str]:
    """Names local to the steps (``tape``, ``gradients``): any the file's own code does not
    use (the steps of another program in the file may use them too)."""
    original = source_identifiers(ctx)
    return {name: unused_name(name, original) for name in wanted}


def _drop_superseded(ctx, finding: Finding, program: NativeProgram, anchor, tf: str) -> None:
    """The other rules' findings on what this edit removes or writes anew go: a block of
    graph code goes, the findings of what moved out of it into the steps stay."""
    moved = {id(c.stmt) for step in program.steps for c in step.computed}
    moved_parts = {i for step in program.steps for c in step.computed for i in _ids(c.stmt)}
    dead = {i for layer in program.layers for i in (id(layer.call), id(layer.call.func))}
    for call in program.get_variables:  # written anew: the renames of its parts go with it
        initializer = (optimizers.arguments(call, state.GET_VARIABLE_PARAMS) or {}).get("initializer")
        kept = initializer is not None and _initializer(initializer, initializer, tf) is initializer
        dead |= _ids(call) - (_ids(initializer) if kept else set())  # (an initializer kept: as fixed)
    for node in [*(s for s in program.dropped if id(s) not in moved), *program.removals,
                 *(r.call.func for r in program.runs),
                 *(_value(s).func for s in program.seeds), *(c.func for c in program.variable_scopes),
                 *(o.call.func for o in program.optimizers if o.keras is not None),
                 *([program.saver.stmt] if program.saver else []), *(s.call for s in program.saves),
                 *(a[0] for a in program.assigns), *(item for stmt in program.reopened for item in stmt.items),
                 *(w.body[0].value for w in program.writers), *program.graph_adds, *program.graph_writes,
                 *(_listed(stmt, name) for stmt, name in program.collection_lists),
                 *(s for r in program.runs if r.written for s in r.written.adds),
                 *(r.written.inline.func for r in program.runs if r.written and r.written.inline is not None),
                 *(item for f in program.layer_functions for item in f.scopes),
                 *(stmt for f in program.layer_functions for stmt in f.reuses), *regularizers.written(program),
                 *(call.func for call in program.initializers), *program.global_steps,
                 *(call.func for call, _ in program.losses),
                 *(anchor.items if isinstance(anchor, cst.With) else [anchor])]:
        dead |= _ids(node) - moved_parts if isinstance(node, cst.With) else _ids(node)
    ctx.findings[:] = [f for f in ctx.findings if f is finding or id(f.node) not in dead]


def _as_variable(original: cst.Call, tf: str):
    """``tf.get_variable("W1", shape=[784, 256], initializer=xavier_initializer())`` ->
    ``tf.Variable(tf.keras.initializers.GlorotUniform()(shape=[784, 256]), name="W1")``."""
    def rewrite(updated: cst.Call) -> cst.Call:
        args = optimizers.arguments(updated, state.GET_VARIABLE_PARAMS)
        before = optimizers.arguments(original, state.GET_VARIABLE_PARAMS)
        initializer = args.get("initializer")
        if "shape" not in args and initializer is not None:  # the initializer is the value
            value = initializer
        else:
            made = _initializer(before.get("initializer"), initializer, tf)
            sized = [cst.Arg(args["shape"], keyword=cst.Name("shape"), equal=_EQUAL)]
            if "dtype" in args:
                sized.append(cst.Arg(args["dtype"], keyword=cst.Name("dtype"), equal=_EQUAL))
            value = cst.Call(made, sized)
        out = [cst.Arg(value), cst.Arg(args["name"], keyword=cst.Name("name"), equal=_EQUAL)]
        if "trainable" in args:
            out.append(cst.Arg(args["trainable"], keyword=cst.Name("trainable"), equal=_EQUAL))
        return cst.Call(cst.parse_expression(f"{tf}.Variable"), out)
    return rewrite


def _initializer(original, updated, tf: str) -> cst.BaseExpression:
    """The initializer as TF2 writes it: TF1's default and tf.contrib's Xavier are Keras'
    Glorot (uniform; ``uniform=False``: its truncated normal)."""
    if original is None:
        return cst.parse_expression(f"{tf}.keras.initializers.GlorotUniform()")
    if isinstance(original, cst.Call) and code(original.func).endswith("xavier_initializer"):
        given = optimizers.arguments(original, ("uniform", "seed", "dtype")) or {}
        uniform = given.get("uniform")
        kind = "GlorotNormal" if isinstance(uniform, cst.Name) and uniform.value == "False" else "GlorotUniform"
        seed = f"seed={code(given['seed'])}" if "seed" in given else ""
        return cst.parse_expression(f"{tf}.keras.initializers.{kind}({seed})")
    return initializers.native(updated, tf)


def _assigned(updated: cst.Call, key: str, how: str, used: bool) -> cst.BaseExpression:
    """``sess.run(v.assign(value))`` -> ``v.assign(value)`` (its value, as the run gave it,
    where it is read)."""
    call = cst.parse_expression(f"{key}.{how}({code(_assigned_value(updated))})")
    return _numpy(call) if used else call


def _string_keys(updated: cst.Dict, name: Callable) -> cst.Dict:
    """``{x: a, y: b}`` -> ``{"x": a, "y": b}``: the step's keyword arguments (a class's
    ``{self.s: s}``: its parameter's name, ``{"s": s}``)."""
    return updated.with_changes(elements=[e.with_changes(key=cst.SimpleString(f'"{name(e.key)}"'))
                                          for e in updated.elements])


def _read_values(run: Run, updated: cst.Call, session: str, form=None) -> cst.BaseExpression:
    """``sess.run(W)`` -> ``W.numpy()`` (a list of them for a list)."""
    _, items, _ = _fetch_items(_run_parts(updated, session, form and form.self_name)[0])
    values = [_numpy(item) for item in items]
    if run.shape == "single":
        return values[0]
    elements = [cst.Element(v) for v in values]
    return cst.List(elements) if run.shape == "list" else cst.Tuple(elements)


def _keep_leading_lines(finding: Finding, stmts, gone, moved=frozenset()) -> None:
    """The blank lines and comments above statements that go stay, above the next statement
    that stays (when it has none of its own); the comments of a statement moved into the
    steps go with it."""
    carry = None
    for stmt in stmts:
        if id(stmt) in gone:
            lines = [line for line in stmt.leading_lines if id(stmt) not in moved or line.comment is None]
            if carry is None and lines:
                carry = lines
            continue
        if carry and not stmt.leading_lines:
            finding.replace(stmt, lambda updated, lines=carry: _with_leading_lines(updated, lines))
        carry = None


def _on_first(updated, change):
    """``change`` applied to a statement, or to the first of the statements it became."""
    if isinstance(updated, cst.FlattenSentinel):
        first, *rest = updated.nodes
        return cst.FlattenSentinel([change(first), *rest])
    return change(updated)


def _with_leading_lines(updated, lines):
    """``updated`` with ``lines`` above it where it has none (a statement written as several
    -- a block unwrapped -- gets them above its first)."""
    if isinstance(updated, cst.FlattenSentinel):  # (the block had none: its body's own follow)
        first, *rest = updated.nodes
        return cst.FlattenSentinel([first.with_changes(leading_lines=[*lines, *first.leading_lines]), *rest])
    return updated.with_changes(leading_lines=lines) if not updated.leading_lines else updated


def _blank_lines(lines) -> list:
    """Two blank lines, then the comments of ``lines`` (a module-level statement after a
    definition)."""
    return [cst.EmptyLine(), cst.EmptyLine(), *(line for line in lines if line.comment is not None)]


def _after_definitions(body: list, at_module: bool, above=()) -> list:
    """The session block's statements after the steps: two blank lines above the first, and
    the comments that stood above the session."""
    if body:
        comments = [line for line in above if line.comment is not None]
        lines = _blank_lines([*comments, *body[0].leading_lines]) if at_module else \
            [*comments, *(line for line in body[0].leading_lines if line.comment is not None)]
        body[0] = body[0].with_changes(leading_lines=lines)
    return body


def _optimizer_name(ctx, optimizer: Optimizer, program: NativeProgram, form=None) -> str:
    """The name the optimizer is bound to (a class's: an attribute of the object)."""
    stmt = optimizer.stmt.body[0]
    target = _key(stmt.targets[0].target, form and form.self_name)
    inline = any(t.stmt is optimizer.stmt for s in program.steps for t in s.trainings)
    # its own name where it had one (`optimizer = tf.train.AdamOptimizer(0.1).minimize(cost)` too)
    name = target if target is not None and (not inline or "optim" in target.lower()) \
        else fresh_name(ctx, "optimizer")
    return name if form is None else form.ref(name.rpartition(".")[2])


def _optimizer_maker(optimizer: Optimizer, name: str, tf: str):
    """The TF1 optimizer's statement -> ``name = tf.keras.optimizers.X(...)`` (or the TF1
    optimizer as the fixes left it, where no Keras one is equal)."""
    def rewrite(updated: cst.Assign) -> cst.Assign:
        call = updated.value
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "minimize":
            call = call.func.value
        if optimizer.keras is not None:
            keras, _ = optimizers.keras_form(optimizer.tf1_name, call, sparse=False)
            call = cst.parse_expression(f"{tf}.keras.optimizers.{keras or optimizer.keras}")
        return updated.with_changes(targets=[cst.AssignTarget(cst.parse_expression(name))], value=call)
    return rewrite


def _caller(run: Run, name: str, session: str, captured: Dict[int, cst.BaseExpression], form=None,
            param: Callable[[str], str] = str, defaults=frozenset()):
    """updated run call -> the step's call, fed what the run fed (the fetched expressions
    as the fixes left them go to ``captured``, for the step's body)."""
    self_name = form and form.self_name
    func = cst.parse_expression(name)

    def call(updated: cst.Call) -> cst.Call:
        fetched, feeds = _run_parts(updated, session, self_name)
        _, items, _ = _fetch_items(fetched)
        for original, now in zip(run.items, items):
            captured.setdefault(id(original), now)
        step = [cst.Arg(run.written.step, keyword=cst.Name(run.step.step_param), equal=_EQUAL)] \
            if run.written is not None else []
        if run.feed_name:
            return cst.Call(func, [cst.Arg(cst.Name(run.feed_name), star="**"), *step])
        values = {}
        if isinstance(feeds, cst.Dict):
            values = {_key(e.key, self_name): e.value for e in feeds.elements}
        fed = [p for p, _ in run.feeds]
        plain = [p for p in run.step.params if p not in defaults]  # (a default's left out where not fed)
        if fed[:len(plain)] == plain:
            args = [cst.Arg(values[p]) for p in plain] + [
                cst.Arg(values[p], keyword=cst.Name(param(p)), equal=_EQUAL) for p in fed[len(plain):]]
        else:
            args = [cst.Arg(values[p], keyword=cst.Name(param(p)), equal=_EQUAL) for p in run.step.params
                    if p in values]
        return cst.Call(func, [*args, *step])
    return call


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _each_numpy(call: cst.Call, kind: str) -> cst.BaseExpression:
    """``[value.numpy() for value in step(...)]`` (a list or tuple fetch, as sess.run gave it)."""
    text = f"[value.numpy() for value in {code(call)}]"
    return cst.parse_expression(text if kind == "list" else f"tuple({text})")


def _result(run: Run, call: cst.Call) -> cst.BaseExpression:
    """The step's call, its results as ``sess.run`` gave them (numpy; a train op's None);
    a run whose values go unread (with a train op or updates): the call."""
    count = run.trains.count(False)
    if run.alone and any(run.trains):
        return call
    if run.shape == "single":
        return _numpy(call) if count else call
    if run.shape == "dict":
        values = _numpy(call) if count == 1 else None
        if values is not None:
            return cst.parse_expression(f"{{{run.keys[0]}: {code(values)}}}")
        return cst.parse_expression(f"dict(zip([{', '.join(run.keys)}], {code(_each_numpy(call, 'list'))}))")
    if not any(run.trains):
        if count == 1:
            element = cst.Element(_numpy(call))
            return cst.List([element]) if run.shape == "list" else cst.Tuple([element])
        return _each_numpy(call, run.shape)
    if count == 1:  # `sess.run([train_op, loss])` read as a list: None where TF1 gave it
        elements = [cst.Element(cst.Name("None") if t else _numpy(call)) for t in run.trains]
        return cst.List(elements) if run.shape == "list" else cst.Tuple(elements)
    return call  # a train op alone, as an expression statement (see read)


def _unpacked(updated: cst.Assign, run: Run, caller) -> cst.BaseSmallStatement:
    """``_, c = sess.run([train_op, loss], ...)`` -> ``c = train_step(...).numpy()``."""
    call = caller(updated.value)
    target = updated.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)):  # `s = sess.run(merged)`: the step writes it
        return cst.Expr(call)
    kept = [e for e, train in zip(target.elements, run.trains) if not train]
    if not kept:
        return cst.Expr(call)
    if len(kept) == 1:
        return updated.with_changes(targets=[cst.AssignTarget(kept[0].value)], value=_numpy(call))
    elements = [e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in kept]
    elements[-1] = elements[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return updated.with_changes(targets=[cst.AssignTarget(target.with_changes(elements=elements))],
                                value=_each_numpy(call, "list"))


def _layer_call(layer: Layer, obj: str, made_layers: Dict[int, cst.Call]):
    """``tf.layers.dense(x, 8, ...)`` -> ``hidden_layer(x)`` (the call, as the fixes left it, is
    kept for the layer's constructor)."""
    def rewrite(updated: cst.Call) -> cst.Call:
        made_layers[id(layer)] = updated
        inputs = next(a for a in updated.args if a.keyword is None or a.keyword.value == "inputs")
        args = [inputs.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT, comma=cst.MaybeSentinel.DEFAULT)]
        if layer.function == batchnorm.BATCH_NORM:  # (TF1's default training=False made explicit)
            args.append(cst.Arg(batchnorm.training_of(updated), keyword=cst.Name("training"), equal=_EQUAL))
        return cst.Call(cst.parse_expression(obj), args)
    return rewrite


def _layer_maker(layer: Layer, obj: str, made_layers: Dict[int, cst.Call], tf: str):
    """``hidden_layer = tf.keras.layers.Dense(8, ..., name="hidden")``: made once, TF1's layer
    name given (its variables are TF1's hidden/kernel, hidden/bias); TF1's arguments past the
    ones the Keras class takes by position are given by name."""
    call = made_layers.get(id(layer), layer.call)
    _, params, positional = LAYERS[layer.function]
    args = []
    for at, arg in enumerate(call.args):
        if arg.keyword is None and at == 0 or arg.keyword is not None and arg.keyword.value in (
                "inputs", "name", "reuse", *CALL_ARGS):
            continue
        if arg.keyword is None and at - 1 >= positional:
            arg = arg.with_changes(keyword=cst.Name(params[at - 1]), equal=_EQUAL)
        args.append(arg.with_changes(value=initializers.native(arg.value, tf), comma=cst.MaybeSentinel.DEFAULT))
    args.append(cst.Arg(cst.SimpleString(f'"{layer.name}"'), keyword=cst.Name("name"), equal=_EQUAL))
    return cst.SimpleStatementLine([cst.Assign(
        [cst.AssignTarget(cst.parse_expression(obj))],
        cst.Call(cst.parse_expression(f"{tf}.keras.layers.{layer.keras}"), args))])
