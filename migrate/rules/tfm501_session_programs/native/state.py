"""The state of a native program (pure): its variables, made once where they were.

``w = tf.Variable(...)`` (a dict/list literal of them, ``tf.get_variable`` outside scopes, a
module function returning one), and what their initial values read that TF1 computed once
(``W_init = tf.random_uniform(...)``, an initializer a layer is made from): kept where it
was, computed eagerly once.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from . import checkpoints, initializers, optimizers
from ..syntax import _value
from .syntax import GET_VARIABLE_PARAMS, _names_read

VARIABLES = {"tf.Variable"}
GET_VARIABLE = "tf.get_variable"
# tf.contrib's Xavier initializer is Keras' Glorot (fan_avg; uniform, or a truncated normal)
XAVIER = "tf.contrib.layers.xavier_initializer"


def variable(reader, stmt, binds, value) -> Optional[str]:
    """``w = tf.Variable(...)``, a dict/list/tuple literal of them, or ``w =
    make_weight(...)`` of a module function returning one."""
    if len(binds) != 1:
        return "variables unpacked from one statement"
    key = binds[0]
    graph = set(reader.placeholders) | set(reader.computed)
    read = [n for n in _names_read(value, reader.self_name) if n in graph]
    for name in read:
        why = made_once(reader, name)
        if why:
            return f"the variable {key!r} is made from the graph value {name!r}, {why}"
    if isinstance(value, cst.Dict):
        items = [(f"{key}[{code(e.key)}]", e.value) for e in value.elements
                 if isinstance(e, cst.DictElement)]
    elif isinstance(value, (cst.List, cst.Tuple)):
        items = [(f"{key}[{at}]", e.value) for at, e in enumerate(value.elements)]
    else:
        items = [(key, value)]
    if len(items) != len(getattr(value, "elements", items)) or not all(
            _is_variable(reader, v) or made_by_helper(reader, v) for _, v in items):
        if reader.unread_collections:
            return (f"the variable {key!r} is put in the collections {reader.unread_collections[:40]}, not a "
                    "list here with the global variables (which TF1's initializer ran)")
        return f"the state {key!r} is not a tf.Variable or a literal of them"
    made = tuple((expr, _trainable(call, reader.call_name(call) in VARIABLES)) for expr, call in items)
    for expr, call in items:  # (tf.get_collection("eval_net_params") reads them in this order)
        for collection in reader.variable_collections.get(id(call), ()):
            reader.named_collections.setdefault(collection, []).append(expr)
    checkpoints.name_variables(reader, items)
    reader.state[key] = made
    reader.variables.extend(made)
    return None

#: TF1's global step, made by a function of tf.train: ``tf.Variable(0, dtype=tf.int64,
#: trainable=False, name="global_step")`` natively (TF1's int64 scalar, named in its
#: variable scopes, never trained)
GLOBAL_STEPS = ("tf.train.get_or_create_global_step", "tf.train.create_global_step")


def global_step(reader, stmt, binds, call: cst.Call) -> Optional[str]:
    """``global_step = tf.train.get_or_create_global_step()``: a variable of the state,
    written as the ``tf.Variable`` TF1 made (``GLOBAL_STEPS``)."""
    if len(binds) != 1 or call.args:
        return f"{reader.call_name(call)}() given a graph, or its result unpacked"
    if any(reader.call_name(c) in GLOBAL_STEPS for c in reader.global_steps):
        return "a second global step (TF1 gave the first one again)"
    key = binds[0]
    name = "/".join([*reader.variable_scope_names, "global_step"])
    if name.lower() in reader.taken_names:
        return f"a global step named {name!r}, which another variable of the graph is named"
    reader.taken_names.add(name.lower())
    if not reader.names_unsure:
        reader.tf1_names[key] = name
    reader.global_steps.append(call)
    reader.state[key] = ((key, False),)
    reader.variables.append((key, False))
    return None


def made_once(reader, name: str) -> Optional[str]:
    """``W_init = tf.random_uniform(...)``, read by a variable's initial value: TF1's
    initializer computed it once, so it stays where it was, computed eagerly once. Why
    it cannot (it reads a placeholder or the state, or steps read it too), else None."""
    made = reader.computed.get(name)
    if name in reader.once and all(c is not made for c in reader.order):  # (bound again: that binding too)
        return None
    if made is None:
        return "which is fed"
    if any(bound in c.reads for bound in made.binds for c in reader.order if c is not made):
        return "which the graph reads too (TF1 computes it again at each run)"
    for read in made.reads:
        if read in reader.placeholders or read in reader.state:
            return f"which reads {read!r}"
        if read in reader.computed:
            why = made_once(reader, read)
            if why:
                return why
    reader.once |= set(made.binds)  # (``w_init, b_init = ...``: both)
    reader.made_once_stmts.append(made.stmt)
    reader.order.remove(made)
    reader.dropped.remove(made.stmt)
    return None

def made_by_helper(reader, value) -> bool:
    """``init_weights([4, 12])``: a module function whose every return is a
    ``tf.Variable(...)`` and which does nothing else the native form cannot write."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
            and value.func.value in reader.module_functions) \
            or any(reader.forbidden(a.value) for a in value.args):
        return False
    func = reader.module_functions[value.func.value]
    returns = list(nodes_of(func.body, (cst.Return,)))
    if not returns or not all(_is_variable(reader, r.value) for r in returns):
        return False
    made = {id(r.value) for r in returns}
    reader.allowed |= made
    try:
        return reader.forbidden(func.body) is None
    finally:
        reader.allowed -= made

