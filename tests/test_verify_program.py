"""`tf-migrate verify --program --tf1-python` on programs as people write them: the
original runs on real TensorFlow 1.15 (tests/tf1_oracle.py), the migration on TF 2.21.
Output as tutorials print it, Estimator log lines, relative data paths, each tree's own
imports, programs kept in graph mode, TF1's own non-determinism, the plot, errors."""
import json
import os
import subprocess
import sys

import pytest

import tf1_oracle
import tfm_cli

pytest.importorskip("tensorflow")



def cli(*args, cwd=None):
    return tfm_cli.run(*args, cwd=cwd)


def migrate(tree, out):
    done = cli("upgrade", tree, "--outtree", out, "--no-cache")
    assert done.returncode in (0, 1), done.stderr
    return out


def verify(tf1_python, legacy, migrated, *extra, cwd=None):
    return cli("verify", legacy, migrated, "--program", "--tf1-python", tf1_python,
               "--tf1-cache", tf1_oracle.RESULTS, *extra, cwd=cwd)


REGRESSION = '''
import numpy as np
import tensorflow as tf

np.random.seed(0)
X_data = np.random.rand(100, 3).astype(np.float32)
y_data = X_data.dot(np.array([[1.5], [-2.0], [0.7]], np.float32)) + 0.3

X = tf.placeholder(tf.float32, [None, 3])
Y = tf.placeholder(tf.float32, [None, 1])
hidden = tf.layers.dense(X, 10, activation=tf.nn.relu)
pred = tf.layers.dense(hidden, 1)
loss = tf.reduce_mean(tf.square(pred - Y))
train = tf.train.GradientDescentOptimizer(LR).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(40):
        _, l = sess.run([train, loss], feed_dict={X: X_data, Y: y_data})
        if step % 5 == 0:
            print("step %d, loss=%.6f" % (step, l))
    print("Optimization Finished!")
'''


def test_an_unmodified_tutorial_is_equivalent_and_a_changed_learning_rate_is_not(tmp_path, tf1_python):
    """The README's example: unseeded glorot weights shared from the TF1 run, `loss=`
    every 5 steps compared; the migrated copy with another learning rate is NOT
    equivalent, and the verdict names the first differing line and its values."""
    (tmp_path / "reg.py").write_text(REGRESSION.replace("LR", "0.1"))
    migrate(tmp_path / "reg.py", tmp_path / "out")
    good = verify(tf1_python, tmp_path / "reg.py", tmp_path / "out" / "reg.py", "--format", "json")
    assert good.returncode == 0, good.stdout[-3000:] + good.stderr
    report = json.loads(good.stdout)
    assert report["ok"] and report["init"]["shared"] and report["init"]["migrated_loaded"] == 4
    assert report["tf1"]["tensorflow"] == "1.15.5" and report["migrated_run"]["tensorflow"].startswith("2.")
    assert [line["tf1"][0] for line in report["streams"]["printed"]["lines"]] == list(range(0, 40, 5))
    assert {v["name"] for v in report["variables"]} == {"dense/kernel", "dense/bias", "dense_1/kernel",
                                                        "dense_1/bias"}
    changed = tmp_path / "out" / "changed.py"
    changed.write_text((tmp_path / "out" / "reg.py").read_text().replace("(0.1)", "(0.11)")
                       .replace("learning_rate=0.1)", "learning_rate=0.11)"))
    bad = verify(tf1_python, tmp_path / "reg.py", changed)
    text = " ".join(bad.stdout.split())
    assert bad.returncode == 1 and "NOT EQUIVALENT" in text
    assert "first difference: TF1 line 2 'step 5, loss=" in text and "value 2: TF1" in text, text


