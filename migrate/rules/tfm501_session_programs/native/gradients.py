"""Train ops, read for the native form: ``minimize`` and its two halves written out.

``train_op = optimizer.minimize(loss, var_list=..., global_step=...)`` is a
:class:`~.model.Training` of ``loss``. So is ``grads_and_vars =
optimizer.compute_gradients(loss)``, gradients changed by hand (``[(tf.clip_by_value(g, -1.,
1.), v) for g, v in grads_and_vars]``) and ``train_op = optimizer.apply_gradients(clipped,
global_step=...)``: TF1's minimize is exactly those two calls. The step computes the loss
under the tape, the pairs from the tape's gradients (``grads_and_vars =
list(zip(gradients, variables))``), the statements reading them as written, then applies
what ``apply_gradients`` was given. Written where TF1's pairs are the step's: every
variable compute_gradients lists gets a gradient (TF1 listed every trainable variable,
with None where the loss did not reach it), the pairs are applied by the optimizer that
computed them, and no run fetches them (TF1 gave the gradients' and the variables' values).

So is ``grads, _ = tf.clip_by_global_norm(tf.gradients(cost, tvars), 5.0)`` then
``optimizer.apply_gradients(zip(grads, tvars))`` (the PTB tutorial's form): the script's
``tf.gradients`` is the step's ``tape.gradient(cost, tvars)`` (``taped_edits``), and a
collection it reads (``tvars = tf.trainable_variables()``) the list TF1 gave, written out.
"""
from __future__ import annotations

from typing import Optional, Set, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from ..syntax import _value
from . import copies, layers, optimizers
from .model import Computed, Layer, Optimizer, Training
from .syntax import _binds, _names_read

MINIMIZE = ("loss", "global_step", "var_list", "gate_gradients", "aggregation_method",
            "colocate_gradients_with_ops", "name", "grad_loss")
COMPUTE = ("loss", "var_list", "gate_gradients", "aggregation_method", "colocate_gradients_with_ops",
           "grad_loss")
APPLY = ("grads_and_vars", "global_step", "name")


def is_half(call) -> Optional[str]:
    """``compute_gradients`` / ``apply_gradients`` where ``call`` is one, else None."""
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
            and call.func.attr.value in ("compute_gradients", "apply_gradients"):
        return call.func.attr.value
    return None


def half(reader, stmt, binds, call: cst.Call) -> Optional[str]:
    """Reads ``compute_gradients`` (``computed``) or ``apply_gradients`` (``applied``)."""
    read = computed if is_half(call) == "compute_gradients" else applied
    return read(reader, stmt, binds, call)


def optimizer_of(reader, stmt, made) -> Union[Optimizer, str]:
    """The TF1 optimizer a train op's call is a method of (made by the script, or inline
    ``tf.train.AdamOptimizer(0.01).minimize(loss)``), taken from those not used yet."""
    if reader.key(made) in reader.optimizers:
        optimizer = reader.optimizers.pop(reader.key(made))
        if any(t.optimizer.stmt is optimizer.stmt for t in reader.trainings.values()):
            return f"the optimizer {reader.key(made)!r} minimizes two losses"
        return optimizer
    name = reader.call_name(made) if isinstance(made, cst.Call) else None
    if name and name.startswith("tf.train.") and name.endswith("Optimizer"):
        why = reader.optimizer(stmt, ("_",), made, name)
        return why or reader.optimizers.pop("_")
    return "minimize() of something other than a TF1 optimizer made here"


def trains(reader, key: str, stmt, optimizer: Optimizer, loss: str, variables, step, negated: bool = False,
           pairs: Optional[str] = None, applied: Optional[cst.BaseExpression] = None,
           taped: Optional[cst.Call] = None) -> Optional[str]:
    """Records the train op ``key`` (its optimizer's Keras form where proven equal); why
    not, else None."""
    sparse = optimizers.sparse(reader, {loss})
    keras, why = optimizers.keras_form(optimizer.tf1_name, optimizer.call, sparse)
    variable = next((n for n in _names_read(optimizer.call, reader.self_name) if n in reader.state), None)
    if variable is not None:  # TF1 read it at each step; only TF1's optimizer is proven so
        keras, why = None, f"its arguments read the variable {variable!r} at each step"
    if keras is None and any(isinstance(v, Layer) for v in variables):  # (Keras 3's are not tf.Variables)
        return f"{optimizer.tf1_name.rsplit('.', 1)[-1]} is kept ({why}) and trains Keras layers, whose " \
               "variables a TF1 optimizer cannot update"
    optimizer = Optimizer(optimizer.stmt, optimizer.call, optimizer.tf1_name, keras, why)
    reader.losses.add(loss)
    reader.trained_from[key] = len(reader.variables)
    reader.trainings[key] = Training(key, stmt, loss, optimizer, variables,
                                     reader.key(step) if step is not None else None,
                                     "/".join(reader.name_scopes), negated, pairs, applied, taped)
    if optimizer.stmt is not stmt:  # made inline: the optimizer is made in its place
        reader.dropped.append(stmt)
    return None


