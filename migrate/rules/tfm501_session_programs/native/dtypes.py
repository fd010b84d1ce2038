"""Which graph values are float32, where the native form needs to know (pure).

A fed graph value's step parameter is a float32 TensorSpec (TF1 converted the feed to the
dtype of what it replaced); TF1's ``tf.losses`` cast their inputs to float32, so a native
loss on them computes the same only on float32. Proven when the value is computed by
layers and the ops of ``FLOAT_OPS`` from float32 placeholders (a default's dtype, see
``defaults``) and Python values; a variable of the state is not proven (its dtype is its
initial value's).
"""
from __future__ import annotations

from typing import Iterable, Sequence

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from . import layers, optimizers
from .syntax import _names_read

#: TensorFlow ops whose float32 inputs give a float32 result
FLOAT_OPS = frozenset({
    "tf.add", "tf.subtract", "tf.multiply", "tf.divide", "tf.matmul", "tf.tanh", "tf.nn.tanh", "tf.sigmoid",
    "tf.nn.sigmoid", "tf.nn.relu", "tf.nn.relu6", "tf.nn.elu", "tf.nn.selu", "tf.nn.leaky_relu", "tf.nn.softplus",
    "tf.nn.softmax", "tf.nn.bias_add", "tf.concat", "tf.reshape", "tf.squeeze", "tf.expand_dims",
    "tf.clip_by_value", "tf.reduce_sum", "tf.reduce_mean", "tf.reduce_max", "tf.reduce_min", "tf.square",
    "tf.sqrt", "tf.exp", "tf.abs", "tf.negative", "tf.stop_gradient", "tf.transpose", "tf.maximum",
    "tf.minimum", "tf.nn.l2_normalize", "tf.layers.flatten", "tf.nn.dropout"})


def float32(reader, keys: Sequence[str], exprs: Iterable[cst.BaseExpression] = ()) -> bool:
    """Whether the graph values ``keys`` and the expressions ``exprs`` are proven float32."""
    exprs = list(exprs)
    names = [*keys, *(n for e in exprs for n in _names_read(e, reader.self_name))]
    computed = reader.slice(names)
    calls = [c for node in [*(made.stmt for made in computed), *exprs] for c in nodes_of(node, (cst.Call,))]
    # a layer's output has its input's dtype: what makes it (initializers, activations) does not count
    made_with = {id(n) for c in calls if reader.call_name(c) in layers.NATIVE_LAYERS
                 for at, a in enumerate(c.args) if not _input(at, a) for n in nodes_of(a, (cst.Call,))}
    for call in calls:
        name = reader.call_name(call) or ""
        if id(call) in made_with:
            continue
        if name in layers.NATIVE_LAYERS and any(a.keyword is not None and a.keyword.value == "dtype" for a in call.args):
            return False
        if name not in FLOAT_OPS and name not in layers.NATIVE_LAYERS:
            return False
    for name in {*names, *(n for made in computed for n in made.reads)}:
        if name in reader.placeholders and not _float32_placeholder(reader, name) or name in reader.state:
            return False
    return True


def _float32_placeholder(reader, name: str) -> bool:
    if name in reader.defaults:
        return reader.defaults[name].dtype == "float32"
    given = optimizers.arguments(reader.plan.placeholders[name], ("dtype", "shape", "name"))
    return bool(given) and "dtype" in given and code(given["dtype"]).rpartition(".")[2] == "float32"


def _input(at: int, arg: cst.Arg) -> bool:
    """Whether a layer function's argument is its input (``inputs``, first)."""
    return arg.keyword.value == "inputs" if arg.keyword is not None else at == 0
