"""Whole TF1 programs (samples/programs/*): the original runs on real TensorFlow 1.15 (its
own interpreter, tests/tf1_oracle.py), the migrated program on TF 2.21 with the default
Keras; every number the original prints must come out equal, and the migrated source
must be eager TF2."""
import io
import json
import os
import re
import subprocess
import sys
import tokenize

import pytest

import tf1_oracle
import tfm_cli

pytest.importorskip("tensorflow")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "samples", "programs")
NAMES = sorted(d for d in os.listdir(PROGRAMS) if os.path.isfile(os.path.join(PROGRAMS, d, "legacy.py")))
# the program suite: TF1 programs written here in the forms real projects use (tests/programs)
SUITE = os.path.join(ROOT, "tests", "programs")
SUITE_NAMES = sorted(f for f in os.listdir(SUITE) if f.endswith(".py"))
# as GRAPH_MODE, but a dict the program itself names feed_dict may stay (not the keyword)
GRAPH_LEFT = re.compile(r"\b(Session|InteractiveSession|placeholder|disable_eager_execution|"
                        r"disable_v2_behavior)\b|[(,] (feed_dict) =(?!=)")
GRAPH_MODE = re.compile(r"\b(Session|InteractiveSession|placeholder|feed_dict|"
                        r"disable_eager_execution|disable_v2_behavior)\b")

MIGRATED = """
import os, runpy, sys
sys.path.insert(0, os.path.dirname(os.environ["SOURCE"]))
sys.argv = [os.environ["SOURCE"], os.environ["MODEL_DIR"]]
runpy.run_path(os.environ["SOURCE"], run_name="__main__")
"""


def rows_of(stdout):
    rows = {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) > 1 and re.match(r"^[A-Z_]+$", parts[0]):
            rows[parts[0]] = [float(v) for v in parts[1:]]
    return rows


def tf1(source, model_dir):
    """What the program prints on real TF 1.15."""
    return rows_of(tf1_oracle.run_script(source, model_dir))


def tf2(source, model_dir):
    """What the migrated program prints on TF 2.21 with the default Keras."""
    environ = dict(os.environ, SOURCE=str(source), MODEL_DIR=str(model_dir), TF_CPP_MIN_LOG_LEVEL="3")
    environ.pop("TF_USE_LEGACY_KERAS", None)
    proc = subprocess.run([sys.executable, "-c", MIGRATED], env=environ, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return rows_of(proc.stdout)


def code_only(path):
    with open(path) as handle:
        tokens = tokenize.generate_tokens(io.StringIO(handle.read()).readline)
        return " ".join(t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.STRING))


def cli(*args):
    return tfm_cli.run(*args, default_keras=False, timeout=600)


