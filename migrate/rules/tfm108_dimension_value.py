"""TFM108: TF1 shape semantics: `.value` on a dimension."""
from typing import Optional, Set

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import call, code
from migrate.codemod.rule import Rule
from migrate.codemod.shared import loop_iterable, names_bound_only_to

VALUE = needles.Needle((".value",), r"\.value\b")


def _shape_like(node: Optional[cst.BaseExpression], shape_names: Set[str]) -> bool:
    """``x.shape``, ``x.get_shape()``, ``tf.TensorShape(...)``, their ``.dims``, a slice of
    one (``x.get_shape()[1:]``: a TensorShape too), or a name bound only to one of those."""
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 \
            and isinstance(node.slice[0].slice, cst.Slice):
        return _shape_like(node.value, shape_names)
    if isinstance(node, cst.Attribute) and node.attr.value == "dims":
        return _shape_like(node.value, shape_names)
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in ("get_shape", "TensorShape"):
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "TensorShape":
        return True
    return isinstance(node, cst.Name) and node.value in shape_names


class DimensionValue(Rule):
    code = "TFM108"
    needle = VALUE
    summary = "`.value` on a shape dimension: TF2 dimensions are plain ints"
    fixable = True
    explanation = """
In TF1 `x.shape[i]` and `x.get_shape()[i]` are `tf.Dimension` objects and code reads
`.value`; in TF2 they are ints (or None), so `.value` raises `'int' object has no
attribute 'value'`. `tf.compat.dimension_value(...)` gives the int (or None) in both, so the
rewrite is safe whether or not the code runs as TF1. Covered: subscripts of `.shape`,
`.get_shape()`, `.dims`, `tf.TensorShape(...)`, of a name bound only to one of those, and
loop or comprehension variables iterating over one. A `.value` on another subscript that
might be a dimension is reported, not changed.
"""
    before = """
import tensorflow as tf

units = inputs.shape[-1].value
sizes = [d.value for d in inputs.get_shape()]
"""
    after = """
import tensorflow as tf

units = tf.compat.dimension_value(inputs.shape[-1])
sizes = [tf.compat.dimension_value(d) for d in inputs.get_shape()]
"""

    _shapes: Optional[Set[str]] = None

    @property
    def shape_names(self) -> Set[str]:
        """Names every assignment of which is a shape (``shape = x.get_shape()``); found
        on first need (most files never ask), with one plain walk."""
        if self._shapes is None:
            self._shapes = names_bound_only_to(self.ctx.module, lambda value: _shape_like(value, set()))
        return self._shapes

    def _loop_dimension(self, name: str) -> bool:
        """Is ``name`` a loop/comprehension variable iterating over a shape?"""
        iterable = loop_iterable(self.ctx, name)
        return iterable is not None and _shape_like(iterable, self.shape_names)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "value":
            return
        receiver = node.value
        dimension = False
        if isinstance(receiver, cst.Subscript):
            dimension = _shape_like(receiver.value, self.shape_names)
            if not dimension:
                self.report(node, f"`{code(node)}`: if this is a TF1 Dimension, TF2 gives an int "
                                  "here: use tf.compat.dimension_value(...) (the receiver's type "
                                  "cannot be told from the code)")
                return
        elif isinstance(receiver, cst.Name):
            dimension = self._loop_dimension(receiver.value)
        elif isinstance(receiver, cst.Call) and self.ctx.v1(receiver.func) == "tf.Dimension" \
                and len(receiver.args) == 1:
            finding = self.report(node, "tf.Dimension(...).value: TF2 has no Dimension objects; "
                                        "tf.compat.dimension_value gives the same int")
            finding.replace(node, lambda updated: call(self.ctx.tf(finding, "compat.dimension_value"),
                                                       [updated.value.args[0]]))
            return
        if not dimension:
            return
        finding = self.report(node, f"`{code(node)}`: TF2 dimensions are ints; "
                                    "tf.compat.dimension_value works in TF1 and TF2")
        function = self.ctx.tf(finding, "compat.dimension_value")
        finding.replace(node, lambda updated: call(function, [cst.Arg(updated.value)]))