def _is_variable(reader, value) -> bool:
    if isinstance(value, cst.Call) and reader.call_name(value) == GET_VARIABLE:
        return _get_variable(reader, value)
    if not (isinstance(value, cst.Call) and reader.call_name(value) in VARIABLES):
        return False
    return not any(reader.forbidden(a.value) for a in value.args)

def _collections(reader, expr) -> Optional[Tuple[str, ...]]:
    """The collections ``collections=["eval_net_params", tf.GraphKeys.GLOBAL_VARIABLES]``
    (or a name bound to that list by the graph code) puts a variable in besides
    TRAINABLE_VARIABLES, which TF1 added anyway: the named ones, None unless the global
    variables are among them (the initializer would have left it out). A name read is
    recorded: its binding goes with the collections (``collection_lists``)."""
    if isinstance(expr, cst.Name) and expr.value in reader.computed:
        made = reader.computed[expr.value]
        value = _value(made.stmt)
        if len(made.binds) > 1:
            value = value.elements[made.binds.index(expr.value)].value \
                if isinstance(value, cst.Tuple) and len(value.elements) == len(made.binds) else None
        reader.collection_lists.append((made.stmt, expr.value))
        expr = value
    if not isinstance(expr, (cst.List, cst.Tuple)):
        return None
    keys, kinds = [], set()
    for element in expr.elements:
        if isinstance(element.value, cst.SimpleString):
            keys.append(element.value.evaluated_value)
        elif code(element.value).split(".", 1)[-1] in ("GraphKeys.GLOBAL_VARIABLES", "GraphKeys.TRAINABLE_VARIABLES"):
            kinds.add(code(element.value).rsplit(".", 1)[-1])
        else:
            return None
    return tuple(keys) if "GLOBAL_VARIABLES" in kinds else None


def collection_lists_read(reader) -> Optional[str]:
    """Why a list of collections given to ``tf.get_variable`` cannot go with them (it is
    read other than there), else None."""
    given = {id(n) for call in reader.get_variables for a in call.args
             if a.keyword is not None and a.keyword.value == "collections" for n in nodes_of(a.value, (cst.Name,))}
    bound = {id(n) for stmt, _ in reader.collection_lists
             for t in nodes_of(stmt, (cst.AssignTarget,)) for n in nodes_of(t, (cst.Name,))}
    for _, name in reader.collection_lists:
        if any(n.value == name and id(n) not in given and id(n) not in bound
               for n in nodes_of(reader.module, (cst.Name,))):
            return f"the list of collections {name!r} is read other than by tf.get_variable"
    return None


def _get_variable(reader, call: cst.Call) -> bool:
    """``tf.get_variable("W1", shape=[784, 256], initializer=...)`` outside any variable
    scope: a variable named so, its initial value drawn by the initializer (TF1's
    default: Glorot uniform), or the initializer's value itself when no shape is given."""
    args = optimizers.arguments(call, GET_VARIABLE_PARAMS)
    if args is None or set(args) - {"name", "shape", "dtype", "initializer", "trainable", "collections"} \
            or not isinstance(args.get("name"), cst.SimpleString):
        return False
    if "collections" in args:
        keys = _collections(reader, args["collections"])
        if keys is None:
            reader.unread_collections = code(args["collections"])
            return False
        reader.variable_collections[id(call)] = keys
    initializer = args.get("initializer")
    if isinstance(initializer, cst.Call) and reader.call_name(initializer) == XAVIER:
        reader.allowed.add(id(initializer))
    if any(reader.forbidden(a.value) for a in call.args):
        return False
    reader.get_variables.append(call)
    return True



def initializer_calls(reader, stmt) -> List[cst.Call]:
    """``tf.random_normal_initializer(0., 0.3)`` (alone or in a tuple) bound by a statement
    computed once: written as TF2's where it is."""
    value = _value(stmt)
    values = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
    return [v for v in values if isinstance(v, cst.Call) and (reader.call_name(v) or "").startswith("tf.")
            and (reader.call_name(v) or "").rsplit(".", 1)[-1] in initializers.NATIVE]


def _trainable(call: cst.Call, variable: bool) -> bool:
    """Whether minimize() trains it: trainable, and not an integer (``tf.Variable(0)``, a
    counter: TF1 had no gradient for it and left it out)."""
    args = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if not variable:  # a helper's call: its arguments are not the variable's
        args = {k: v for k, v in args.items() if k == "trainable"}
    first = call.args[0].value if variable and call.args and call.args[0].keyword is None \
        else args.get("initial_value")
    if isinstance(first, cst.UnaryOperation):
        first = first.expression
    dtype = code(args["dtype"]) if "dtype" in args else None
    if dtype is not None and "int" in dtype.rsplit(".", 1)[-1] or dtype is None and isinstance(first, cst.Integer):
        return False
    trainable = args.get("trainable")
    return not (isinstance(trainable, cst.Name) and trainable.value == "False")
