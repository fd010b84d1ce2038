"""The Keras 3 target (``tf-migrate upgrade --keras 3``): the codemod's output and findings,
and the migrated code on TF 2.21 with Keras 3 and no tf_keras in the process, against real
TF 1.15 from the same checkpoint. A process that holds a Keras 3 model of its own and a
migrated TF1 model trains, saves and restores both."""
import json
import os
import subprocess
import sys

import pytest

import tf1_oracle
import tfm_cli

pytest.importorskip("tensorflow")

ENCODER = '''
import tensorflow as tf


def encoder(ids, training=False):
    """Token ids -> class logits, TF1 style: get_variable, functional layers, a raw Variable."""
    with tf.variable_scope("encoder"):
        table = tf.get_variable("embedding", [50, 8],
                                initializer=tf.random_normal_initializer(stddev=0.1))
        x = tf.reduce_mean(tf.nn.embedding_lookup(table, ids), axis=1)
        scale = tf.Variable(1.5, name="scale")
        h = tf.layers.dense(x, 16, activation=tf.nn.relu, name="hidden")
        h = tf.layers.batch_normalization(h, training=training, name="norm")
        h = tf.layers.dropout(h, 0.3, training=training)
        return tf.layers.dense(h * scale, 4, name="logits")
'''

# real TF 1.15: the variables moved off their initial values, the outputs, a checkpoint, and
# every variable after one SGD step on a cross-entropy loss
REFERENCE = '''
import os, sys
import numpy as np
import tensorflow as tf
with open("legacy.py", "w") as handle:
    handle.write(SOURCE)
sys.path.insert(0, os.getcwd())
import legacy

ids_value = np.random.RandomState(0).randint(0, 50, size=(6, 5)).astype("int32")
labels_value = np.arange(6, dtype="int32") % 4
ids = tf.placeholder(tf.int32, [None, 5])
labels = tf.placeholder(tf.int32, [None])
logits = legacy.encoder(ids, training=False)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
saver = tf.train.Saver()
with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    for v in tf.global_variables():  # off their initial values, so a missed load shows
        n = int(np.prod(v.shape.as_list()))
        session.run(v.assign(v + 0.01 * np.arange(n, dtype="float32").reshape(v.shape.as_list()) / max(1, n)))
    out = session.run(logits, {ids: ids_value})
    saver.save(session, "tf1/model")
    session.run(step, {ids: ids_value, labels: labels_value})
    after = {v.op.name: session.run(v) for v in tf.global_variables()}
np.save("outputs.npy", out)
np.savez("after_step.npz", **after)
'''

MIGRATED = '''
import json, os, sys
import numpy as np
sys.path.insert(0, os.environ["OUT"])
import legacy  # migrated: `import shims.keras3` first
import keras
import shims
import tensorflow as tf

tf1 = os.environ["TF1"]
ids = tf.constant(np.random.RandomState(0).randint(0, 50, size=(6, 5)).astype("int32"))
labels = np.arange(6, dtype="int32") % 4
layer = shims.legacy_layer(legacy.encoder)
layer(ids)
report = shims.load_tf1_checkpoint(layer, os.path.join(tf1, "tf1", "model"))
result = {"keras": keras.__version__, "layer_is_keras3": isinstance(layer, keras.layers.Layer),
          "variables": len(layer.variables), "trainable": len(layer.trainable_variables),
          "matched": len(report.matched)}
want = np.load(os.path.join(tf1, "outputs.npy"))
result["eager"] = float(np.abs(np.asarray(layer(ids)) - want).max())
result["traced"] = float(np.abs(np.asarray(tf.function(layer)(ids)) - want).max())

# one SGD step, as the TF1 program took it, compared by TF1 name
optimizer = keras.optimizers.SGD(0.1)
with tf.GradientTape() as tape:
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=layer(ids)))
optimizer.apply_gradients(zip(tape.gradient(loss, layer.trainable_variables), layer.trainable_variables))
after = np.load(os.path.join(tf1, "after_step.npz"))
names = {shims._names.canonical(path, True): v for path, v in shims.tracked_variables(layer)}
result["step_names"] = sorted(set(after.files) ^ set(names))
result["step"] = max(float(np.abs(np.asarray(names[k]) - after[k]).max()) for k in after.files)


class Classifier(keras.Model):
    """A Keras 3 model holding the migrated TF1 encoder."""

    def __init__(self):
        super().__init__()
        self.encoder = shims.legacy_layer(legacy.encoder)

    def call(self, ids, training=False):
        return self.encoder(ids, training=training)


own = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"),
                        keras.layers.Dense(4)])  # the process's own Keras 3 model
work = os.environ["WORK"]
fits = {}
for name, model, data in (("migrated", Classifier(), ids), ("own", own, tf.cast(ids, "float32") / 50)):
    model(data)
    before = [np.asarray(v).copy() for v in model.trainable_variables]
    model.compile(optimizer=keras.optimizers.SGD(0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(data, labels, epochs=8, batch_size=6, verbose=0).history["loss"]
    moved = sum(not np.array_equal(a, np.asarray(v)) for a, v in zip(before, model.trainable_variables))
    path = os.path.join(work, name + ".weights.h5")
    model.save_weights(path)
    ckpt = tf.train.Checkpoint(model=model).save(os.path.join(work, name, "ckpt"))
    fresh = Classifier() if name == "migrated" else keras.models.clone_model(own)
    fresh(data)
    fresh.load_weights(path)
    h5 = float(np.abs(np.asarray(fresh(data)) - np.asarray(model(data))).max())
    again = Classifier() if name == "migrated" else keras.models.clone_model(own)
    again(data)
    tf.train.Checkpoint(model=again).restore(ckpt).assert_existing_objects_matched()
    restored = float(np.abs(np.asarray(again(data)) - np.asarray(model(data))).max())
    fits[name] = {"first": history[0], "last": history[-1], "moved": moved,
                  "of": len(model.trainable_variables), "h5": h5, "checkpoint": restored}
result["fits"] = fits
result["tf_keras"] = "tf_keras" in sys.modules
result["legacy_env"] = os.environ.get("TF_USE_LEGACY_KERAS")
print("RESULT", json.dumps(result))
'''


