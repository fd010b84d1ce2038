"""tf_upgrade_v2's wrong and missed cases, run: each TF1 module runs on real TF 1.15 and
its migration on TF 2.21 (default Keras), and both print the same numbers. Also: the TF1
signatures the rewrites bind against are TF 1.15's own."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tf1_oracle
from migrate.codemod.engine import transform
from migrate.codemod.rule import all_rules

pytest.importorskip("tensorflow")

# a module of functions returning tensors; TF1 runs them in a graph, TF2 eagerly
OPS = '''
import numpy as np
import tensorflow as tf


def fingerprints():
    return tf.train.sdca_fprint(tf.constant(["alpha", "beta", "gamma"]))


def concatenated():
    a = tf.SparseTensor(indices=[[0, 0], [1, 1]], values=[1.0, 2.0], dense_shape=[2, 2])
    b = tf.SparseTensor(indices=[[0, 0]], values=[3.0], dense_shape=[2, 3])
    joined = tf.sparse_concat(1, [a, b], expand_nonconcat_dim=True)
    return tf.sparse_tensor_to_dense(joined)


def top_k_hits(logits, labels):
    with tf.variable_scope("metrics"):
        return tf.nn.in_top_k(logits, labels, 2)


def masked(values, mask):
    return tf.boolean_mask(values, mask, "kept")


def xent(labels, logits):
    return tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=-1)
'''

LOGITS = [[0.1, 2.0, 0.3, -1.0], [1.5, 0.2, 0.1, 3.0]]
LABELS = [[0.0, 1.0, 0.0, 0.0], [0.2, 0.0, 0.0, 0.8]]

TF1_OPS = '''
import json, runpy, sys
import numpy as np
import tensorflow as tf
m = runpy.run_path(sys.argv[1])
LOGITS, LABELS = json.loads(sys.argv[2])
labels = tf.constant(LABELS)
loss = m["xent"](labels, tf.constant(LOGITS))
grad = tf.gradients(tf.reduce_sum(loss), [labels])[0]
fetch = {"fprint": m["fingerprints"](), "concat": m["concatenated"](),
         "hits": m["top_k_hits"](tf.constant(LOGITS), tf.constant([1, 0])),
         "masked": m["masked"](tf.constant([1.0, 2.0, 3.0]), tf.constant([True, False, True])),
         "loss": loss}
with tf.Session() as session:
    out = session.run(fetch)
out = {k: np.asarray(v).tolist() for k, v in out.items()}
out["label_gradient"] = None if grad is None else "flows"
print(json.dumps(out))
'''

TF2_OPS = '''
import json, runpy, sys
import numpy as np
import tensorflow as tf
m = runpy.run_path(sys.argv[1])
LOGITS, LABELS = json.loads(sys.argv[2])
labels = tf.constant(LABELS)
with tf.GradientTape() as tape:
    tape.watch(labels)
    loss = m["xent"](labels, tf.constant(LOGITS))
grad = tape.gradient(tf.reduce_sum(loss), labels)
out = {"fprint": m["fingerprints"](), "concat": m["concatenated"](),
       "hits": m["top_k_hits"](tf.constant(LOGITS), tf.constant([1, 0])),
       "masked": m["masked"](tf.constant([1.0, 2.0, 3.0]), tf.constant([True, False, True])),
       "loss": loss}
out = {k: np.asarray(v).tolist() for k, v in out.items()}
out["label_gradient"] = None if grad is None else "flows"
print(json.dumps(out))
'''

# contrib.summary in TF1's eager mode, read back from the event files
SUMMARIES = '''
import sys
import numpy as np
import tensorflow as tf
tf.enable_eager_execution()

logdir = sys.argv[1]
step = tf.train.get_or_create_global_step()
writer = tf.contrib.summary.create_file_writer(logdir)
with writer.as_default(), tf.contrib.summary.always_record_summaries():
    for i in range(3):
        tf.contrib.summary.scalar("loss", 1.0 / (i + 1))
        tf.contrib.summary.histogram("weights", tf.constant([1.0, 2.0, float(i)]))
        tf.contrib.summary.scalar("fixed", 5.0, step=100 + i)
        step.assign_add(1)
with writer.as_default(), tf.contrib.summary.never_record_summaries():
    tf.contrib.summary.scalar("never", 1.0)
writer.flush()
'''

READ_EVENTS = '''
import glob, json, sys
import numpy as np
import tensorflow as tf
from tensorflow.python.framework import tensor_util
iterate = tf.compat.v1.train.summary_iterator  # TF 1.15 and TF 2.21 both have it
rows = []
for path in sorted(glob.glob(sys.argv[1] + "/events.out.tfevents.*")):
    for event in iterate(path):
        for value in event.summary.value:
            if value.HasField("simple_value"):
                data = [value.simple_value]
            elif value.HasField("histo"):  # TF1's histogram: count, smallest, largest
                data = [value.histo.num, value.histo.min, value.histo.max]
            else:
                data = np.asarray(tensor_util.MakeNdarray(value.tensor))
                if data.ndim == 2 and data.shape[1] == 3:  # TF2's buckets: left, right, count
                    data = [data[:, 2].sum(), data[0, 0], data[-1, 1]]
                data = np.asarray(data).ravel().tolist()
            rows.append([value.tag, int(event.step), [round(float(d), 5) for d in data]])
print(json.dumps(sorted(rows)))
'''


def migrate(source: str) -> str:
    outcome = transform(textwrap.dedent(source), list(all_rules().values()))
    assert not [f for f in outcome.findings if f.message.startswith("error:")], outcome.findings
    assert outcome.new_source is not None
    return outcome.new_source


def run_tf2(code, *args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    env.pop("TF_USE_LEGACY_KERAS", None)
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_changed_bindings_compute_what_tf1_computed(tmp_path, tf1_python):
    original, migrated = tmp_path / "ops_tf1.py", tmp_path / "ops_tf2.py"
    original.write_text(OPS)
    new = migrate(OPS)
    migrated.write_text(new)
    assert "tf.raw_ops.SdcaFprint(input=" in new
    assert "tf.nn.in_top_k(predictions=logits, targets=labels, k=2)" in new
    assert 'tf.boolean_mask(values, mask, name="kept")' in new
    assert "labels=tf.stop_gradient(labels)" in new
    data = json.dumps([LOGITS, LABELS])
    tf1 = json.loads(tf1_oracle.run(TF1_OPS, original, data))
    tf2 = json.loads(run_tf2(TF2_OPS, migrated, data))
    assert tf1["label_gradient"] is None  # TF 1.15 stops the gradient into labels
    assert tf2.pop("label_gradient") is None
    assert tf2.pop("fprint") == tf1.pop("fprint") and tf2.pop("hits") == tf1.pop("hits")
    del tf1["label_gradient"]
    assert tf2.keys() == tf1.keys()
    for key in tf1:
        assert np.allclose(tf2[key], tf1[key], atol=1e-6), key


def test_contrib_summaries_write_what_tf1_wrote(tmp_path, tf1_python):
    original, migrated = tmp_path / "summaries_tf1.py", tmp_path / "summaries_tf2.py"
    original.write_text(SUMMARIES)
    new = migrate(SUMMARIES)
    migrated.write_text(new)
    assert "tf.enable_eager_execution" not in new and "contrib" not in new
    tf1_logs, tf2_logs = tmp_path / "tf1", tmp_path / "tf2"
    tf1_oracle.run_script(original, tf1_logs)
    run_tf2(tf1_oracle.AS_SCRIPT, migrated, tf2_logs)
    tf1 = json.loads(tf1_oracle.run(READ_EVENTS, tf1_logs))
    tf2 = json.loads(run_tf2(READ_EVENTS, tf2_logs))
    assert [r for r in tf1 if r[0] == "loss"] == [["loss", 0, [1.0]], ["loss", 1, [0.5]],
                                                   ["loss", 2, [0.33333]]]
    assert not [r for r in tf1 if r[0] == "never"]
    assert tf2 == tf1


TF1_SIGNATURES = '''
import inspect, json, sys
import tensorflow as tf
out = {}
for name in json.load(open(sys.argv[1])):
    obj = tf
    try:
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
        params = inspect.signature(obj).parameters.values()
    except Exception:
        continue
    out[name] = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
print(json.dumps(out))
'''


def test_tf1_signatures_are_tf_1_15s(tmp_path, tf1_python):
    """The rewrites bind calls by TF1 position: the generated table's positional order is
    TF 1.15's, checked name by name here with inspect (TF 2.21's tf.compat.v1 got 75 of 889
    wrong: its keras is Keras 3, and ops gained parameters)."""
    from migrate.codemod.signatures import tf1_signature
    from migrate.codemod.tables import upgrade_tables

    names = sorted(upgrade_tables()["tf1_signatures"])
    listing = tmp_path / "names.json"
    listing.write_text(json.dumps(names))
    real = json.loads(tf1_oracle.run(TF1_SIGNATURES, listing))
    assert len(real) > 0.9 * len(names)
    differ = {n: (list(tf1_signature(n).positional), real[n]) for n in real
              if list(tf1_signature(n).positional) != real[n]}
    assert not differ, differ


NEST = '''
import collections
import json

import tensorflow as tf
from tensorflow.contrib.framework.python.ops import add_arg_scope, arg_scope

nest = tf.contrib.framework.nest
Pair = collections.namedtuple("Pair", "a b")


@add_arg_scope
def scaled(x, factor=1):
    return x * factor


def describe(structure):
    if not nest.is_sequence(structure):
        return [structure]
    return tf.contrib.framework.nest.flatten(structure)


structures = [3, "text", [1, [2, 3]], {"b": 1, "a": (2, 3)}, Pair(a=1, b=[2])]
with arg_scope([scaled], factor=10):
    scaled_value = scaled(2)
print(json.dumps({"flat": [describe(s) for s in structures],
                  "sequence": [nest.is_sequence(s) for s in structures],
                  "packed": nest.pack_sequence_as([0, [0, 0]], [4, 5, 6]),
                  "scaled": scaled_value}))
'''


def test_contrib_nest_and_deep_contrib_paths_behave_as_tf1(tmp_path, tf1_python):
    original, migrated = tmp_path / "nest_tf1.py", tmp_path / "nest_tf2.py"
    original.write_text(NEST)
    new = migrate(NEST)
    migrated.write_text(new)
    assert "contrib" not in new.replace("shims.contrib", "")
    tf1 = json.loads(tf1_oracle.run_script(original))
    tf2 = json.loads(run_tf2(tf1_oracle.AS_SCRIPT, migrated))
    assert tf1["scaled"] == 20 and tf1["sequence"][:2] == [False, False]
    assert tf2 == tf1


# tf_upgrade_v2's missed cases: TF1 Keras initializers with TF1 arguments, functions whose
# TF2 counterparts take other arguments or run other ops, read by TF1 code
MISSED_OPS = '''
import numpy as np
import tensorflow as tf

IMAGE = np.arange(2 * 8 * 8, dtype=np.float32).reshape(2, 8, 8, 1) / 100.0
KERNEL = (np.arange(9, dtype=np.float32).reshape(3, 3, 1) - 4.0) / 10.0
LOGITS = np.log(np.array([[[0.5, 0.3, 0.2]], [[0.4, 0.4, 0.2]], [[0.1, 0.6, 0.3]],
                          [[0.6, 0.2, 0.2]]], dtype=np.float32))


def initial_values():
    with tf.variable_scope("init"):
        inits = {"zeros": tf.keras.initializers.Zeros(tf.float64),
                 "normal": tf.keras.initializers.RandomNormal(0.0, 1.0, 3, tf.float32),
                 "uniform": tf.keras.initializers.RandomUniform(seed=4, dtype=tf.float64),
                 "glorot": tf.keras.initializers.glorot_uniform(5, tf.float32),
                 "constant": tf.keras.initializers.Constant(2.5, tf.float32, False)}
        return {name: init([2, 3]) for name, init in inits.items()}


def morphology():
    return {"erosion": tf.nn.erosion2d(IMAGE, KERNEL, [1, 1, 1, 1], [1, 2, 2, 1], "SAME"),
            "dilation": tf.nn.dilation2d(IMAGE, KERNEL, [1, 2, 2, 1], [1, 1, 1, 1], "VALID")}


def glimpses():  # TF2's extract_glimpse runs another op: other glimpses for these offsets
    offsets = tf.constant([[1.0, 2.0], [3.0, 1.0]])
    return {"glimpse": tf.image.extract_glimpse(IMAGE, [3, 3], offsets, centered=False,
                                                normalized=False, uniform_noise=False)}


def pooling():
    out, rows, cols = tf.nn.fractional_max_pool(IMAGE, [1.0, 1.44, 1.73, 1.0], False, False,
                                                True, 7, 8)
    return {"pooled": out, "rows": rows, "cols": cols}


def decoding():
    decoded, log_probs = tf.nn.ctc_beam_search_decoder(LOGITS, [4], 3, 1, False)
    return {"decoded": tf.sparse.to_dense(decoded[0]), "log_probs": log_probs}
'''

# no TF1-only API here: the arguments alone say these calls are TF1's
SAME_NAMES = '''
import tensorflow as tf


def same_name_initializers():
    return {"zeros_same": tf.zeros_initializer(tf.float64)([2]),
            "ones_same": tf.ones_initializer(dtype=tf.float64)([2]),
            "uniform_same": tf.random_uniform_initializer(0.0, 1.0, 3, tf.float64)([3])}
'''

RUN_FUNCTIONS = '''
import json, runpy, sys
import numpy as np
import tensorflow as tf
out = {}
for path in sys.argv[1:]:
    for name, fn in sorted(runpy.run_path(path).items()):
        if callable(fn) and getattr(fn, "__module__", None) == "<run_path>" and not name[0].isupper():
            out.update(fn())
if not tf.executing_eagerly():
    with tf.compat.v1.Session() as session:
        out = session.run(out)
print(json.dumps({k: [str(np.asarray(v).dtype), np.asarray(v).tolist()] for k, v in out.items()}))
'''


def test_initializers_and_transformed_ops_compute_what_tf1_computed(tmp_path, tf1_python):
    paths = []
    for name, source in (("ops", MISSED_OPS), ("same", SAME_NAMES)):
        original, migrated = tmp_path / f"{name}_tf1.py", tmp_path / f"{name}_tf2.py"
        original.write_text(source)
        migrated.write_text(migrate(source))
        paths.append((original, migrated))
    new = "\n".join(m.read_text() for _, m in paths)
    assert "tf.keras.initializers" not in new  # every call above passed TF1 arguments
    assert "tf.compat.v1.random_normal_initializer(mean=0.0, stddev=1.0, seed=3, dtype=tf.float32)" in new
    assert "tf.compat.v1.random_uniform_initializer(seed=4, dtype=tf.float64, minval=-0.05, maxval=0.05)" in new
    for name in ("nn.erosion2d", "nn.dilation2d", "image.extract_glimpse", "nn.fractional_max_pool",
                 "nn.ctc_beam_search_decoder", "zeros_initializer", "ones_initializer",
                 "random_uniform_initializer"):
        assert f"tf.compat.v1.{name}(" in new, name
    tf1 = json.loads(tf1_oracle.run(RUN_FUNCTIONS, *(o for o, _ in paths)))
    tf2 = json.loads(run_tf2(RUN_FUNCTIONS, *(m for _, m in paths)))
    assert sorted(tf2) == sorted(tf1) and len(tf1) == 16
    for key in tf1:
        assert tf2[key][0] == tf1[key][0], key  # the dtype TF1's arguments asked for
        assert np.allclose(tf2[key][1], tf1[key][1], atol=1e-6), key  # seeded values too


def test_constant_initializer_read_two_ways_is_an_error_finding():
    outcome = transform("import tensorflow as tf\ninit = tf.constant_initializer(1.0, tf.float32)\n",
                        list(all_rules().values()))
    assert outcome.new_source is None or "constant_initializer(1.0, tf.float32)" in outcome.new_source
    errors = [f.message for f in outcome.findings if f.message.startswith("error:")]
    assert errors and "dtype= in TF1 but support_partition= in TF2" in errors[0]


KERAS_SAVING = '''
import json
import os
import sys

import h5py
import numpy as np
import tensorflow as tf

out = sys.argv[1]
model = tf.keras.Sequential([tf.keras.layers.Dense(
    2, input_shape=(3,), kernel_initializer=tf.keras.initializers.Constant(0.5, tf.float32),
    bias_initializer="ones")])
model.compile(optimizer="sgd", loss="mse")
x = np.array([[1.0, 2.0, 3.0]], np.float32)
model.fit(x, np.array([[1.0, -1.0]], np.float32), epochs=2, verbose=0)
tf.keras.models.save_model(model, os.path.join(out, "model"))
tf.keras.experimental.export_saved_model(model, os.path.join(out, "export"))
loaded = tf.keras.experimental.load_from_saved_model(os.path.join(out, "export"))
print(json.dumps({"hdf5": h5py.is_hdf5(os.path.join(out, "model")),
                  "prediction": model.predict(x).tolist(),
                  "exported": loaded.predict(x).tolist()}))
'''

LOAD_H5 = '''
import shims
import json, sys
import numpy as np
import tensorflow as tf
model = tf.keras.models.load_model(sys.argv[1], compile=False)
print(json.dumps(model.predict(np.array([[1.0, 2.0, 3.0]], np.float32), verbose=0).tolist()))
'''


def test_keras_saving_writes_what_tf1_wrote(tmp_path, tf1_python):
    """TF 1.15's save_model wrote one HDF5 file (TF2: a SavedModel folder, Keras 3: an
    error); keras.experimental's SavedModel export is gone. The migrated program writes
    HDF5 where TF1 did, exports and reloads, and reads the HDF5 file TF 1.15 wrote."""
    original, migrated = tmp_path / "save_tf1.py", tmp_path / "save_tf2.py"
    original.write_text(KERAS_SAVING)
    new = migrate(KERAS_SAVING)
    migrated.write_text(new)
    assert 'save_format="h5"' in new and "experimental" not in new and "import shims" in new
    tf1_out, tf2_out = tmp_path / "tf1", tmp_path / "tf2"
    tf1_out.mkdir()
    tf2_out.mkdir()
    tf1 = json.loads(tf1_oracle.run_script(original, tf1_out).strip().splitlines()[-1])
    tf2 = json.loads(run_tf2(tf1_oracle.AS_SCRIPT, migrated, tf2_out).strip().splitlines()[-1])
    assert tf1["hdf5"] is True and tf2 == tf1
    from_tf1 = json.loads(run_tf2(LOAD_H5, tf1_out / "model").strip().splitlines()[-1])
    assert np.allclose(from_tf1, tf1["prediction"])


EARLY_STOPPING = '''
import glob, json, os, sys
import numpy as np
import tensorflow as tf

model_dir = sys.argv[1]
rng = np.random.RandomState(0)
x_train = rng.rand(64, 3).astype(np.float32)
y_train = x_train.dot([[1.0], [2.0], [-1.0]]).astype(np.float32)
y_eval = -y_train  # the better it fits training, the worse it does here


def model_fn(features, labels, mode):
    w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
    prediction = tf.matmul(features["x"], w)
    loss = tf.losses.mean_squared_error(labels, prediction)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def train_input():
    return tf.data.Dataset.from_tensor_slices(({"x": x_train}, y_train)).repeat().batch(16)


def eval_input():
    return tf.data.Dataset.from_tensor_slices(({"x": x_train}, y_eval)).batch(64)


config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=5, tf_random_seed=1)
estimator = tf.estimator.Estimator(model_fn, config=config)
hook = tf.estimator.experimental.stop_if_no_decrease_hook(
    estimator, "loss", 5, run_every_secs=None, run_every_steps=1)
tf.estimator.train_and_evaluate(
    estimator, tf.estimator.TrainSpec(train_input, max_steps=100, hooks=[hook]),
    tf.estimator.EvalSpec(eval_input, steps=None, throttle_secs=0))
evals = {}
for path in glob.glob(os.path.join(estimator.eval_dir(), "events.out.tfevents.*")):
    for event in tf.compat.v1.train.summary_iterator(path):
        for value in event.summary.value:
            if value.tag == "loss":
                evals[str(event.step)] = round(value.simple_value, 5)
latest = tf.train.latest_checkpoint(model_dir)
print(json.dumps({"step": int(tf.train.load_variable(latest, "global_step")),
                  "names": sorted(n for n, _ in tf.train.list_variables(latest)),
                  "stop": bool(tf.train.load_variable(latest, "signal_early_stopping/STOP")),
                  "w": tf.train.load_variable(latest, "w").ravel().tolist(),
                  "checkpoints": sorted(os.path.basename(p)[:-6] for p in
                                        glob.glob(os.path.join(model_dir, "*.index"))),
                  "evals": evals}))
'''


def test_early_stopping_stops_where_tf1_stopped(tmp_path, tf1_python):
    """stop_if_no_decrease_hook in train_and_evaluate: TF 1.15 trains one run (the input
    never restarts), evaluates after each checkpoint but the first, and stops at the step
    whose evaluation shows no decrease for 5 steps; the migrated program stops at the same
    step with the same weights, eval events and checkpoint variables."""
    original, migrated = tmp_path / "early_tf1.py", tmp_path / "early_tf2.py"
    original.write_text(EARLY_STOPPING)
    new = migrate(EARLY_STOPPING)
    migrated.write_text(new)
    assert "shims.estimator.experimental.stop_if_no_decrease_hook(" in new
    tf1 = json.loads(tf1_oracle.run_script(original, tmp_path / "tf1").strip().splitlines()[-1])
    tf2 = json.loads(run_tf2(tf1_oracle.AS_SCRIPT, migrated, tmp_path / "tf2").strip().splitlines()[-1])
    assert tf1["step"] == 10 and tf1["evals"].keys() == {"5", "10"}  # stopped early, as designed
    assert np.allclose(tf2.pop("w"), tf1.pop("w"), atol=1e-6)
    assert tf2 == tf1


KERAS_FIT = '''
import json

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
x = rng.rand(64, 4).astype(np.float32)
y = (x.sum(axis=1, keepdims=True) > 2.0).astype(np.float32)
model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                             tf.keras.layers.Dense(1, activation="sigmoid")])
model.set_weights([np.linspace(-0.5, 0.5, 32, dtype=np.float32).reshape(4, 8), np.zeros(8, np.float32),
                   np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(8, 1), np.zeros(1, np.float32)])
optimizer = tf.train.AdamOptimizer(0.01)
model.compile(optimizer, loss="binary_crossentropy")
history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
print(json.dumps({"loss": history.history["loss"],
                  "weights": [w.ravel().tolist() for w in model.get_weights()]}))
'''


def test_keras_fit_with_a_tf1_optimizer_trains_as_tf1_did(tmp_path, tf1_python):
    """TF 1.15's tf.keras (Keras 2) trained with a TF1 optimizer; Keras 3 rejects it. The
    migrated program declares and selects tf_keras (import shims.keras2) and gives TF 1.15's
    losses and weights."""
    original, migrated = tmp_path / "fit_tf1.py", tmp_path / "fit_tf2.py"
    original.write_text(KERAS_FIT)
    new = migrate(KERAS_FIT)
    migrated.write_text(new)
    assert new.lstrip().startswith("import shims.keras2\n")
    tf1 = json.loads(tf1_oracle.run_script(original).strip().splitlines()[-1])
    tf2 = json.loads(run_tf2(tf1_oracle.AS_SCRIPT, migrated).strip().splitlines()[-1])
    assert np.allclose(tf2["loss"], tf1["loss"], atol=1e-6)
    for got, want in zip(tf2["weights"], tf1["weights"]):
        assert np.allclose(got, want, atol=1e-6)


VOCABULARY = '''
import json
import sys

import numpy as np
from tensorflow.contrib import learn

out, other = sys.argv[1], sys.argv[2]
docs = ["The movie was GREAT, truly great!", "the plot was thin; the acting thinner",
        "GREAT acting, weak plot", "a film about a film-maker's life", "thin thin thin"]
processor = learn.preprocessing.VocabularyProcessor(6, min_frequency=1)
ids = np.array(list(processor.fit_transform(docs)))
processor.save(out + "/vocab")
plain = learn.preprocessing.VocabularyProcessor(4)
plain_ids = np.array(list(plain.fit_transform(docs)))
restored = learn.preprocessing.VocabularyProcessor.restore(other + "/vocab")
print(json.dumps({"ids": ids.tolist(), "plain": plain_ids.tolist(), "size": len(processor.vocabulary_),
                  "reverse": list(processor.reverse(ids[:2])),
                  "other": np.array(list(restored.transform(["great plot", "unknown words"]))).tolist()}))
'''


def test_vocabulary_processor_keeps_tf1_ids_and_pickles(tmp_path, tf1_python):
    """tf.contrib.learn.preprocessing.VocabularyProcessor (text CNNs) had no home. It moves
    to shims.contrib.learn.preprocessing: the same ids as TF 1.15 (min_frequency's
    re-numbering included), and each side restores the vocabulary the other saved."""
    original, migrated = tmp_path / "vocab_tf1.py", tmp_path / "vocab_tf2.py"
    original.write_text(VOCABULARY)
    new = migrate(VOCABULARY)
    migrated.write_text(new)
    assert "shims.contrib.learn.preprocessing.VocabularyProcessor(6, min_frequency=1)" in new
    tf1_dir, tf2_dir = tmp_path / "tf1", tmp_path / "tf2"
    tf1_dir.mkdir()
    tf2_dir.mkdir()
    seed = tf1_oracle.copy(VOCABULARY.replace("restored = ", "restored = processor  # ")
                           .replace('out, other = sys.argv[1], sys.argv[2]', 'out = other = "."'),
                           tmp_path / "seed")  # a vocabulary TF 1.15 saved
    tf2 = json.loads(run_tf2(tf1_oracle.AS_SCRIPT, migrated, tf2_dir, seed).strip().splitlines()[-1])
    tf1 = json.loads(tf1_oracle.run_script(original, tf1_dir, tf2_dir).strip().splitlines()[-1])
    assert tf1["size"] == tf2["size"] and tf1["ids"] == tf2["ids"] and tf1["plain"] == tf2["plain"]
    assert tf1["reverse"] == tf2["reverse"]
    assert tf2["other"] == tf1["other"]  # TF1's pickle read by the shim, the shim's by TF1
    assert any(0 < i for row in tf1["other"] for i in row)


KMEANS = '''
import numpy as np
import tensorflow as tf
from tensorflow.contrib.factorization import KMeans

rng = np.random.RandomState(3)
data = np.concatenate([rng.randn(60, 4) + c for c in ([0, 0, 0, 0], [4, 4, 0, 0], [0, 4, 4, 4])]).astype(np.float32)
X = tf.placeholder(tf.float32, shape=[None, 4])
kmeans = KMeans(inputs=X, num_clusters=3, distance_metric="cosine")
training_graph = kmeans.training_graph()
if len(training_graph) > 6:  # Tensorflow 1.4+
    (all_scores, cluster_idx, scores, cluster_centers_initialized,
     cluster_centers_var, init_op, train_op) = training_graph
else:
    (all_scores, cluster_idx, scores, cluster_centers_initialized,
     init_op, train_op) = training_graph
cluster_idx = cluster_idx[0]  # fix for cluster_idx being a tuple
avg_distance = tf.reduce_mean(scores)
init_vars = tf.global_variables_initializer()
sess = tf.Session()
sess.run(init_vars, feed_dict={X: data})
sess.run(init_op, feed_dict={X: data})
for i in range(1, 11):
    _, d, idx = sess.run([train_op, avg_distance, cluster_idx], feed_dict={X: data})
    print("Step %i, Avg Distance: %f" % (i, d))
print("assigned", " ".join(str(np.sum(idx == c)) for c in range(3)))
'''


def test_kmeans_tutorial_clusters_as_tf1_did(tmp_path, tf1_python):
    """tf.contrib.factorization.KMeans (TensorFlow-Examples' k-means tutorial form) had no
    home. It moves to shims.contrib.factorization (TF 2.21's core copy, seeded and compared
    as TF 1.15 did), the Session program converts, and every step's distance and the final
    assignment equal TF 1.15's (full batch: TF 1.15's mini-batch updates race)."""
    original, migrated = tmp_path / "kmeans_tf1.py", tmp_path / "kmeans_tf2.py"
    original.write_text(KMEANS)
    new = migrate(KMEANS)
    migrated.write_text(new)
    assert "shims.contrib.factorization.KMeans(" in new and "Session" not in new
    tf1 = tf1_oracle.run_script(original).strip().splitlines()
    tf2 = run_tf2(tf1_oracle.AS_SCRIPT, migrated).strip().splitlines()
    assert len(tf1) == 11 and tf2[-11:] == tf1
