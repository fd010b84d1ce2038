"""TFM101: TF1 symbols renamed or moved in TF2 (tables generated from tf_upgrade_v2)."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import SymbolRule
from migrate.codemod.shared import fine_in_tf2
from migrate.codemod.signatures import call_keywords, same_name_readings
from migrate.codemod.tables import no_tf2_home, owned_by_rules, shim_exports, upgrade_tables

# TF1 call forms TF2's function of the same name rejects (TFM103 knows the TF2 forms)
TF1_FORMS = ("tf.name_scope", "tf.device")
# tf.compat.v1.nn.rnn_cell fails under Keras 3 (TF 2.21); shims.contrib.rnn has its classes
RNN_CELL = "tf.compat.v1.nn.rnn_cell."


class SymbolRenames(SymbolRule):
    code = "TFM101"
    needle = needles.TF1_IMPORT
    summary = "TF1 symbol renamed or moved in TF2"
    fixable = True
    explanation = """
Symbols that moved in TensorFlow 2 (most TF1-only APIs live under tf.compat.v1 now)
are renamed with TensorFlow's own tables (renames_v2 / all_renames_v2), resolved through
your imports, so `tf1.Session`, `from tensorflow import placeholder` and `tf.Session`
all match and a local variable called `tf` does not. Names that are valid TF2 too
(`tf.where`, `tf.nn.conv2d`, ...) are renamed only in files that use TF1-only APIs, so
TF2 code is never pushed into compat.v1. tf.layers.*, tf.contrib.*, tf.keras.* and TF1
summaries are left to their own rules (TFM2xx, TFM105, TFM106), which do better than a
rename into tf.compat.v1. `tf.nn.rnn_cell.*` (tf_keras's under TF 2.21) becomes
`shims.contrib.rnn.*`, or for Keras 3 (`upgrade --keras 3`) `shims.rnn3.*`, TF 1.15's cells
on TensorFlow alone (an error finding for those it lacks).
"""
    before = """
import tensorflow as tf
with tf.variable_scope("encoder"):
    w = tf.get_variable("w", [3, 3])
"""
    after = """
import tensorflow as tf
with tf.compat.v1.variable_scope("encoder"):
    w = tf.compat.v1.get_variable("w", [3, 3])
"""

    def check(self, node) -> None:
        ctx = self.ctx
        qualname = ctx.qualname(node)
        if not qualname or qualname.startswith("tensorflow.compat."):
            return  # compat.v1 code already names the TF1 API explicitly
        old = ctx.v1(node)
        if not old or owned_by_rules(old):
            return
        parent = ctx.parent()
        if old in TF1_FORMS and isinstance(parent, cst.Call) and parent.func is node \
                and not fine_in_tf2(old, parent):
            # tf.name_scope(None, "default", values) / tf.device(fn): TF1's forms, which the
            # compat.v1 function keeps
            finding = self.report(node, f"{old}({', '.join('...' for _ in parent.args)}) is TF1's "
                                        f"form; tf.compat.v1.{old[3:]} keeps it")
            finding.replace(node, ctx.tf(finding, "compat.v1." + old[len("tf."):]))
            return
        tables = upgrade_tables()
        renames = {**tables.get("module_renames", {}), **tables["symbol_renames"]}
        new = renames.get(old)
        if not new:  # an attribute of a renamed class or module: tf.GraphKeys.UPDATE_OPS
            parts, target = old.split("."), node
            for cut in range(1, len(parts) - 1):
                if not isinstance(target, cst.Attribute):
                    return
                target = target.value
                prefix = ".".join(parts[:-cut])
                if prefix in renames:
                    if owned_by_rules(prefix) or prefix in tables["tf2_symbols_set"]:
                        return
                    renamed = renames[prefix]
                    finding = self.report(target, f"{prefix} is {renamed} in TF2")
                    finding.replace(target, ctx.tf(finding, renamed[len("tf."):]))
                    return
            return
        if new == old:
            return
        if old in tables["tf2_symbols_set"] and not ctx.is_tf1_file() and not self._tf1_call(node, old):
            return  # valid TF2 too (tf.where, ...): only TF1 code means the TF1 API
        leaf = new[len(RNN_CELL):] if new.startswith(RNN_CELL) else None
        if leaf is not None and ctx.target.keras == 3:
            self._keras3_cell(node, old, leaf)
            return
        if leaf in shim_exports("contrib.rnn"):
            finding = self.report(node, f"{old} is {new} in TF2, which fails under Keras 3; "
                                        f"shims.contrib.rnn.{leaf} is the same TF1 class")
            finding.replace(node, cst.parse_expression(f"shims.contrib.rnn.{leaf}"))
            finding.add_import("import shims")
            return
        if new in tables["missing_in_tf2_set"]:
            self.report(node, no_tf2_home(old, new))
            return
        finding = self.report(node, f"{old} is {new} in TF2")
        finding.replace(node, ctx.tf(finding, new[len("tf."):]))

    def _keras3_cell(self, node, old, leaf) -> None:
        """For Keras 3: shims.rnn3's cells (TF 1.15's, on TensorFlow alone), else an error."""
        if leaf in shim_exports("rnn3"):
            finding = self.report(node, f"{old} is tf.compat.v1.nn.rnn_cell.{leaf} in TF2, which "
                                        f"exists in tf_keras only; shims.rnn3.{leaf} is TF 1.15's cell "
                                        "on TensorFlow alone (Keras 3 target)")
            finding.replace(node, cst.parse_expression(f"shims.rnn3.{leaf}"))
            finding.add_import("import shims.rnn3")
            return
        self.report(node, f"{old} exists in tf_keras only (not Keras 3) and shims.rnn3 has no "
                          f"{leaf}; migrate this file for Keras 2 (without --keras 3)")

    def _tf1_call(self, node, old) -> bool:
        """Is this call of a name TF2 has too TF1's by its arguments alone? Only TF1's
        signature binds it (``tf.zeros_initializer(tf.float32)``: TF2's Zeros takes no
        dtype); where both bind it differently (``tf.constant_initializer(v, tf.float32)``:
        TF1's dtype, TF2's support_partition) it is an error finding naming both."""
        parent = self.ctx.parent()
        if not (isinstance(parent, cst.Call) and parent.func is node):
            return False
        keywords = call_keywords(parent)
        both = same_name_readings(old, keywords) if keywords is not None else None
        if both is None:
            return False
        if both.verdict == "differ":
            self.report(parent, both.differ_message(old))
        return both.verdict == "tf1"