def cli(*args, cwd=None):
    return tfm_cli.run(*args, cwd=cwd, default_keras=False, timeout=600)


def python(code, env=None, timeout=600):
    environ = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore", **(env or {}))
    environ.pop("TF_USE_LEGACY_KERAS", None) if "TF_USE_LEGACY_KERAS" not in (env or {}) else None
    return subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True,
                          timeout=timeout)


# -- the codemod -------------------------------------------------------------------
def test_upgrade_keras_3_output(tmp_path):
    (tmp_path / "legacy.py").write_text(ENCODER)
    out = cli("upgrade", tmp_path / "legacy.py", "--outtree", tmp_path / "out", "--keras", "3", "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    migrated = (tmp_path / "out" / "legacy.py").read_text()
    assert migrated.lstrip().startswith("import shims.keras3\nimport tensorflow as tf")
    assert "shims.dropout(h, rate=0.3, training=training)" in migrated  # no Keras 3 seed-state variable
    assert "compat.v1.layers" not in migrated and "tf.layers." not in migrated
    again = cli("upgrade", tmp_path / "out" / "legacy.py", "--keras", "3", "--no-cache")
    assert "0 would change" in again.stdout + again.stderr, again.stdout  # a second run: nothing
    default = cli("upgrade", tmp_path / "legacy.py", "--outtree", tmp_path / "two")  # cache may hit
    text = (tmp_path / "two" / "legacy.py").read_text()
    assert text.lstrip().startswith("import shims.keras2\nimport tensorflow as tf"), default.stderr
    assert "tf.keras.layers.Dropout" in text  # the default target keeps its own output


def test_keras_target_from_pyproject_and_bad_values(tmp_path):
    (tmp_path / "legacy.py").write_text(ENCODER)
    (tmp_path / "pyproject.toml").write_text('[tool.tf-migrate]\nkeras = 3\n')
    out = cli("upgrade", "legacy.py", "--outtree", "out", "--no-cache", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "out" / "legacy.py").read_text().lstrip().startswith("import shims.keras3")
    for bad in ("4", "three"):
        proc = cli("upgrade", "legacy.py", "--keras", bad, cwd=tmp_path)
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1 and "--keras must be 2" in lines[0], proc.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.tf-migrate]\nkeras = "2.5"\n')
    proc = cli("lint", "legacy.py", cwd=tmp_path)
    assert proc.returncode == 2 and "[tool.tf-migrate] keras must be 2" in proc.stderr


GRAPH_MODE_LAYERS = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
y = tf.layers.dense(x, 2, name="out")
sess = tf.Session()
sess.run(tf.global_variables_initializer())
feeds = {x: np.ones((2, 3), "float32")}
feeds[x] = np.zeros((2, 3), "float32")  # a feed_dict changed after it was built: kept in graph mode
print(sess.run(y, feed_dict=feeds))
'''

RENORM = '''
import tensorflow as tf