TUTORIAL_OUTPUT = '''
import time
import numpy as np
import tensorflow as tf

tf.set_random_seed(3)  # one draw of W: a 4-digit print of another could round the other way
rng = np.random.RandomState(1)
data = rng.randn(128, 4).astype("float32")
target = (data[:, :1] > 0).astype("float32")
x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
W = tf.Variable(tf.random_normal([4, 1]))
b = tf.Variable(tf.zeros([1]))
logits = tf.matmul(x, W) + b
cost = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
optimizer = tf.train.AdamOptimizer(0.05).minimize(cost)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(logits > 0, tf.float32), y), tf.float32))
print(x)
init = tf.global_variables_initializer()
with tf.Session() as sess:
    sess.run(init)
    for epoch in range(6):
        start = time.time()
        avg_cost = 0.
        for i in range(4):
            _, c = sess.run([optimizer, cost], feed_dict={x: data[i * 32:(i + 1) * 32], y: target[i * 32:(i + 1) * 32]})
            avg_cost += c / 4
        print("Epoch:", '%04d' % (epoch + 1), "cost=", "{:.9f}".format(avg_cost),
              "(%.3f sec)" % (time.time() - start))
        acc = sess.run(accuracy, feed_dict={x: data, y: target})
        print("step %d, loss %.4f, acc %.2f, %d examples/sec" % (epoch * 4, avg_cost, acc, 1000 + epoch))
    print("Model saved in file: /tmp/model-%d.ckpt" % 6)
'''


def test_numbers_are_read_from_lines_as_tutorials_print_them(tmp_path, tf1_python):
    """`Epoch: 0001 cost= 0.3479`, `step 20, loss 0.51, acc 0.78`: every number is
    compared; times, rates, paths and a printed graph tensor are not results."""
    (tmp_path / "tutorial.py").write_text(TUTORIAL_OUTPUT)
    migrate(tmp_path / "tutorial.py", tmp_path / "out")
    proc = verify(tf1_python, tmp_path / "tutorial.py", tmp_path / "out" / "tutorial.py", "--format", "json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["ok"], report["first_difference"]
    lines = report["streams"]["printed"]["lines"]
    templates = {line["template"] for line in lines}
    assert templates == {"Epoch: # cost= # (<t>)", "step #, loss #, acc #, <t>"}, templates
    assert sum(len(line["tf1"]) for line in lines) == 6 * 2 + 6 * 3


ESTIMATOR = '''
import sys
import numpy as np
import tensorflow as tf

tf.logging.set_verbosity(tf.logging.INFO)


def model_fn(features, labels, mode):
    logits = tf.layers.dense(features["x"], 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss, tf.train.get_global_step())
    acc = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={"acc": acc})


rng = np.random.RandomState(0)
x = rng.randn(64, 4).astype("float32")
y = (x.sum(1) > 0).astype("int32")
train_fn = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=16, num_epochs=None, shuffle=False)
eval_fn = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=16, num_epochs=1, shuffle=False)
config = tf.estimator.RunConfig(log_step_count_steps=10)
estimator = tf.estimator.Estimator(model_fn, sys.argv[1], config=config)
estimator.train(train_fn, steps=30)
print(estimator.evaluate(eval_fn))
'''


def test_estimator_log_lines_are_matched_by_step(tmp_path, tf1_python):
    """Real tf.estimator logs `loss = 0.69, step = 1` and `Saving dict for global step
    30: ...`; shims.estimator logs the same lines, compared by step; the dict the
    program prints (NumPy 2 prints np.float32(...)) too; unseeded initial values shared."""
    (tmp_path / "est.py").write_text(ESTIMATOR)
    migrate(tmp_path / "est.py", tmp_path / "out")
    proc = verify(tf1_python, tmp_path / "est.py", tmp_path / "out" / "est.py", "--program-arg", "{out}",
                  "--format", "json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["ok"], report["first_difference"]
    logged = report["streams"]["logged"]["lines"]
    assert [line["step"] for line in logged] == [1, 11, 21, 30]
    assert report["init"]["shared"]
    assert len(report["streams"]["printed"]["lines"]) == 1


def test_each_program_runs_in_its_own_folder_with_its_own_imports(tmp_path, tf1_python):
    """A research layout: `python train.py` from the repository root reads `data/...`
    relative to it and imports `model.py` beside it; the migrated tree's copies are
    the ones the migrated run reads and imports."""
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    import numpy as np

    np.save(repo / "data" / "features.npy", np.random.RandomState(0).randn(32, 5).astype("float32"))
    (repo / "model.py").write_text(
        "import tensorflow as tf\n\n\ndef build(x):\n"
        "    return tf.layers.dense(x, 1, name='head')\n")
    (repo / "train.py").write_text('''
import numpy as np
import tensorflow as tf
from model import build

features = np.load("data/features.npy")
x = tf.placeholder(tf.float32, [None, 5])
loss = tf.reduce_mean(tf.square(build(x) - 1.0))
step = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(12):
        print("iter", i, "loss", sess.run([step, loss], {x: features})[1])
''')
    migrate(repo, tmp_path / "migrated")
    proc = verify(tf1_python, "train.py", tmp_path / "migrated" / "train.py", "--format", "json", cwd=repo)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    report = json.loads(proc.stdout)
    assert report["tf1"]["cwd"] == str(repo) and report["migrated_run"]["cwd"] == str(tmp_path / "migrated")
    assert len(report["streams"]["printed"]["lines"]) == 12


KEPT = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3], name="x")
hidden = tf.layers.dense(x, 4, activation=tf.nn.relu, name="hidden")
loss = tf.reduce_mean(tf.square(hidden - 1.0))
train = tf.train.AdamOptimizer(0.1).minimize(loss)
data = np.arange(12, dtype="float32").reshape(4, 3) / 10.0
sess = tf.Session()
sess.run(tf.global_variables_initializer())
feeds = {x: data}
feeds[x] = data * 0.5  # changed after it was built: the tool keeps this program in graph mode
for i in range(8):
    print("loss", sess.run([train, loss], feed_dict=feeds)[1])
