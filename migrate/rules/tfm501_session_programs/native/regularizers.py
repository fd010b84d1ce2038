"""TF1's weight decay on ``tf.layers``, read for the native form, and its edits.

``tf.layers.dense(..., kernel_regularizer=tf.contrib.layers.l2_regularizer(0.05))``: the
Keras layer takes Keras' regularizer of the same value (TF1's l2 is ``scale * sum(w**2) / 2``:
``tf.keras.regularizers.L2(0.05 / 2)``; its l1 ``L1(scale)``; l1_l2 both), or the callable
the script gave (a lambda, a function of the script, or what one returned), when its code
assigns nothing, adds to no collection and returns a loss: Keras calls it with the variable,
as TF1 did. TF1 put each regularized variable's loss in the REGULARIZATION_LOSSES
collection when the layer made it; a read of it (``tf.losses.get_regularization_loss()``,
``get_regularization_losses()``, ``tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)``)
is the ``.losses`` of the layers made before the read, which Keras computes from their
variables when read, as TF1's loss tensors read them at each run. A layer is built at its
first call: a step reading its losses must run after one calling it.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from migrate.codemod.cstutil import arg, code, nodes_of

from ..syntax import _value
from . import optimizers
from .model import NativeProgram, RegularizationRead, Run
from .syntax import _binds, _names_read

# TF1's contrib regularizer -> (Keras' class, TF1's parameters, each one's share in Keras)
CONTRIB: Dict[str, Tuple[str, Tuple[str, ...], Dict[str, Tuple[str, bool]]]] = {
    "tf.contrib.layers.l2_regularizer": ("L2", ("scale", "scope"), {"scale": ("l2", True)}),
    "tf.contrib.layers.l1_regularizer": ("L1", ("scale", "scope"), {"scale": ("l1", False)}),
    "tf.contrib.layers.l1_l2_regularizer": ("L1L2", ("scale_l1", "scale_l2", "scope"),
                                            {"scale_l1": ("l1", False), "scale_l2": ("l2", True)}),
}
CONTRIB_DEFAULTS = {"scale_l1": "1.0", "scale_l2": "1.0"}
PARAMS = ("kernel_regularizer", "bias_regularizer")
# a read of the collection -> (the sum of its losses, TF1's parameters)
READS = {"tf.losses.get_regularization_loss": (True, ("scope", "name")),
         "tf.losses.get_regularization_losses": (False, ("scope",)),
         "tf.get_collection": (False, ("key", "scope"))}


# -- reading --------------------------------------------------------------------------------
def layer_regularizer(reader, value: cst.BaseExpression) -> Optional[str]:
    """Why a layer's ``kernel_regularizer=`` (``bias_regularizer=``) cannot be given to its
    Keras layer, else None."""
    if isinstance(value, cst.Name) and value.value == "None":
        return None
    if isinstance(value, cst.Call) and reader.call_name(value) in CONTRIB:
        return contrib(reader, value)
    if isinstance(value, cst.Lambda):
        return _loss_function(reader, value, value.body)
    if not isinstance(value, cst.Name):
        return f"a regularizer written {code(value)[:40]!r}"
    name = value.value
    if name in reader.module_functions:
        return _function(reader, reader.module_functions[name])
    made = reader.computed.get(name)
    bound = made.stmt if made is not None else _module_binding(reader, name)
    source = _value(bound) if bound is not None and _binds(bound) == (name,) else None
    if source is None:
        return f"the regularizer {name!r}, bound other than once to a value read here"
    if isinstance(source, cst.Call) and reader.call_name(source) in CONTRIB:
        why = contrib(reader, source)
    elif isinstance(source, cst.Call) and isinstance(source.func, cst.Name) \
            and source.func.value in reader.module_functions:
        why = _function(reader, reader.module_functions[source.func.value])
    else:
        return f"the regularizer {name!r}, made by {code(source)[:40]!r}"
    if why is None and made is not None:  # made by the graph code: it stays where it was, once
        why = reader.made_once(name)
        return f"the regularizer {name!r}, {why}" if why else None
    return why


def contrib(reader, call: cst.Call) -> Optional[str]:
    """``tf.contrib.layers.l2_regularizer(0.05)``: written as Keras' of the same value (why
    not, else None)."""
    name = reader.call_name(call)
    args = optimizers.arguments(call, CONTRIB[name][1])
    short = name.rsplit(".", 1)[1]
    if args is None or "scope" in args or name != "tf.contrib.layers.l1_l2_regularizer" and not args:
        return f"a {short} whose arguments cannot be read here"
    graph = set(reader.placeholders) | set(reader.computed) | set(reader.state)
    for value in args.values():
        if _number(value) == 0:
            return f"a {short} of scale 0 (TF1 adds no loss for it)"
        if graph & set(_names_read(value)) or reader.forbidden(value):
            return f"a {short} whose scale reads the graph"
    reader.allowed.add(id(call))
    if all(made is not call for made, _ in reader.regularizers):
        reader.regularizers.append((call, name))
    return None


def _function(reader, func: cst.FunctionDef) -> Optional[str]:
    """A function of the script returning the loss of a variable, or returning such a
    function (``def scaled_l1(scale): def l1(w): ...; return l1``)."""
    return _loss_function(reader, func, func.body)


def _loss_function(reader, node, body) -> Optional[str]:
    why = reader.forbidden(body)
    if why:
        return f"a regularizer using {why}"
    for ret in nodes_of(node, (cst.Return,)):
        if ret.value is None or isinstance(ret.value, cst.Name) and ret.value.value == "None":
            return "a regularizer returning None (TF1 added no loss for it; Keras would fail)"
    return None


def _module_binding(reader, name: str) -> Optional[cst.BaseStatement]:
    bound = [s for s in reader.module_body if isinstance(s, cst.SimpleStatementLine)
             and any(isinstance(t.target, cst.Name) and t.target.value == name
                     for a in nodes_of(s, (cst.Assign,)) for t in a.targets)]
    return bound[0] if len(bound) == 1 else None


def _number(expr) -> Optional[float]:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.value)
    return None


def losses_read(reader, value: cst.BaseExpression) -> Optional[str]:
    """The reads of the regularization losses in a graph value, each the ``.losses`` of the
    regularized layers made so far, and its contrib regularizers (why one cannot be written,
    else None)."""
    for call in nodes_of(value, (cst.Call,)):
        name = reader.call_name(call)
        if name in CONTRIB:  # (``decay = tf.contrib.layers.l2_regularizer(0.01)``)
            why = contrib(reader, call)
            if why:
                return why
        if name not in READS or name == "tf.get_collection" and not is_losses(reader, call):
            continue
        total, params = READS[name]
        args = optimizers.arguments(call, params)
        if args is None or "scope" in args:
            return f"{name} of a scope"
        args.pop("key", None)
        if args and not isinstance(args.get("name"), cst.SimpleString):
            return f"{name} named by an expression"
        made = tuple(layer for layer in reader.layers if layer.regularized)
        reader.regularization.append(RegularizationRead(call, total, made))
        reader.allowed.add(id(call))
    return None


def is_losses(reader, value) -> bool:
    """``tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)``."""
    if not (isinstance(value, cst.Call) and reader.call_name(value) == "tf.get_collection"):
        return False
    key = (optimizers.arguments(value, ("key", "scope")) or {}).get("key")
    return isinstance(key, cst.Attribute) and key.attr.value == "REGULARIZATION_LOSSES"


def unbuilt(reader, runs: Sequence[Run]) -> Optional[str]:
    """Why a run may read regularization losses before its layers are built (a Keras layer
    makes its variables at its first call), else None: each run reading them, in the
    program's order, comes after runs calling those layers, or calls them itself."""
    if not reader.regularization:
        return None
    built: Set[int] = set()
    for run in runs:
        if run.step is None:
            continue
        calls = [call for computed in run.step.computed for call in nodes_of(computed.stmt, (cst.Call,))]
        ids = {id(call) for call in calls}
        functions = {call.func.value for call in calls if isinstance(call.func, cst.Name)}
        built |= {id(layer) for layer in reader.layers if id(layer.call) in ids or layer.owner in functions}
        if any(id(read.call) in ids and not {id(layer) for layer in read.layers} <= built
               for read in reader.regularization):
            return "a run reads the regularization losses before a run calls their layers"
    return None