def head(x, training):
    return tf.layers.batch_normalization(x, renorm=True, training=training)
'''


def test_what_exists_in_tf_keras_only_is_an_error_for_keras_3(tmp_path):
    """A functional layer kept in graph mode is tf.compat.v1.layers (tf_keras only), and
    renorm exists in tf_keras's BatchNormalization only: for Keras 3 both are error
    findings, not a rewrite onto something Keras 3 lacks; the default target rewrites both."""
    for name, text, needle in (("graph.py", GRAPH_MODE_LAYERS, "tf_keras only"),
                               ("renorm.py", RENORM, "renorm")):
        source = tmp_path / name
        source.write_text(text)
        out = cli("upgrade", source, "--keras", "3", "--no-cache", "--format", "json")
        found = [f for f in json.loads(out.stdout)["findings"] if "tf.layers" in f["message"]]
        assert len(found) == 1 and not found[0]["fixable"], found
        assert needle in found[0]["message"] and "Keras 3" in found[0]["message"], found
        assert out.returncode == 1
        default = cli("upgrade", source, "--no-cache", "--format", "json")
        assert [f["fixable"] for f in json.loads(default.stdout)["findings"]
                if "tf.layers" in f["message"]] == [True]


# -- the runtime -------------------------------------------------------------------
def test_a_keras_3_module_stays_on_keras_3_and_a_mismatch_is_one_error():
    clean = python("import os, sys\nimport shims.keras3\nimport tensorflow as tf\n"
                   "layer = tf.keras.layers.Dense(2)\nimport shims\n"
                   "with shims.deterministic_random().scope():\n    tf.random.uniform([2])\n"
                   "print(type(layer).__module__, 'tf_keras' in sys.modules, "
                   "os.environ.get('TF_USE_LEGACY_KERAS'), shims.keras_generation(), "
                   "type(shims.legacy_layer(lambda x: x)).__mro__[1].__module__)")
    assert clean.returncode == 0, clean.stderr[-2000:]
    assert clean.stdout.split() == ["keras.src.layers.core.dense", "False", "None", "3",
                                    "keras.src.layers.layer"]
    legacy = python("import shims.keras3", env={"TF_USE_LEGACY_KERAS": "1"})
    assert legacy.returncode != 0
    assert "migrated for Keras 3 but tf.keras in this process is tf_keras" in legacy.stderr.splitlines()[-1]
    late = python("import tensorflow as tf\ntf.keras.layers.Dense\nimport shims.keras2")
    assert late.returncode != 0
    assert "migrated for Keras 2 but tf.keras in this process is Keras 3" in late.stderr.splitlines()[-1]
    # what a launcher that imports TensorFlow first (Ray Train's workers) needs: Keras 2 chosen
    # where the process starts
    assert "set TF_USE_LEGACY_KERAS=1 where the process starts" in late.stderr.splitlines()[-1]
    default = python("import sys\nimport shims\nimport tensorflow as tf\n"
                     "from tensorflow.keras.layers import Dense\n"
                     "print(tf.keras.layers.Dense.__module__, Dense.__module__, shims.keras_generation())")
    assert default.returncode == 0, default.stderr[-2000:]
    assert default.stdout.split() == ["tf_keras.src.layers.core.dense"] * 2 + ["2"]


@pytest.mark.slow
def test_migrated_tf1_model_on_keras_3_equals_tf_1_15_and_lives_with_a_keras_3_model(tmp_path):
    """From the TF 1.15 checkpoint the Keras 3 legacy layer gives TF 1.15's outputs (eagerly
    and traced), one SGD step moves every variable as TF 1.15's step did (by TF1 name);
    then, next to a Keras 3 model of the process's own, both train with fit, round-trip
    through .weights.h5 and tf.train.Checkpoint, and no tf_keras is ever imported."""
    source = tmp_path / "legacy.py"
    source.write_text(ENCODER)
    tf1 = tf1_oracle.saved(f"SOURCE = {ENCODER!r}\n" + REFERENCE)  # cached by the code
    out = cli("upgrade", source, "--outtree", tmp_path / "out", "--keras", "3", "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    work = tmp_path / "work"
    work.mkdir()
    proc = python(MIGRATED, env={"OUT": str(tmp_path / "out"), "TF1": tf1, "WORK": str(work)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.split("RESULT", 1)[1])
    assert result["keras"].startswith("3.") and result["layer_is_keras3"]
    # embedding, scale, hidden (2), norm (4), logits (2): TF1's ten, every one from the checkpoint
    assert (result["variables"], result["trainable"], result["matched"]) == (10, 8, 10), result
    assert result["eager"] <= 1e-5 and result["traced"] <= 1e-5, result
    assert result["step_names"] == [] and result["step"] <= 1e-5, result
    for name, fit in result["fits"].items():
        assert fit["last"] < fit["first"] and fit["moved"] == fit["of"], (name, fit)
        assert fit["h5"] == 0.0 and fit["checkpoint"] == 0.0, (name, fit)
    assert result["tf_keras"] is False and result["legacy_env"] is None


CELLS = '''
import tensorflow as tf


