"""The tracking rewrite (TFM301-303) on Keras code of our own, run under Keras 3 and under
legacy Keras (TF_USE_LEGACY_KERAS=1): every variable tracked and trainable, tf.function
twice, a tf.train.Checkpoint round trip with identical outputs, one step of fit."""
import os
import subprocess
import sys
import textwrap

import pytest

import tfm_cli

pytest.importorskip("tensorflow")

MODELS = {
    "tf1_layers_as_attributes": ("""
        import tensorflow as tf


        class Head(tf.keras.layers.Layer):
            def __init__(self, units):
                super().__init__()
                self.units = units

            def call(self, x):
                with tf.variable_scope("head"):
                    h = tf.layers.dense(x, self.units, activation=tf.nn.relu, name="hidden")
                    return tf.layers.dense(h, 3, name="logits")


        def make():
            return tf.keras.Sequential([tf.keras.Input(shape=(5,)), Head(8)])
        """, 4, 4),
    "tf1_layers_in_call": ("""
        import tensorflow as tf


        class Head(tf.keras.layers.Layer):
            def call(self, x):
                with tf.variable_scope("head"):
                    h = tf.layers.dense(x, 8, activation=tf.nn.relu, name="hidden")
                    return tf.layers.dense(h, 3, name="logits")


        def make():
            return tf.keras.Sequential([tf.keras.Input(shape=(5,)), Head()])
        """, 4, 4),
    "mixed": ("""
        import tensorflow as tf


        class Mixer(tf.keras.Model):
            def __init__(self, widths=(6, 4)):
                super().__init__()
                self.stack = [tf.keras.layers.Dense(w, activation="relu") for w in widths]
                self.gates = {"left": tf.Variable(tf.ones([4]), name="left"),
                              "right": tf.Variable(0.5, name="right")}
                self.steps = tf.Variable(0, trainable=False, name="steps")
                self.bias = tf.Variable(tf.random.normal([4], seed=1), name="bias")
                self.heads = []
                for n in (3, 3):
                    self.heads.append(tf.keras.layers.Dense(n))

            def call(self, x):
                for layer in self.stack:
                    x = layer(x)
                x = x * self.gates["left"] * self.gates["right"] + self.bias
                return self.heads[0](x) + self.heads[1](x)


        def make():
            return Mixer()
        """, 12, 11),
    "lazy_weight": ("""
        import tensorflow as tf


        class Project(tf.keras.layers.Layer):
            def __init__(self, units):
                super().__init__()
                self.units = units

            def call(self, inputs):
                kernel = tf.Variable(tf.random.normal([int(inputs.shape[-1]), self.units], seed=2),
                                     name="kernel")
                self.offset = tf.Variable(tf.zeros([self.units]), name="offset")
                return tf.matmul(inputs, kernel) + self.offset


        def make():
            return tf.keras.Sequential([tf.keras.Input(shape=(5,)), Project(3), tf.keras.layers.Dense(3)])
        """, 4, 4),
}

CHECK = """
import importlib.util, os, sys
import numpy as np
import random
import tensorflow as tf
spec = importlib.util.spec_from_file_location("m", sys.argv[1])
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
# the same initial weights on every run: tf_keras's unseeded initializers draw from Python's
# random, Keras 3's from TF's (seeded here without touching tf.keras, which the module's
# `import shims` must choose first)
random.seed(0); np.random.seed(0); tf.random.set_seed(0)
x = np.random.RandomState(0).standard_normal((4, 5)).astype("float32")
model = module.make()
first = np.asarray(model(x))
expected, trainable = int(sys.argv[2]), int(sys.argv[3])
assert len(model.variables) == expected, f"{len(model.variables)} variables, expected {expected}"
assert len(model.trainable_variables) == trainable, len(model.trainable_variables)
fn = tf.function(lambda a: model(a))
fn(x); np.testing.assert_allclose(np.asarray(fn(x)), np.asarray(model(x)), rtol=1e-6)
path = tf.train.Checkpoint(model=model).save(os.path.join(sys.argv[4], "ck"))
fresh = module.make(); fresh(x)
tf.train.Checkpoint(model=fresh).restore(path).assert_existing_objects_matched()
np.testing.assert_allclose(np.asarray(fresh(x)), np.asarray(model(x)), rtol=1e-6)
model.compile(optimizer="sgd", loss="mse")
before = [np.asarray(v).copy() for v in model.trainable_variables]
model.fit(x, np.zeros_like(first), epochs=1, verbose=0)
# trained = changed at all (one small SGD step can stay within allclose's tolerance)
moved = sum(not np.array_equal(a, np.asarray(b)) for a, b in zip(before, model.trainable_variables))
assert moved == trainable, f"fit trained {moved} of {trainable} variables"
print("ok", tf.keras.__name__)
"""


def run(path, expected, trainable, work, legacy):
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    if legacy:
        env["TF_USE_LEGACY_KERAS"] = "1"
    return subprocess.run([sys.executable, "-c", CHECK, str(path), str(expected), str(trainable), str(work)],
                          capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_migrated_model_tracks_everything(name, tmp_path):
    source, expected, trainable = MODELS[name]
    legacy = tmp_path / f"{name}.py"
    legacy.write_text(textwrap.dedent(source).lstrip())
    out = tfm_cli.run("upgrade", legacy, "--outtree", tmp_path / "out", "--no-cache", default_keras=False)
    assert out.returncode in (0, 1), out.stderr
    migrated = tmp_path / "out" / f"{name}.py"
    text = migrated.read_text()
    assert "tf.Variable(" not in text and "tf.layers." not in text
    if name == "tf1_layers_as_attributes":  # plain Keras: attributes made in __init__, no shims
        assert "self.head_hidden = tf.keras.layers.Dense(" in text and "shims" not in text
    for generation in (False, True):
        result = run(migrated, expected, trainable, tmp_path / f"ck{generation}", generation)
        assert result.returncode == 0, f"legacy={generation}: " + result.stderr[-2500:]
    # and the unmigrated code really was broken under today's default Keras
    broken = run(legacy, expected, trainable, tmp_path / "ck_legacy", False)
    assert broken.returncode != 0
