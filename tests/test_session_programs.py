"""Session programs as real projects write them (issue #25), migrated and compared with
their run on real TensorFlow 1.15 through `verify --program --tf1-python`: programs under
`if __name__ == "__main__":` and in `with tf.device(...)` / `with tf.Graph().as_default()`
blocks become eager; a program that must stay in graph mode gets its switch after the
TensorFlow import, and inside the function that holds it when it lives in a library."""
import json
import re
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tf1_oracle
import tfm_cli

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow



def cli(*args, cwd=None):
    return tfm_cli.run(*args, cwd=cwd)


def migrate(src, out):
    done = cli("upgrade", src, "--outtree", out, "--no-cache")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done


def equivalent(tf1_python, legacy, migrated):
    done = cli("verify", legacy, migrated, "--program", "--tf1-python", tf1_python,
               "--tf1-cache", tf1_oracle.RESULTS, "--format", "json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["ok"] and report["tf1"]["tensorflow"] == "1.15.5"
    return report


DATA = '''
rng = np.random.RandomState(0)
X = rng.randn(64, 3).astype(np.float32)
Y = (X.dot([[1.0], [-2.0], [0.5]]) + 0.3).astype(np.float32)
'''

MAIN_GUARD = '''"""A tutorial script: the program under the main guard, in a device block."""
from __future__ import print_function
import numpy as np
import tensorflow as tf
''' + DATA + '''
if __name__ == "__main__":
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        h = tf.layers.dense(x, 8, activation=tf.nn.tanh, name="h")
        out = tf.layers.dense(h, 1, name="out")
        loss = tf.reduce_mean(tf.square(out - y))
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(30):
                _, l = sess.run([train_op, loss], feed_dict={x: X, y: Y})
                if step % 5 == 0:
                    print("step %d, loss=%.6f" % (step, l))
'''

GRAPH_BLOCK = '''import numpy as np
import tensorflow as tf
''' + DATA + '''
with tf.Graph().as_default():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.get_variable("w", [3, 1])
    b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(25):
            _, c = sess.run([train_op, loss], feed_dict={x: X, y: Y})
            print("Epoch:", "%04d" % (epoch + 1), "cost=", "{:.9f}".format(c))
'''


TEXT_CNN = '''"""The text-CNN tutorials' shape: pooled branches collected in a list the graph code
fills, throwaway names (`_`) in the graph and in the loop. Its random initial values are
seeded, so the TF 1.15 reference is one run: from one unseeded draw, twelve Adam steps grew
TF 2.21's last-digit convolution differences to 3e-5 on one filter (1e-7 from these)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
data_x = rng.randint(0, 50, size=(32, 12)).astype("int32")
data_y = np.eye(2, dtype="float32")[rng.randint(0, 2, size=32)]
input_x = tf.placeholder(tf.int32, [None, 12], name="input_x")
input_y = tf.placeholder(tf.float32, [None, 2], name="input_y")
keep_prob = tf.placeholder(tf.float32, name="keep_prob")
W = tf.Variable(tf.random_uniform([50, 8], -1.0, 1.0, seed=1), name="W")
embedded = tf.expand_dims(tf.nn.embedding_lookup(W, input_x), -1)
pooled_outputs = []
for size in (2, 3):
    with tf.name_scope("conv-maxpool-%s" % size):
        filt = tf.Variable(tf.truncated_normal([size, 8, 1, 4], stddev=0.1, seed=size), name="W")
        conv = tf.nn.conv2d(embedded, filt, strides=[1, 1, 1, 1], padding="VALID")
        pooled = tf.nn.max_pool(tf.nn.relu(conv), ksize=[1, 12 - size + 1, 1, 1],
                                strides=[1, 1, 1, 1], padding="VALID")
        pooled_outputs.append(pooled)
h_pool = tf.reshape(tf.concat(pooled_outputs, 3), [-1, 8])
mean, _ = tf.nn.moments(h_pool, axes=[0])
scores = tf.layers.dense(tf.nn.dropout(h_pool - mean, keep_prob), 2, name="output")
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=scores, labels=input_y))
train_op = tf.train.AdamOptimizer(1e-2).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(12):
        _, value = sess.run([train_op, loss], {input_x: data_x, input_y: data_y, keep_prob: 1.0})
        print("step %d, loss %g" % (step, value))
'''


LATE_GROUP_INIT = '''"""A tutorial whose initializer, a group with the local variables' (a metric's), is
made in the session's block (#58: kept in graph mode, "a fetch of 'init_op', which is not
built in the graph")."""
import numpy as np
import tensorflow as tf
''' + DATA + '''
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
pred = tf.layers.dense(x, 1, name="linear")
loss = tf.reduce_mean(tf.square(pred - y))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
mean_loss, update_mean = tf.metrics.mean(loss)
with tf.Session() as sess:
    init_op = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())
    sess.run(init_op)
    for step in range(6):
        _, value, running = sess.run([train, loss, update_mean], feed_dict={x: X, y: Y})
        print("step %d loss %.6f running mean %.6f" % (step, value, running))
'''


@pytest.mark.parametrize("name,source", [("main_guard.py", MAIN_GUARD), ("graph_block.py", GRAPH_BLOCK),
                                         ("text_cnn.py", TEXT_CNN), ("late_group_init.py", LATE_GROUP_INIT)],
                         ids=["main_guard_device", "graph_as_default", "containers_and_throwaways",
                              "late_group_initializer"])
def test_programs_in_blocks_become_eager_and_equal_tf1(tmp_path, tf1_python, name, source):
    """#25.1: not recognised before (no finding, exit 0, then `tf.placeholder() is not
    compatible with eager execution`)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / name).write_text(source)
    migrate(tmp_path / "src" / name, tmp_path / "out")
    text = (tmp_path / "out" / name).read_text()
    for gone in ("Session", "placeholder", "feed_dict", "as_default", "disable_eager"):
        assert gone not in text, text
    report = equivalent(tf1_python, tmp_path / "src" / name, tmp_path / "out" / name)
    assert report["init"]["shared"]
    assert report["streams"]["printed"]["lines"], "nothing printed was compared"


EVALUATIONS = '''"""A cookbook's first chapter: a session that shows what ops compute on Python values."""
import numpy as np
import tensorflow as tf
from tensorflow.python.framework import ops
ops.reset_default_graph()

# Open graph session
sess = tf.Session()

x_vals = np.linspace(start=-10., stop=10., num=7)
print(sess.run(tf.nn.relu([-3., 3., 10.])))
y_sigmoid = sess.run(tf.nn.sigmoid(x_vals))
print("sigmoid", y_sigmoid)
print(sess.run(tf.div(3, 4)), sess.run(tf.truediv(3, 4)))

hypothesis = list("bear")
truth = list("beers")
h1 = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 0, 3]], hypothesis, [1, 1, 1])
t1 = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 0, 3], [0, 0, 4]], truth, [1, 1, 1])
print("distance", sess.run(tf.edit_distance(h1, t1, normalize=False)))
with tf.Session() as session:
    tanh, softsign = session.run([tf.nn.tanh(x_vals), tf.nn.softsign(x_vals)])
    print("tanh", tanh, "softsign", softsign)
