"""TFM103: TF1 calls whose TF2 behaviour changed (tf_upgrade_v2's warnings)."""
import libcst as cst

from migrate import needles
from migrate.rule import Rule
from migrate.tables import owned_by_rules, upgrade_tables


class BehaviourChanges(Rule):
    code = "TFM103"
    needle = needles.TF1_IMPORT
    summary = "call whose behaviour changed in TF2; review by hand"
    explanation = """
TensorFlow's upgrade tables list calls whose meaning changed in TF2 in ways no rename can
fix (a removed argument with a value, different defaults, a custom transform that
tf_upgrade_v2 applies). Each such call is reported with TensorFlow's own message.
"""
    before = """
y = tf.cond(pred, f1, f2, strict=True)
"""
    after = """
y = tf.cond(pred, f1, f2)  # strict= is gone: tf.cond behaves as if strict=True
"""

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.ctx.qualname(node.func)
        if not qualname or qualname.startswith("tensorflow.compat."):
            return
        old = self.ctx.v1(node.func)
        if not old or owned_by_rules(old):
            return
        tables = upgrade_tables()
        if tables["symbol_renames"].get(old, "").startswith("tf.compat.v1."):
            return  # TFM101 moves it to compat.v1, which keeps the TF1 behaviour
        # whole-function notes describe TF1 code; a TF1-only keyword (below) is TF1 by itself
        message = tables["function_warnings"].get(old) if self.ctx.is_tf1_file() else None
        if message:
            self.report(node, f"{old}: {message}")
        for a in node.args:
            if a.keyword is not None:
                warn = tables["arg_warnings"].get(old, {}).get(a.keyword.value)
                if warn:
                    self.report(a, f"{old}: {warn}")
        if old in tables["transformed"] and not message and self.ctx.is_tf1_file():
            self.report(node, f"{old} changed in TF2 (tf_upgrade_v2 rewrites it with a custom "
                              "transform); check the call against the TF2 API")