def global_step(reader, step) -> Optional[str]:
    """Why ``global_step=`` cannot be incremented natively, else None."""
    if step is not None and not (reader.key(step) in reader.state and len(reader.state[reader.key(step)]) == 1):
        return "a global step that is not a variable made here"
    return None


def trained_variables(reader, args) -> Optional[Tuple[Union[str, Layer], ...]]:
    """What ``var_list=`` lists, else every trainable variable the loss has a gradient for
    (TF1 updated no other); None where ``var_list`` is not read."""
    if "var_list" in args:
        return layers.var_list(reader, args["var_list"])
    reached = copies.differentiated(reader, reader.key(args["loss"]))
    return tuple(expr for expr, trainable in reader.variables
                 if trainable and (id(expr) if isinstance(expr, Layer) else expr) in reached)


def computed(reader, stmt, binds, call: cst.Call) -> Optional[str]:
    """``grads_and_vars = optimizer.compute_gradients(loss[, var_list])``: computed in the
    step that applies them, from the tape (see ``applied``)."""
    if reader.self_name is not None:
        return "compute_gradients() in a class's graph, which is not written natively yet"
    args = optimizers.arguments(call, COMPUTE)
    if len(binds) != 1 or args is None or set(args) - {"loss", "var_list"} \
            or reader.key(args.get("loss")) not in reader.computed:
        return "compute_gradients() of something other than a graph name, or with TF1's gradient options"
    made = reader.key(call.func.value)
    if made not in reader.optimizers:
        return "compute_gradients() of an optimizer not made by the script"
    variables = trained_variables(reader, args)
    if variables is None:
        return "a var_list that is not a list of the variables made here"
    if "var_list" not in args and len(variables) != sum(1 for _, trainable in reader.variables if trainable):
        return "compute_gradients() over trainable variables its loss does not reach (TF1 paired them with None)"
    reader.pairs[binds[0]] = (made, reader.key(args["loss"]), variables)
    made_by = Computed(stmt, tuple(binds), (reader.key(args["loss"]),), "")
    reader.computed[binds[0]] = made_by
    reader.order.append(made_by)
    reader.dropped.append(stmt)
    return None


def applied(reader, stmt, binds, call: cst.Call) -> Optional[str]:
    """``train_op = optimizer.apply_gradients(pairs, global_step=...)``: a train op of the
    loss its pairs were computed from, applying what it is given."""
    args = optimizers.arguments(call, APPLY)
    if len(binds) != 1 or args is None or "grads_and_vars" not in args:
        return "apply_gradients() with arguments other than the pairs, global_step= and name="
    if any(code(c.func) not in ("zip", "list") for c in nodes_of(args["grads_and_vars"], (cst.Call,))):
        return "apply_gradients() of pairs computed in its call (bind them to a name first)"
    needed = {b for c in reader.slice(_names_read(args["grads_and_vars"], reader.self_name)) for b in c.binds}
    made = [key for key in reader.pairs if key in needed]
    if not made:  # `zip(grads, tvars)` of `tf.gradients(loss, tvars)`
        return _taped(reader, stmt, binds, call, args)
    if len(made) != 1:
        return "apply_gradients() of pairs not computed by one compute_gradients() here"
    optimizer_key, loss, variables = reader.pairs[made[0]]
    if reader.key(call.func.value) != optimizer_key:
        return "apply_gradients() by another optimizer than the one that computed its gradients"
    why = global_step(reader, args.get("global_step"))
    if why:
        return why
    optimizer = reader.optimizers.pop(optimizer_key)
    return trains(reader, binds[0], stmt, optimizer, loss, variables, args.get("global_step"),
                  pairs=made[0], applied=args["grads_and_vars"])