sess.close()
'''


def test_a_session_that_only_evaluates_becomes_eager_values_and_equals_tf1(tmp_path, tf1_python):
    """A session made first that only evaluates TensorFlow on Python values (the
    Cookbook's first chapter) has no graph to build: it used to stay in graph mode ("no
    graph-building code found before the Session"). The session goes and each run is
    ``shims.evaluated(...)``, computed where it stands; TF 1.15 prints the same."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "evaluations.py").write_text(EVALUATIONS)
    migrate(tmp_path / "src" / "evaluations.py", tmp_path / "out")
    text = (tmp_path / "out" / "evaluations.py").read_text()
    for gone in ("Session", "sess.run", "disable_eager", ".close()"):
        assert gone not in text, text
    assert text.count("shims.evaluated(") == 6, text
    report = equivalent(tf1_python, tmp_path / "src" / "evaluations.py", tmp_path / "out" / "evaluations.py")
    printed = report["streams"]["printed"]["lines"]
    assert sum(len(line["tf1"]) for line in printed) >= 20, printed


LATE_IMPORT = '''import os
os.environ["CUDA_VISIBLE_DEVICES"] = ""
import numpy as np
import tensorflow as tf
''' + DATA + '''
x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.ones([3, 1]), name="w")
pred = tf.matmul(x, w)
sess = tf.Session()
sess.run(tf.global_variables_initializer())
print("pred[0] = %.6f" % sess.run(pred.name, {x: X})[0, 0])
'''


def test_the_graph_switch_follows_the_tensorflow_import(tmp_path, tf1_python):
    """#25.4: the switch went before `import tensorflow as tf` when other statements
    preceded that import (`NameError: name 'tf' is not defined`)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "late.py").write_text(LATE_IMPORT)
    done = migrate(tmp_path / "src" / "late.py", tmp_path / "out")
    assert "kept in TF1 graph mode" in done.stdout
    lines = (tmp_path / "out" / "late.py").read_text().splitlines()
    assert lines.index("tf.compat.v1.disable_eager_execution()") == lines.index("import tensorflow as tf") + 1
    equivalent(tf1_python, tmp_path / "src" / "late.py", tmp_path / "out" / "late.py")


BRANCHED_SESSION = '''import os
import tempfile
import numpy as np
import tensorflow as tf
''' + DATA + '''

