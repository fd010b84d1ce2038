"""TFM104: enable_eager_execution() calls (eager is TF2's default)."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Rule

ENABLERS = {"tf.enable_eager_execution", "tf.contrib.eager.enable_eager_execution",
            "tf.enable_v2_behavior"}
DISABLERS = {"tf.disable_v2_behavior", "tf.disable_eager_execution"}


class EagerEnable(Rule):
    code = "TFM104"
    needle = needles.EAGER_ENABLE
    summary = "TF1/TF2 behaviour switches: enabling eager is not needed, disabling it keeps TF1"
    fixable = True
    explanation = """
`tf.enable_eager_execution()`, `tf.contrib.eager.enable_eager_execution()` and
`tfe.enable_eager_execution()` are removed (TF2 executes eagerly by default; the TF2 API
has no such function), and so is the import that only served them.

`tf.compat.v1.disable_v2_behavior()` / `disable_eager_execution()` are reported, not
removed: they keep the whole program in TF1 graph mode, which code still built on
Session/placeholder needs. Remove them once it no longer does.
"""
    before = """
import tensorflow as tf
import tensorflow.contrib.eager as tfe
tfe.enable_eager_execution()
"""
    after = """
import tensorflow as tf
"""

    def visit_Expr(self, node: cst.Expr) -> None:
        if not isinstance(node.value, cst.Call):
            return
        name = self.ctx.v1(node.value.func)
        if name in DISABLERS:
            if needles.SESSION.search(self.ctx.source):
                return  # a Session program: TFM501 converts it (dropping this) or says why not
            self.report(node.value, f"{name}() keeps the whole program in TF1 graph mode; remove "
                                    "it once the code no longer needs Session/placeholder")
        elif name in ENABLERS:
            statement = self.ctx.parent()
            target = statement if isinstance(statement, cst.SimpleStatementLine) and \
                len(statement.body) == 1 else node
            self.report(node.value, f"{name}() is not needed in TF2 (eager is the default)").remove(target)
