"""TFM119: `v.op.name` on a variable listed from the graph: eager variables have no op."""
from typing import Optional, Set

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import call, code
from migrate.codemod.rule import Rule
from migrate.codemod.shared import loop_iterable, names_bound_only_to

OP_NAME = needles.Needle((".op.name",), r"\.op\.name\b")
# calls that list variables, as ctx.v1 spells them (the slim and contrib.framework ones by prefix)
VARIABLE_LISTS = {"tf.global_variables", "tf.trainable_variables", "tf.all_variables",
                  "tf.local_variables", "tf.model_variables", "tf.moving_average_variables",
                  "tf.get_collection", "tf.get_collection_ref"}
VARIABLE_LIST_PREFIXES = ("tf.contrib.framework.get_variables", "tf.contrib.framework.get_model_variables",
                          "tf.contrib.slim.get_variables", "tf.contrib.slim.get_model_variables",
                          "tf.contrib.framework.get_trainable_variables",
                          "tf.contrib.slim.get_trainable_variables")


class VariableOpName(Rule):
    code = "TFM119"
    needle = OP_NAME
    summary = "`v.op.name` of a listed variable: TF2's eager variables have no op"
    fixable = True
    explanation = """
TF1 code names variables by their op: `{v.op.name: v for v in tf.global_variables()}` is a
Saver's var_list, and init_fn/assignment maps, EMA restores and slim's variable filters are
written the same way. A converted program's variables are eager, and `v.op` raises `Tensor.op
is undefined when eager execution is enabled`. `shims.op_name(v)` is `v.op.name` wherever
that works (a graph-mode program, a tensor) and a program variable's TF1 name otherwise.
Rewritten: `.op.name` of a loop or comprehension variable iterating over a variable list
(`tf.global_variables()`, `tf.trainable_variables()`, `tf.get_collection(...)`, slim's and
tf.contrib.framework's `get_variables*`, or a name bound only to one of those).
"""
    before = """
import tensorflow as tf

var_list = {v.op.name: v for v in tf.global_variables() if v.op.name.startswith("backbone/")}
"""
    after = """
import shims
import tensorflow as tf

var_list = {shims.op_name(v): v for v in tf.global_variables() if shims.op_name(v).startswith("backbone/")}
"""

    _lists: Optional[Set[str]] = None

    def _lists_variables(self, node: cst.BaseExpression) -> bool:
        """A call listing variables."""
        name = (self.ctx.v1(node.func) or "") if isinstance(node, cst.Call) else ""
        return name in VARIABLE_LISTS or name.startswith(VARIABLE_LIST_PREFIXES)

    @property
    def list_names(self) -> Set[str]:
        """Names every assignment of which is a variable list (``tvars = tf.trainable_variables()``)."""
        if self._lists is None:
            self._lists = names_bound_only_to(self.ctx.module, self._lists_variables)
        return self._lists

    def _listed_variable(self, name: str) -> bool:
        """Is ``name`` a loop/comprehension variable iterating over a variable list?"""
        iterable = loop_iterable(self.ctx, name)
        return iterable is not None and (self._lists_variables(iterable) or (
            isinstance(iterable, cst.Name) and iterable.value in self.list_names))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        op = node.value
        if node.attr.value != "name" or not isinstance(op, cst.Attribute) or op.attr.value != "op" \
                or not isinstance(op.value, cst.Name) or not self._listed_variable(op.value.value):
            return
        finding = self.report(node, f"`{code(node)}`: a converted program's variables are eager and "
                                    "have no op; shims.op_name gives the TF1 name in TF1 and TF2")
        finding.add_import("import shims")
        finding.replace(node, lambda updated: call(cst.parse_expression("shims.op_name"),
                                                   [cst.Arg(updated.value.value)]))
