"""Variable copies of the graph (pure): a target network replaced by, or softly moved toward,
the network it follows, as the RL tutorials made them::

    t_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="target_net")
    e_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="eval_net")
    self.replace = [tf.assign(t, e) for t, e in zip(t_params, e_params)]
    self.soft = [t.assign((1 - TAU) * t + TAU * e) for t, e in zip(t_params, e_params)]

Each is one :class:`~.model.Copy`; a run of it alone (``sess.run(self.replace)``, its values
not read) is a step assigning each pair in turn, as TF1's ops did: each op read its own pair
only, so the order of the assignments does not change what they compute.
"""
from __future__ import annotations

from typing import Optional, Set, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from ..syntax import _ids

from .model import Copy, Layer
from .syntax import _names_read, _names_read_beside

ASSIGN = "tf.assign"
STOP = "tf.stop_gradient"


def is_copy(reader, value) -> bool:
    """``[tf.assign(t, ...) for t, e in zip(a, b)]`` (or ``t.assign(...)``)."""
    if not (isinstance(value, cst.ListComp) and isinstance(value.elt, cst.Call)):
        return False
    call = value.elt
    return reader.call_name(call) == ASSIGN or (
        isinstance(call.func, cst.Attribute) and call.func.attr.value == "assign")


def read(reader, stmt, binds, value: cst.ListComp) -> Optional[str]:
    """The copy ``stmt`` makes, recorded (why it is not read natively, else None)."""
    loop, call = value.for_in, value.elt
    if binds is None or len(binds) != 1:
        return "variable copies not bound to one name"
    pair = loop.target
    if loop.ifs or loop.inner_for_in is not None or not (
            isinstance(pair, cst.Tuple) and len(pair.elements) == 2
            and all(isinstance(e.value, cst.Name) for e in pair.elements)) or not (
            isinstance(loop.iter, cst.Call) and code(loop.iter.func) == "zip" and len(loop.iter.args) == 2):
        return "variable copies other than over zip() of two collections"
    target, source = (e.value.value for e in pair.elements)
    if reader.call_name(call) == ASSIGN:
        assigned, given = (call.args[0].value, call.args[1].value) if len(call.args) == 2 else (None, None)
    else:
        assigned, given = call.func.value, (call.args[0].value if len(call.args) == 1 else None)
    args = list(loop.iter.args)
    if isinstance(assigned, cst.Name) and assigned.value == source:  # `for p, oldp in zip(...): oldp.assign(p)`
        target, source, args = source, target, args[::-1]
    if any(a.keyword is not None for a in call.args) or not (
            isinstance(assigned, cst.Name) and assigned.value == target) or given is None:
        return "variable copies assigning other than one of the loop's variables its value"
    graph = set(reader.placeholders) | set(reader.computed) | set(reader.state)
    read_names = [n for n in _names_read(given, reader.self_name) if n in graph]
    if read_names or reader.forbidden(given):
        return f"a variable copy computed from the graph ({code(given)[:40]})"
    targets, sources = _collection(reader, args[0].value), _collection(reader, args[1].value)
    if isinstance(targets, str) or isinstance(sources, str):
        return targets if isinstance(targets, str) else sources
    # TF1's collection of a trained scope's global variables held the optimizer's slots after
    # the variables: zip() left them out only where the other side is no longer
    slotted = [any(reader.key(part) in reader.slotted for part in _parts(a.value)) for a in args]
    if any(s and len(_parts(a.value)) > 1 for s, a in zip(slotted, args)):
        return "variable copies of joined collections, one of them holding optimizer slots"
    if all(slotted):
        return "variable copies between two trained collections (TF1 copied their optimizer slots too)"
    plain, trained = (targets, sources) if slotted[1] else (sources, targets)
    if any(slotted) and _count(plain) > _count(trained):
        return "variable copies reaching the optimizer slots of a trained collection"
    reader.copies[binds[0]] = Copy(binds[0], stmt, targets, sources, target, source, given)
    reader.dropped.append(stmt)
    return None


def _collection(reader, expr) -> Union[Tuple[Union[str, Layer], ...], str]:
    """The variables of a collection read here (bound to a name), or of collections joined
    (``at_params + ct_params``), or why not."""
    out: Tuple[Union[str, Layer], ...] = ()
    for part in _parts(expr):
        key = reader.key(part)
        if key not in reader.collected:
            return f"variable copies of {code(expr)[:40]}, which is not a collection of variables read here"
        out += reader.collected[key]
    return out


def _parts(expr) -> list:
    """``a + b + c``: [a, b, c]; any other expression alone."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return [*_parts(expr.left), *_parts(expr.right)]
    return [expr]


def _count(variables) -> int:
    """How many variables: a layer's two (kernel and bias) or one without a bias."""
    return sum(_weights(v) for v in variables)


def _weights(variable) -> int:
    if not isinstance(variable, Layer):
        return 1
    args = {a.keyword.value: a.value for a in variable.call.args if a.keyword is not None}
    use_bias = args.get("use_bias")
    return 1 if isinstance(use_bias, cst.Name) and use_bias.value == "False" else 2


def differentiated(reader, loss: str) -> Set[Union[int, str]]:
    """The variables TF1's minimize() gave a gradient, so an update and optimizer slots (a
    layer's id, a state variable's expression): those the loss reaches other than through
    ``tf.stop_gradient`` (a target network's are not); all of them where it calls a
    function of the module (which may read any)."""
    out: Set[Union[int, str]] = set()
    at = {id(c): n for n, c in enumerate(reader.order)}
    todo, seen = [(loss, len(reader.order))], set()  # a name read is its last binding above the reader
    while todo:
        name, before = todo.pop()
        if name in reader.state:
            out |= {expr for expr, trainable in reader.state[name] if trainable}
        made = next((c for c in reversed(reader.order[:before]) if name in c.binds), None)
        if made is None or id(made) in seen:
            continue
        seen.add(id(made))
        calls = list(nodes_of(made.stmt, (cst.Call,)))
        if any(isinstance(c.func, cst.Name) and c.func.value in reader.module_functions for c in calls):
            # a function of the graph may read any variable: all of them, as TF1 may have
            return {id(v) if isinstance(v, Layer) else v for v, trainable in reader.variables if trainable}
        stops = [call for call in calls if reader.call_name(call) == STOP]
        stopped, inside = {i for call in stops for i in _ids(call)}, _ids(made.stmt)
        out |= {id(layer) for layer in reader.layers if id(layer.call) in inside - stopped}
        todo.extend((read, at[id(made)]) for read in _names_read_beside(made.stmt, set(map(id, stops)),
                                                                         reader.self_name))
    return out


def traced_first(program) -> Optional[list]:
    """The steps to trace where the program is made, so the layers a copy reads exist
    before it runs, as TF1's variables did once initialised (a Keras layer makes its
    variables when first called): for each such layer, the first step calling it (None
    where no step calls one)."""
    copied = {id(v) for step in program.steps for copy in step.copies
              for v in (*copy.targets, *copy.sources) if isinstance(v, Layer)}
    out = []
    for layer in (layer for layer in program.layers if id(layer) in copied):
        caller = next((step for step in program.steps if any(
            id(layer.call) in _ids(c.stmt) for c in step.computed)), None)
        if caller is None:
            return None
        if caller not in out:
            out.append(caller)
    return out


__all__ = ["ASSIGN", "differentiated", "is_copy", "read", "traced_first"]
