"""TFM302: raw tf.Variable on a Keras layer/model -> self.add_weight."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import string_value
from migrate.codemod.keras_weights import (
    add_weight,
    is_variable_call,
    variable_arguments,
)
from migrate.codemod.rule import Rule
from migrate.codemod.shared import CALL_METHODS, owner_method, self_name


def label_for(ctx, node, values) -> str:
    """An attribute-ish label: the assigned attribute, its index/key in a container, or the name."""
    parent, grand, great = ctx.parent(1), ctx.parent(2), ctx.parent(3)
    target = None
    if isinstance(parent, cst.Assign):
        target = parent.targets[0].target
        suffix = ""
    elif isinstance(parent, cst.Element) and isinstance(grand, (cst.List, cst.Tuple)) and isinstance(great, cst.Assign):
        target = great.targets[0].target
        suffix = f"_{[e.value for e in grand.elements].index(node)}"
    elif isinstance(parent, cst.DictElement) and isinstance(great, cst.Assign):
        target = great.targets[0].target
        suffix = f"_{string_value(parent.key) or 'item'}"
    if isinstance(target, cst.Attribute):
        return target.attr.value + suffix
    if isinstance(target, cst.Name):
        return target.value + suffix
    return string_value(values.get("name")) or "variable"


class RawVariables(Rule):
    code = "TFM302"
    needle = (needles.KERAS_CLASS, needles.VARIABLE)
    summary = "raw tf.Variable on a Keras layer/model is not in model.variables under Keras 3"
    fixable = True
    explanation = """
Under Keras 3 (tf.keras in TF 2.16+), a `tf.Variable` assigned to a layer or model is saved
by tf.train.Checkpoint but is not in `model.variables` / `trainable_variables`, so `fit`
never trains it. `self.add_weight(...)` is tracked by both Keras generations. The initial
value, dtype, name, trainable flag and constraint are carried over: numeric literals
become a Constant initializer, tf.zeros/tf.ones their named initializers, anything else is
evaluated once and used as the initializer, so the weight starts with exactly the value
tf.Variable held.
"""
    before = """
import tensorflow as tf

class Scorer(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.scale = tf.Variable(1.0, name="scale")
"""
    after = """
import tensorflow as tf

class Scorer(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.scale = self.add_weight(name="scale", shape=(), initializer=tf.keras.initializers.Constant(1.0))
"""

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if not is_variable_call(ctx, node):
            return
        classdef, func = owner_method(ctx)
        if func is None or func.name.value in CALL_METHODS or self_name(func) is None:
            return  # call(): TFM303 moves it to build()
        if any("function" in cst.Module([]).code_for_node(d.decorator) for d in func.decorators):
            return  # a tf.function method: the lint rules speak about it
        values = variable_arguments(node)
        if values is None:
            self.report(node, "raw tf.Variable on a Keras layer/model is not in model.variables "
                              "under Keras 3; use self.add_weight (arguments need a manual port)")
            return
        finding = self.report(node)
        owner = cst.Name(self_name(func))
        label = label_for(ctx, node, values)
        made = {}

        def replace(updated: cst.Call) -> cst.Call:
            pre, new = add_weight(ctx, finding, variable_arguments(updated), owner, label)
            made["pre"] = pre
            return new

        finding.replace(node, replace)
        finding.insert_before(ctx.statement(), lambda: made.get("pre", []))