def sequences(x):
    """Every TF1 cell and wrapper shims.rnn3 has, through dynamic_rnn, under TF1 scopes."""
    with tf.variable_scope("stack"):
        stack = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(6),
                                             tf.nn.rnn_cell.GRUCell(5)])
        out, _ = tf.nn.dynamic_rnn(stack, x, dtype=tf.float32)
    with tf.variable_scope("clipped"):
        lstm = tf.nn.rnn_cell.LSTMCell(4, cell_clip=0.5, forget_bias=0.5, state_is_tuple=False)
        out2, state2 = tf.nn.dynamic_rnn(lstm, out, dtype=tf.float32)
    with tf.variable_scope("plain"):
        out3, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(3), out2, dtype=tf.float32)
    with tf.variable_scope("wrapped"):  # wrappers add no scope; keep 1.0 drops nothing
        cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.GRUCell(5)),
                                             input_keep_prob=1.0, output_keep_prob=1.0)
        out4, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.DeviceWrapper(cell, "/cpu:0"), out, dtype=tf.float32)
    joined = tf.concat([out3[:, -1], state2, out4[:, -1]], axis=1)
    return tf.contrib.layers.layer_norm(joined, begin_norm_axis=-1, begin_params_axis=-1)
'''

CELLS_REFERENCE = '''
import os, sys
import numpy as np
import tensorflow as tf
with open("legacy.py", "w") as handle:
    handle.write(SOURCE)
sys.path.insert(0, os.getcwd())
import legacy

x_value = np.random.RandomState(1).standard_normal((3, 7, 2)).astype("float32")
x = tf.placeholder(tf.float32, [None, 7, 2])
out = legacy.sequences(x)
with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    tf.train.Saver().save(session, "tf1/model")
    np.save("outputs.npy", session.run(out, {x: x_value}))
    with open("names.txt", "w") as handle:
        handle.write("\\n".join(sorted(v.op.name for v in tf.global_variables())))
'''

CELLS_MIGRATED = '''
import json, os, sys
import numpy as np
sys.path.insert(0, os.environ["OUT"])
import legacy
import shims
import tensorflow as tf

tf1 = os.environ["TF1"]
x = tf.constant(np.random.RandomState(1).standard_normal((3, 7, 2)).astype("float32"))
layer = shims.legacy_layer(legacy.sequences)
layer(x)
report = shims.load_tf1_checkpoint(layer, os.path.join(tf1, "tf1", "model"))
want = np.load(os.path.join(tf1, "outputs.npy"))
names = sorted(shims._names.canonical(p, True) for p, _ in shims.tracked_variables(layer))
import keras


class Wrap(keras.Model):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def call(self, x):
        return self.inner(x)


wrapped = Wrap(layer)
wrapped(x)
wrapped.save_weights(os.path.join(os.environ["WORK"], "cells.weights.h5"))
tf.train.Checkpoint(model=wrapped).save(os.path.join(os.environ["WORK"], "ckpt", "cells"))
print("RESULT", json.dumps({"names": names, "exact": [m[2] for m in report.matched],
                            "eager": float(np.abs(np.asarray(layer(x)) - want).max()),
                            "traced": float(np.abs(np.asarray(tf.function(layer)(x)) - want).max()),
                            "tf_keras": "tf_keras" in sys.modules}))
