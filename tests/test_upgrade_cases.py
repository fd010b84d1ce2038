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
