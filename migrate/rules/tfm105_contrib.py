"""TFM105: tf.contrib is gone in TF2."""
import libcst as cst

from migrate import needles
from migrate.cstutil import code
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
    "tf.contrib.staging": "dataset.prefetch() (no TF2 home for StagingArea)",
    "tf.contrib.boosted_trees": "tensorflow_decision_forests (no TF2 home)",
    "tf.contrib.factorization": "a Keras model (no TF2 home; k-means: scikit-learn)",
    "tf.contrib.tensor_forest": "tensorflow_decision_forests (no TF2 home)",
    "tf.contrib.tfprof": "tf.profiler.experimental",
}


def _hint(name: str):
    return next((HINTS[p] for p in sorted(HINTS, key=len, reverse=True)
                 if name == p or name.startswith(p + ".")), None)


def _slim_module(module: str):
    """``tf_slim...`` for a contrib.slim module path, else None."""
    for prefix in ("tensorflow.contrib.slim.python.slim", "tensorflow.contrib.slim"):
        if module == prefix or module.startswith(prefix + "."):
            return "tf_slim" + module[len(prefix):]
    return None


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

    # -- import lines: `import tensorflow.contrib.slim as slim` fails before any use ------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = code(alias.name)
            if module == "tensorflow.contrib" or module.startswith("tensorflow.contrib."):
                self._import_line(node, module, alias.asname.name.value if alias.asname else None)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = code(node.module)
        if not (module == "tensorflow.contrib" or module.startswith("tensorflow.contrib.")):
            return
        for alias in node.names:
            full = f"{module}.{code(alias.name)}"
            local = alias.asname.name.value if alias.asname else code(alias.name)
            self._import_line(node, full, local, from_import=True)

    def _import_line(self, node, module: str, local, from_import: bool = False) -> None:
        slim = _slim_module(module)
        if slim is not None:  # the maintained tf-slim package has the same API
            statement = self.ctx.statement()
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                    and len(node.names) == 1:
                finding = self.report(node, f"{module} is gone in TF2; the tf-slim package "
                                            f"(pip install tf-slim) is its maintained home")
                if from_import and "." in slim:
                    parent, _, leaf = slim.rpartition(".")
                    new = f"from {parent} import {leaf}" + (f" as {local}" if local != leaf else "")
                else:
                    new = f"import {slim}" + (f" as {local}" if local else "")
                finding.replace(statement, cst.parse_statement(new + "\n").with_changes(
                    leading_lines=statement.leading_lines))
                self.ctx.shared.setdefault("tfm105_slim", set()).add(local or module.split(".")[0])
                return
        self.ctx.shared.setdefault("tfm105_imports", []).append((node, module, local))

    def leave_Module(self, node: cst.Module) -> None:
        """An import line of a contrib module some use of which could not be moved: it
        fails on TF2 at import, so it gets an error finding naming the replacement."""
        unfixed = self.ctx.shared.get("tfm105_unfixed", set())
        for statement, module, local in self.ctx.shared.get("tfm105_imports", []):
            if local is None or local in unfixed or local.split(".")[0] in unfixed:
                name = "tf." + module[len("tensorflow."):]
                hint = _hint(name)
                self.report(statement, f"error: {module} is gone in TF2: this import fails"
                                       + (f"; use {hint}" if hint else ""))

    def check(self, node) -> None:
        ctx = self.ctx
        name = ctx.v1(node)
        if not name or not (name == "tf.contrib" or name.startswith("tf.contrib.")):
            return
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        local = root.value if isinstance(root, cst.Name) else None
        if name.startswith("tf.contrib.slim") and local in ctx.shared.get("tfm105_slim", set()):
            return  # its import now names tf_slim, which has the same API
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
        if name.startswith("tf.contrib.slim.") and local == self.ctx.resolver.tf_alias():
            finding = self.report(node, f"{name} is gone in TF2; the tf-slim package "
                                        "(pip install tf-slim) has it")
            finding.replace(node, cst.parse_expression("tf_slim." + name[len("tf.contrib.slim."):]))
            finding.add_import("import tf_slim")
            return
        hint = _hint(name)
        ctx.shared.setdefault("tfm105_unfixed", set()).add(local)
        self.report(node, f"{name} is gone in TF2" + (f"; use {hint}" if hint else ""))