'''


def test_a_program_kept_in_graph_mode_is_verified_variable_by_variable(tmp_path, tf1_python):
    (tmp_path / "kept.py").write_text(KEPT)
    migrate(tmp_path / "kept.py", tmp_path / "out")
    assert "disable_eager_execution" in (tmp_path / "out" / "kept.py").read_text()
    proc = verify(tf1_python, tmp_path / "kept.py", tmp_path / "out" / "kept.py", "--format", "json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["ok"], report
    assert report["init"]["migrated_loaded"] == report["init"]["tf1_saved"] == 8  # kernel, bias, 2 slots each, betas
    assert all(v["ok"] and "missing" not in v for v in report["variables"]) and len(report["variables"]) == 8


NOISY = '''
import tensorflow as tf

x = tf.Variable(tf.ones([200]))
noise = tf.random_uniform([200])  # unseeded: another draw on every run
total = tf.reduce_sum(x * noise)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("total", sess.run(total))
    print("size", sess.run(tf.size(x)))
'''


def test_repeat_says_where_tf1_itself_is_not_deterministic(tmp_path, tf1_python):
    (tmp_path / "noisy.py").write_text(NOISY)
    migrate(tmp_path / "noisy.py", tmp_path / "out")
    proc = cli("verify", tmp_path / "noisy.py", tmp_path / "out" / "noisy.py", "--program",
               "--tf1-python", tf1_python, "--repeat", "2")
    text = " ".join(proc.stdout.split())
    assert "TF1 ran 2 times: 1 printed lines differed between its own runs (TF1 is not deterministic" in text


SHUFFLED = '''
import random

import numpy as np
import tensorflow as tf

data = np.random.randn(64, 3).astype(np.float32)  # numpy unseeded, as tutorials draw
np.random.seed(None)  # TF 1.x's MNIST reader reseeds so for every DataSet, to shuffle
order = np.random.permutation(64)
x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.ones([3, 1]))
loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(8):
        batch = data[order[step * 8:(step + 1) * 8]]
        print("step", step, sess.run([train, loss], feed_dict={x: batch})[1], random.random())
