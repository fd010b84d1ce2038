"""A Session program's tf.train.Saver in the native form (#56): a tf.train.Checkpoint of what
the Saver saved and a CheckpointManager for its saves at a global step. A checkpoint the TF1
program wrote mid-training, converted by `ckpt convert --program` through the name map
`upgrade` wrote, resumes natively with the losses TF 1.15 printed when it resumed (Adam's
moments and step, Momentum's accumulator); the native program's own checkpoints resume it
as TF1's resumed TF1."""
import os
import shutil
import subprocess
import sys

import pytest

import tf1_oracle
import tfm_cli

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow


# the session of both programs: restored from the folder's latest checkpoint, 10 steps, saved
# every 5 at the global step (formatted twice: its feed dict's braces are doubled twice)
SESSION = '''
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    ckpt = tf.train.get_checkpoint_state(ckpt_dir)
    if ckpt and ckpt.model_checkpoint_path:
        saver.restore(sess, ckpt.model_checkpoint_path)
    start = sess.run(global_step)
    for i in range(start, start + 10):
        _, c = sess.run([train_op, {loss}], feed_dict={{{{{feed}}}}})
        print("step", i, c)
        if i % 5 == 4:
            saver.save(sess, {path}, global_step=global_step)
'''
PROGRAM = '''"""Trains from the latest checkpoint of a folder (argv[1]) if there is one, 10 steps,
saving every 5 at the global step; losses printed."""
import os
import sys

import numpy as np
import tensorflow as tf

ckpt_dir = sys.argv[1]
rng = np.random.RandomState(0)
x_data = rng.rand(32, 2).astype(np.float32)
y_data = np.eye(3, dtype=np.float32)[(x_data[:, 0] * 3).astype(int) % 3]

X = tf.placeholder(tf.float32, [None, 2])
Y = tf.placeholder(tf.float32, [None, 3])
with tf.name_scope("layer1"):
    W1 = tf.Variable(tf.random_uniform([2, 8], -1., 1., seed=1), name="W1")
    b1 = tf.Variable(tf.zeros([8]))
    L1 = tf.nn.relu(tf.matmul(X, W1) + b1)
W2 = tf.Variable(tf.random_uniform([8, 3], -1., 1., seed=2))
logits = tf.matmul(L1, W2)
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=Y, logits=logits))
global_step = tf.Variable(0, name="global_step", trainable=False)
train_op = {optimizer}.minimize(cost, global_step=global_step)
saver = tf.train.Saver(max_to_keep=2)
''' + SESSION.format(loss="cost", feed="X: x_data, Y: y_data", path='os.path.join(ckpt_dir, "model.ckpt")')
LAYERED = '''"""The same protocol with weights in a dict (unnamed: Variable, Variable_1), a
tf.get_variable in a variable scope, a tf.layers.dense layer, and minimize in a name scope."""
import os
import sys

import numpy as np
import tensorflow as tf

ckpt_dir = sys.argv[1]
rng = np.random.RandomState(1)
x_data = rng.rand(32, 4).astype(np.float32)
y_data = rng.rand(32, 2).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 2])
weights = {{"h": tf.Variable(tf.random_normal([4, 5], stddev=0.5, seed=1)),
           "out": tf.Variable(tf.random_normal([3, 2], stddev=0.5, seed=2))}}
with tf.variable_scope("head"):
    bias = tf.get_variable("bias", shape=[2], initializer=tf.zeros_initializer())
hidden = tf.layers.dense(tf.nn.relu(tf.matmul(x, weights["h"])), 3, name="hidden",
                         kernel_initializer=tf.constant_initializer(0.1))
logits = tf.matmul(hidden, weights["out"]) + bias
loss = tf.reduce_mean(tf.square(logits - y))
global_step = tf.Variable(0, name="global_step", trainable=False)
with tf.name_scope("train"):
    train_op = {optimizer}.minimize(loss, global_step=global_step)
saver = tf.train.Saver()
''' + SESSION.format(loss="loss", feed="x: x_data, y: y_data", path='ckpt_dir + "/model.ckpt"')
CASES = {"adam": (PROGRAM, "tf.train.AdamOptimizer(0.01)"),
         "momentum": (PROGRAM, "tf.train.MomentumOptimizer(0.05, 0.9)"),
         "layered-adam": (LAYERED, "tf.train.AdamOptimizer(0.02, beta1=0.8)"),
         "layered-momentum": (LAYERED, "tf.train.MomentumOptimizer(0.1, 0.5)"),
         "rmsprop": (PROGRAM, "tf.train.RMSPropOptimizer(0.01)"),
         "layered-rmsprop-centered": (LAYERED, "tf.train.RMSPropOptimizer(0.02, momentum=0.5, centered=True)")}


def cli(*args):
    return tfm_cli.run(*args)


