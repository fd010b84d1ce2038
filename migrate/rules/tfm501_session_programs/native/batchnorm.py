"""Batch norm in a native program (pure): ``tf.layers.batch_normalization`` as one Keras
layer, its moving averages updated as TF1's UPDATE_OPS updated them::

    is_training = tf.placeholder(tf.bool, [])
    h = tf.layers.batch_normalization(h, training=is_training, name="bn")
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss)

becomes ``bn_layer = tf.keras.layers.BatchNormalization(name="bn")`` called as
``bn_layer(h, training=is_training)`` in the steps; the collection and the control
dependencies go, the optimizer stays where it was. The module declares Keras 2 (``import
shims.keras2``, its one use of shims): tf_keras' layer takes a boolean tensor as
``training`` and is the class TF 1.15's ``tf.layers`` one derived from (the same arithmetic,
the same variable names); Keras 3's takes a Python bool only and keeps the biased variance.

A Keras layer updates its moving averages whenever it is called in training mode, TF1's
only where a run ran the update ops: with the train op that depends on them. So the form is
proven where that is the same: every train op depends on UPDATE_OPS, and every run that
trains nothing computes the layer in inference mode (``training=False`` as written, or fed
``False``). Keras 3's BatchNormalization is not TF 1.15's arithmetic: under ``--keras 3``
the program converts through shims (``shims.keras3.BatchNormalization``).
"""
from __future__ import annotations

from typing import Dict, Optional, Sequence

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from .model import Run
from .syntax import _names_read

#: the program declares tf_keras, whose BatchNormalization is TF 1.15's (a tensor ``training``,
#: the fused kernel's Bessel-corrected moving variance); Keras 3's is neither
KERAS = "import shims.keras2"
COLLECTION = "tf.get_collection"
DEPENDENCIES = "tf.control_dependencies"
BATCH_NORM = "batch_normalization"


def readable(reader, call: cst.Call, args: Dict[str, cst.BaseExpression]) -> Optional[str]:
    """Why a batch norm call is not written as a Keras layer here, else None."""
    if reader.keras == 3:
        return "tf.layers.batch_normalization under Keras 3 (its arithmetic is not TF 1.15's)"
    given = [a for a in call.args if a.keyword is not None and a.keyword.value == "training"]
    if "training" in args and not given:
        return "batch norm's training given by position"
    graph = set(reader.state) | set(reader.computed)
    read = [n for n in _names_read(args.get("training", cst.Name("False")), reader.self_name) if n in graph]
    if read:
        return f"batch norm's training= reads the graph value {read[0]!r}"
    return None


def training_of(call: cst.Call) -> cst.BaseExpression:
    """What a batch norm call is given as ``training`` (TF1's default False)."""
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "training"),
                cst.Name("False"))


def is_update_ops(reader, value) -> bool:
    """``tf.get_collection(tf.GraphKeys.UPDATE_OPS)``."""
    return isinstance(value, cst.Call) and reader.call_name(value) == COLLECTION and len(value.args) == 1 \
        and value.args[0].keyword is None and isinstance(value.args[0].value, cst.Attribute) \
        and value.args[0].value.attr.value == "UPDATE_OPS"


def update_ops(reader, stmt, binds) -> Optional[str]:
    """``update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)``: read by the control
    dependencies of train ops only, it goes (a Keras layer updates in its call)."""
    if binds is None or len(binds) != 1 or "." in binds[0]:
        return "the UPDATE_OPS collection bound other than to one name"
    reader.update_ops.add(binds[0])
    reader.dropped.append(stmt)
    return None


def is_dependencies(reader, block: cst.With) -> bool:
    """``with tf.control_dependencies(update_ops):`` (or of the collection itself)."""
    return all(reader.call_name(item.item) == DEPENDENCIES and item.asname is None and len(item.item.args) == 1
               and (reader.key(item.item.args[0].value) in reader.update_ops
                    or is_update_ops(reader, item.item.args[0].value)) for item in block.items)


def block(reader, block: cst.With, first: str) -> Optional[str]:
    """The train ops under UPDATE_OPS control dependencies, read as if they stood alone:
    the block goes (an optimizer made in it stays in its place)."""
    made = set(reader.trainings)
    for inner in block.body.body:
        if not isinstance(inner, cst.SimpleStatementLine):
            return f"graph code in a block ({first!r})"
        why = reader.statement(inner)
        if why:
            return why
    reader.updated |= set(reader.trainings) - made
    if all(inner in reader.dropped for inner in block.body.body):
        reader.dropped.append(block)
    elif all(inner in reader.dropped or inner in reader.optimizer_stmts() for inner in block.body.body):
        reader.unscoped.append(block)
    else:
        return f"graph code under UPDATE_OPS control dependencies ({first!r})"
    return None


def check(reader, runs: Sequence[Run]) -> Optional[str]:
    """Why the Keras layers would not update their moving averages where TF1's did, or the
    collection is read past the dependencies, else None."""
    return _moving_averages(reader, runs) or _updates_read(reader)


def _moving_averages(reader, runs: Sequence[Run]) -> Optional[str]:
    training = [layer for layer in reader.layers
                if layer.function == BATCH_NORM and not _false(training_of(layer.call))]
    if not training:
        return None
    if any(layer.owner is not None for layer in training):
        return "batch norm in a function, its training= chosen by its callers"
    plain = [t for t in reader.trainings if t not in reader.updated]
    if plain:
        return (f"the train op {plain[0]!r} does not depend on UPDATE_OPS: TF1 never updated batch norm's "
                "moving averages, Keras' layer would")
    for run in runs:
        if run.step is None or run.step.trainings:
            continue
        reached = {id(n) for c in run.step.computed for n in nodes_of(c.stmt, (cst.Call,))}
        fed = dict(run.feeds)
        for layer in training:
            if id(layer.call) not in reached:
                continue
            flag = training_of(layer.call)
            value = fed.get(reader.key(flag)) if reader.key(flag) in reader.placeholders else flag
            if value is None or not _false(value):
                return (f"a run that trains nothing computes batch norm {layer.name!r} with training "
                        f"{code(value) if value is not None else code(flag)}: TF1 left its moving averages, "
                        "Keras' layer would update them")
    return None


def _false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _updates_read(reader) -> Optional[str]:
    """Why the UPDATE_OPS collection is read other than by control dependencies, else None."""
    allowed = {id(n) for stmt in reader.dropped for n in nodes_of(stmt, (cst.Name,))}
    allowed |= {id(n) for block in reader.unscoped for item in block.items for n in nodes_of(item, (cst.Name,))}
    for name in reader.update_ops:
        if any(n.value == name and id(n) not in allowed for n in nodes_of(reader.module, (cst.Name,))):
            return f"the UPDATE_OPS collection {name!r} is read other than by control dependencies"
    return None


__all__ = ["BATCH_NORM", "KERAS", "block", "check", "is_dependencies", "is_update_ops", "readable", "training_of",
           "update_ops"]