'''


def test_unseeded_numpy_and_python_randomness_is_the_same_on_both_sides(tmp_path, tf1_python):
    """A program's unseeded draws (numpy's global state, np.random.seed(None) as TF 1.x's
    MNIST reader calls it to shuffle, Python's random) differed between the TF1 run and
    the migrated run, so a tutorial's batches did and verify found no tutorial on MNIST
    equivalent; both sides now start from the same seed."""
    (tmp_path / "shuffled.py").write_text(SHUFFLED)
    migrate(tmp_path / "shuffled.py", tmp_path / "out")
    proc = verify(tf1_python, tmp_path / "shuffled.py", tmp_path / "out" / "shuffled.py", "--format", "json")
    report = json.loads(proc.stdout)
    assert report["ok"], report["first_difference"]
    lines = [line for stream in report["streams"].values() for line in stream["lines"]]
    assert len(lines) == 8


UNKNOWN_SHAPE = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 2])
centers = tf.Variable(tf.random_uniform([3, 2], seed=1), validate_shape=False, name="centers")
distance = tf.reduce_sum(tf.square(tf.expand_dims(x, 1) - tf.reshape(centers, [1, 3, 2])), axis=2)
nearest = tf.argmin(distance, axis=1)
update = tf.assign(centers, tf.reshape(centers, [3, 2]) * 0.9)
data = np.random.RandomState(0).randn(6, 2).astype(np.float32)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("rank", centers.shape.ndims)  # a graph value read outside run(): kept in graph mode
    for step in range(3):
        print("nearest", sess.run(nearest, feed_dict={x: data}), sess.run(update).ravel())
'''


def test_a_variable_without_a_static_shape_takes_its_initial_value(tmp_path, tf1_python):
    """A variable made with validate_shape=False (k-means' cluster centers) has no static
    shape: loading the TF1 run's initial values into the migrated run crashed it
    ("as_list() is not defined on an unknown TensorShape"); it is loaded like the others."""
    (tmp_path / "centers.py").write_text(UNKNOWN_SHAPE)
    migrate(tmp_path / "centers.py", tmp_path / "out")
    assert "disable_eager_execution" in (tmp_path / "out" / "centers.py").read_text()
    proc = verify(tf1_python, tmp_path / "centers.py", tmp_path / "out" / "centers.py", "--format", "json")
    report = json.loads(proc.stdout)
    assert report["ok"], report["first_difference"]
    assert report["init"]["shared"] and report["init"]["migrated_loaded"] == 1, report["init"]


