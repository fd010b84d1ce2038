"""Graph code that updates variables by hand: ``update = W.assign(W - learning_rate *
gradient)``, ``step = [tf.assign(W2, W2 - learning_rate * d_W2), tf.assign(b2, ...)]`` (the
tutorials' gradient descent written out, back-propagation by hand).

Read (pure): such a statement is one of the graph's computations, in its place: it moves
into the steps whose runs fetch it (a run of it is a train op's: the step returns nothing for
it, so a run reading its values, the new ones TF1 gave, is not native), after the statements
above it and before those below, so a step reads and updates the variables in the order the
graph code was written (``tf.function`` orders a variable's reads and updates as written; TF1 ran
a fetch's reads and updates without an order, and read them before the update where
measured: the tutorials print the cost before the update). Each update is ``W.assign(...)``
(``assign_add``, ``assign_sub``); TF1's ``tf.assign(W, value)`` is written as that method.

Emit: ``tf.assign(W, value)`` -> ``W.assign(value)`` where it stands (``edits``).
"""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from migrate.codemod.rule import Finding

from . import layers
from .model import Computed

METHODS = ("assign", "assign_add", "assign_sub")
FUNCTIONS = {"tf.assign": "assign", "tf.assign_add": "assign_add", "tf.assign_sub": "assign_sub"}


def _calls(reader, value) -> Optional[List[cst.Call]]:
    """The updates ``value`` is (one, or a list or tuple of them), else None."""
    items = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
    calls = [item for item in items if isinstance(item, cst.Call) and (
        reader.call_name(item) in FUNCTIONS
        or isinstance(item.func, cst.Attribute) and item.func.attr.value in METHODS and reader.key(item.func.value))]
    return calls if items and len(calls) == len(items) else None


def is_update(reader, value) -> bool:
    return _calls(reader, value) is not None


def _parts(reader, call: cst.Call):
    """(the variable updated, the value given) of one update, or None."""
    if any(a.keyword is not None or a.star for a in call.args):
        return None
    if reader.call_name(call) in FUNCTIONS:
        return (call.args[0].value, call.args[1].value) if len(call.args) == 2 else None
    return (call.func.value, call.args[0].value) if len(call.args) == 1 else None


def read(reader, stmt, binds, value) -> Optional[str]:
    """The updates ``stmt`` makes, recorded as a computation (why they are not read
    natively, else None)."""
    if binds is None:
        return "variable updates not bound to a name"
    for call in _calls(reader, value):
        parts = _parts(reader, call)
        if parts is None:
            return "a variable update with keyword arguments (validate_shape, use_locking, name)"
        variable, given = parts
        key = reader.key(variable)
        if key not in reader.state or len(reader.state[key]) != 1:
            return f"an update of {key or 'an expression'!r}, which is not a variable made here"
        if key in {k for t in reader.trainings.values() for k in t.variables if isinstance(k, str)}:
            return f"an update of {key!r}, which an optimizer trains too"
        why = reader.forbidden(given)
        if why:
            return f"the graph uses {why}"
        if reader.call_name(call) in FUNCTIONS:
            reader.updates.append(call)
    reader.update_statements.append((stmt, tuple(binds), _raced(reader, value)))
    reader.update_keys.update(binds)  # run as a train op is (TF1's values of it go unread)
    computed = Computed(stmt, binds, layers.read_beside_layers(reader, value))
    for key in binds:
        reader.computed[key] = computed
    reader.order.append(computed)
    reader.dropped.append(stmt)
    return None


def _raced(reader, value) -> str:
    """A variable one update of ``value`` assigns and another's value reads (through the graph
    values it reads), else "": TF1 ran the reads and the updates in no order (measured: a
    back-propagation by hand read a layer's weights after their update at some steps and
    before at others); the step reads each before it updates any, as the code is written."""
    parts = [_parts(reader, c) for c in _calls(reader, value)]
    targets = [reader.key(variable) for variable, _ in parts]
    for (_, assigned), target in zip(parts, targets):
        seen, todo = set(), list(layers.read_beside_layers(reader, assigned))
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(reader.computed[name].reads if name in reader.computed else ())
        other = next((t for t in targets if t != target and t in seen), None)
        if other is not None:
            return other
    return ""


def summary(program) -> str:
    """What the finding says of updates whose values read a variable another one updates."""
    raced = [(binds[0], var) for _, binds, var in program.update_statements if var]
    if not raced:
        return ""
    name, var = raced[0]
    return (f"the updates of {name!r} read values computed from {var!r}, which one of them updates: TF1 "
            "ran those reads and the updates in no fixed order (a back-propagation by hand read a layer's "
            "weights after their update at some steps); the step reads every variable before it updates any, "
            "as the code is written")


def edits(finding: Finding, program) -> None:
    """``tf.assign(W, value)`` -> ``W.assign(value)`` (as the other edits left its parts); a
    statement of updates whose name no computation reads (a run of it is a train op's):
    the updates alone, one statement each (``W2.assign(W2 - 0.5 * d_W2)``)."""
    for call in program.updates:
        finding.replace(call, _as_method)
    computed = [c for s in program.steps for c in s.computed] + list(program.forward.computed if program.forward else ())
    read = {n for c in computed for n in c.reads}
    for stmt, binds, _ in program.update_statements:
        if not read & set(binds):
            finding.replace(stmt, _unbound)


def _unbound(updated: cst.SimpleStatementLine):
    value = updated.body[0].value
    calls = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
    lines = [cst.SimpleStatementLine([cst.Expr(call)]) for call in calls]
    return cst.FlattenSentinel([lines[0].with_changes(leading_lines=updated.leading_lines), *lines[1:]])


def _as_method(updated: cst.Call) -> cst.Call:
    target, given = updated.args[0].value, updated.args[1].value
    func = updated.func  # (``tf.compat.v1.assign_add`` as the renames left it: its last name)
    kind = func.attr.value if isinstance(func, cst.Attribute) else func.value
    return cst.Call(cst.Attribute(target, cst.Name(kind)), [cst.Arg(given)])