def run_native(path, *args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    env.pop("TF_USE_LEGACY_KERAS", None)
    done = subprocess.run([sys.executable, str(path), *map(str, args)], capture_output=True, text=True,
                          timeout=900, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def losses(text):
    return {int(line.split()[1]): float(line.split()[2]) for line in text.splitlines() if line.startswith("step ")}


def close(a, b):
    assert sorted(a) == sorted(b), (a, b)
    for step in a:
        assert abs(a[step] - b[step]) <= 1e-5 + 1e-5 * abs(a[step]), (step, a[step], b[step])


@pytest.mark.parametrize("kind", sorted(CASES))
def test_a_tf1_checkpoint_resumes_natively_with_tf1s_next_losses(kind, tmp_path, tf1_python):
    program, optimizer = CASES[kind]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(program.format(optimizer=optimizer))
    done = cli("upgrade", tmp_path / "src" / "train.py", "--outtree", tmp_path / "out", "--no-cache")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    migrated = (tmp_path / "out" / "train.py").read_text()
    if program is PROGRAM:
        assert ("checkpoint = tf.train.Checkpoint(W1=W1, b1=b1, W2=W2, global_step=global_step, "
                "optimizer=optimizer)") in migrated, migrated
        assert ('manager = tf.train.CheckpointManager(checkpoint, ckpt_dir, max_to_keep=2, '
                'checkpoint_name="model.ckpt")') in migrated, migrated
    else:
        assert ("checkpoint = tf.train.Checkpoint(weights=weights, bias=bias, global_step=global_step, "
                "hidden_layer=hidden_layer, optimizer=optimizer)") in migrated, migrated
        assert ('manager = tf.train.CheckpointManager(checkpoint, ckpt_dir, max_to_keep=5, '
                'checkpoint_name="model.ckpt")') in migrated, migrated
    assert "manager.save(checkpoint_number=global_step)" in migrated
    assert "checkpoint.restore(ckpt.model_checkpoint_path)" in migrated
    assert "Saver" not in migrated and "shims" not in migrated, migrated
    # (TF1's constant_initializer as the layer's initializer: TF2's own has no dtype argument)
    assert "compat.v1" not in migrated.replace("tf.compat.v1.constant_initializer(0.1)", ""), migrated
    again = cli("upgrade", tmp_path / "out" / "train.py", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr

    # TF1: 10 steps saved at 5 and 10, then a second run resuming from step 10: its next 10 losses
    tf1 = tmp_path / "tf1"
    tf1.mkdir()
    tf1_oracle.run_script(str(tmp_path / "src" / "train.py"), str(tf1))
    shutil.copytree(tf1, tmp_path / "tf1_at_10")
    resumed = losses(tf1_oracle.run_script(str(tmp_path / "src" / "train.py"), str(tf1)))
    assert sorted(resumed) == list(range(10, 20))

    # the TF1 checkpoint converted into the native program's checkpoint, then resumed natively
    converted = cli("ckpt", "convert", tmp_path / "tf1_at_10" / "model.ckpt-10", tmp_path / "tf2" / "model.ckpt-10",
                    "--map", tmp_path / "out" / "tf-migrate-names.json", "--program", "train.py")
    assert converted.returncode == 0, converted.stdout + converted.stderr
    assert "not converted" not in converted.stdout, converted.stdout  # weights, slots and the step
    close(resumed, losses(run_native(tmp_path / "out" / "train.py", tmp_path / "tf2")))

    # the native program's own checkpoints: a first run, then a second resuming it
    native = tmp_path / "native"
    native.mkdir()
    first = losses(run_native(tmp_path / "out" / "train.py", native))
    assert sorted(first) == list(range(10))
    assert sorted(os.listdir(native))[:1] == ["checkpoint"] and (native / "model.ckpt-10.index").exists()
    close(resumed, losses(run_native(tmp_path / "out" / "train.py", native)))


def test_a_program_layout_needs_its_map_entries(tmp_path, tf1_python):
    """`--program` names a file the map lists; one it does not is one error line, exit 2."""
    prefix = tf1_oracle.save_variables(str(tmp_path / "tf1"), '[("w", np.array([1., 2.], np.float32))]')
    names = tmp_path / "tf-migrate-names.json"
    names.write_text('{"format": "tf-migrate-names/1", "files": {"train.py": {"w": "w"}}}')
    done = cli("ckpt", "convert", prefix, tmp_path / "out" / "model",
               "--map", names, "--program", "other.py")
    assert done.returncode == 2 and "--program other.py: the map has no entries for it" in done.stderr, done.stderr
    alone = cli("ckpt", "convert", prefix, tmp_path / "out" / "model", "--program", "train.py")
    assert alone.returncode == 2 and "--program needs --map" in alone.stderr, alone.stderr
    good = cli("ckpt", "convert", prefix, tmp_path / "out" / "model",
               "--map", names, "--program", "train.py")
    assert good.returncode == 0 and "1 of 1 tensors" in good.stdout, good.stdout + good.stderr
    assert (tmp_path / "out" / "checkpoint").read_text().startswith('model_checkpoint_path: "model"')