def test_plot_and_the_compat_note(tmp_path):
    """Without --tf1-python the legacy side is TF 2's compat.v1 and the report says it is
    not TF1; --plot draws one panel per printed series with both curves."""
    (tmp_path / "reg.py").write_text(REGRESSION.replace("LR", "0.1"))
    migrate(tmp_path / "reg.py", tmp_path / "out")
    proc = cli("verify", tmp_path / "reg.py", tmp_path / "out" / "reg.py", "--program",
               "--plot", tmp_path / "p.svg")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "which is not TF1" in " ".join(proc.stdout.split())
    svg = (tmp_path / "p.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 2 and ">loss=<" not in svg
    assert ">step: loss<" in svg  # the step counter is the x axis, the loss the one series
    html = cli("verify", tmp_path / "reg.py", tmp_path / "out" / "reg.py", "--program",
               "--plot", tmp_path / "p.html")
    assert html.returncode == 0 and (tmp_path / "p.html").read_text().startswith("<!doctype html>")


def test_errors_are_one_line_naming_the_exception_and_the_users_frame(tmp_path, tf1_python):
    (tmp_path / "reg.py").write_text(REGRESSION.replace("LR", "0.1"))
    broken = tmp_path / "broken.py"
    broken.write_text("import tensorflow as tf\n\n\ndef build():\n    with tf.variable_scope('a'):\n"
                      "        pass\n\n\nbuild()\n")
    proc = verify(tf1_python, tmp_path / "reg.py", broken)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "AttributeError: module 'tensorflow' has no attribute 'variable_scope'" in lines[0]
    assert f"(at {broken}:5 in build)" in lines[0]
    for args, message in ((("--tf1-python", tmp_path / "nope"), "not an executable file"),
                          (("--plot", tmp_path / "p.jpg"), "the picture is .svg, .html or .png"),
                          (("--repeat", "0"), "--repeat must be 1 or more")):
        bad = cli("verify", tmp_path / "reg.py", tmp_path / "reg.py", "--program", *args)
        assert bad.returncode == 2 and message in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_the_error_line_skips_carets_and_tf_migrates_own_frames():
    """Python 3.11 puts ^^^ markers under frames; a frame inside shims/ or migrate/ (even
    installed editable, outside site-packages) is not the user's."""
    import shims
    from migrate.verify.models import failure_of

    ours = os.path.join(os.path.dirname(os.path.abspath(shims.__file__)), "_layer.py")
    stderr = (f'Traceback (most recent call last):\n  File "/home/u/p/model.py", line 30, in call\n'
              f'    x = self.f(y)\n        ^^^^^^^^^\n  File "{ours}", line 130, in _run\n'
              f'    return fn()\n           ^^^^\n'
              f"AttributeError: module 'tensorflow' has no attribute 'variable_scope'\n")
    assert failure_of(stderr) == ("AttributeError: module 'tensorflow' has no attribute 'variable_scope'",
                                  "/home/u/p/model.py:30 in call")


def test_speed_hint_names_the_remedy():
    """Past 10% slower per step, the report says why and what to try; never a timed test:
    the numbers here are given, not measured."""
    from migrate.verify.program import speed_hint

    assert speed_hint(100.0, 109.0, {}) is None
    assert speed_hint(None, 500.0, {}) is None
    hint = speed_hint(30.0, 522.0, {})
    assert "17x slower" in hint and "TF_ENABLE_ONEDNN_OPTS=0" in hint
    off = speed_hint(30.0, 60.0, {"TF_ENABLE_ONEDNN_OPTS": "0"})
    assert "oneDNN off too" in off and "retracing" in off


def test_speed_hint_reads_the_setting_the_migrated_program_ran_with():
    """The migrated program's `import shims` turned oneDNN off in its own process, whatever
    verify's environment says: the hint follows what that run recorded."""
    from migrate.verify.program import _timings

    class Side:
        def __init__(self, meta):
            self.meta = meta

    tf1 = Side({"runs": [0.01] * 3})
    assert "oneDNN off too" in _timings([tf1], Side({"runs": [0.05] * 3, "onednn": "0"}))["hint"]
    assert "run it with TF_ENABLE_ONEDNN_OPTS=0" in \
        _timings([tf1], Side({"runs": [0.05] * 3, "onednn": "1"}))["hint"]


@pytest.mark.parametrize("given,expected", [(None, "0"), ("1", "1")])
def test_shims_keeps_tf1_kernels_unless_told(given, expected):
    """`import shims` before TensorFlow turns oneDNN off (TF 1.15's kernels: same numbers,
    measured 17x faster on a text CNN); a user's own TF_ENABLE_ONEDNN_OPTS wins."""
    env = {k: v for k, v in os.environ.items() if k != "TF_ENABLE_ONEDNN_OPTS"}
    if given is not None:
        env["TF_ENABLE_ONEDNN_OPTS"] = given
    done = subprocess.run([sys.executable, "-c", "import os, shims; print(os.environ['TF_ENABLE_ONEDNN_OPTS'])"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == expected


def test_numpy_s_layout_of_an_array_is_not_part_of_the_text():
    """numpy pads an array's numbers to the widest and may switch to exponents by the last
    digits of its other elements: TF1 printed `[[0.23051164]` where the migrated run prints
    `[[0.2305116 ]`, `[-2224343. ]` where it prints `[-2.2243430e+06]`. The lines align
    and their numbers are compared (found on hunkim's DeepLearningZeroToAll labs, where
    such lines failed as "the text differs" and put every later line out of step)."""
    from migrate.verify.program.lines import compare, stdout_records

    tf1 = ("Hypothesis:  [[0.23051164]\n [0.11071217]]\n200 0.69428164 [[0.1468633 ]\n [-2224343. ]\n"
           "(?, 1) (?, 1)\n       [ 0.0450868 ,  0.00137655]], dtype=float32)]\ndone 1\n")
    tf2 = ("Hypothesis:  [[0.2305116 ]\n [0.11071212]]\n200 0.6942817 [[0.14686333]\n [-2.2243430e+06]\n"
           "(None, 1) (None, 1)\n       [ 0.04508686,  0.00137657]], dtype=float32)]\ndone 1\n")
    stream = compare("printed", stdout_records(tf1), stdout_records(tf2), 1e-5, 1e-5)
    assert stream.ok and len(stream.pairs) == 7 and all(p.got is not None for p in stream.pairs)
    worse = tf2.replace("0.14686333", "0.15")
    assert not compare("printed", stdout_records(tf1), stdout_records(worse), 1e-5, 1e-5).ok


def test_variables_that_diverged_to_nan_on_both_sides_are_equal():
    """A regression that diverges (an unscaled feature, lab 7-2) ends with NaN weights on
    TF 1.15 and migrated alike: equal where both are NaN or the same infinity, not where
    one side alone is."""
    import numpy as np

    from migrate.verify.program import _variables

    nan = np.array([np.nan, np.inf, 1.0], np.float32)
    same = _variables({"w": nan}, {"w": nan.copy()}, 1e-5, 1e-5)
    assert same[0]["ok"] and same[0]["max_abs"] == 0.0
    one = _variables({"w": nan}, {"w": np.array([1.0, np.inf, 1.0], np.float32)}, 1e-5, 1e-5)
    assert not one[0]["ok"] and one[0]["worst"]["index"] == 0
    near = _variables({"w": np.ones(3)}, {"w": np.ones(3) + 1e-7}, 1e-5, 1e-5)
    assert near[0]["ok"] and near[0]["max_abs"] < 1e-6


LONG_RUN = '''
import sys
import tensorflow as tf

w = tf.Variable(0.5)
loss = tf.square(w - 2.0)
train = tf.train.GradientDescentOptimizer(1e-6).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        if step % 1000 == 0:
            _, value = sess.run([train, loss])
        print("step %d loss %.6f" % (step, value))
'''


def test_a_program_printing_300000_lines_is_compared_whole(tmp_path, tf1_python):
    """#54: what both runs print is read from files, line by line, and aligned in linear
    time: 300,000 printed lines are compared within a --timeout of 240 s that bounds the
    whole verify (it took minutes per 100,000 before, and the comparison was not bounded).
    The report sums up every kind of line but keeps only the first lines that agree."""
    (tmp_path / "long.py").write_text(LONG_RUN.replace("STEPS", "300000"))
    migrate(tmp_path / "long.py", tmp_path / "out")
    done = cli("verify", tmp_path / "long.py", tmp_path / "out" / "long.py", "--program",
               "--tf1-python", tf1_python, "--timeout", "240", "--format", "json")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads(done.stdout)
    printed = report["streams"]["printed"]
    assert report["ok"] and printed["compared"] == 300000 and printed["different"] == 0
    assert [kind["lines"] for kind in printed["kinds"]] == [300000]
    assert len(printed["lines"]) == 2000 and printed["lines_left_out"] == 298000
    assert printed["lines"][-1]["tf1"][0] == 1999


FORKS = '''
import subprocess, sys
import tensorflow as tf

child = subprocess.Popen([sys.executable, "-c", "import os, time\\nprint(os.getpid(), flush=True)\\ntime.sleep(900)"],
                         stdout=subprocess.PIPE, stderr=sys.stderr)
with open(sys.argv[1] + "/child.pid", "w") as handle:
    handle.write(child.stdout.readline().decode())
x = tf.Variable(2.0)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("value", sess.run(x * 3.0))
'''


def test_a_child_that_outlives_the_program_ends_with_it(tmp_path, tf1_python):
    """#54: a program that starts a child which outlives it (a data loader, a TensorBoard)
    holding its stderr: the run ends when the program ends, the child is killed with it,
    and verify does not wait for --timeout (it waited the whole 1800 s and then blamed the
    legacy run)."""
    (tmp_path / "forks.py").write_text(FORKS)
    migrate(tmp_path / "forks.py", tmp_path / "out")
    runs = tmp_path / "runs"
    runs.mkdir()
    done = cli("verify", tmp_path / "forks.py", tmp_path / "out" / "forks.py", "--program",
               "--tf1-python", tf1_python, "--program-arg", runs, "--timeout", "600")
    assert done.returncode == 0 and "EQUIVALENT" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    child = int((runs / "child.pid").read_text())  # the migrated run's, the last one
    assert not _running(child), "the program's child outlived the verify"


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


CHAOTIC = '''
import tensorflow as tf

x = tf.Variable(0.4142135, name="x")
step = tf.assign(x, 3.9 * x * (1.0 - x))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(24):
        value = sess.run(step)
        if i % 4 == 3:
            print("x", i, "%.9f" % value)
'''
# its TF2 form with the product written another way: equal but for rounding, which the
# logistic map at r=3.9 carries from 1e-7 to 1e-1 within 24 steps (before it saturates)
CHAOTIC_TF2 = '''
import tensorflow as tf

x = tf.Variable(0.4142135, name="x")


@tf.function
def step():
    return x.assign(3.9 * (x - x * x))


for i in range(24):
    value = step().numpy()
    if i % 4 == 3:
        print("x", i, "%.9f" % value)
'''


def test_nudge_compares_within_what_tf1_itself_carries_one_ulp_to(tmp_path, tf1_python):
    """--nudge: one more TF1 run from initial values one ulp apart. A program that amplifies
    rounding (a chaotic map) moves there, and a migration equal to it but for rounding
    passes where TF1 moved; without --nudge, the same migration is NOT EQUIVALENT."""
    (tmp_path / "chaos.py").write_text(CHAOTIC)
    (tmp_path / "chaos_tf2.py").write_text(CHAOTIC_TF2)
    plain = cli("verify", tmp_path / "chaos.py", tmp_path / "chaos_tf2.py", "--program",
                "--tf1-python", tf1_python, "--format", "json")
    assert plain.returncode == 1 and not json.loads(plain.stdout)["ok"], plain.stdout[-2000:]
    nudged = cli("verify", tmp_path / "chaos.py", tmp_path / "chaos_tf2.py", "--program",
                 "--tf1-python", tf1_python, "--nudge", "--format", "json")
    report = json.loads(nudged.stdout)
    assert nudged.returncode == 0 and report["ok"], nudged.stdout[-2000:]
    assert report["repeat"]["nudged"] and report["repeat"]["runs"] == 1
    assert report["repeat"]["tf1_lines_moved_by_one_ulp"] >= 3, report["repeat"]
    assert report["variables"][0]["tf1_spread"] > 0, report["variables"]
    text = cli("verify", tmp_path / "chaos.py", tmp_path / "chaos_tf2.py", "--program",
               "--tf1-python", tf1_python, "--nudge")
    assert "TF1 from initial values one ulp apart: 6 printed lines moved" in " ".join(text.stdout.split()), \
        text.stdout
