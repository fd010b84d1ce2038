"""Placeholders with a default (``drop = tf.placeholder_with_default(0.0, [])``), native.

TF1 gave the default where a run fed nothing. A step taking it gets the parameter with
that default (``def train_step(x, y, drop=0.0)``, after the parameters without one) and
the signature's ``tf.TensorSpec(shape, dtype)``: the dtype TF1 converted the default to
(a Python float: float32, an int: int32, a bool: bool). Runs feeding it pass it by name;
those that do not, leave it out. Written for defaults that are Python numbers or bools; a
tensor default (an iterator's next element) is graph code the step would compute.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import libcst as cst

from migrate.codemod.cstutil import code

from . import optimizers

PARAMS = ("input", "shape", "name")


@dataclass(frozen=True)
class Default:
    """A placeholder's default, for its step parameter."""
    value: str   # the default as written (``0.0``)
    dtype: str   # what TF1 converted it to (``float32``)
    shape: str   # the shape as written (``[]``)


def read(reader, key: str, call: cst.Call) -> Union[Default, str]:
    """``tf.placeholder_with_default(0.0, [], name="drop")``: its default, or why not."""
    if reader.self_name is not None:
        return f"{key!r} is a placeholder with a default, in a class (not written natively yet)"
    args = optimizers.arguments(call, PARAMS)
    value = args.get("input") if args is not None else None
    if value is None or "shape" not in args:
        return f"{key!r} is a placeholder with a default given other than as (input, shape, name)"
    dtype = _dtype(value)
    if dtype is None:
        return f"{key!r} is a placeholder whose default is not a Python number or bool ({code(value)[:40]})"
    return Default(code(value), dtype, code(args["shape"]))


def _dtype(value: cst.BaseExpression) -> Optional[str]:
    """The dtype TF1 converted a Python literal to, else None."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    if isinstance(value, cst.Float):
        return "float32"
    if isinstance(value, cst.Integer):
        return "int32"
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return "bool"
    return None
