"""Writes the functions of a native program (pure: nodes in, nodes out): the forward
function several steps share, and each ``@tf.function`` step -- the computations it needs
(the shared ones as a call of the forward function), under a ``tf.GradientTape`` where it
trains, then ``apply_gradients`` over the variables minimize trained, its summaries, its
variable copies; a class's as its methods (``self`` first, the graph attributes its locals).
"""
from __future__ import annotations

from dataclasses import replace
from itertools import groupby
from typing import Dict, Optional, Tuple

import libcst as cst

from migrate.codemod.cstutil import code, fresh_name

from ..convert import Converter, _as_moved
from ..syntax import _value
from . import classes, copies, optimizers, runs, summaries, traced
from .gradients import after_gradients
from .model import Forward, NativeProgram, Step


def _variables(variable, layers: Dict[int, str]) -> str:
    """A variable's expression, or all of a layer's variables unpacked into the list."""
    return variable if isinstance(variable, str) else f"*{layers[id(variable)]}.variables"


def _trained(variable, layers: Dict[int, str]) -> str:
    """A variable's expression, or a layer's variables unpacked into the list."""
    return variable if isinstance(variable, str) else f"*{layers[id(variable)]}.trainable_variables"


def _moved(ctx, computed, tf: str, method: Optional[classes.Methods] = None) -> list:
    """Statements moved into a function, as the other edits left them, with their comments
    (a class's reading the locals the object keeps as its attributes); those calling layers
    in a variable scope of the graph under ``with tf.name_scope(scope):`` (one block for
    consecutive ones)."""
    # (each statement as the edits left it: one may now be several, each kept with its own)
    pairs = [(c, s) for c in computed for s in _as_moved(ctx.facts, [c.stmt])]
    moved = [traced.noted(c, s.with_changes(leading_lines=[l for l in s.leading_lines if l.comment is not None]))
             for c, s in pairs]
    if method is not None:
        moved = [classes.moved_reads(method.form, c.stmt, s) for (c, _), s in zip(pairs, moved)]
    out: list = []
    scopes = [c.scope for c, _ in pairs]
    for at, scope in enumerate(scopes):  # statements calling no layer between two of one scope stay in
        # its block: a second `with tf.name_scope("mlp"):` would be `mlp_1`, and so its layers' variables
        if not scope and (before := next((s for s in reversed(scopes[:at]) if s), "")) \
                and before == next((s for s in scopes[at + 1:] if s), ""):
            scopes[at] = before
    for scope, group in groupby(zip(scopes, moved), key=lambda pair: pair[0]):
        stmts = [stmt for _, stmt in group]
        if not scope:
            out += stmts
            continue
        block = cst.parse_statement(f'with {tf}.name_scope("{scope}"):\n    pass\n')
        out.append(block.with_changes(body=block.body.with_changes(body=stmts)))
    return out


def _computed(ctx, step: Step, forward: Optional[Tuple[Forward, str]], tf: str,
              method: Optional[classes.Methods] = None) -> list:
    """What a step computes: its statements, the shared ones as a call of the forward
    function where the first of them stood (``hypothesis = forward(X, keep_prob)``)."""
    shared = {id(c) for c in forward[0].computed} if forward else set()
    at = next((i for i, c in enumerate(step.computed) if id(c) in shared), None)
    if at is None:
        return _moved(ctx, step.computed, tf, method)
    made, name = forward
    call = f"{method.form.ref(name) if method is not None else name}({', '.join(made.params)})"
    line = cst.parse_statement(f"{', '.join(made.outputs)} = {call}\n")
    rest = [c for c in step.computed[at:] if id(c) not in shared]
    return [*_moved(ctx, step.computed[:at], tf, method), line, *_moved(ctx, rest, tf, method)]


def _copies(step: Step, layers: Dict[int, str]) -> list:
    """``for t, e in zip([<targets>], [<sources>]): t.assign(e)``: each variable copy."""
    out = []
    for copy in step.copies:
        targets = ", ".join(_variables(v, layers) for v in copy.targets)
        sources = ", ".join(_variables(v, layers) for v in copy.sources)
        out.append(cst.parse_statement(f"for {copy.target}, {copy.source} in zip([{targets}], [{sources}]):\n"
                                       f"    {copy.target}.assign({code(copy.value)})\n"))
    return out


def _summaries(ctx, step: Step, tf: str) -> list:
    """``with writer.as_default(step=step):`` and the step's summaries, v2 (their data as the
    other edits left it)."""
    if not step.summaries:
        return []
    def moved(stmt):
        return _value(_as_moved(ctx.facts, [stmt])[0])
    return [summaries.block(step.summaries, step.writer, step.step_param, tf, moved)]


def traced_steps(ctx, program: NativeProgram, steps: Dict[int, str], made: Dict[int, str], tf: str,
            at_module: bool) -> list:
    """The steps traced where the program is made: those calling the layers a copy reads
    (their variables exist from the start, as TF1's did once initialised), and those training
    with a Keras optimizer whose state TF1 started elsewhere (Keras makes it in the trace; it
    is set then)."""
    # (the steps building the layers those fed a graph value call, first: see runs.fed_builders)
    first = list(runs.fed_builders(program))
    first += [s for s in copies.traced_first(program) or [] if s not in first]
    started = [(o, optimizers.started_at_one(o.tf1_name, o.keras)) for o in program.optimizers]
    started = [(o, attr) for o, attr in started if attr is not None]
    for optimizer, _ in started:
        step = next((s for s in program.steps if any(t.optimizer.stmt is optimizer.stmt for t in s.trainings)), None)
        if step is not None and all(s is not step for s in first):
            first.append(step)
    out = [cst.parse_statement(f"{steps[id(step)]}.get_concrete_function()\n") for step in first]
    out += [optimizers.set_as_tf1(made[id(o.stmt)], attr, fresh_name(ctx, "velocity"), tf) for o, attr in started]
    if out and at_module:  # after the steps' definitions
        out[0] = out[0].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    return out


