"""Batch norm in native programs: ``tf.layers.batch_normalization`` fed a boolean placeholder,
its moving averages updated through UPDATE_OPS control dependencies, becomes tf_keras'
BatchNormalization called with ``training=`` in tf.function steps, equal to TF 1.15 (the conv
case: the fused kernel's Bessel-corrected moving variance); where a Keras layer would update
its averages where TF1 did not, the program stays on GraphProgram and says why."""
import json

import pytest

import tf1_oracle
import tfm_cli


CONV_BN = '''"""A conv net with batch norm: is_training fed, UPDATE_OPS before minimize, evaluated in
inference mode; the moving averages printed."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(2)
images = rng.rand(48, 6, 6, 2).astype(np.float32)
labels = (images.mean(axis=(1, 2, 3)) > 0.5).astype(np.int64)

x = tf.placeholder(tf.float32, [None, 6, 6, 2])
y = tf.placeholder(tf.int64, [None])
is_training = tf.placeholder(tf.bool, [])
net = tf.layers.conv2d(x, 4, 3, kernel_initializer=tf.glorot_uniform_initializer(seed=1), name="conv")
net = tf.layers.batch_normalization(net, training=is_training, momentum=0.9, name="bn")
net = tf.nn.relu(net)
net = tf.layers.flatten(net)
logits = tf.layers.dense(net, 2, kernel_initializer=tf.glorot_uniform_initializer(seed=2), name="out")
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
with tf.control_dependencies(update_ops):
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(12):
        batch = slice((step % 3) * 16, (step % 3 + 1) * 16)
        _, value = sess.run([train_op, loss], {x: images[batch], y: labels[batch], is_training: True})
        print("step", step, "loss", value)
    print("eval", sess.run([loss, accuracy], {x: images, y: labels, is_training: False}))
'''


def cli(*args):
    return tfm_cli.run(*args)


def proven(legacy, migrated_path, tf1_python):
    """A second upgrade changes nothing, and `verify --program` finds the migration equal to
    the TF1 program run on TF 1.15: its JSON report."""
    again = cli("upgrade", migrated_path, "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr
    proc = cli("verify", legacy, migrated_path, "--program", "--tf1-python", tf1_python,
               "--tf1-cache", tf1_oracle.RESULTS, "--format", "json")
    report = json.loads(proc.stdout)
    assert report["ok"], report["first_difference"] or [v for v in report["variables"] if not v["ok"]]
    return report


def upgraded(tmp_path, source, *options):
    (tmp_path / "src").mkdir(exist_ok=True)
    legacy = tmp_path / "src" / "bn.py"
    legacy.write_text(source)
    done = cli("upgrade", legacy, "--outtree", tmp_path / "out", "--no-cache", *options)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    said = cli("upgrade", legacy, "--no-cache", *options).stdout
    return legacy, (tmp_path / "out" / "bn.py").read_text(), said


@pytest.mark.slow
def test_batch_norm_fed_a_training_flag_becomes_native_and_equals_tf_1_15(tmp_path, tf1_python):
    legacy, migrated, said = upgraded(tmp_path, CONV_BN)
    assert "tf.GradientTape()" in migrated and "GraphProgram" not in migrated, migrated
    assert 'bn_layer = tf.keras.layers.BatchNormalization(momentum=0.9, name="bn")' in migrated, migrated
    assert "bn_layer(net, training=is_training)" in migrated, migrated
    assert migrated.count("shims") == 1 and "import shims.keras2" in migrated, migrated  # tf_keras' layer
    code = migrated.split('"""', 2)[2]  # (past the docstring)
    assert "UPDATE_OPS" not in code and "control_dependencies" not in code, migrated
    assert "compat.v1" not in code and "Session" not in code, migrated
    assert "tf_keras' BatchNormalization" in said, said
    report = proven(legacy, tmp_path / "out" / "bn.py", tf1_python)
    names = {v["name"] for v in report["variables"]}
    assert {"bn/moving_mean", "bn/moving_variance", "bn/gamma", "conv/kernel"} <= names, names


@pytest.mark.parametrize("old, new, why", [
    ("with tf.control_dependencies(update_ops):\n    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)",
     "train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)",
     "the train op 'train_op' does not depend on UPDATE_OPS: TF1 never updated batch norm's moving averages"),
    ("{x: images, y: labels, is_training: False}", "{x: images, y: labels, is_training: True}",
     "a run that trains nothing computes batch norm 'bn' with training True"),
    ("update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\n",
     "update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)\nprint(len(update_ops))\n",
     "the UPDATE_OPS collection 'update_ops' is read other than by control dependencies"),
])
def test_batch_norm_updating_where_tf1_did_not_keeps_the_graph_program(old, new, why, tmp_path):
    assert old in CONV_BN
    _, migrated, said = upgraded(tmp_path, CONV_BN.replace(old, new))
    assert "shims.GraphProgram(" in migrated, migrated
    assert f"not written as native TF2 steps: {why}" in said, said


def test_batch_norm_for_keras_3_keeps_tf_1_15s_layer_through_shims(tmp_path):
    _, migrated, said = upgraded(tmp_path, CONV_BN, "--keras", "3")
    assert "shims.keras3.BatchNormalization" in migrated and "shims.GraphProgram(" in migrated, migrated
    assert "tf.layers.batch_normalization under Keras 3 (its arithmetic is not TF 1.15's)" in said, said