def main(_):
    existing = os.environ.get("EXISTING_SERVER")
    with tf.device("/cpu:0"):
        global_step = tf.Variable(0, name="global_step", trainable=False)
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.Variable(tf.zeros([3, 1]), name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
        sv = tf.train.Supervisor(is_chief=True, logdir=tempfile.mkdtemp(), init_op=tf.global_variables_initializer(),
                                 recovery_wait_secs=1, global_step=global_step)
        if existing:
            sess = sv.prepare_or_wait_for_session("grpc://" + existing)
        else:
            sess = sv.prepare_or_wait_for_session("")
        for _ in range(5):
            _, value = sess.run([train_op, loss], feed_dict={x: X, y: Y})
            print("step %d loss %.6f" % (sess.run(global_step), value))
        print("w", sess.run(w).ravel())
        sv.stop()


if __name__ == "__main__":
    tf.app.run()
'''


def test_a_graph_built_above_a_branched_session_runs_in_graph_mode(tmp_path, tf1_python):
    """TF 1.x's mnist_replica.py builds its graph in main() and makes its supervised
    session in an if/else below it: the graph-mode switch went into the branch, after the
    placeholders it had to precede (`tf.placeholder() is not compatible with eager
    execution`). It goes at the start of main() now, and the program runs as on TF 1.15."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "branched.py").write_text(BRANCHED_SESSION)
    done = migrate(tmp_path / "src" / "branched.py", tmp_path / "out")
    assert "runs only in TF1 graph mode" not in done.stdout, done.stdout
    lines = (tmp_path / "out" / "branched.py").read_text().splitlines()
    assert lines[lines.index("def main(_):") + 1].strip() == "tf.compat.v1.disable_eager_execution()"
    report = equivalent(tf1_python, tmp_path / "src" / "branched.py", tmp_path / "out" / "branched.py")
    assert len(report["streams"]["printed"]["lines"]) >= 6


GAN_MODEL = '''import numpy as np
import tensorflow as tf


class GAN(object):
    """The DCGAN repositories' model: handed the script's session, its graph built in
    __init__ (the discriminator's unnamed layers shared through scope.reuse_variables()),
    its optimizers made and its loop run in train()."""

    def __init__(self, sess, n):
        self.sess = sess
        self.z = tf.placeholder(tf.float32, [None, n], name="z")
        self.x = tf.placeholder(tf.float32, [None, n], name="x")
        with tf.variable_scope("generator"):
            self.fake = tf.layers.dense(self.z, n, tf.nn.tanh, name="g")
        real = self.discriminator(self.x)
        fake = self.discriminator(self.fake, reuse=True)
        self.d_loss = tf.reduce_mean(tf.nn.softplus(-real) + tf.nn.softplus(fake))
        self.g_loss = tf.reduce_mean(tf.nn.softplus(-fake))
        self.d_vars = [v for v in tf.trainable_variables() if "discriminator" in v.name]
        self.g_vars = [v for v in tf.trainable_variables() if "generator" in v.name]

    def discriminator(self, x, reuse=False):
        with tf.variable_scope("discriminator") as scope:
            if reuse:
                scope.reuse_variables()
            h = tf.layers.dense(x, 3, tf.nn.relu)
            return tf.layers.dense(h, 1)

    def train(self, steps):
        d_optim = tf.train.AdamOptimizer(0.01).minimize(self.d_loss, var_list=self.d_vars)
        g_optim = tf.train.AdamOptimizer(0.01).minimize(self.g_loss, var_list=self.g_vars)
        tf.global_variables_initializer().run()
        rng = np.random.RandomState(0)
        for step in range(steps):
            z, x = rng.randn(16, 4), rng.randn(16, 4) + 1.0
            _, d = self.sess.run([d_optim, self.d_loss], {self.z: z, self.x: x})
            _, g = self.sess.run([g_optim, self.g_loss], {self.z: z})
            print("step", step, d, g)
'''

GAN_MAIN = '''import tensorflow as tf

from model import GAN


def main(_):
    config = tf.ConfigProto()
    config.gpu_options.allow_growth = True
    with tf.Session(config=config) as sess:
        gan = GAN(sess, 4)
        gan.train(5)


if __name__ == "__main__":
    tf.app.run()
'''


def test_a_session_handed_to_a_model_of_another_module_runs_in_graph_mode(tmp_path, tf1_python):
    """The DCGAN repositories' main.py makes the session and hands it to the model of
    model.py, which runs it: main.py runs nothing itself, so it was not seen as a program
    and got no graph-mode switch, and the migrated program failed in model.py (placeholders
    are not compatible with eager execution) after an upgrade that named no problem in
    main.py. The switch is there now, with a finding, and the program computes what it
    computed on TF 1.15: model.py's unnamed layers, Keras layers from TFM201 run in graph
    mode, are shared under scope.reuse_variables() and named as TF1 named them."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.py").write_text(GAN_MODEL)
    (tmp_path / "src" / "main.py").write_text(GAN_MAIN)
    done = migrate(tmp_path / "src", tmp_path / "out")
    assert "main.py:9:5: TFM501 Session program kept in TF1 graph mode: the session is handed to GAN()" \
        in done.stdout, done.stdout
    lines = (tmp_path / "out" / "main.py").read_text().splitlines()
    assert lines[lines.index("def main(_):") + 1].strip() == "tf.compat.v1.disable_eager_execution()"
    report = equivalent(tf1_python, tmp_path / "src" / "main.py", tmp_path / "out" / "main.py")
    assert len(report["streams"]["printed"]["lines"]) == 5
    assert report["variables"]


LIBRARY = '''import tensorflow as tf


def predict(data):
    """Kept in graph mode (a fetch by tensor name), called by other modules."""
    x = tf.placeholder(tf.float32, [None, 3])
    pred = tf.reduce_sum(x, axis=1)
    sess = tf.Session()
    return sess.run(pred.name, {x: data})
'''

USER = '''import numpy as np
import tensorflow as tf
import library

eager_after_import = tf.executing_eagerly()
print("eager after importing the library:", eager_after_import)
print("predict:", library.predict(np.ones((2, 3), np.float32)).tolist())
'''


def test_importing_a_migrated_library_leaves_eager_mode_on(tmp_path, tf1_python):
    """#25.4: the switch was put into modules other modules import, so importing one
    flipped the whole process to graph mode. It now goes into the function holding the
    program, which still computes what it computed on real TF 1.15."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "library.py").write_text(LIBRARY)
    (tmp_path / "src" / "user.py").write_text(USER)
    migrate(tmp_path / "src", tmp_path / "out")
    library = (tmp_path / "out" / "library.py").read_text()
    assert "    tf.compat.v1.disable_eager_execution()\n" in library  # inside predict, indented
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    run = subprocess.run([sys.executable, "user.py"], cwd=tmp_path / "out", capture_output=True,
                         text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "eager after importing the library: True" in run.stdout
    tf1 = tf1_oracle.run_script(tmp_path / "src" / "user.py", cwd=tmp_path / "src")
    predicted = [line for line in tf1.splitlines() if line.startswith("predict:")]
    assert predicted and predicted[0] in run.stdout.splitlines()


MONITORED = '''"""A MonitoredTrainingSession program inside a function, with a StopAtStepHook."""
import sys
import tempfile

import numpy as np
import tensorflow as tf


def train(model_dir):
    rng = np.random.RandomState(0)
    data = rng.randn(32, 3).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.get_variable("w", [3, 1])  # glorot, unseeded: verify shares TF1's initial values
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
    hooks = [tf.train.StopAtStepHook(last_step=10)]
    with tf.train.MonitoredTrainingSession(checkpoint_dir=model_dir, hooks=hooks) as sess:
        done = 0  # (the step fetched with train_op may be read before or after it is bumped)
        while not sess.should_stop():
            _, l = sess.run([train_op, loss], feed_dict={x: data})
            done += 1
            print("step %d loss %.6f" % (done, l))


if __name__ == "__main__":
    train(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
'''


def test_a_monitored_session_program_becomes_eager_and_computes_what_tf1_computed(tmp_path, tf1_python):
    """#25.1: a MonitoredTrainingSession program in a function was not recognised (no
    finding, exit 0, then `tf.placeholder() is not compatible with eager execution`), then
    kept in graph mode. It is converted now: its graph into a GraphProgram, the session into
    shims.MonitoredTrainingSession over it (the hooks, shims.estimator's, given as they
    were), equal to real TF 1.15 step by step from the same initial values, with the same
    checkpoints in model_dir."""
    (tmp_path / "monitored.py").write_text(MONITORED)
    done = migrate(tmp_path / "monitored.py", tmp_path / "out")
    assert "0 remaining" in done.stderr, done.stdout + done.stderr
    migrated = (tmp_path / "out" / "monitored.py").read_text()
    assert "with shims.MonitoredTrainingSession(program, checkpoint_dir=model_dir, hooks=hooks) as sess:" \
        in migrated and "shims.estimator.StopAtStepHook(last_step=10)" in migrated
    assert not re.search(r"placeholder|feed_dict|disable_eager_execution|tf\.compat\.v1\.Session", migrated)
    done = cli("verify", tmp_path / "monitored.py", tmp_path / "out" / "monitored.py", "--program",
               "--tf1-python", tf1_python, "--tf1-cache", tf1_oracle.RESULTS, "--program-arg", "{out}",
               "--format", "json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["ok"] and report["init"]["shared"] and report["tf1"]["tensorflow"] == "1.15.5"
    assert [line["tf1"][0] for line in report["streams"]["printed"]["lines"]] == list(range(1, 11))
    # the checkpoints TF1's chief saver wrote (the start, then the end), restorable by TF1 names
    out = tmp_path / "run"
    run = subprocess.run([sys.executable, str(tmp_path / "out" / "monitored.py"), str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert sorted(p.name for p in out.glob("model.ckpt-*.index")) == ["model.ckpt-0.index",
                                                                       "model.ckpt-10.index"]


GRAPH_MODE_BATCH_NORM = '''"""Kept in graph mode (a feed_dict mutated after it is built), with batch norm."""
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
training = tf.placeholder(tf.bool, [])
h = tf.layers.dense(x, 3, use_bias=False, name="hidden")
h = tf.layers.batch_normalization(h, training=training, name="bn")
loss = tf.reduce_mean(tf.square(h - 0.5))
with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
data = np.random.RandomState(0).randn(8, 4).astype(np.float32) * 3 + 1
sess = tf.Session()
sess.run(tf.global_variables_initializer())
feeds = {x: data, training: True}
feeds[x] = data * 0.5
for step in range(4):
    sess.run(train, feed_dict=feeds)
    print("step %d eval loss %.6f" % (step, sess.run(loss, {x: data, training: False})))
'''

SEEDED_DROPOUT = '''"""Dropout under a graph-level seed, each op seeded; shapes printed while building."""
import numpy as np
import tensorflow as tf

tf.set_random_seed(1)
x = tf.placeholder(tf.float32, [2, 4])
y = tf.layers.dropout(x, 0.5, training=True, seed=3)
z = tf.nn.dropout(x, keep_prob=0.5, seed=4)
print("built", y.shape)
with tf.Session() as s:
    for i in range(3):
        print("layers", s.run(y, {x: np.ones((2, 4), np.float32)}).ravel().tolist())
        print("nn", s.run(z, {x: np.ones((2, 4), np.float32)}).ravel().tolist())
'''


COLLECTIONS_PAST_THE_GRAPH = '''"""The variables listed and counted after training, from TF1's collections."""
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
hidden = tf.layers.dense(x, 4, name="hidden")
loss = tf.reduce_mean(tf.layers.dense(hidden, 1, name="out"))
train = tf.train.AdamOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(train, feed_dict={x: np.ones([2, 3], np.float32)})
    print("trained:", " ".join(v.name for v in tf.trainable_variables()))
print("parameters", sum(int(np.prod(v.shape.as_list())) for v in tf.trainable_variables()))
print("saved", len(tf.global_variables()))
'''


@pytest.mark.parametrize("name,source", [("batch_norm_graph_mode", GRAPH_MODE_BATCH_NORM),
                                         ("seeded_dropout", SEEDED_DROPOUT),
                                         ("collections_past_the_graph", COLLECTIONS_PAST_THE_GRAPH)])
def test_tf1_semantics_carried_over(tmp_path, tf1_python, name, source):
    """#25.3 and #25.5 against real TF 1.15. Kept in graph mode, batch norm stays TF1's
    layer, so its UPDATE_OPS run and the moving statistics update (they stayed 0). Seeded
    dropout draws TF1's masks on every run, and what graph-building code prints comes out
    once (it came out once per traced step). TF1's variable collections read after the
    graph (names listed, parameters counted) are the program's: eager TF2 keeps none, so
    they printed nothing and 0."""
    (tmp_path / f"{name}.py").write_text(source)
    migrate(tmp_path / f"{name}.py", tmp_path / "out")
    migrated = (tmp_path / "out" / f"{name}.py").read_text()
    if name == "batch_norm_graph_mode":
        assert "tf.compat.v1.layers.batch_normalization(" in migrated, migrated
    report = equivalent(tf1_python, tmp_path / f"{name}.py", tmp_path / "out" / f"{name}.py")
    if name == "batch_norm_graph_mode":
        moving = [v for v in report["variables"] if v["name"] == "bn/moving_mean"]
        assert moving and moving[0]["ok"], report["variables"]
    else:
        tf1 = tf1_oracle.run_script(tmp_path / f"{name}.py")
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        env.pop("TF_USE_LEGACY_KERAS", None)
        run = subprocess.run([sys.executable, f"{name}.py"], cwd=tmp_path / "out", capture_output=True,
                             text=True, timeout=300, env=env)
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.splitlines() == tf1.splitlines()  # masks, and "built" printed once



def test_a_supervised_program_resumes_a_tf1_logdir_as_tf1_does(tmp_path, tf1_python):
    """#25: a Supervisor program (the PTB tutorial's form, tests/programs/supervisor.py) is
    converted (shims.Supervisor over the program). Trained once on real TF 1.15, its logdir
    is resumed by TF 1.15 and by the migrated program: both restore TF1's checkpoint and go
    on with the same steps and costs."""
    import shutil

    source = os.path.join(os.path.dirname(__file__), "programs", "supervisor.py")
    migrate(source, tmp_path / "out")
    migrated = (tmp_path / "out" / "supervisor.py").read_text()
    assert "sv = shims.Supervisor(program, logdir=logdir)" in migrated, migrated
    assert not re.search(r"Session|placeholder|feed_dict|disable_eager_execution", migrated), migrated
    first = tf1_oracle.run_script(source, tmp_path / "logdir")
    assert "saved at step 12" in first
    shutil.copytree(tmp_path / "logdir", tmp_path / "tf2")
    want = tf1_oracle.run_script(source, tmp_path / "logdir")  # TF1 goes on from step 12
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    run = subprocess.run([sys.executable, str(tmp_path / "out" / "supervisor.py"), str(tmp_path / "tf2")],
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    got = run.stdout
    assert "step 13 " in want and "saved at step 24" in want, want
    numbers = [[float(v) for v in re.findall(r"-?\d+\.?\d*", line)] for line in want.splitlines()]
    mine = [[float(v) for v in re.findall(r"-?\d+\.?\d*", line)] for line in got.splitlines()]
    assert len(numbers) == len(mine), got
    for a, b in zip(numbers, mine):
        assert a == pytest.approx(b, rel=1e-5, abs=1e-5), (want, got)


PRETRAIN = '''
import tensorflow as tf
with tf.variable_scope("bert"):
    tf.get_variable("w", [3, 2], initializer=tf.random_normal_initializer(seed=1))
    tf.get_variable("b", [2], initializer=tf.constant_initializer(0.25))
tf.layers.dense(tf.ones([1, 2]), 2, kernel_initializer=tf.random_normal_initializer(seed=2), name="head")
tf.get_variable("other/v", [2], initializer=tf.constant_initializer(3.0))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    tf.train.Saver().save(sess, "pretrained/model.ckpt")
'''

FINE_TUNE = '''"""Fine-tuning from a pre-trained checkpoint, each form of init_from_checkpoint's map."""
import sys
import numpy as np
import tensorflow as tf

CKPT = sys.argv[1]
x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 2])
with tf.variable_scope("bert"):
    w = tf.get_variable("w", [3, 2], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
h = tf.layers.dense(tf.matmul(x, w) + b, 2, kernel_initializer=tf.zeros_initializer(), name="head")
v = tf.get_variable("mine", [2], initializer=tf.zeros_initializer())
loss = tf.reduce_mean(tf.square(h + v - y))
tf.train.init_from_checkpoint(CKPT, {"bert/": "bert/"})            # scope to scope
tf.train.init_from_checkpoint(CKPT, {"head/kernel": "head/kernel"})  # a layer's weight by name
tf.train.init_from_checkpoint(CKPT, {"other/v": v})                  # a variable object
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
data = np.arange(12, dtype="float32").reshape(4, 3) / 10.0
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("START", " ".join("%.6f" % v for v in np.concatenate(
        [a.ravel() for a in sess.run([w, b, v] + tf.trainable_variables())])))
    losses = [sess.run([train, loss], {x: data, y: np.ones((4, 2), "float32")})[1] for _ in range(4)]
    print("LOSSES", " ".join("%.6f" % v for v in losses))
'''


def test_init_from_checkpoint_starts_from_the_pretrained_weights_as_tf1(tmp_path, tf1_python):
    """BERT's fine-tuning form: `tf.train.init_from_checkpoint` replaced initializers in
    TF1. The converted program ignored it (every weight from its own initializer, exit 0,
    "0 remaining"); it now starts from the checkpoint, for a scope map, a name and a
    variable, and trains on as TF 1.15 does (plain runs: verify --program's shared initial
    values would hide the difference)."""
    ckpt = os.path.join(tf1_oracle.saved(PRETRAIN), "pretrained", "model.ckpt")
    (tmp_path / "fine_tune.py").write_text(FINE_TUNE)
    migrate(tmp_path / "fine_tune.py", tmp_path / "out")
    migrated = (tmp_path / "out" / "fine_tune.py").read_text()
    assert "Session" not in migrated and "placeholder" not in migrated, migrated
    want = tf1_oracle.run_script(tmp_path / "fine_tune.py", ckpt)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    run = subprocess.run([sys.executable, "fine_tune.py", ckpt], cwd=tmp_path / "out",
                         capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = [{line.split()[0]: [float(v) for v in line.split()[1:]] for line in out.splitlines()}
            for out in (want, run.stdout)]
    assert rows[0]["START"][8:10] == [3.0, 3.0] and rows[0]["START"][6:8] == [0.25, 0.25]
    for key, values in rows[0].items():
        np.testing.assert_allclose(rows[1][key], values, rtol=1e-5, atol=1e-6, err_msg=key)
    broken = migrated.replace('{"head/kernel": "head/kernel"}', '{"head/gone": "head/kernel"}')
    (tmp_path / "out" / "broken.py").write_text(broken)
    failed = subprocess.run([sys.executable, "broken.py", ckpt], cwd=tmp_path / "out",
                            capture_output=True, text=True, timeout=300, env=env)
    assert failed.returncode != 0 and "Tensor head/gone is not found in" in failed.stderr


# the model of the cluster program and of the single-process program that resumes from it
MODEL = """x = tf.placeholder(tf.float32, [None, 3])
y = tf.placeholder(tf.float32, [None, 1])
w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=global_step)
"""

CLUSTER = '''"""Between-graph replication as TF 1.x's distributed guide wrote it (one parameter server,
workers, replica_device_setter, MonitoredTrainingSession(master=server.target))."""
import argparse
import sys
import numpy as np
import tensorflow as tf

FLAGS = None


def main(_):
    cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","), "worker": FLAGS.worker_hosts.split(",")})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        server.join()
    elif FLAGS.job_name == "worker":
        with tf.device(tf.train.replica_device_setter(
                worker_device="/job:worker/task:%d" % FLAGS.task_index, cluster=cluster)):
            # MODEL
        rng = np.random.RandomState(FLAGS.task_index)
        losses = []
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(FLAGS.task_index == 0),
                                               checkpoint_dir=FLAGS.log_dir,
                                               hooks=[tf.train.StopAtStepHook(last_step=20)]) as sess:
            while not sess.should_stop():
                data = rng.randn(8, 3).astype(np.float32)
                losses.append(sess.run([train_op, loss], feed_dict={x: data, y: data.sum(1, keepdims=True)})[1])
        print("LOSSES", " ".join("%.6f" % v for v in losses))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--ps_hosts", type=str, default="", help="comma-separated host:port pairs")
    parser.add_argument("--worker_hosts", type=str, default="", help="comma-separated host:port pairs")
    parser.add_argument("--job_name", type=str, default="", help="one of 'ps', 'worker'")
    parser.add_argument("--task_index", type=int, default=0, help="index of the task within its job")
    parser.add_argument("--log_dir", type=str, default="")
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
'''
CLUSTER = CLUSTER.replace("            # MODEL\n", textwrap.indent(MODEL, " " * 12))


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _on_localhost(python, source, log_dir, tf_config=False):
    """A parameter server and one worker (the chief) on loopback ports: the chief's output.
    The server never returns by itself (`server.join()`); it is killed once the chief ends.
    The cluster is given as TF 1.x's flags, or with ``tf_config`` as a cluster manager gives
    it: ``TF_CONFIG`` alone, with a ``chief`` task."""
    ps_host, chief_host = "localhost:%d" % _free_port(), "localhost:%d" % _free_port()
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    for key in ("TF_USE_LEGACY_KERAS", "TF2_BEHAVIOR", "TF_CONFIG"):
        env.pop(key, None)
    hosts, tasks = ["--ps_hosts=" + ps_host, "--worker_hosts=" + chief_host], {}
    ps_flags, chief_flags = ["--job_name=ps"], ["--job_name=worker", "--task_index=0"]
    if tf_config:
        cluster = {"chief": [chief_host], "ps": [ps_host]}
        tasks = {kind: dict(env, TF_CONFIG=json.dumps({"cluster": cluster, "task": {"type": kind, "index": 0}}))
                 for kind in ("ps", "chief")}
        hosts = ps_flags = chief_flags = []
    hosts = hosts + ["--log_dir=%s" % log_dir]
    ps = subprocess.Popen([python, str(source), *hosts, *ps_flags], env=tasks.get("ps", env),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        chief = subprocess.run([python, str(source), *hosts, *chief_flags], env=tasks.get("chief", env),
                               capture_output=True, text=True, timeout=300)
    finally:
        ps.kill()
        ps.wait()
    assert chief.returncode == 0, chief.stderr[-3000:]
    return chief.stdout


def test_an_asynchronous_cluster_program_runs_on_parameter_server_strategy(tmp_path, tf1_python):
    """#27: between-graph replication without SyncReplicasOptimizer (asynchronous workers,
    variables on parameter servers) becomes TF 2's ParameterServerStrategy: the server is
    shims.cluster.ParameterServers, the program `.on_parameter_servers(server)`, eager (no
    graph switch left). On a parameter server and a chief on localhost it prints TF 1.15's
    losses and writes the chief's checkpoint at the last step; that checkpoint loads in a
    single-process program (migrated to eager), which goes on training from the chief's
    step. The migrated program takes its cluster from TF_CONFIG alone (TFM121), the TF 1.15
    run from its flags."""
    (tmp_path / "cluster.py").write_text(CLUSTER)
    migrate(tmp_path / "cluster.py", tmp_path / "out")
    migrated = (tmp_path / "out" / "cluster.py").read_text()
    assert "disable_eager_execution" not in migrated and "placeholder" not in migrated
    assert "shims.cluster.ParameterServers(cluster, " in migrated and ".on_parameter_servers(server)" in migrated
    assert migrated.count("default=shims.cluster.tf_config_flag(") == 4
    again = cli("upgrade", tmp_path / "out" / "cluster.py", "--no-diff", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr
    want = _on_localhost(tf1_python, tmp_path / "cluster.py", tmp_path / "tf1")
    got = _on_localhost(sys.executable, tmp_path / "out" / "cluster.py", tmp_path / "tf2", tf_config=True)
    assert want.split()[0] == got.split()[0] == "LOSSES" and len(want.split()) == len(got.split()) == 21
    np.testing.assert_allclose([float(v) for v in got.split()[1:]], [float(v) for v in want.split()[1:]],
                               rtol=1e-5, atol=1e-6)
    for side in ("tf1", "tf2"):
        assert (tmp_path / side / "model.ckpt-20.index").exists()
    _resumes_in_one_process(tmp_path, tmp_path / "tf2", 20)


def _resumes_in_one_process(tmp_path, log_dir, step_wanted):
    """The chief's checkpoint in ``log_dir`` loads in a single-process program (migrated to
    eager) that goes on training from the chief's step."""
    (tmp_path / "resume.py").write_text(RESUME)
    migrate(tmp_path / "resume.py", tmp_path / "resumed")
    resumed = tmp_path / "resumed" / "resume.py"
    assert "shims.GraphProgram" in resumed.read_text() and "Session" not in resumed.read_text()
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    proc = subprocess.run([sys.executable, str(resumed), str(log_dir)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    step, before, after = [float(v) for v in proc.stdout.split("RESUMED", 1)[1].split()]
    assert step == step_wanted and after < before and "SAME_W True" in proc.stdout, proc.stdout


LOST_PS = CLUSTER.replace("import sys\n", "import sys\nimport time\n").replace(
    'parser.add_argument("--log_dir", type=str, default="")',
    'parser.add_argument("--log_dir", type=str, default="")\n'
    '    parser.add_argument("--last_step", type=int, default=20)').replace(
    "checkpoint_dir=FLAGS.log_dir,", "checkpoint_dir=FLAGS.log_dir, save_checkpoint_steps=5,").replace(
    "last_step=20", "last_step=FLAGS.last_step").replace(
    "            while not sess.should_stop():",
    "            print(\"START\", sess.run(global_step), flush=True)\n"
    "            while not sess.should_stop():\n                time.sleep(0.02)")


def _latest(log_dir):
    """The checkpoint TF's ``checkpoint`` file names (tf.train.latest_checkpoint, read here)."""
    state = log_dir / "checkpoint"
    if not state.exists():
        return None
    found = re.search(r'^model_checkpoint_path: "(.*)"$', state.read_text(), re.M)
    return found and os.path.join(str(log_dir), found.group(1))


def _task(python, source, hosts, *flags, env, log):
    """One task of a cluster on localhost, its output in files (a full pipe would block it)."""
    with open(str(log) + ".out", "w") as out, open(str(log) + ".err", "w") as err:
        return subprocess.Popen([python, str(source), *hosts, *flags], env=env, stdout=out, stderr=err)


def _until_checkpoint(log_dir, step, chief):
    """Waits until the chief has written a checkpoint at ``step`` or later (or has ended)."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and chief.poll() is None:
        latest = _latest(log_dir)
        if latest and int(latest.rsplit("-", 1)[1]) >= step:
            return
        time.sleep(0.2)


# kept on its TF1 cluster: graph code only the chief builds (every worker of a strategy builds
# the same program)
LOST_PS_KEPT = LOST_PS.replace(
    "            train_op = ",
    "            if FLAGS.task_index == 0:\n"
    "                tf.identity(w, name=\"chief_view\")\n"
    "            train_op = ")


def _cluster_job(tmp_path, source, log_dir, env):
    """Runs one job of ``source`` on localhost (a parameter server and ``workers`` workers,
    the first the chief), killing tasks when the chief's checkpoints reach given steps:
    (the chief's exit status, output, error output)."""
    def run_job(last_step, workers=1, kill_worker_at=None, kill_ps_at=None):
        hosts = ["--ps_hosts=localhost:%d" % _free_port(),
                 "--worker_hosts=" + ",".join("localhost:%d" % _free_port() for _ in range(workers)),
                 "--log_dir=%s" % log_dir, "--last_step=%d" % last_step]
        logs = tmp_path / ("job%d" % len(list(tmp_path.glob("job*"))))
        logs.mkdir()
        tasks = [_task(sys.executable, source, hosts, "--job_name=ps", env=env, log=logs / "ps")]
        tasks += [_task(sys.executable, source, hosts, "--job_name=worker", "--task_index=%d" % i, env=env,
                        log=logs / ("worker%d" % i)) for i in range(workers)]
        chief = tasks[1]
        try:
            if kill_worker_at is not None:  # asynchronous training goes on without it
                _until_checkpoint(log_dir, kill_worker_at, chief)
                tasks[2].kill()
            if kill_ps_at is not None:
                _until_checkpoint(log_dir, kill_ps_at, chief)
                tasks[0].kill()
            chief.wait(timeout=240)  # a hang fails here, not in CI's limit
            for task in tasks[2:]:  # a worker ends once the chief has ended (else: killed below)
                task.wait(timeout=60)
        finally:
            for task in tasks:
                task.kill()
                task.wait()
        return chief.returncode, (logs / "worker0.out").read_text(), (logs / "worker0.err").read_text()
    return run_job


@pytest.mark.parametrize("form", ["converted", "kept"])
def test_a_lost_parameter_server_stops_the_chief_with_a_checkpoint_to_resume_from(tmp_path, form):
    """#27: on TF 1.15 and on TF 2.21 alike, a TF1 chief whose parameter server died waits for
    it for ever (measured: still waiting after 50 s). Migrated, a worker killed mid-run does
    not stop the chief (asynchronous training goes on without it, as on TF 1.15), the
    parameter server killed later stops it within seconds with one error naming the lost
    task and the checkpoint to resume from, and a restarted job (a new parameter server and
    chief) resumes from that checkpoint's step and finishes. ``converted``: the program runs
    on ParameterServerStrategy, whose coordinator reschedules a lost worker's steps and
    stops on a lost parameter server. ``kept`` (graph code only the chief builds): the
    program keeps its TF1 cluster, its server is shims.cluster.Server, which stops the
    chief after TFM_LOST_TASK_SECONDS. A second upgrade of either changes nothing (the kept
    one's says again why it stays in graph mode)."""
    (tmp_path / "cluster.py").write_text(LOST_PS if form == "converted" else LOST_PS_KEPT)
    migrate(tmp_path / "cluster.py", tmp_path / "out")
    source = tmp_path / "out" / "cluster.py"
    if form == "converted":
        assert ".on_parameter_servers(server)" in source.read_text()
    else:
        assert "shims.cluster.Server(" in source.read_text()
        assert "tf.compat.v1.train.StopAtStepHook" in source.read_text()
    again = cli("upgrade", source, "--no-diff", "--no-cache")  # (the kept program is said again: #59)
    assert again.returncode == (0 if form == "converted" else 1) and "0 would change" in again.stderr, \
        again.stdout + again.stderr
    log_dir = tmp_path / "logs"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore", TFM_LOST_TASK_SECONDS="4")
    for key in ("TF_USE_LEGACY_KERAS", "TF2_BEHAVIOR"):
        env.pop(key, None)
    run_job = _cluster_job(tmp_path, source, log_dir, env)

    code, out, err = run_job(100000, workers=2, kill_worker_at=5, kill_ps_at=15)
    assert code == 1, (code, out[-2000:], err[-3000:])
    if form == "converted":
        error = [line for line in err.splitlines() if line.startswith("RuntimeError: shims.MonitoredTrainingSession")]
        assert len(error) == 1 and ": /job:ps/task:0 at localhost:" in error[0], err[-3000:]
        assert "restart the job" in error[0]
        checkpoint = error[0].split("the latest checkpoint, ", 1)[1].split(" (step ", 1)[0]
    else:
        error = [line for line in err.splitlines() if line.startswith("tf-migrate: ")]
        assert len(error) == 1 and "/job:ps/task:0 (localhost:" in error[0], err[-3000:]
        assert "TFM_LOST_TASK_SECONDS=4" in error[0] and "restart the job" in error[0]
        checkpoint = error[0].rsplit("the last checkpoint this task wrote is ", 1)[1].strip()
    step = int(checkpoint.rsplit("-", 1)[1])
    assert step >= 15 and os.path.exists(checkpoint + ".index"), error[0]
    assert _latest(log_dir) == checkpoint
    # the restarted job: a new parameter server and chief, the same checkpoint directory
    code, out, err = run_job(step + 10)
    assert code == 0, err[-3000:]
    assert out.split()[:2] == ["START", str(step)], out[-2000:]
    assert len(out.split("LOSSES", 1)[1].split()) == 10
    assert _latest(log_dir).endswith("model.ckpt-%d" % (step + 10))


# the train op run alone (the chief does not wait for its step) and a held-out loss read now
# and then: steps run on every worker at once
PIPELINED = LOST_PS.replace(
    "                losses.append(sess.run([train_op, loss], feed_dict={x: data, y: data.sum(1, keepdims=True)})[1])",
    "                sess.run(train_op, feed_dict={x: data, y: data.sum(1, keepdims=True)})\n"
    "                if rng.rand() < 0.2:\n"
    "                    held = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)\n"
    "                    losses.append(sess.run(loss, feed_dict={x: held, y: held.sum(1, keepdims=True)}))")


def test_a_parameter_server_program_trains_on_three_workers(tmp_path):
    """#27: the asynchronous program on ParameterServerStrategy with a parameter server and
    three workers on localhost: the chief schedules its train steps on the workers without
    waiting for each (at most one in flight per worker), the held-out loss falls, training
    stops at the last step (at most a step per worker past it, as TF1's asynchronous
    workers did), every other worker ends by itself once the chief has ended (exit status
    0, as a TF1 worker ended with training), and the chief's last checkpoint loads in a
    single-process program that goes on training from its step."""
    assert PIPELINED != LOST_PS
    (tmp_path / "cluster.py").write_text(PIPELINED)
    migrate(tmp_path / "cluster.py", tmp_path / "out")
    source = tmp_path / "out" / "cluster.py"
    log_dir = tmp_path / "logs"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    for key in ("TF_USE_LEGACY_KERAS", "TF2_BEHAVIOR"):
        env.pop(key, None)
    hosts = ["--ps_hosts=localhost:%d" % _free_port(),
             "--worker_hosts=" + ",".join("localhost:%d" % _free_port() for _ in range(3)),
             "--log_dir=%s" % log_dir, "--last_step=300"]
    tasks = [_task(sys.executable, source, hosts, "--job_name=ps", env=env, log=tmp_path / "ps")]
    tasks += [_task(sys.executable, source, hosts, "--job_name=worker", "--task_index=%d" % i, env=env,
                    log=tmp_path / ("worker%d" % i)) for i in range(3)]
    try:
        assert tasks[1].wait(timeout=240) == 0, (tmp_path / "worker0.err").read_text()[-3000:]
        for i in (2, 3):  # the other workers end by themselves
            assert tasks[i].wait(timeout=60) == 0, (tmp_path / ("worker%d.err" % (i - 1))).read_text()[-3000:]
    finally:
        for task in tasks:
            task.kill()
            task.wait()
    for i in (1, 2):
        assert "runs the steps the chief schedules" in (tmp_path / ("worker%d.err" % i)).read_text()
    losses = [float(v) for v in (tmp_path / "worker0.out").read_text().split("LOSSES", 1)[1].split()]
    assert len(losses) > 20 and np.mean(losses[-5:]) < 0.2 * np.mean(losses[:5]), losses
    step = int(_latest(log_dir).rsplit("-", 1)[1])
    assert 300 <= step <= 302, step
    _resumes_in_one_process(tmp_path, log_dir, step)


RESUME = '''"""One process, no cluster: the chief's checkpoint restored, training goes on."""
import sys
import numpy as np
import tensorflow as tf

