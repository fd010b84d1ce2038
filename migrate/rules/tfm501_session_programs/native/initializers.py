"""TF1's initializers as TF2 writes them, where a native program makes its layers and
variables (pure).

``tf.constant_initializer(0.1)``, ``tf.zeros_initializer()`` and ``ones_initializer`` are
TF2's own, equal; the random ones become TF2's (``tf.random_normal_initializer``,
``tf.random_uniform_initializer``) or Keras' (``TruncatedNormal``, ``GlorotUniform``,
``VarianceScaling``) with TF1's defaults given where TF2 changed them (TF1's normal has a
stddev of 1.0, TF2's 0.05). Random draws are TF2's either way: TF 2.x draws other values
than TF 1.15 from the same seeds, under ``tf.compat.v1`` too (verify starts both runs from
TF1's). An initializer given a ``dtype`` (TF2's take it when called) or arguments that
cannot be read stays as the other rules left it.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import libcst as cst

from migrate.codemod.cstutil import arg, code

from . import optimizers

# TF1 name -> (TF2's, TF1's parameters in order, TF1's defaults TF2 changed)
NATIVE: Dict[str, Tuple[str, Tuple[str, ...], Dict[str, str]]] = {
    "zeros_initializer": ("zeros_initializer", ("dtype",), {}),
    "ones_initializer": ("ones_initializer", ("dtype",), {}),
    "constant_initializer": ("constant_initializer", ("value", "dtype", "verify_shape"), {}),
    "random_normal_initializer": ("random_normal_initializer", ("mean", "stddev", "seed", "dtype"),
                                  {"stddev": "1.0"}),
    "random_uniform_initializer": ("random_uniform_initializer", ("minval", "maxval", "seed", "dtype"),
                                   {"minval": "0.0", "maxval": "1.0"}),
    "truncated_normal_initializer": ("keras.initializers.TruncatedNormal", ("mean", "stddev", "seed", "dtype"),
                                     {"stddev": "1.0"}),
    "glorot_uniform_initializer": ("keras.initializers.GlorotUniform", ("seed", "dtype"), {}),
    "glorot_normal_initializer": ("keras.initializers.GlorotNormal", ("seed", "dtype"), {}),
    "variance_scaling_initializer": ("keras.initializers.VarianceScaling",
                                     ("scale", "mode", "distribution", "seed", "dtype"),
                                     {"distribution": '"truncated_normal"'}),
}
DISTRIBUTIONS = {"truncated_normal", "untruncated_normal", "uniform", "normal"}  # TF1's "normal": truncated


def tf1_name(expr: cst.BaseExpression, tf: str) -> Optional[str]:
    """``constant_initializer`` for ``tf.constant_initializer(...)`` (or its tf.compat.v1
    form, as the renames left it), else None."""
    if not isinstance(expr, cst.Call):
        return None
    func = code(expr.func)
    for prefix in (f"{tf}.compat.v1.", f"{tf}."):
        name = func[len(prefix):] if func.startswith(prefix) else None
        if name in NATIVE:
            return name
    return None


def native(expr: cst.BaseExpression, tf: str) -> cst.BaseExpression:
    """The TF2 form of a TF1 initializer call, else the expression as it is."""
    name = tf1_name(expr, tf)
    if name is None:
        return expr
    made, params, defaults = NATIVE[name]
    args = optimizers.arguments(expr, params)
    if args is None or "dtype" in args or "verify_shape" in args:
        return expr
    distribution = args.get("distribution")
    if distribution is not None:
        if not (isinstance(distribution, cst.SimpleString) and distribution.evaluated_value in DISTRIBUTIONS):
            return expr
        if distribution.evaluated_value == "normal":
            args["distribution"] = cst.SimpleString('"truncated_normal"')
    if name == "random_uniform_initializer" and code(args.get("maxval", cst.Name("None"))) == "None":
        args.pop("maxval", None)  # TF1's None: 1 for floats
    out = []
    for param in params:
        if param in args:
            value = args[param]
        elif param in defaults:
            value = cst.parse_expression(defaults[param])
        else:
            continue
        out.append(arg(value, None if name == "constant_initializer" else param))
    return cst.Call(cst.parse_expression(f"{tf}.{made}"), out)


__all__ = ["NATIVE", "native", "tf1_name"]