'''


@pytest.mark.slow
def test_tf1_rnn_cells_on_keras_3_equal_tf_1_15(tmp_path):
    """tf.nn.rnn_cell's cells become shims.rnn3's (tf_keras has TF1's cells; Keras 3 none) and
    tf.contrib.layers.layer_norm shims.layers3's (tf-slim's is tf_keras code): the same
    variable names as TF 1.15, its checkpoint loads by name alone, and the outputs of a
    stacked LSTM+GRU, a clipped LSTMCell with concatenated state and a BasicRNNCell through
    dynamic_rnn, layer-normalized, are TF 1.15's."""
    source = tmp_path / "legacy.py"
    source.write_text(CELLS)
    tf1 = tf1_oracle.saved(f"SOURCE = {CELLS!r}\n" + CELLS_REFERENCE)
    out = cli("upgrade", source, "--outtree", tmp_path / "out", "--keras", "3", "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    migrated = (tmp_path / "out" / "legacy.py").read_text()
    assert "shims.rnn3.MultiRNNCell" in migrated and "rnn_cell" not in migrated
    assert "shims.layers3.layer_norm" in migrated and "contrib" not in migrated
    proc = python(CELLS_MIGRATED, env={"OUT": str(tmp_path / "out"), "TF1": tf1, "WORK": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.split("RESULT", 1)[1])
    with open(os.path.join(tf1, "names.txt")) as handle:
        assert result["names"] == handle.read().split("\n")  # TF 1.15's names, all of them
    assert set(result["exact"]) == {"name"}, result["exact"]  # matched by TF1 name, not guessed
    assert result["eager"] <= 1e-5 and result["traced"] <= 1e-5, result
    assert result["tf_keras"] is False
    # Keras 3's files of the model holding it: every TF1 variable, by name, with TF 1.15's values
    for saved in (tmp_path / "cells.weights.h5", tmp_path / "ckpt" / "cells-1"):
        compare = cli("ckpt", "compare", os.path.join(tf1, "tf1", "model"), saved, "--format", "json")
        assert compare.returncode == 0, compare.stdout[-2000:] + compare.stderr


KERAS2_ONLY = '''
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
model.compile(optimizer=tf.train.AdamOptimizer(0.01), loss="mse")
tf.keras.models.save_model(model, "model_dir")
'''


DROPOUT = """
import sys
import numpy as np
import shims.keras3
import shims.rnn3 as rnn
import tensorflow as tf

x = tf.constant(np.random.RandomState(2).standard_normal((64, 4)).astype("float32"))
plain_cell = rnn.BasicLSTMCell(4, name="lstm")
dropped_cell = rnn.DropoutWrapper(plain_cell, output_keep_prob=0.5, state_keep_prob=0.5, seed=7)


def both(x):  # the same cell (its variables made once), plain and wrapped
    state = plain_cell.zero_state(64, tf.float32)
    kept_out, kept_state = plain_cell(x, state)
    out, new_state = dropped_cell(x, state)
    return kept_out, kept_state.c, kept_state.h, out, new_state.c, new_state.h


layer = shims.legacy_layer(both)
kept_out, kept_c, kept_h, out, new_c, new_h = [np.asarray(t) for t in layer(x)]
ratio = out / np.where(kept_out == 0, 1, kept_out)
values = set((np.round(ratio[kept_out != 0], 4) + 0.0).tolist())  # + 0.0: no -0.0
print("DROPOUT", sorted(values), float(np.mean(out == 0)), bool(np.allclose(new_c, kept_c)),
      bool(np.allclose(new_h, kept_h)), len(layer.variables), "tf_keras" in sys.modules)
"""


def test_rnn3_dropout_wrapper_drops_as_tf1(tmp_path):
    """TF 1.15's DropoutWrapper: an output is kept times 1/keep or zero, about half of them
    at keep 0.5; an LSTM state's h is dropped, its c never; no tf_keras."""
    proc = python(DROPOUT)
    line = [l for l in proc.stdout.splitlines() if l.startswith("DROPOUT")]
    assert line, proc.stderr[-3000:]
    text = line[0]
    assert text.startswith("DROPOUT [0.0, 2.0]"), text
    zeros = float(text.split("]")[1].split()[0])
    assert 0.35 < zeros < 0.65, text
    assert text.endswith("True False 2 False"), text  # kernel and bias, made once


def test_keras_2_only_programs_are_findings_for_keras_3(tmp_path):
    """A TF1 optimizer in Keras compile() and TF1's Keras saving run under tf_keras only: the
    default target rewrites them onto it (`import shims`), the Keras 3 target says so."""
    source = tmp_path / "legacy.py"
    source.write_text(KERAS2_ONLY)
    keras3 = json.loads(cli("upgrade", source, "--keras", "3", "--no-cache", "--format", "json").stdout)
    found = {f["code"]: f for f in keras3["findings"] if f["code"] in ("TFM116", "TFM117")}
    assert set(found) == {"TFM116", "TFM117"}, keras3["findings"]
    assert all(not f["fixable"] and "Keras 3" in f["message"] for f in found.values()), found
    default = json.loads(cli("upgrade", source, "--no-cache", "--format", "json").stdout)
    assert {f["code"] for f in default["findings"] if f["fixable"]} >= {"TFM116", "TFM117"}


PROGRAM = """
import atexit, os, runpy, sys
atexit.register(lambda: print("KERAS3_CHECK", "tf_keras" in sys.modules, os.environ.get("TF_USE_LEGACY_KERAS")))
sys.path.insert(0, os.path.dirname(os.environ["SOURCE"]))
sys.argv = [os.environ["SOURCE"], os.environ["MODEL_DIR"]]
runpy.run_path(os.environ["SOURCE"], run_name="__main__")
"""


SLIM_MODEL = """
import os, sys
import numpy as np
sys.path.insert(0, os.environ["OUT"])
import legacy
import keras
import shims
import tensorflow as tf

images = np.random.RandomState(0).rand(2, 16, 16, 3).astype("float32")
layer = shims.legacy_layer(legacy.build)
layer(images, is_training=True)
tf1 = {v.value.name: v for v in layer.variables}  # each Keras 3 variable keeps its TF1 variable
penalty = sum(1e-4 * float(tf.nn.l2_loss(v)) for name, v in tf1.items()
              if name.endswith("weights:0") and not name.startswith("logits"))  # logits: no arg_scope
inputs = keras.Input((16, 16, 3))
model = keras.Model(inputs, layer(inputs))
print("SLIM", len(layer.losses), float(sum(layer.losses)), penalty, float(sum(model.losses)),
      "tf_keras" in sys.modules, sorted(name for name in tf1 if "fc1/BatchNorm" in name))
"""


@pytest.mark.slow
def test_tf_slim_model_on_keras_3_equals_tf_1_15_without_tf_keras(tmp_path, tf1_python):
    """tf-slim model code (arg_scope, L2 penalties on its 4 layers, batch norm on conv and fully connected
    layers) migrated with --keras 3: outputs, gradients, variables and regularization loss
    equal to TF 1.15's from its checkpoint; its penalties are the Keras 3 layer's and model's
    losses, and the non-fused batch norm of the 2-D layer is TF 1.15's, without tf_keras."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    folder = os.path.join(root, "samples", "slim_cnn")
    out = cli("upgrade", os.path.join(folder, "legacy.py"), "--outtree", tmp_path / "out", "--keras", "3",
              "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "tf_keras" not in out.stdout
    report = json.loads(cli("verify", f"{folder}/legacy.py:build", f"{tmp_path}/out/legacy.py:build",
                            "--input", "images:2x16x16x3:float32", "--grads", "--format", "json",
                            "--workdir", tmp_path / "work", "--tf1-python", tf1_python).stdout)
    assert report["tf1_real"] and report["ok"], report
    assert report["regularization"]["ok"] and report["regularization"]["legacy"] > 0
    plain = python(SLIM_MODEL, env={"OUT": str(tmp_path / "out")})
    line = [l for l in plain.stdout.splitlines() if l.startswith("SLIM")]
    assert line, plain.stderr[-3000:]
    count, losses, penalty, model_losses, tf_keras, bn = line[0].split(" ", 6)[1:]
    assert int(count) == 4 and abs(float(losses) - float(penalty)) < 1e-6 and float(penalty) > 0
    assert abs(float(model_losses) - float(penalty)) < 1e-6
    assert tf_keras == "False"
    assert "fc1/BatchNorm/moving_mean:0" in bn and "fc1/BatchNorm/beta:0" in bn


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALL_PROGRAMS = sorted(f"samples/programs/{d}/legacy.py" for d in os.listdir(os.path.join(ROOT, "samples", "programs"))
                      if os.path.isfile(os.path.join(ROOT, "samples", "programs", d, "legacy.py"))) + \
    sorted(f"tests/programs/{f}" for f in os.listdir(os.path.join(ROOT, "tests", "programs")) if f.endswith(".py"))
ALL_SAMPLES = sorted(d for d in os.listdir(os.path.join(ROOT, "samples"))
                     if os.path.isfile(os.path.join(ROOT, "samples", d, "sample.json")))


@pytest.mark.slow
@pytest.mark.parametrize("legacy", ALL_PROGRAMS)
def test_programs_migrated_for_keras_3_equal_tf_1_15(legacy, tmp_path, tf1_python):
    """Every program we test (the program samples and the suite: a batch-norm CNN fed a
    boolean placeholder, an LSTM through dynamic_rnn, towers, tf-slim with summaries,
    Estimators, monitored sessions, queues, ...), migrated with --keras 3, prints and ends
    with what TF 1.15 printed and ended with, from the same initial values, with no tf_keras
    in the process."""
    source = os.path.join(ROOT, legacy)
    out = cli("upgrade", source, "--outtree", tmp_path / "out", "--keras", "3", "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    migrated = tmp_path / "out" / os.path.basename(source)
    text = migrated.read_text()
    # a module using shims declares Keras 3 first; a native one (no shims) runs on TF's own Keras
    assert "import shims.keras3" in text if "shims" in text else "tf.function" in text, text
    assert text.startswith(('"""', "import shims.keras3", "import")), text
    proc = cli("verify", source, migrated, "--program", "--tf1-python", tf1_python, "--program-arg", "{out}",
               "--tf1-cache", tf1_oracle.RESULTS, "--format", "json")
    report = json.loads(proc.stdout)
    assert report["ok"], report["first_difference"] or [v for v in report["variables"] if not v["ok"]]
    assert report["variables"]
    (tmp_path / "plain").mkdir()
    plain = python(PROGRAM, env={"SOURCE": str(migrated), "MODEL_DIR": str(tmp_path / "plain")})
    assert "KERAS3_CHECK False None" in plain.stdout, plain.stderr[-2000:]


SAMPLE_RUN = """
import json, os, sys
import numpy as np
sys.path.insert(0, os.environ["OUT"])
import shims.keras3  # a Keras 3 process (a module that needed no shims does not say so itself)
import legacy
spec = json.loads(os.environ["SPEC"])
inputs = []
for text in spec["inputs"]:  # name:shape:dtype[:low:high]
    name, shape, dtype = text.split(":")[:3]
    inputs.append(np.ones([int(n) for n in shape.split("x")], dtype))
layer = shims.legacy_layer(getattr(legacy, spec["entry"]))
layer(*inputs)
print("SAMPLE", len(layer.variables), shims.keras_generation(), "tf_keras" in sys.modules)
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ALL_SAMPLES)
def test_samples_migrated_for_keras_3_equal_tf_1_15(name, tmp_path, tf1_python):
    """Every model sample migrated with --keras 3: outputs, gradients, variables and
    regularization loss equal to TF 1.15's from its checkpoint (verify), and the migrated
    module runs in a process with no tf_keras."""
    folder = os.path.join(ROOT, "samples", name)
    spec = json.load(open(os.path.join(folder, "sample.json")))
    out = cli("upgrade", os.path.join(folder, "legacy.py"), "--outtree", tmp_path / "out", "--keras", "3",
              "--no-cache")
    assert out.returncode in (0, 1), out.stdout + out.stderr
    migrated = (tmp_path / "out" / "legacy.py").read_text()
    assert migrated.count("import shims.keras3") == (1 if "shims" in migrated else 0)
    args = ["verify", f"{folder}/legacy.py:{spec['entry']}", f"{tmp_path}/out/legacy.py:{spec['entry']}",
            "--grads", "--format", "json", "--workdir", tmp_path / "work", "--tf1-python", tf1_python]
    for text in spec["inputs"]:
        args += ["--input", text]
    proc = cli(*args)
    report = json.loads(proc.stdout)
    assert report["tf1_real"] and report["ok"], proc.stdout[-3000:]
    assert report["variables"]["legacy"] == report["variables"]["matched"] > 0
    plain = python(SAMPLE_RUN, env={"OUT": str(tmp_path / "out"), "SPEC": json.dumps(spec)})
    line = [l for l in plain.stdout.splitlines() if l.startswith("SAMPLE")]
    assert line, plain.stderr[-3000:]
    count, generation, tf_keras = line[0].split()[1:]
    assert int(count) == report["variables"]["legacy"] and generation == "3" and tf_keras == "False"


WHOLE_MODEL = """
import os, sys
import numpy as np
sys.path.insert(0, os.environ["OUT"])
import legacy
import keras
import shims

ids = np.random.RandomState(0).randint(0, 50, size=(6, 5)).astype("int32")
inputs = keras.Input((5,), dtype="int32")
model = keras.Model(inputs, shims.legacy_layer(legacy.encoder)(inputs))
model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
model.fit(ids, np.arange(6) % 4, epochs=2, verbose=0)
path = os.path.join(os.environ["WORK"], "model.keras")
model.save(path)
loaded = keras.models.load_model(path)
print("LOADED", float(np.abs(np.asarray(loaded(ids)) - np.asarray(model(ids))).max()),
      len(loaded.variables), len(model.variables), "tf_keras" in sys.modules)
"""


def test_a_keras_3_model_holding_a_migrated_tf1_function_saves_and_loads_whole(tmp_path):
    """model.save("m.keras") / keras.models.load_model: the legacy layer's config names its
    function (imported again at load), its build config the first inputs, so the loaded
    model has every variable and gives the same outputs."""
    (tmp_path / "legacy.py").write_text(ENCODER)
    out = cli("upgrade", tmp_path / "legacy.py", "--outtree", tmp_path / "out", "--keras", "3", "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    proc = python(WHOLE_MODEL, env={"OUT": str(tmp_path / "out"), "WORK": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split("LOADED", 1)[1].split() == ["0.0", "10", "10", "False"]


UNNAMED_LAYERS = '''
import numpy as np
import tensorflow as tf