def forward_function(ctx, made: Forward, name: str, tf: str, method: Optional[classes.Methods] = None) -> cst.FunctionDef:
    """``def forward(X, keep_prob): <the shared statements> return hypothesis`` (a class's
    method: ``def forward(self, s)``)."""
    params = method.params(made.params) if method is not None else made.params
    func = cst.parse_statement(f"def {name}({', '.join(params)}):\n    pass\n")
    body = [*_moved(ctx, made.computed, tf, method), cst.parse_statement(f"return {', '.join(made.outputs)}\n")]
    func = func.with_changes(body=func.body.with_changes(body=body))
    return method.written(func) if method is not None else func


def step_function(ctx, step: Step, name: str, tf: str, local: Dict[str, str], made: Dict[int, str],
          captured: Dict[int, cst.BaseExpression], layers: Dict[int, str],
          specs: Dict[str, str], forward: Optional[Tuple[Forward, str]],
          method: Optional[classes.Methods] = None, defaults: Optional[Dict[str, str]] = None) -> cst.FunctionDef:
    """``@tf.function(input_signature=[...])`` (the placeholders' dtypes and shapes: values
    are converted as TF1 converted a feed) ``def step(<placeholders>):`` + what it computes
    (a class's method: ``self`` first, its signature given in ``__init__`` where it reads
    ``__init__``'s values)."""
    applied = after_gradients(step)  # statements reading compute_gradients' pairs
    body = _computed(ctx, replace(step, computed=tuple(c for c in step.computed if id(c) not in applied)),
                     forward, tf, method) + _copies(step, layers)
    returned = [r if isinstance(r, str) else code(captured.get(id(r), r)) for r in step.returns]
    if step.trainings:
        tape = local["tape"]
        persistent = ", persistent=True" if len(step.trainings) > 1 else ""
        losses = [local["loss"] + (f"_{at}" if at else "") if t.negated else t.loss for at, t in enumerate(step.trainings)]
        # `minimize(-exp_v)`: negated under the tape, as TF1's graph did
        body += [cst.parse_statement(f"{loss} = -{t.loss}\n") for loss, t in zip(losses, step.trainings) if t.negated]
        body = [cst.parse_statement(f"with {tf}.GradientTape({persistent[2:]}) as {tape}:\n    pass\n")
                .with_changes(body=cst.IndentedBlock(body or [cst.SimpleStatementLine([cst.Pass()])]))]
        # every gradient from the values before any update (TF1 ran the train ops of one run
        # on the same values), then every update
        lines, updates = [], []
        for at, training in enumerate(step.trainings):
            suffix = f"_{at}" if at else ""
            variables, gradients = local["variables"] + suffix, local["gradients"] + suffix
            optimizer = made[id(training.optimizer.stmt)]
            if training.taped is None:  # (tf.gradients: the script's own statement asks the tape)
                lines += [f"{variables} = [{', '.join(_trained(v, layers) for v in training.variables)}]\n",
                          f"{gradients} = {tape}.gradient({losses[at]}, {variables})\n"]
            if training.pairs and training.taped is None:  # compute_gradients' pairs, from the tape
                lines.append(f"{training.pairs} = list(zip({gradients}, {variables}))\n")
            pairs = code(training.applied) if training.applied is not None else f"zip({gradients}, {variables})"
            updates += [f"{optimizer}.apply_gradients({pairs})\n",
                        *([f"{training.global_step}.assign_add(1)\n"] if training.global_step else [])]
        body += [cst.parse_statement(line) for line in lines]
        body += _moved(ctx, [c for c in step.computed if id(c) in applied and c.binds[0] not in
                             {t.pairs for t in step.trainings if t.taped is None}], tf, method)  # (as written)
        body += _summaries(ctx, step, tf)
        body += [cst.parse_statement(line) for line in updates]
    else:
        body += _summaries(ctx, step, tf)
    if returned:
        body.append(cst.parse_statement(f"return {', '.join(returned)}\n"))
    params, spec = list(step.params), [specs[p] for p in step.params]
    if step.summaries:  # the summaries' step, as add_summary was given it
        params.append(step.step_param)
        spec.append(f"{tf}.TensorSpec([], {tf}.int64)")
    signature = f"(input_signature=[{', '.join(spec)}])" if params else ""
    decorator = f"@{tf}.function{signature}\n"
    if method is not None:
        decorator = decorator if method.static(spec) else ""
        params = method.params(params)
    given = defaults or {}  # placeholders with a default: last, with it
    params = [f"{p}={given[p]}" if p in given else p for p in params]
    func = cst.parse_statement(f"{decorator}def {name}({', '.join(params)}):\n    pass\n")
    func = func.with_changes(body=func.body.with_changes(body=body))
    return method.written(func) if method is not None else func


def specs(program: NativeProgram, tf: str) -> Dict[str, str]:
    """Each step parameter's TensorSpec: a placeholder's dtype and shape, a fed graph
    value's dtype, a default's dtype (as TF1 converted it) and shape."""
    specs = {key: Converter._spec(call, tf) for key, call in program.placeholders}
    specs.update({key: f"{tf}.TensorSpec(None, {tf}.{dtype})" for key, dtype in program.overrides})
    specs.update({key: f"{tf}.TensorSpec({made.shape}, {tf}.{made.dtype})" for key, made in program.defaults})
    return specs
