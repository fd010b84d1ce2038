"""The native form of Session programs (#56): variables made once, each kind of run a
tf.function step with tf.GradientTape and a Keras optimizer proven equal, proven on real
TF 1.15 by `verify --program` (printed numbers and every final variable by TF1 name,
optimizer slots included), unchanged by a second run; `--programs shims` keeps the
GraphProgram form; a program whose graph calls code the tool cannot read stays on it and
says why."""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

import tf1_oracle

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow

EXE = os.path.join(os.path.dirname(sys.executable), "tf-migrate")
TF1_LEFT = re.compile(r"Session|placeholder|feed_dict|GraphProgram|program\.run|compat\.v1")

PROGRAM = '''"""Two hidden layers of raw variables in dicts, trained with {optimizer}; losses, the
accuracy and the last layer's bias printed."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(5)
data = rng.rand(90, 5).astype(np.float32)
target = np.eye(3)[(data[:, 1] * 3).astype(int) % 3].astype(np.float32)

x = tf.placeholder(tf.float32, [None, 5])
y = tf.placeholder(tf.float32, [None, 3])
weights = {{"h": tf.Variable(tf.random_normal([5, 7], seed=3)),
           "out": tf.Variable(tf.random_normal([7, 3], seed=4))}}
biases = {{"h": tf.Variable(tf.zeros([7])), "out": tf.Variable(tf.zeros([3]))}}


def model(inputs):
    hidden = tf.nn.relu(tf.matmul(inputs, weights["h"]) + biases["h"])
    return tf.matmul(hidden, weights["out"]) + biases["out"]


logits = model(x)
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
train = {optimizer}.minimize(loss)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1)), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(30):
        batch = slice((step % 3) * 30, (step % 3 + 1) * 30)
        _, value = sess.run([train, loss], feed_dict={{x: data[batch], y: target[batch]}})
        if step % 5 == 0:
            print("step", step, "loss", value)
    print("accuracy", sess.run(accuracy, {{x: data, y: target}}))
    print("bias", sess.run(biases["out"]).tolist())
'''
OPTIMIZERS = {
    "adam": ("tf.train.AdamOptimizer(0.01)", "tf.keras.optimizers.Adam(learning_rate=0.01, epsilon=1e-08)"),
    "momentum": ("tf.train.MomentumOptimizer(0.05, 0.9, use_nesterov=True)",
                 "tf.keras.optimizers.SGD(learning_rate=0.05, momentum=0.9, nesterov=True)"),
    "rmsprop": ("tf.train.RMSPropOptimizer(0.01)", "tf.compat.v1.train.RMSPropOptimizer(0.01)"),
}


def cli(*args):
    env = dict(os.environ)
    env.pop("TF_USE_LEGACY_KERAS", None)
    return subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=900, env=env)


def code_only(text):
    return "\n".join(line.split("#")[0] for line in text.splitlines() if not line.lstrip().startswith('"'))


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_a_session_program_becomes_native_tf2_and_equals_tf_1_15(kind, tmp_path, tf1_python):
    tf1_form, tf2_form = OPTIMIZERS[kind]
    (tmp_path / "src").mkdir()
    legacy = tmp_path / "src" / "mlp.py"
    legacy.write_text(PROGRAM.format(optimizer=tf1_form))
    done = cli("upgrade", legacy, "--outtree", tmp_path / "out", "--no-cache")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    migrated = (tmp_path / "out" / "mlp.py").read_text()
    assert "with tf.GradientTape() as tape:" in migrated and "@tf.function" in migrated, migrated
    assert f"optimizer = {tf2_form}" in migrated, migrated
    left = set(TF1_LEFT.findall(code_only(migrated)))
    assert left <= ({"compat.v1"} if kind == "rmsprop" else set()), (left, migrated)
    assert "biases['out'].numpy()" in migrated.replace('"', "'")  # a variable read where it stands
    if kind == "rmsprop":  # the finding says why the TF1 optimizer stays
        said = cli("upgrade", legacy, "--no-cache").stdout
        assert "Keras' RMSprop starts its accumulator at 0, TF1's at 1" in said, said
    again = cli("upgrade", tmp_path / "out" / "mlp.py", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr
    proc = cli("verify", legacy, tmp_path / "out" / "mlp.py", "--program", "--tf1-python", tf1_python,
               "--tf1-cache", tf1_oracle.RESULTS, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["tf1"]["tensorflow"] == "1.15.5" and report["migrated_run"]["onednn"] is False
    assert report["ok"], report["first_difference"] or [v for v in report["variables"] if not v["ok"]]
    assert report["init"]["shared"] and not report["init"]["not_used_by_migrated"], report["init"]
    names = {v["name"] for v in report["variables"]}
    slots = {"adam": {"Variable/Adam", "Variable/Adam_1", "beta1_power"}, "momentum": {"Variable/Momentum"},
             "rmsprop": {"Variable/RMSProp"}}[kind]
    assert slots <= names, names  # the optimizer's state compared by TF1's slot names too
    assert sum(len(line["tf1"]) for s in report["streams"].values() for line in s["lines"]) >= 10


def test_the_shims_form_stays_available(tmp_path):
    (tmp_path / "mlp.py").write_text(PROGRAM.format(optimizer="tf.train.AdamOptimizer(0.01)"))
    done = cli("upgrade", tmp_path / "mlp.py", "--programs", "shims", "--no-cache")
    assert "shims.GraphProgram(" in done.stdout and "GradientTape" not in done.stdout, done.stdout
    bad = cli("upgrade", tmp_path / "mlp.py", "--programs", "eager", "--no-cache")
    assert bad.returncode == 2 and "--programs must be native (the default) or shims" in bad.stderr


def test_graph_code_of_another_module_keeps_the_graph_program_and_says_why(tmp_path):
    """A model function imported from the project may make variables at each call: the
    native form is not proven, the GraphProgram form is written, and the finding names
    the call."""
    (tmp_path / "mlp.py").write_text(textwrap.dedent('''\
        import numpy as np
        import tensorflow as tf
        import layers_of_project

        x = tf.placeholder(tf.float32, [None, 3])
        out = layers_of_project.dense(x, 2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            print(sess.run(out, {x: np.ones((1, 3), np.float32)}))
        '''))
    done = cli("upgrade", tmp_path / "mlp.py", "--no-cache")
    assert "shims.GraphProgram(" in done.stdout, done.stdout
    assert ("not written as native TF2 steps: the graph uses layers_of_project.dense(), whose code "
            "is not read here") in done.stdout, done.stdout
