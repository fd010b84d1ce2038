"""TFM116: TF1 Keras saving: save_model's HDF5 default, keras.experimental SavedModel export."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import arg, call, code, string_value
from migrate.codemod.rule import Rule
from migrate.codemod.signatures import bind, call_keywords, tf1_signature
from migrate.codemod.tables import upgrade_tables

SAVE = "tf.keras.models.save_model"
EXPORT = "tf.keras.experimental.export_saved_model"
LOAD = "tf.keras.experimental.load_from_saved_model"
H5 = (".h5", ".hdf5")  # the extensions that select HDF5 in every Keras


class KerasSaving(Rule):
    code = "TFM116"
    needle = (needles.Needle(("save_model", "export_saved_model", "load_from_saved_model")),
              needles.Needle(("tensorflow",)))
    summary = "TF1 Keras saving: save_model wrote HDF5, keras.experimental exported SavedModels"
    fixable = True
    explanation = """
In TF 1.15 `tf.keras.models.save_model(model, path)` writes one HDF5 file at `path`; in
TF2's tf_keras it writes a SavedModel folder there instead, and Keras 3 refuses a path
without `.keras`/`.h5`. TF1 code gets tf_upgrade_v2's transform (its table names the
argument: `save_format="h5"`) unless the path is a literal ending in `.h5`/`.hdf5`; the file
then imports `shims`, which selects tf_keras (TF 1.15's `tf.keras` was Keras 2; Keras 3 takes
no `save_format`).

`tf.keras.experimental.export_saved_model(model, path)` and `load_from_saved_model(path,
custom_objects)` are gone (also from `tf.compat.v1.keras.experimental`); TensorFlow's own
advice is `save_model(model, path, save_format="tf")` and `tf.keras.models.load_model(path,
custom_objects=...)`, which this rule writes (`custom_objects` is not needed to save).
`as_text`, `input_signature` and `serving_only` have no counterpart there: such calls are
error findings.
"""
    before = """
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
tf.keras.models.save_model(model, "weights/model")
"""
    after = """
import shims.keras2
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
tf.keras.models.save_model(model, "weights/model", save_format="h5")
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._saves = []  # save_model calls, decided once the whole file was seen
        self._tf1_keras = False  # the file calls a TF1-only Keras API

    def visit_Call(self, node: cst.Call) -> None:
        name = self.ctx.v1(node.func)
        keywords = call_keywords(node)
        signature = tf1_signature(name) if name in (SAVE, EXPORT, LOAD) else None
        if signature is None or keywords is None:
            return
        binding = bind(signature, keywords)
        if binding.problem:
            return  # not TF1's call: Python's error says why
        given = dict(zip(binding.params, node.args))
        if name == SAVE:
            self._saves.append((node, given))
            return
        self._tf1_keras = True
        if self.ctx.target.keras == 3:
            self._keras3(node, name)
            return
        if name == EXPORT:
            self._export(node, given)
        else:
            finding = self.report(node, f"{LOAD} is gone in TF2; tf.keras.models.load_model(path, "
                                        "custom_objects=...) loads the SavedModel (tf_keras)")
            function = self.ctx.tf(finding, "keras.models.load_model")
            finding.replace(node, lambda updated: updated.with_changes(func=function))
            finding.add_import("import shims")

    def leave_Module(self, original_node: cst.Module) -> None:
        """save_model(model, path) is TF1's where the file is TF1 code: TF1-only APIs, a
        TF1-only Keras call here, or a TF1 Keras initializer call (TFM115)."""
        if self._saves and (self._tf1_keras or self.ctx.is_tf1_file() or
                            any(f.code == "TFM115" for f in self.ctx.findings)):
            for node, given in self._saves:
                self._save(node, given)

    def _keras3(self, node: cst.Call, name: str) -> None:
        """What TF 1.15 wrote and read here is tf_keras's (HDF5 by default, a SavedModel);
        Keras 3 saves `.keras`/`.weights.h5` and loads neither a TF1 SavedModel nor a
        format-less path: said, not rewritten onto tf_keras."""
        self.report(node, f"{name} under the Keras 3 target: TF 1.15 wrote HDF5 or a SavedModel "
                          "here, which Keras 3 does not read or write that way; save with "
                          "model.save('model.keras') / save_weights('x.weights.h5') (and convert "
                          "old files once under Keras 2), or migrate this file for Keras 2")

    def _save(self, node: cst.Call, given) -> None:
        if self.ctx.target.keras == 3:
            self._keras3(node, SAVE)
            return
        transform = upgrade_tables().get("transforms", {}).get(SAVE, {})
        keyword, value = transform.get("arg_name"), transform.get("arg_value")
        path = string_value(given["filepath"].value)
        if keyword is None or keyword in given or (path is not None and path.lower().endswith(H5)):
            return
        finding = self.report(node, f"{SAVE}(model, {code(given['filepath'].value)}) wrote HDF5 in "
                                    f"TF 1.15 (a SavedModel folder in TF2): {keyword}={value!r} keeps "
                                    "that, under tf_keras (import shims)")
        added = arg(cst.SimpleString(f'"{value}"'), keyword)
        finding.replace(node, lambda updated: updated.with_changes(
            args=[*updated.args[:-1], updated.args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT), added]))
        finding.add_import("import shims")

    def _export(self, node: cst.Call, given) -> None:
        extra = sorted(set(given) - {"model", "saved_model_path", "custom_objects"})
        if extra:
            self.report(node, f"error: {EXPORT} is gone in TF2, and tf.keras.models.save_model("
                              f"save_format='tf') has no {', '.join(p + '=' for p in extra)}; "
                              "export with tf.saved_model.save(model, path, signatures=...)")
            return
        finding = self.report(node, f"{EXPORT} is gone in TF2; tf.keras.models.save_model(model, path, "
                                    "save_format=\"tf\") writes the SavedModel (tf_keras)")
        function = self.ctx.tf(finding, "keras.models.save_model")
        model, path = (node.args.index(given[p]) for p in ("model", "saved_model_path"))
        finding.replace(node, lambda updated: call(function, [
            arg(updated.args[model].value), arg(updated.args[path].value),
            arg(cst.SimpleString('"tf"'), "save_format")]))
        finding.add_import("import shims")
