"""TF1's ``tf.losses`` in the native steps, as TF2 writes them (pure reading, and the edit).

``tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)`` is the mean of
``tf.nn.sparse_softmax_cross_entropy_with_logits`` over the batch, and
``tf.losses.mean_squared_error(labels, predictions)`` the mean of
``tf.math.squared_difference(predictions, labels)``: with TF1's defaults (weights 1, the
sum divided by the number of elements) that is what TF1 computed, after casting to
float32, and so they are written where the inputs are proven float32 (``dtypes``). TF1
also put the loss in the LOSSES collection: written only where the module never reads it
(``tf.losses.get_total_loss()``, ``get_losses()``, ``GraphKeys.LOSSES``). Any other
argument (weights, a reduction, a scope) keeps TF1's function through ``tf.compat.v1``.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from . import dtypes, optimizers

# TF1's loss -> (its parameters, those that must be float32, the TF2 form's parts)
LOSSES: Dict[str, Tuple[Tuple[str, ...], Tuple[str, ...]]] = {
    "tf.losses.sparse_softmax_cross_entropy": (("labels", "logits"), ("logits",)),
    "tf.losses.mean_squared_error": (("labels", "predictions"), ("labels", "predictions")),
}
# what reads the LOSSES collection TF1's losses were added to
COLLECTION_READS = ("tf.losses.get_total_loss", "tf.losses.get_losses", "tf.losses.add_loss")


def found(reader, value: cst.BaseExpression) -> List[Tuple[cst.Call, str]]:
    """The calls of TF1's losses in a graph statement written natively, with their names."""
    out = []
    for call in nodes_of(value, (cst.Call,)):
        name = reader.call_name(call) or ""
        entry = LOSSES.get(name)
        args = optimizers.arguments(call, entry[0]) if entry is not None else None
        if args is None or set(args) != set(entry[0]):
            continue
        if reader.loss_collection_read is None:  # (read once per program)
            reader.loss_collection_read = collection_read(reader)
        if not reader.loss_collection_read and dtypes.float32(reader, [], [args[p] for p in entry[1]]):
            out.append((call, name))
    return out


def collection_read(reader) -> bool:
    """Whether the module reads what TF1's losses added to LOSSES."""
    names = {reader.call_name(c) for c in nodes_of(reader.module, (cst.Call,))}
    return bool(names & set(COLLECTION_READS)) or any(
        code(a).endswith("GraphKeys.LOSSES") for a in nodes_of(reader.module, (cst.Attribute,)))


def native(updated: cst.Call, name: str, tf: str) -> cst.BaseExpression:
    """The TF2 form of the loss ``name`` (the call as the other edits left it)."""
    args = optimizers.arguments(updated, LOSSES[name][0])
    if name == "tf.losses.sparse_softmax_cross_entropy":
        inner = cst.parse_expression(f"{tf}.nn.sparse_softmax_cross_entropy_with_logits(labels=_, logits=_)")
        inner = inner.with_changes(args=[inner.args[0].with_changes(value=args["labels"]),
                                         inner.args[1].with_changes(value=args["logits"])])
    else:
        inner = cst.parse_expression(f"{tf}.math.squared_difference(_, _)")
        inner = inner.with_changes(args=[inner.args[0].with_changes(value=args["predictions"]),
                                         inner.args[1].with_changes(value=args["labels"])])
    mean = cst.parse_expression(f"{tf}.reduce_mean(_)")
    return mean.with_changes(args=[mean.args[0].with_changes(value=inner)])
