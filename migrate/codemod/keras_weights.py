"""Keras-class helpers for the tracking rules (TFM3xx): which classes are Keras
layers/models, and how a ``tf.Variable(...)`` becomes ``self.add_weight(...)``.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import libcst as cst

from migrate.codemod.cstutil import arg, call, code, fresh_name

KERAS_BASES = {"keras.layers.Layer", "keras.Model", "keras.models.Model", "keras.Sequential",
               "keras.models.Sequential", "keras.engine.base_layer.Layer"}
VARIABLE = {"tf.Variable", "tf.compat.v1.Variable"}
# tf.Variable(initial_value, trainable, validate_shape, caching_device, name, variable_def,
#             dtype, import_scope, constraint, synchronization, aggregation, shape)
VARIABLE_PARAMS = ["initial_value", "trainable", "validate_shape", "caching_device", "name",
                   "variable_def", "dtype", "import_scope", "constraint", "synchronization",
                   "aggregation", "shape"]
CARRIED = {"initial_value", "trainable", "name", "dtype", "constraint"}


def is_keras_base(name) -> bool:
    """Keras Layer/Model/Sequential under any import path (keras.src.layers.layer.Layer too)."""
    return bool(name) and (name in KERAS_BASES or name.rsplit(".", 1)[-1] in ("Layer", "Model", "Sequential"))


def _keras_base(ctx, expr) -> bool:
    """A Keras base class under any spelling, TF1's tf.layers.Layer (a Keras subclass) included."""
    return is_keras_base(ctx.keras(expr)) or (ctx.v1(expr) or "").startswith("tf.layers.")


def keras_classes(ctx, module: cst.Module) -> set:
    """Names of classes in this module that are Keras layers/models (transitively)."""
    cached = ctx.facts.keras_classes
    if cached is not None:
        return cached
    found: set = set()
    classes = [s for s in module.body if isinstance(s, cst.ClassDef)]
    changed = True
    while changed:
        changed = False
        for c in classes:
            if c.name.value in found:
                continue
            for base in c.bases:
                if _keras_base(ctx, base.value) or (isinstance(base.value, cst.Name) and base.value.value in found):
                    found.add(c.name.value)
                    changed = True
                    break
    ctx.facts.keras_classes = found
    return found


def is_keras_class(ctx, classdef: Optional[cst.ClassDef]) -> bool:
    if classdef is None:
        return False
    if classdef.name.value in keras_classes(ctx, ctx.module):
        return True
    return any(_keras_base(ctx, b.value) for b in classdef.bases)


def is_variable_call(ctx, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and (ctx.v1(node.func) in VARIABLE)


def is_layer_call(ctx, node: cst.CSTNode) -> bool:
    """A call creating a Keras layer or model (tf.keras.layers.X(...), a local Keras class)."""
    if not isinstance(node, cst.Call):
        return False
    name = ctx.keras(node.func)
    if name and (name.startswith("keras.layers.") or name in KERAS_BASES or
                 name.startswith("keras.models.") or name.startswith("keras.Sequential")):
        return name[0].isalpha() and name.rsplit(".", 1)[-1][:1].isupper()
    return isinstance(node.func, cst.Name) and node.func.value in keras_classes(ctx, ctx.module)


def variable_arguments(node: cst.Call) -> Optional[dict]:
    """tf.Variable's arguments by name, or None when they cannot all be carried over."""
    values = {}
    for index, a in enumerate(node.args):
        if a.star:
            return None
        name = a.keyword.value if a.keyword else (VARIABLE_PARAMS[index] if index < len(VARIABLE_PARAMS) else None)
        if name is None or name not in CARRIED:
            return None
        values[name] = a.value
    if "initial_value" not in values:
        return None
    return values


def _number(node: cst.BaseExpression) -> Optional[str]:
    """'float' / 'int' for a numeric literal (signs allowed), else None."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _number(node.expression)
    if isinstance(node, cst.Float):
        return "float"
    if isinstance(node, cst.Integer):
        return "int"
    return None


def add_weight(ctx, finding, values: dict, owner: cst.BaseExpression, label: str,
               shape_hint: Optional[cst.BaseExpression] = None
               ) -> Tuple[List[cst.BaseStatement], cst.Call]:
    """``(statements to run first, owner.add_weight(...))`` for tf.Variable's ``values``.

    Numeric literals become ``shape=(), initializer=Constant(v)``; ``tf.zeros`` /
    ``tf.ones`` keep their shape with the "zeros"/"ones" initializer; anything
    else is evaluated once into ``initial_<label>`` and used as the initializer,
    so the first value is exactly what tf.Variable would have held.
    """
    initial = values["initial_value"]
    pre: List[cst.BaseStatement] = []
    args: List[cst.Arg] = []
    if "name" in values:
        args.append(arg(values["name"], "name"))
    kind = _number(initial)
    init_name = ctx.v1(initial.func) if isinstance(initial, cst.Call) else None
    if kind is not None:
        args.append(arg(cst.Tuple([]), "shape"))
        args.append(arg(call(ctx.tf(finding, "keras.initializers.Constant"), [arg(initial)]),
                        "initializer"))
        if kind == "int" and "dtype" not in values:
            args.append(arg(cst.SimpleString('"int32"'), "dtype"))
        if "dtype" in values:
            args.append(arg(values["dtype"], "dtype"))
    elif init_name in ("tf.zeros", "tf.ones") and initial.args and not initial.args[0].keyword \
            and all(a.keyword is None or a.keyword.value == "dtype" for a in initial.args[1:]) \
            and len(initial.args) <= 2:
        args.append(arg(initial.args[0].value, "shape"))
        args.append(arg(cst.SimpleString(f'"{init_name[3:]}"'), "initializer"))
        dtype = values.get("dtype") or (initial.args[1].value if len(initial.args) > 1 else None)
        if dtype is not None:
            args.append(arg(dtype, "dtype"))
    else:
        variable = fresh_name(ctx, f"initial_{label}")
        convert_args = [arg(initial)]
        if "dtype" in values:
            convert_args.append(arg(values["dtype"], "dtype"))
        pre.append(cst.SimpleStatementLine([cst.Assign(
            [cst.AssignTarget(cst.Name(variable))],
            call(ctx.tf(finding, "convert_to_tensor"), convert_args))]))
        args.append(arg(cst.parse_expression(f"{variable}.shape"), "shape"))
        args.append(arg(cst.parse_expression(f"{variable}.dtype"), "dtype"))
        args.append(arg(cst.parse_expression(f"lambda shape, dtype=None: {variable}"), "initializer"))
    if "trainable" in values:
        args.append(arg(values["trainable"], "trainable"))
    elif kind == "int":
        args.append(arg(cst.Name("False"), "trainable"))
    if "constraint" in values:
        args.append(arg(values["constraint"], "constraint"))
    return pre, call(cst.Attribute(owner, cst.Name("add_weight")), args)


def add_shim_decorator(ctx, finding, method: cst.FunctionDef) -> None:
    """Give a Keras method ``@shims.track_tf1_style_variables`` once, whichever rules ask."""

    if any("track_tf1_style_variables" in code(d.decorator) for d in method.decorators):
        return
    done = ctx.facts.shim_decorated
    if id(method) in done:
        return
    done.add(id(method))
    decorator = cst.Decorator(cst.parse_expression("shims.track_tf1_style_variables"))
    finding.replace(method, lambda updated: updated.with_changes(
        decorators=[*updated.decorators, decorator]))
    finding.add_import("import shims")