# -- writing ----------------------------------------------------------------------------------
def keras_form(call: cst.Call, name: str, tf: str) -> cst.Call:
    """``tf.contrib.layers.l2_regularizer(0.05)`` -> ``tf.keras.regularizers.L2(0.05 / 2)``."""
    keras, params, shares = CONTRIB[name]
    given = optimizers.arguments(call, params) or {}
    out = []
    for param, (keyword, halved) in shares.items():
        value = given.get(param) or cst.parse_expression(CONTRIB_DEFAULTS[param])
        if halved:  # TF1's l2_loss: sum(w ** 2) / 2
            value = cst.BinaryOperation(_grouped(value), cst.Divide(), cst.Integer("2"))
        out.append(arg(value, keyword if len(shares) > 1 else None))
    return cst.Call(cst.parse_expression(f"{tf}.keras.regularizers.{keras}"), out)


def _grouped(value: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(value, (cst.Name, cst.Integer, cst.Float, cst.Attribute, cst.Call, cst.Subscript)):
        return value
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def read_form(read: RegularizationRead, layers: Dict[int, str], tf: str) -> cst.BaseExpression:
    """``tf.add_n([*hidden1_layer.losses, *hidden2_layer.losses])`` (TF1's sum: a constant 0
    when no layer is regularized), or the list."""
    names = [f"{layers[id(layer)]}.losses" for layer in read.layers]
    listed = names[0] if len(names) == 1 else "[" + ", ".join(f"*{n}" for n in names) + "]"
    if not read.total:
        return cst.parse_expression(listed if names else "[]")
    return cst.parse_expression(f"{tf}.add_n({listed})" if names else f"{tf}.constant(0.0)")


def edits(finding, program: NativeProgram, layers: Dict[int, str], tf: str) -> None:
    """The contrib regularizers written as Keras', the collection's reads as the layers'
    losses."""
    for call, name in program.regularizers:
        finding.replace(call, lambda updated, call=call, name=name: keras_form(call, name, tf))
    for read in program.regularization:
        finding.replace(read.call, lambda updated, read=read: read_form(read, layers, tf))


def written(program: NativeProgram) -> List[cst.CSTNode]:
    """The nodes these edits write anew (the other rules' findings on them go)."""
    return [*(c for c, _ in program.regularizers), *(r.call for r in program.regularization)]


def regularized(layer_args: Dict[str, cst.BaseExpression]) -> bool:
    """Whether a layer is given a regularizer (``kernel_regularizer=None`` is none)."""
    return any(key in PARAMS and not (isinstance(value, cst.Name) and value.value == "None")
               for key, value in layer_args.items())


__all__ = ["CONTRIB", "PARAMS", "READS", "contrib", "edits", "is_losses", "keras_form", "layer_regularizer",
           "losses_read", "read_form", "regularized", "unbuilt", "written"]