# MODEL
saver = tf.train.Saver()
rng = np.random.RandomState(7)
with tf.Session() as sess:
    saver.restore(sess, tf.train.latest_checkpoint(sys.argv[1]))
    print("SAME_W", bool(np.allclose(sess.run(w), tf.train.load_variable(sys.argv[1], "w"))))
    step = sess.run(global_step)
    held_out = rng.randn(64, 3).astype(np.float32)
    before = sess.run(loss, feed_dict={x: held_out, y: held_out.sum(1, keepdims=True)})
    for _ in range(30):
        data = rng.randn(8, 3).astype(np.float32)
        sess.run(train_op, feed_dict={x: data, y: data.sum(1, keepdims=True)})
    after = sess.run(loss, feed_dict={x: held_out, y: held_out.sum(1, keepdims=True)})
    print("RESUMED", step, "%.6f" % before, "%.6f" % after)
'''
RESUME = RESUME.replace("# MODEL\n", MODEL)


MIXED_SECTIONS = '''"""A notebook's chapter as a script: one experiment after another, each after
reset_graph(). The first reads its session's graph (kept in graph mode), the second only
builds a graph, the third trains; a network function of the script serves the first and
the third."""
import numpy as np
import tensorflow as tf


def reset_graph(seed=42):
    tf.reset_default_graph()
    tf.set_random_seed(seed)
    np.random.seed(seed)


