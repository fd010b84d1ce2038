"""TFM109: TF1 Dataset methods removed in TF2 (iterators, output_types/shapes)."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import arg, call
from migrate.codemod.rule import Rule
from migrate.codemod.shared import DATASET_ITERATOR_METHODS
from migrate.codemod.signatures import bind, call_keywords, tf1_signature

METHODS = DATASET_ITERATOR_METHODS
PROPERTIES = {"output_types": "compat.v1.data.get_output_types",
              "output_shapes": "compat.v1.data.get_output_shapes",
              "output_classes": "compat.v1.data.get_output_classes"}
DATASET = needles.Needle(("make_one_shot_iterator", "make_initializable_iterator", "output_types",
                          "output_shapes", "output_classes"))


class DatasetIterators(Rule):
    code = "TFM109"
    needle = (DATASET, needles.Needle(("tensorflow",)))
    summary = "TF1 Dataset methods are gone in TF2: the tf.compat.v1.data functions do the same"
    fixable = True
    explanation = """
`dataset.make_one_shot_iterator()`, `dataset.make_initializable_iterator()` and the
`output_types` / `output_shapes` / `output_classes` properties are gone from TF2 datasets
(`AttributeError: 'BatchDataset' object has no attribute 'make_one_shot_iterator'`). The
`tf.compat.v1.data` functions take the dataset (and `shared_name=`, bound as TF 1.15 binds
it) and do the same, in graph mode and, for the one-shot iterator and the output
structure, eagerly too. The receiver's type cannot be
checked statically: the rule fires on these exact method and property names, which no other
common library uses, in files that import TensorFlow.
"""
    before = """
import tensorflow as tf

features, labels = dataset.make_one_shot_iterator().get_next()
"""
    after = """
import tensorflow as tf

features, labels = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
"""

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in METHODS:
            return
        if self.ctx.qualname(func) is not None:
            return  # tf.compat.v1.data.make_initializable_iterator(...): a function, not the method
        method, keywords = func.attr.value, call_keywords(node)
        # the method's arguments bound as TF 1.15's function taking the dataset first binds
        # them (tf.data.make_initializable_iterator(dataset, shared_name=None))
        signature = tf1_signature(f"tf.data.{method}")
        binding = bind(signature, [None, *keywords]) if keywords is not None and signature else None
        if binding is None or binding.problem:
            return  # not TF1's Dataset method (make_one_shot_iterator takes no argument)
        params = binding.params[1:]
        finding = self.report(node, f"Dataset.{method}() is gone in TF2; "
                                    f"tf.{METHODS[method]}(dataset{''.join(f', {p}=' for p in params)}) "
                                    "does the same")
        function = self.ctx.tf(finding, METHODS[method])
        finding.replace(node, lambda updated: call(function, [cst.Arg(updated.func.value)] + [
            arg(a.value, p) for p, a in zip(params, updated.args)]))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value not in PROPERTIES:
            return
        parent = self.ctx.parent()
        if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.Call) and parent.func is node):
            return  # assigned to, or a method of the same name: not the TF1 property
        if self.ctx.v1(node) is not None:
            return  # a TensorFlow module attribute, not a dataset property
        finding = self.report(node, f"Dataset.{node.attr.value} is gone in TF2; "
                                    f"tf.{PROPERTIES[node.attr.value]}(dataset) gives it")
        function = self.ctx.tf(finding, PROPERTIES[node.attr.value])
        finding.replace(node, lambda updated: call(function, [cst.Arg(updated.value)]))
