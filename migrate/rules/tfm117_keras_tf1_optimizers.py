"""TFM117: a TF1 optimizer given to Keras's compile(): TF 1.15's Keras generation runs it."""
from typing import List, Set

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import code
from migrate.codemod.rule import Rule


class KerasTF1Optimizers(Rule):
    code = "TFM117"
    needle = (needles.Needle(("compile",)), needles.Needle(("Optimizer",)))
    summary = "TF1 optimizer in Keras compile(): Keras 3 rejects it, tf_keras runs it as TF 1.15 did"
    fixable = True
    explanation = """
TF 1.15's `tf.keras` was Keras 2, whose `model.compile(optimizer=tf.train.AdamOptimizer(0.01))`
wraps the TF1 optimizer and trains with it. TF 2.21's default Keras 3 refuses it
(`ValueError: Could not interpret optimizer identifier`), so the migrated program fails at
`compile`. The file imports `shims.keras2` first, which selects tf_keras (Keras 2) for the process:
the same `compile` then trains with the same TF1 optimizer, step for step as TF 1.15 did
(tested on real TF 1.15: same losses and weights). The optimizer may be passed by keyword,
positionally, or as a name bound to the optimizer call anywhere in the file.
"""
    before = """
import tensorflow as tf

model.compile(optimizer=tf.train.AdamOptimizer(0.01), loss="mse")
"""
    after = """
import shims.keras2
import tensorflow as tf

model.compile(optimizer=tf.train.AdamOptimizer(0.01), loss="mse")
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._optimizers: Set[str] = set()  # names bound to a TF1 optimizer
        self._compiles: List[cst.Call] = []
        self._has_shims = False

    def _tf1_optimizer(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Name):
            return node.value in self._optimizers
        if not isinstance(node, cst.Call):
            return False
        name = self.ctx.v1(node.func) or ""
        return name.startswith("tf.train.") and name.endswith("Optimizer")

    def visit_Import(self, node: cst.Import) -> None:
        if any(code(a.name).split(".")[0] == "shims" for a in node.names):  # shims, shims.keras2
            self._has_shims = True

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._tf1_optimizer(node.value):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self._optimizers.add(target.target.value)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile":
            self._compiles.append(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self._has_shims:
            return
        for node in self._compiles:
            given = [a.value for a in node.args if a.keyword is not None and a.keyword.value == "optimizer"]
            if not given and node.args and node.args[0].keyword is None and not node.args[0].star:
                given = [node.args[0].value]
            if given and self._tf1_optimizer(given[0]) and self.ctx.target.keras == 3:
                self.report(node, "a TF1 optimizer given to Keras compile(): Keras 3 rejects it, and "
                                  "the Keras 3 target has no tf_keras to run it; give compile() its "
                                  "Keras 3 counterpart (tf.keras.optimizers.*, same hyperparameters) "
                                  "or migrate this file for Keras 2")
            elif given and self._tf1_optimizer(given[0]):
                finding = self.report(node, "a TF1 optimizer given to Keras compile(): Keras 3 "
                                            "rejects it; TF 1.15's Keras was Keras 2, which `import "
                                            "shims` selects (tf_keras), and it trains with it as TF "
                                            "1.15 did")
                finding.add_import("import shims.keras2")  # the fix: the call itself stays
                finding.replace(node, lambda updated: updated)