def model(x, training):
    h = tf.layers.batch_normalization(x, training=training)
    h = tf.layers.dense(h, 3)
    return tf.layers.batch_normalization(h, training=training)


x = tf.placeholder(tf.float32, [None, 4])
training = tf.placeholder(tf.bool, [])
loss = tf.reduce_mean(tf.square(model(x, training)))
with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train, {x: np.ones((2, 4), "float32") * np.arange(2)[:, None], training: True})
    print("LOSS", sess.run(loss, {x: np.ones((2, 4), "float32"), training: True}))
'''


@pytest.mark.slow
def test_unnamed_keras_3_layers_in_a_program_keep_tf1_names(tmp_path, tf1_python):
    """Keras 3 numbers unnamed layers globally; in a converted program each one made through
    get_or_create_layer (shims.keras3.BatchNormalization included) takes TF1's name
    (batch_normalization, batch_normalization_1), so the final variables match TF 1.15's by
    name."""
    source = tmp_path / "legacy.py"
    source.write_text(UNNAMED_LAYERS)
    out = cli("upgrade", source, "--outtree", tmp_path / "out", "--keras", "3", "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    proc = cli("verify", source, tmp_path / "out" / "legacy.py", "--program", "--tf1-python", tf1_python,
               "--tf1-cache", tf1_oracle.RESULTS, "--format", "json")
    report = json.loads(proc.stdout)
    assert report["ok"], report["first_difference"] or [v for v in report["variables"] if not v["ok"]]
    assert {v["name"] for v in report["variables"]} >= {"batch_normalization/moving_mean",
                                                       "batch_normalization_1/gamma", "dense/kernel"}


HOISTED_LAYERS = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
h = tf.layers.dense(x, 8, tf.nn.relu)
h = tf.layers.dropout(h, 0.0)
pred = tf.layers.dense(h, 1)
loss = tf.reduce_mean(tf.square(pred - y))
train = tf.train.AdamOptimizer(0.01).minimize(loss)
xs = np.random.RandomState(0).rand(32, 3).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(5):
        print("LOSS", sess.run([train, loss], {x: xs, y: xs.sum(1, keepdims=True)})[1])
'''