def test_there_are_program_samples():
    assert {"session_mlp", "session_linear_regression", "session_cnn_batchnorm", "session_gan",
            "session_rl_agent", "estimator_cnn", "bert_finetune"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_committed_migration_matches_the_tool(name, tmp_path):
    out = cli("upgrade", os.path.join(PROGRAMS, name, "legacy.py"), "--outtree", tmp_path, "--no-cache")
    assert out.returncode in (0, 1), out.stderr
    with open(tmp_path / "legacy.py") as a, open(os.path.join(PROGRAMS, name, "migrated", "legacy.py")) as b:
        assert a.read() == b.read(), f"samples/programs/{name}/migrated is stale"
    again = cli("upgrade", tmp_path / "legacy.py", "--no-cache")  # a second run changes nothing
    assert "0 would change" in again.stdout + again.stderr, again.stdout


def verify_program(tf1_python, legacy, migrated, *extra):
    return cli("verify", legacy, migrated, "--program", "--tf1-python", tf1_python, "--program-arg", "{out}",
               "--tf1-cache", tf1_oracle.RESULTS, *extra)


@pytest.mark.parametrize("name", NAMES)
def test_migrated_program_computes_what_the_tf1_program_computed(name, tmp_path, tf1_python):
    """`tf-migrate verify --program --tf1-python`: the TF1 program on real TF 1.15 and its
    migration on TF 2.21 (default Keras), from the same initial values, print equal
    numbers (losses per step, metrics, predictions) and end with equal variables (every
    one, by TF1 name, optimizer slots included)."""
    legacy = os.path.join(PROGRAMS, name, "legacy.py")
    migrated = tmp_path / "out"
    out = cli("upgrade", legacy, "--outtree", migrated, "--no-cache")
    assert out.returncode in (0, 1), out.stderr
    left = sorted(set(GRAPH_MODE.findall(code_only(migrated / "legacy.py"))))
    assert not left, f"graph-mode code left: {left}"
    proc = verify_program(tf1_python, legacy, migrated / "legacy.py", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["tf1"]["real"] and report["tf1"]["tensorflow"].startswith("1.15"), report["tf1"]
    lines = [line for stream in report["streams"].values() for line in stream["lines"]]
    assert report["ok"], report["first_difference"] or [v for v in report["variables"] if not v["ok"]]
    assert sum(len(line["tf1"]) for line in lines) >= 20  # a trajectory, not one number
    assert report["variables"]  # the final variables were compared too


def test_migrated_estimator_resumes_a_tf1_model_dir(tmp_path, tf1_python):
    """A model_dir written by the TF1 program: the migrated program restores it (variables,
    global_step, momentum slots) and trains on exactly as the TF1 program would."""
    import shutil

    legacy = os.path.join(PROGRAMS, "estimator_cnn", "legacy.py")
    out = cli("upgrade", legacy, "--outtree", tmp_path / "out", "--no-cache")
    assert out.returncode in (0, 1), out.stderr
    tf1(legacy, tmp_path / "tf1")
    shutil.copytree(tmp_path / "tf1", tmp_path / "tf2")
    want = tf1(legacy, tmp_path / "tf1")  # real TF 1.15 resumes at step 15
    got = tf2(tmp_path / "out" / "legacy.py", tmp_path / "tf2")
    assert want["EVAL"][-1] == got["EVAL"][-1] == 27
    for key, values in want.items():
        for a, b in zip(values, got[key]):
            assert abs(a - b) <= 1e-5 + 1e-5 * abs(a), f"{key}: TF1 {values} TF2 {got[key]}"


def test_estimator_refuses_another_models_checkpoint(tmp_path):
    """A model_dir holding another model's checkpoint: one clear error naming what is
    missing, and nothing in model_dir is overwritten."""
    code = """
import os, sys
import numpy as np
import shims
import tensorflow as tf

def model_fn(features, labels, mode):
    out = tf.compat.v1.layers.dense(features, 1, name=os.environ["LAYER"])
    loss = tf.reduce_mean(tf.square(out - labels))
    step = tf.compat.v1.train.get_global_step()
    return shims.estimator.EstimatorSpec(mode, loss=loss, train_op=tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step))

def input_fn():
    return tf.data.Dataset.from_tensors((np.ones((2, 3), "float32"), np.ones((2, 1), "float32"))).repeat()

shims.estimator.Estimator(model_fn, sys.argv[1]).train(input_fn, steps=2)
"""
    model_dir = tmp_path / "model"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", LAYER="first")
    first = subprocess.run([sys.executable, "-c", code, str(model_dir)], env=env, capture_output=True,
                           text=True, timeout=300)
    assert first.returncode == 0, first.stderr[-2000:]
    before = {p: (model_dir / p).read_bytes() for p in os.listdir(model_dir)}
    env["LAYER"] = "second"
    second = subprocess.run([sys.executable, "-c", code, str(model_dir)], env=env, capture_output=True,
                            text=True, timeout=300)
    assert second.returncode != 0
    assert "not of this model" in second.stderr and "second/kernel" in second.stderr
    assert {p: (model_dir / p).read_bytes() for p in os.listdir(model_dir)} == before


BLOCKED = '''
import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3], name="x")
hidden = tf.layers.dense(x, 4, activation=tf.nn.relu, name="hidden",
                         kernel_initializer=tf.constant_initializer(0.3))
loss = tf.reduce_mean(tf.square(hidden - 1.0))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
data = np.arange(12, dtype="float32").reshape(4, 3) / 10.0
sess = tf.Session()
sess.run(tf.global_variables_initializer())
feeds = {x: data}
feeds[x] = data * 0.5  # a feed_dict changed after it was built: not provable, so not converted
values = [sess.run([train, loss], feed_dict=feeds)[1] for _ in range(5)]
print("LOSSES", " ".join("%.6f" % v for v in values))
'''


def test_a_program_that_cannot_be_converted_still_runs_in_graph_mode(tmp_path, tf1_python):
    legacy = tmp_path / "legacy.py"
    legacy.write_text(BLOCKED)
    out = cli("upgrade", legacy, "--outtree", tmp_path / "out", "--no-cache")
    assert "TFM501" in out.stdout and "Session program kept in TF1 graph mode" in out.stdout
    migrated = (tmp_path / "out" / "legacy.py").read_text()
    assert "tf.compat.v1.disable_eager_execution()" in migrated
    want = tf1(legacy, tmp_path / "tf1")
    got = tf2(tmp_path / "out" / "legacy.py", tmp_path / "tf2")
    assert want["LOSSES"] == got["LOSSES"]


UNSEEDED = '''
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
data = rng.randn(64, 5).astype("float32")
target = (data.sum(axis=1, keepdims=True) > 0).astype("float32")
x = tf.placeholder(tf.float32, [None, 5])
y = tf.placeholder(tf.float32, [None, 1])
hidden = tf.layers.dense(x, 8, activation=tf.nn.relu)  # glorot, unseeded: random per run
logits = tf.layers.dense(hidden, 1)
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
train = tf.train.AdamOptimizer(LEARNING_RATE).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    losses = []
    for i in range(20):
        start = (i * 16) % 64
        losses.append(sess.run([train, loss], {x: data[start:start + 16], y: target[start:start + 16]})[1])
    print("LOSSES", " ".join("%.6f" % v for v in losses))
'''


def test_verify_program_compares_trajectories_from_the_same_initial_values(tmp_path, tf1_python):
    """Unseeded random initial values: verify --program starts the migrated program from
    the real TF1 run's initial values, then losses per step and final variables must
    match; a migration that trains differently is caught; a failed run is one line."""
    legacy = tmp_path / "legacy.py"
    legacy.write_text(UNSEEDED.replace("LEARNING_RATE", "0.05"))
    out = cli("upgrade", legacy, "--outtree", tmp_path / "out", "--no-cache")
    assert out.returncode in (0, 1), out.stderr
    migrated = tmp_path / "out" / "legacy.py"
    good = verify_program(tf1_python, legacy, migrated, "--format", "json")
    assert good.returncode == 0, good.stdout + good.stderr
    report = json.loads(good.stdout)
    assert report["ok"] and report["init"]["shared"] and report["init"]["not_used_by_migrated"] == []
    assert len(report["streams"]["printed"]["lines"][0]["tf1"]) == 20
    assert {v["name"] for v in report["variables"]} >= {"dense/kernel", "dense_1/bias", "dense/kernel/Adam"}
    drifted = tmp_path / "drifted.py"
    drifted.write_text(migrated.read_text().replace("0.05", "0.06"))
    bad = verify_program(tf1_python, legacy, drifted)
    assert bad.returncode == 1 and "NOT EQUIVALENT" in bad.stdout, bad.stdout
    assert "first difference: TF1 line 1 'LOSSES" in bad.stdout.replace("\n", " "), bad.stdout
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit('no such thing')\n")
    failed = verify_program(tf1_python, legacy, broken)
    assert failed.returncode == 2 and "the migrated (TF2) run exited with status 1 (the code called sys.exit or exit): no such thing" in failed.stderr


@pytest.mark.parametrize("name", SUITE_NAMES)
def test_program_suite_becomes_eager_and_computes_what_tf1_computed(name, tmp_path, tf1_python):
    """Each program of the suite (its docstring says which form it is) is converted to
    eager TF2 (no Session, placeholder, feed_dict or graph switch left), a second upgrade
    changes nothing, and `verify --program --tf1-python` finds it EQUIVALENT to its run on
    real TF 1.15 from the same initial values: every printed number and every final
    variable by TF1 name."""
    legacy = os.path.join(SUITE, name)
    out = cli("upgrade", legacy, "--outtree", tmp_path / "out", "--no-cache")
    assert out.returncode in (0, 1), out.stderr
    migrated = tmp_path / "out" / name
    left = sorted(set(GRAPH_LEFT.findall(code_only(migrated))))
    assert not left, f"graph-mode code left: {left}\n{out.stdout}"
    again = cli("upgrade", migrated, "--check", "--no-cache")
    assert again.returncode == 0, again.stdout + again.stderr
    proc = verify_program(tf1_python, legacy, migrated, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["tf1"]["real"] and report["tf1"]["tensorflow"] == "1.15.5", report["tf1"]
    assert report["init"]["shared"] and not report["init"]["not_used_by_migrated"], report["init"]
    assert report["ok"], report["first_difference"] or [v for v in report["variables"] if not v["ok"]]
    lines = [line for stream in report["streams"].values() for line in stream["lines"]]
    assert sum(len(line["tf1"]) for line in lines) >= 6  # a trajectory, not one number
    assert report["variables"]


def test_a_tpu_estimator_with_use_tpu_and_no_tpu_computes_what_tf_1_15_computed_without(tmp_path, tf1_python):
    """#27: BERT's scripts with use_tpu=True on a machine without a TPU (TF 1.15 stops,
    finding no TPU; TPUEstimator then ran with use_tpu=False): migrated, the same script
    runs TPUEstimator's CPU path, its CrossShardOptimizer the optimizer it wraps, and
    `verify --program` finds it EQUIVALENT to TF 1.15's use_tpu=False run."""
    legacy = os.path.join(SUITE, "tpu_estimator.py")
    source = open(legacy).read()
    assert "    use_tpu = False\n" in source
    (tmp_path / "on_tpu.py").write_text(source.replace("    use_tpu = False\n", "    use_tpu = True\n"))
    out = cli("upgrade", tmp_path / "on_tpu.py", "--outtree", tmp_path / "out", "--no-cache")
    assert out.returncode in (0, 1), out.stderr
    migrated = tmp_path / "out" / "on_tpu.py"
    assert code_only(migrated).count("shims . estimator . CrossShardOptimizer ( optimizer )") == 2
    proc = verify_program(tf1_python, legacy, migrated, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["tf1"]["real"] and report["init"]["shared"], report["tf1"]
    assert report["ok"], report["first_difference"] or [v for v in report["variables"] if not v["ok"]]
    assert report["variables"]


SLIM_ALIAS = """import numpy as np
import tensorflow as tf

slim = tf.contrib.slim

rng = np.random.RandomState(3)
data = rng.randn(16, 6, 6, 1).astype(np.float32)
labels = rng.randint(0, 3, 16)


def net(x, is_training):
    with slim.arg_scope([slim.conv2d], padding="SAME",
                        weights_initializer=tf.truncated_normal_initializer(stddev=0.1, seed=1)):
        x = slim.conv2d(x, 4, [3, 3], scope="conv1")
        x = slim.batch_norm(x, is_training=is_training, scope="bn1")
        x = slim.flatten(x)
        return slim.fully_connected(x, 3, activation_fn=None, scope="logits")


images = tf.placeholder(tf.float32, [None, 6, 6, 1])
y = tf.placeholder(tf.int64, [None])
is_training = tf.placeholder(tf.bool, [])
logits = net(images, is_training)
loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    values = [sess.run([train, loss], {images: data, y: labels, is_training: True})[1] for _ in range(5)]
    print("LOSSES", " ".join("%.6f" % v for v in values))
    print("EVAL", sess.run(loss, {images: data, y: labels, is_training: False}))
"""


def test_slim_by_assignment_migrates_and_equals_tf_1_15(tmp_path, tf1_python):
    """``slim = tf.contrib.slim`` (how most TF1 code got slim): the alias becomes
    ``import tf_slim as slim``, its uses are migrated as for the import (batch_norm to
    shims), and the program's losses and final variables equal TF 1.15's."""
    legacy = tmp_path / "legacy.py"
    legacy.write_text(SLIM_ALIAS)
    out = cli("upgrade", legacy, "--outtree", tmp_path / "out", "--no-cache")
    assert out.returncode in (0, 1), out.stderr
    migrated = (tmp_path / "out" / "legacy.py").read_text()
    assert "import tf_slim as slim" in migrated and "shims.contrib.batch_norm(" in migrated
    proc = verify_program(tf1_python, legacy, tmp_path / "out" / "legacy.py", "--format", "json")
    report = json.loads(proc.stdout)
    assert report["ok"], report["first_difference"] or [v for v in report["variables"] if not v["ok"]]
    assert report["variables"]


PROBE = """
import os, runpy, sys
runpy.run_path(os.environ["SOURCE"], run_name="__main__")
import shims.program
for program in shims.program._PROGRAMS:
    strategy = program.strategy
    print("PROGRAM", type(strategy).__name__, strategy.num_replicas_in_sync if strategy else 1,
          program.towers, sorted({type(v).__name__ for v in program.variables}))
"""


def test_a_tower_loop_runs_as_mirrored_strategy_replicas_and_equals_tf_1_15(tmp_path, tf1_python):
    """The multi-GPU tower form (towers_mirrored.py: CIFAR-10's trainer, on two virtual CPU
    devices) becomes one MirroredStrategy replica per tower: the tower loop runs the
    replica's own tower, its device scope goes, the variables are mirrored, and the losses,
    the first tower's accuracy (built by that tower alone, `if i == 0:`) and the final
    variables equal TF 1.15's. A combining function that sums the towers'
    gradients is honoured too (the strategy sums instead of averaging); a loop that also
    collects the towers' losses keeps every tower in one graph, as before."""
    legacy = os.path.join(SUITE, "towers_mirrored.py")
    source = open(legacy).read()
    summed = source.replace("grad = tf.reduce_mean(tf.concat(axis=0, values=grads), 0)",
                            "grad = tf.add_n([tf.squeeze(g, 0) for g in grads])")
    assert summed != source
    losses = source.replace("tower_grads.append(grads)",
                            "tower_grads.append(grads)\n                tower_losses.append(loss)"
                            ).replace("tower_grads = []", "tower_grads = []\ntower_losses = []")
    runs = {}
    for name, text in (("averaged", source), ("summed", summed), ("losses", losses)):
        (tmp_path / name).mkdir()
        original = tmp_path / name / "towers.py"
        original.write_text(text)
        out = cli("upgrade", original, "--outtree", tmp_path / name / "out", "--no-cache")
        assert out.returncode in (0, 1), out.stderr
        migrated = tmp_path / name / "out" / "towers.py"
        again = cli("upgrade", migrated, "--check", "--no-cache")
        assert again.returncode == 0, again.stdout + again.stderr
        findings = cli("upgrade", original, "--diff", "--no-cache").stdout
        runs[name] = (original, migrated, migrated.read_text(), findings)
    averaged, summed_code, kept = runs["averaged"][2], runs["summed"][2], runs["losses"][2]
    assert ".on_towers(NUM_GPUS)" in averaged and "for i in shims.towers(range(NUM_GPUS)):" in averaged
    assert "accuracy = None  # built by one tower" in averaged
    assert "/gpu:" not in averaged and "MirroredStrategy replicas" in runs["averaged"][3]
    assert ".on_towers(NUM_GPUS, average=False)" in summed_code
    assert "on_towers" not in kept and "shims.towers" not in kept and "/gpu:%d" in kept
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, SOURCE=str(runs["averaged"][1])))
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert "PROGRAM MirroredStrategy 2 2 ['MirroredVariable']" in probe.stdout, probe.stdout[-2000:]
    for name in ("averaged", "summed"):
        original, migrated = runs[name][:2]
        proc = verify_program(tf1_python, original, migrated, "--format", "json")
        report = json.loads(proc.stdout)
        assert report["tf1"]["real"] and report["ok"], (name, report["first_difference"])
        assert {v["name"] for v in report["variables"]} >= {"w1", "b2", "global_step"}
    assert runs["averaged"][2] != runs["summed"][2]