def net(X, n_hidden):
    hidden = tf.layers.dense(X, n_hidden, activation=tf.nn.relu, name="hidden",
                             kernel_initializer=tf.constant_initializer(0.1))
    return tf.layers.dense(hidden, 2, name="outputs", kernel_initializer=tf.constant_initializer(-0.05))


rng = np.random.RandomState(0)
X_data = rng.randn(64, 3).astype(np.float32)
labels = (X_data.dot([1.0, -2.0, 0.5]) > 0).astype(np.int32)

reset_graph()

X = tf.placeholder(tf.float32, shape=(None, 3), name="X")
y = tf.placeholder(tf.int32, shape=(None), name="y")
logits = net(X, 4)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
training_op = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    init.run()
    for step in range(8):
        _, loss_val = sess.run([training_op, loss], feed_dict={X: X_data, y: labels})
        print("kept step", step, loss_val)
    print("graph nodes above 10:", len(sess.graph_def.node) > 10)

reset_graph()

X = tf.placeholder(tf.float32, shape=(None, 3), name="X")
hidden = tf.layers.dense(X, 5, name="hidden")
print("hidden units", hidden.shape[-1])

reset_graph()

X = tf.placeholder(tf.float32, shape=(None, 3), name="X")
y = tf.placeholder(tf.int32, shape=(None), name="y")
logits = net(X, 6)
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
training_op = tf.train.AdamOptimizer(0.05).minimize(loss)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    init.run()
    for step in range(8):
        _, loss_val = sess.run([training_op, loss], feed_dict={X: X_data, y: labels})
        print("converted step", step, loss_val)
