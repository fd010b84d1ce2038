"""TFM105: tf.contrib is gone in TF2."""
import libcst as cst

from migrate import needles
from migrate.rule import SymbolRule
from migrate.rules.tfm110_estimator import target as estimator_target
from migrate.tables import upgrade_tables

# our overrides: TF1-compatible replacements in shims.contrib (same variable names)
TO_SHIMS = {
    "tf.contrib.layers.layer_norm": "contrib.layer_norm",
    "tf.contrib.layers.fully_connected": "contrib.fully_connected",
    "tf.contrib.layers.flatten": "contrib.flatten",
    "tf.contrib.layers.xavier_initializer": "contrib.xavier_initializer",
    "tf.contrib.layers.variance_scaling_initializer": "contrib.variance_scaling_initializer",
    "tf.contrib.layers.l2_regularizer": "contrib.l2_regularizer",
    "tf.contrib.training.HParams": "contrib.HParams",
}
# where a module went, for the finding's message
HINTS = {
    "tf.contrib.slim": "the tf-slim package (import tf_slim as slim)",
    "tf.contrib.rnn": "tf.keras.layers (LSTMCell, GRUCell, RNN) or tf.compat.v1.nn.rnn_cell",
    "tf.contrib.layers": "tf.keras.layers",
    "tf.contrib.eager": "the same names under tf (eager is TF2's default)",
    "tf.contrib.distribute": "tf.distribute",
    "tf.contrib.data": "tf.data.experimental",
    "tf.contrib.framework": "tf.nest / tf.compat.v1.train (see the TF2 API)",
    "tf.contrib.seq2seq": "tensorflow-addons' seq2seq (archived) or your own Keras code",
    "tf.contrib.tpu": "tf.distribute.TPUStrategy",
    "tf.contrib.summary": "tf.summary",
    "tf.contrib.opt": "tf.keras.optimizers",
    "tf.contrib.learn": "shims.estimator (model_fn Estimators) or a Keras model with fit()",
    "tf.contrib.metrics": "tf.keras.metrics",
    "tf.contrib.losses": "tf.keras.losses",
    "tf.contrib.image": "tf.image / tensorflow-addons",
    "tf.contrib.crf": "tensorflow-addons' text.crf",
    "tf.contrib.training": "tf.data (batching) / shims.contrib.HParams",
}


class Contrib(SymbolRule):
    code = "TFM105"
    needle = needles.CONTRIB
    summary = "tf.contrib is gone in TF2"
    fixable = True
    explanation = """
tf.contrib does not exist in TF2. Uses that shims.contrib replaces with TF1-compatible
code creating the same variable names (layer_norm, fully_connected, flatten,
xavier_initializer, variance_scaling_initializer, l2_regularizer, HParams) are rewritten
to it, so checkpoints written by the TF1 code still load. Uses TensorFlow's tables rename
(for example tf.contrib.framework.nest -> tf.nest) are renamed. Every other use is
reported with the TF2 replacement where one exists. Imports like
`import tensorflow.contrib.layers as layers` are followed too.
"""
    before = """
x = tf.contrib.layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)
"""
    after = """
import shims
x = shims.contrib.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)
"""

    def check(self, node) -> None:
        ctx = self.ctx
        name = ctx.v1(node)
        if not name or not (name == "tf.contrib" or name.startswith("tf.contrib.")):
            return
        if name in ("tf.contrib.eager.enable_eager_execution",):
            return  # TFM104 removes it
        if estimator_target(name) is not None:
            return  # TFM110 moves it to shims.estimator
        if name in TO_SHIMS:
            finding = self.report(node, f"{name} is gone in TF2: shims.{TO_SHIMS[name]} keeps "
                                        "its variable names and math")
            finding.replace(node, cst.parse_expression(f"shims.{TO_SHIMS[name]}"))
            finding.add_import("import shims")
            return
        renamed = upgrade_tables()["symbol_renames"].get(name)
        if renamed and not renamed.startswith("tf.contrib."):
            finding = self.report(node, f"{name} is {renamed} in TF2")
            finding.replace(node, ctx.tf(finding, renamed[len("tf."):]))
            return
        hint = next((HINTS[p] for p in sorted(HINTS, key=len, reverse=True)
                     if name == p or name.startswith(p + ".")), None)
        self.report(node, f"{name} is gone in TF2" + (f"; use {hint}" if hint else ""))
