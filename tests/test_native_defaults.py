"""A placeholder with a default and TF1's global step, native (#56): `scale =
tf.placeholder_with_default(1.0, [])` is a step parameter with that default (runs feeding
it pass it by name, the others leave it out), `tf.train.get_or_create_global_step()` the
int64 `tf.Variable` TF1 made, named global_step, incremented by the train step; equal to
TF 1.15. A default that is a tensor, or a second global step, keeps the GraphProgram
form and says why."""
import pytest

from test_native_programs import TF1_LEFT, code_only, settled_and_verified, upgrade_says, upgraded

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow

SCALED = '''"""Logits scaled by a placeholder with a default: fed while training, left out to
evaluate; a global step counted by minimize."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(6)
data = rng.rand(48, 5).astype(np.float32)
labels = (data[:, 0] + data[:, 3] > 1.0).astype(np.int64)

x = tf.placeholder(tf.float32, [None, 5])
y = tf.placeholder(tf.int64, [None])
scale = tf.placeholder_with_default(1.0, [], name="scale")
global_step = tf.train.get_or_create_global_step()
W = tf.Variable(tf.random_normal([5, 2], stddev=0.3, seed=2), name="W")
logits = tf.matmul(x, W) * scale
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train = tf.train.AdamOptimizer(0.02).minimize(loss, global_step=global_step)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(15):
        _, value = sess.run([train, loss], {x: data, y: labels, scale: 2.0})
        if i % 5 == 0:
            print("LOSS", i, value)
    print("EVAL", sess.run(loss, {x: data, y: labels}), sess.run(global_step))
'''


def test_a_default_is_the_steps_and_the_global_step_a_variable_equal_to_tf_1_15(tmp_path, tf1_python):
    legacy, migrated = upgraded(tmp_path, "scaled", SCALED)
    assert not set(TF1_LEFT.findall(code_only(migrated))), migrated
    assert 'global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")' in migrated
    assert "def train_step(x, y, scale=1.0):" in migrated and "def compute_loss(x, y, scale=1.0):" in migrated
    assert "tf.TensorSpec([None], tf.int64), tf.TensorSpec([], tf.float32)])" in migrated, migrated
    assert "train_step(data, labels, scale=2.0)" in migrated, migrated
    assert 'print("EVAL", compute_loss(data, labels).numpy(), global_step.numpy())' in migrated, migrated
    assert "    global_step.assign_add(1)\n" in migrated, migrated
    report = settled_and_verified(tmp_path, legacy, "scaled", tf1_python)
    assert {"global_step", "W", "W/Adam"} <= {v["name"] for v in report["variables"]}


@pytest.mark.parametrize("old, new, why", [
    ('scale = tf.placeholder_with_default(1.0, [], name="scale")',
     'scale = tf.placeholder_with_default(tf.ones([]), [], name="scale")',
     "'scale' is a placeholder whose default is not a Python number or bool (tf.ones([]))"),
    ("global_step = tf.train.get_or_create_global_step()",
     "global_step = tf.train.get_or_create_global_step()\nagain = tf.train.get_or_create_global_step()",
     "a second global step (TF1 gave the first one again)"),
])
def test_what_tf1_gave_otherwise_keeps_the_graph_program_and_says_why(old, new, why, tmp_path):
    assert old in SCALED
    out = upgrade_says(tmp_path, "scaled", SCALED.replace(old, new))
    assert "(shims.GraphProgram); not written as native TF2 steps: " + why in out, out
