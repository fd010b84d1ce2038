"""TF1 surface rewrites, run: the TF1 original in graph mode and its migration on TF 2.21
(default Keras) compute the same values."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("tensorflow")

LEGACY = '''
import numpy as np
import tensorflow as tf

flags = tf.flags
flags.DEFINE_integer("units", 3, "how many")
tf.logging.set_verbosity(tf.logging.ERROR)


def describe(x):
    sizes = [d.value for d in x.get_shape()]
    shape = x.get_shape()
    last = x.shape[-1].value
    return sizes, shape[0].value, last, tf.Dimension(5).value


def first_batch():
    dataset = tf.data.Dataset.from_tensor_slices(np.arange(10.0)).batch(4)
    types = dataset.output_types
    return dataset.make_one_shot_iterator().get_next(), types
'''

TF1_RUN = '''
import json, sys, runpy
import tensorflow.compat.v1 as v1
v1.disable_v2_behavior()
sys.modules["tensorflow"] = v1
module = runpy.run_path(sys.argv[1])
with v1.Session() as session:
    batch, types = module["first_batch"]()
    print(json.dumps({"describe": module["describe"](v1.placeholder(v1.float32, [2, 7])),
                      "batch": session.run(batch).tolist(), "types": types.name}))
'''

TF2_RUN = '''
import json, sys, runpy
import tensorflow as tf
module = runpy.run_path(sys.argv[1])
batch, types = module["first_batch"]()
print(json.dumps({"describe": module["describe"](tf.zeros([2, 7])),
                  "batch": batch.numpy().tolist(), "types": types.name}))
'''


def run(script, path, legacy):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    if legacy:
        env["TF_USE_LEGACY_KERAS"] = "1"
    proc = subprocess.run([sys.executable, "-c", script, str(path)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_shapes_flags_logging_and_dataset_methods_run_after_migration(tmp_path):
    legacy = tmp_path / "legacy.py"
    legacy.write_text(LEGACY)
    exe = os.path.join(os.path.dirname(sys.executable), "tf-migrate")
    out = subprocess.run([exe, "upgrade", str(legacy), "--outtree", str(tmp_path / "out"), "--no-cache"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode in (0, 1), out.stderr
    migrated = (tmp_path / "out" / "legacy.py").read_text()
    assert ".value" not in migrated and "make_one_shot_iterator()" not in migrated
    want = run(TF1_RUN, legacy, legacy=True)
    got = run(TF2_RUN, tmp_path / "out" / "legacy.py", legacy=False)
    assert want == got == {"describe": [[2, 7], 2, 7, 5], "batch": [0.0, 1.0, 2.0, 3.0],
                           "types": "float64"}
