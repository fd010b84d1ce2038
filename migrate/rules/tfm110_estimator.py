"""TFM110: tf.estimator (removed in TF 2.16) -> shims.estimator."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import code
from migrate.codemod.resolver import v1name
from migrate.codemod.rule import SymbolRule
from migrate.codemod.shared import in_graph_mode, target

# estimator APIs with no shims home: the Keras way to do the same
KERAS_INSTEAD = {
    "tf.estimator.DNN": "a tf.keras.Sequential of Dense layers with compile()/fit()",
    "tf.estimator.Linear": "a tf.keras.Sequential([tf.keras.layers.Dense(units)]) with compile()/fit()",
    "tf.estimator.BoostedTrees": "tensorflow_decision_forests or a gradient-boosting library",
    "tf.estimator.Baseline": "a constant prediction (the label mean) computed with numpy",
    "tf.estimator.export": "tf.saved_model.save on a tf.Module with a tf.function signature",
    "tf.estimator.experimental": "a Keras model trained with fit() (tf.keras.callbacks)",
    "tf.estimator.tpu": "tf.distribute.TPUStrategy with a Keras model",
    "tf.estimator.WarmStartSettings": "Estimator(warm_start_from=<checkpoint path>)",
    "tf.estimator.add_metrics": "eval_metric_ops in your model_fn",
    "tf.estimator": "a Keras model trained with fit()",
    "tf.contrib.learn": "shims.estimator for model_fn Estimators, or a Keras model with fit()",
}
ESTIMATOR = needles.Needle(("estimator", "Estimator", "SessionRun", "TensorHook", "StopAtStepHook",
                            "CheckpointSaverHook", "ModeKeys", "SessionCreator"))


class EstimatorRule(SymbolRule):
    code = "TFM110"
    needle = ESTIMATOR
    summary = "tf.estimator was removed in TF 2.16: model_fn Estimators run on shims.estimator"
    fixable = True
    explanation = """
TensorFlow 2.16 removed tf.estimator (tensorflow-estimator stops at 2.15), so TF1 programs
built on model_fn fail at import. shims.estimator runs them on today's TensorFlow with TF
1.15's semantics: Estimator(model_fn, model_dir, config, params) with train (resuming from
model_dir, max_steps), evaluate (tf.compat.v1.metrics over the input, mean loss,
global_step), predict (one dict per example), get_variable_value; EstimatorSpec, ModeKeys,
RunConfig, TrainSpec/EvalSpec/train_and_evaluate, inputs.numpy_input_fn, the common hooks
and the TPU names (TPUEstimator with use_tpu=False). Checkpoints keep their TF1 names, so
an old Estimator's model_dir resumes. `tf.estimator.*`, `tf.compat.v1.estimator.*`,
`from tensorflow.compat.v1 import estimator`, `tf.contrib.tpu.TPUEstimator*`,
`tf.contrib.learn.ModeKeys` and the SessionRunHook family are rewritten, and so are
tensorflow-estimator's own paths (`tensorflow_estimator.python.estimator.tpu.tpu_estimator
.TPUEstimator`, read from TF 1.15). Canned estimators (DNNClassifier, LinearRegressor,
BoostedTrees, ...) and export are reported as errors with the Keras way to do the same; an
import of the estimator module one use of which stays (TF 2.21 has no
tf.compat.v1.estimator: the line would fail and every module importing this one) names
shims.estimator instead, so only that use fails, when it runs.
"""
    before = """
import tensorflow as tf

estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)
"""
    after = """
import shims

estimator = shims.estimator.Estimator(model_fn=model_fn, model_dir=model_dir)
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._module_imports: list = []  # (statement, local name) binding the tf.estimator module
        self._left: set = set()  # local names with a use shims.estimator does not provide
        self._shim_locals: set = set()  # names bound to shims.estimator (a migrated import)

    # -- import lines: `from tensorflow.compat.v1 import estimator as tf_estimator` ---------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            if alias.asname is not None and code(alias.name) == "shims.estimator":
                self._shim_locals.add(alias.asname.name.value)
            if alias.asname is not None and v1name(code(alias.name)) == "tf.estimator":
                self._module_imports.append((node, alias.asname.name.value))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = code(node.module)
        for alias in node.names:
            if module == "shims" and code(alias.name) == "estimator":
                self._shim_locals.add(alias.asname.name.value if alias.asname else "estimator")
            if v1name(f"{module}.{code(alias.name)}") == "tf.estimator":
                local = alias.asname.name.value if alias.asname else code(alias.name)
                self._module_imports.append((node, local))

    def leave_Module(self, node: cst.Module) -> None:
        """An import of the estimator module one use of which stays: TF 2.21 has no
        tf.compat.v1.estimator, so the line fails and with it every module importing this
        one. It names shims.estimator instead: the module imports, and only the uses
        reported above fail, when they run."""
        for statement, local in self._module_imports:
            if local not in self._left:
                continue  # every use moved: the engine drops the import
            if len(statement.names) != 1:
                self.report(statement, f"error: tf.estimator is gone in TF 2.16+: this import fails; "
                                       f"import shims.estimator as {local} on a line of its own")
                continue
            finding = self.report(statement, f"tf.estimator is gone in TF 2.16+: this import would fail; "
                                             f"{local} names shims.estimator now (its uses that "
                                             "shims.estimator does not provide are errors)")
            finding.replace(statement, cst.ImportFrom(module=cst.Name("shims"), names=[cst.ImportAlias(
                cst.Name("estimator"),
                asname=None if local == "estimator" else cst.AsName(cst.Name(local)))]))
            finding.add_import("import shims")

    def check(self, node) -> None:
        name = self.ctx.v1(node)
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if not name and isinstance(root, cst.Name) and root.value in self._shim_locals \
                and root is not node and not self.ctx.resolver.qualname(root):
            # a migrated import (above): what it does not provide stays an error on every run
            name = "tf.estimator" + code(node)[len(root.value):]
            if target(name) is not None:
                return
        if not name:
            return
        if isinstance(root, cst.Name) and root.value in {local for _, local in self._module_imports} \
                and target(name) is None and not name.startswith("tf.train."):
            self._left.add(root.value)
        new = target(name)
        if new is not None and name.startswith("tf.train.") and in_graph_mode(self.ctx):
            # a hook in graph-mode code runs in TF's own monitored session, which TF 2.21
            # still has: tf.compat.v1.train.*, not shims.estimator's eager hooks
            if "compat" not in code(node):
                finding = self.report(node, f"{name} is tf.compat.v1.{name[3:]} in TF2 graph mode "
                                            "(TF's own monitored session runs it)")
                finding.replace(node, self.ctx.tf(finding, "compat.v1." + name[3:]))
            return
        if new is not None:
            finding = self.report(node, f"{name} is gone in TF 2.16+: shims.{new.split('(')[0]} "
                                        "runs it with TF 1.15's semantics")
            finding.replace(node, cst.parse_expression(f"shims.{new}"))
            finding.add_import("import shims")
            return
        if name.startswith("tf.keras.estimator"):
            self.report(node, f"error: {name} is gone in TF 2.16+ (no Estimator to convert to); "
                              "train the Keras model itself with compile()/fit() and "
                              "tf.keras.callbacks.ModelCheckpoint")
            return
        if name == "tf.estimator" or name.startswith("tf.estimator."):
            hint = next(KERAS_INSTEAD[p] for p in sorted(KERAS_INSTEAD, key=len, reverse=True)
                        if name.startswith(p))
            self.report(node, f"error: {name} is gone in TF 2.16+ and shims.estimator does not "
                              f"provide it; use {hint}")