'''


def test_sections_after_reset_default_graph_are_programs_of_their_own(tmp_path, tf1_python):
    """A script that starts a new graph with `reset_graph()` (`tf.reset_default_graph()`)
    before each experiment, rebinding the same names: each section is its own program. The
    trainable one becomes eager; the one that must stay in graph mode, and the one that only
    builds a graph, run on a graph of their own (`with shims.tf1_graph():`), since the
    global switch would stop the eager one; all three print what TF 1.15 printed, and a
    second upgrade changes nothing (the function they share keeps TF1's layers)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "chapter.py").write_text(MIXED_SECTIONS)
    done = migrate(tmp_path / "src" / "chapter.py", tmp_path / "out")
    assert "kept in TF1 graph mode: the session 'sess' is used other than by run()/close()" in done.stdout
    migrated = (tmp_path / "out" / "chapter.py").read_text()
    assert migrated.count("with shims.tf1_graph():") == 2, migrated
    assert migrated.count("shims.GraphProgram(") == 1 and "disable_eager_execution" not in migrated
    assert migrated.count("tf.compat.v1.layers.dense(") == 3, migrated  # graph mode: TF1's layers
    again = cli("upgrade", tmp_path / "out" / "chapter.py", "--check", "--no-cache")
    assert again.returncode == 0, again.stdout + again.stderr
    report = equivalent(tf1_python, tmp_path / "src" / "chapter.py", tmp_path / "out" / "chapter.py")
    printed = [line for stream in report["streams"].values() for line in stream["lines"]]
    assert sum(len(line["tf1"]) for line in printed) >= 16


KEPT_PROGRAM = '''import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32)
w = tf.Variable(0.5)
loss = tf.reduce_mean(tf.square(x * w - 1.0))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train, {x: np.ones(4)})
    for test in (np.arange(3.0), np.arange(5.0)):  # (a step traced once would keep the first)
        print("TEST", sess.run(tf.reduce_sum(x * w) / test.shape[0], {x: test}))
'''


def test_a_program_kept_in_graph_mode_is_still_said_after_write(tmp_path):
    """After --write, the reasons stay: `upgrade --check` over the migrated file (spelled
    tf.compat.v1, graph mode switched on) changes nothing and says again which program
    stays in TF1 graph mode and why (#59)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "kept.py").write_text(KEPT_PROGRAM)
    first = migrate(src, tmp_path / "out")
    assert "Session program kept in TF1 graph mode: a fetch that is not a graph name" in first.stdout, first.stdout
    migrated = (tmp_path / "out" / "kept.py").read_text()
    assert "tf.compat.v1.disable_eager_execution()" in migrated and "tf.compat.v1.Session()" in migrated, migrated
    again = cli("upgrade", tmp_path / "out" / "kept.py", "--check", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr
    said = [line for line in again.stdout.splitlines() if "TFM501" in line]
    assert len(said) == 1 and "kept in TF1 graph mode: a fetch that is not a graph name" in said[0] \
        and "reads the Python value test" in said[0], again.stdout