@pytest.mark.slow
def test_unnamed_keras_3_layers_made_once_keep_tf1_names(tmp_path, tf1_python):
    """The layers of a script's graph made once, unnamed, before the GraphProgram step
    (``dense_layer_1 = tf.keras.layers.Dense(1)``): Keras 3 opens a layer's name scope
    again when it is called, so the graph made the second layer's scope unique
    (``dense_1_1``); its variables keep TF1's ``dense_1/*`` names, the shared initial values
    and the final variables match TF 1.15's."""
    source = tmp_path / "legacy.py"
    source.write_text(HOISTED_LAYERS)
    out = cli("upgrade", source, "--outtree", tmp_path / "out", "--keras", "3", "--no-cache")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "dense_layer_1 = tf.keras.layers.Dense(1)" in (tmp_path / "out" / "legacy.py").read_text()
    proc = cli("verify", source, tmp_path / "out" / "legacy.py", "--program", "--tf1-python", tf1_python,
               "--tf1-cache", tf1_oracle.RESULTS, "--format", "json")
    report = json.loads(proc.stdout)
    assert not report["init"]["not_used_by_migrated"] and not report["init"]["migrated_not_in_tf1"], report["init"]
    assert report["ok"], report["first_difference"] or [v for v in report["variables"] if not v["ok"]]
    assert {"dense_1/kernel", "dense_1/kernel/Adam"} <= {v["name"] for v in report["variables"]}