def _taped(reader, stmt, binds, call: cst.Call, args) -> Optional[str]:
    """``train_op = optimizer.apply_gradients(zip(grads, tvars))`` of ``grads =
    tf.gradients(loss, tvars)`` (clipped: ``grads, _ = tf.clip_by_global_norm(tf.gradients(
    cost, tvars), 5)``): the step's tape gives them (``tape.gradient(cost, tvars)``)."""
    made = reader.slice(_names_read(args["grads_and_vars"], reader.self_name))
    found = [(m, c) for m in made for c in nodes_of(m.stmt, (cst.Call,)) if reader.call_name(c) == "tf.gradients"]
    if len(found) != 1:
        return "apply_gradients() of gradients not computed by one compute_gradients() or tf.gradients() here"
    holder, taped = found[0]
    given = optimizers.arguments(taped, ("ys", "xs"))
    if given is None or set(given) != {"ys", "xs"} or reader.key(given["ys"]) not in reader.computed:
        return "tf.gradients() of something other than a graph name, or with its other arguments"
    variables = layers.var_list(reader, given["xs"])
    if variables is None:
        return "tf.gradients() over something other than a list of the variables made here"
    key = reader.key(given["xs"])
    if key in reader.collected:  # `tvars = tf.trainable_variables()`: the list it held, written out
        if any(isinstance(v, Layer) for v in variables):
            return "tf.gradients() over a collection holding layers' variables (made when the steps trace)"
        made = next(s for s in reader.dropped if _binds(s, reader.self_name) == (key,))
        reader.dropped.remove(made)
        reader.listed.append((made, tuple(variables)))
    why = global_step(reader, args.get("global_step"))
    optimizer = optimizer_of(reader, stmt, call.func.value) if not why else why
    if isinstance(optimizer, str):
        return optimizer
    return trains(reader, binds[0], stmt, optimizer, reader.key(given["ys"]), variables, args.get("global_step"),
                  pairs=holder.binds[0], applied=args["grads_and_vars"], taped=taped)


def after_gradients(step) -> Set[int]:
    """The ids of a step's statements that read compute_gradients' pairs (and the pairs'
    own): written after the tape's gradients, not under the tape."""
    after: Set[str] = {t.pairs for t in step.trainings if t.pairs}
    ids: Set[int] = set()
    for made in step.computed:
        if set(made.binds) & after or set(made.reads) & after:
            ids.add(id(made))
            after |= set(made.binds)
    return ids


def fetched_pairs(reader, runs) -> Optional[str]:
    """Why a run reads compute_gradients' pairs other than by applying them, else None:
    TF1 gave the values of the variables paired with the gradients as of before the update
    (a fetch of the pairs, or of what holds them). What TensorFlow computes from the
    gradients (``grads, norm = tf.clip_by_global_norm(...)``) it computed before the update,
    as the step does."""
    for run in runs:
        step = run.step
        if step is None:
            continue
        applying = {t.pairs for t in step.trainings if t.pairs}
        ids = after_gradients(step)
        after = {b: made for made in step.computed if id(made) in ids for b in made.binds}
        taped = [t for t in reader.trainings.values() if t.taped is not None and t not in step.trainings
                 and any(made.binds[:1] == (t.pairs,) for made in step.computed)]
        if taped:
            return f"a run computing {taped[0].pairs!r} (tf.gradients) without its train op, whose tape gives them"
        for made in step.computed:
            if is_half(_value(made.stmt)) == "compute_gradients" and made.binds[0] not in applying:
                return f"a run fetching what {made.binds[0]!r} (compute_gradients) gives, which TF1 " \
                       "evaluated to the gradients' and the variables' values"
        read = {n for r in step.returns for n in ([r] if isinstance(r, str) else _names_read(r, None))}
        held = sorted(n for n in read if n in after and not (reader.call_name(_value(after[n].stmt)) or "")
                      .startswith("tf."))
        if held:
            return f"a run fetching {held[0]!r}, compute_gradients' pairs (TF1 gave the variables' values " \
                   "before the update)"
    return None


def taped_edits(finding, program, tape: str) -> None:
    """The script's ``tf.gradients(cost, tvars)`` of a train op: the step's tape gives them."""
    taped = {id(t.taped): t.taped for step in program.steps for t in step.trainings if t.taped is not None}
    for call in taped.values():
        finding.replace(call, lambda updated: _tape_gradient(updated, tape))


def _tape_gradient(updated: cst.Call, tape: str) -> cst.Call:
    """``tf.gradients(cost, tvars)`` -> ``tape.gradient(cost, tvars)`` (as the fixes left it)."""
    given = optimizers.arguments(updated, ("ys", "xs"))
    call = cst.parse_expression(f"{tape}.gradient(_, _)")
    return call.with_changes(args=[call.args[0].with_changes(value=given["ys"]),
                                   call.args[1].with_changes(value=given["xs"])])
