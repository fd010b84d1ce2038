"""TFM304: containers and holders no Keras generation can track or save."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import code, string_value
from migrate.codemod.keras_weights import (
    is_keras_class,
    is_layer_call,
    is_variable_call,
)
from migrate.codemod.rule import Rule
from migrate.codemod.shared import CALL_METHODS, owner_method, self_name

MODULE_BASES = {"tensorflow.Module", "tensorflow.compat.v1.Module", "tensorflow.compat.v2.Module"}


def _trackable(ctx, node) -> bool:
    return is_variable_call(ctx, node) or is_layer_call(ctx, node)


class Untrackable(Rule):
    code = "TFM304"
    needle = needles.KERAS_CLASS
    summary = "variables held where no Keras generation tracks them"
    explanation = """
Some ways of keeping variables on a layer or model cannot be fixed mechanically:

- a dict with non-string keys: legacy Keras fails to save it, and Keras 3 leaves it out
  of checkpoints. Use string keys (`str(k)`).
- a set: never tracked. Use a list (TFM301 then tracks it).
- a plain Python object holding variables or layers (`self.state = Holder()` where
  `class Holder:` assigns `tf.Variable`s): never tracked. Make the holder a `tf.Module`
  (`class Holder(tf.Module):` and call `super().__init__()`), or a Keras layer.
"""
    before = """
import tensorflow as tf


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.by_id = {0: tf.keras.layers.Dense(2)}
"""
    after = """
import tensorflow as tf


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.by_id = {"0": tf.keras.layers.Dense(2)}
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._holder_names = None  # plain classes of the module that hold variables

    def visit_Assign(self, node: cst.Assign) -> None:
        classdef, func = owner_method(self.ctx)
        if func is None or func.name.value in CALL_METHODS or len(node.targets) != 1:
            return
        owner = self_name(func)
        target = node.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                and target.value.value == owner):
            return
        value = node.value
        attr = target.attr.value
        if isinstance(value, cst.Dict) and any(
                isinstance(e, cst.DictElement) and string_value(e.key) is None and _trackable(self.ctx, e.value)
                for e in value.elements):
            self.report(node, f"self.{attr} is a dict with non-string keys: legacy Keras cannot "
                              "save it and Keras 3 leaves it out of checkpoints; use string keys")
        elif isinstance(value, (cst.Set, cst.SetComp)):
            elements = [value.elt] if isinstance(value, cst.SetComp) else [e.value for e in value.elements]
            if any(_trackable(self.ctx, e) for e in elements):
                self.report(node, f"self.{attr} is a set of variables/layers: sets are never "
                                  "tracked; use a list")
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) \
                and value.func.value in self._holders():
            self.report(node, f"self.{attr} = {value.func.value}(): a plain Python object holding "
                              f"variables is never tracked; make {value.func.value} a tf.Module "
                              "(or a Keras layer)")

    def _holders(self) -> set:
        """Plain classes of this module whose methods put variables/layers on self."""
        if self._holder_names is not None:
            return self._holder_names
        found = set()
        for stmt in self.ctx.module.body:
            if not isinstance(stmt, cst.ClassDef) or is_keras_class(self.ctx, stmt):
                continue
            if any(self.ctx.qualname(b.value) in MODULE_BASES for b in stmt.bases):
                continue
            if any(code(b.value) not in ("object",) for b in stmt.bases):
                continue  # some other base class: it may well track
            text = code(stmt)
            if "self." in text and ("Variable(" in text or "layers." in text):
                found.add(stmt.name.value)
        self._holder_names = found
        return found
