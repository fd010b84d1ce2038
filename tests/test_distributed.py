"""Multi-worker programs (#27): a TF1 Estimator trained by every worker of a cluster with a
collective strategy (`train_distribute=MultiWorkerMirroredStrategy()`, the cluster in
TF_CONFIG), migrated and run as worker processes on loopback ports. Every wait is bounded;
nothing leaves the machine."""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow

EXE = os.path.join(os.path.dirname(sys.executable), "tf-migrate")

PROGRAM = '''"""An Estimator every worker of a cluster trains with a collective strategy, through
train_and_evaluate (an evaluator task, when the cluster has one, evaluates the checkpoints)."""
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(4)
X = rng.randn(256, 5).astype(np.float32)
Y = (X.dot(rng.randn(5, 1)) > 0).astype(np.int32).ravel()
GLOBAL_BATCH = 16


def input_fn(input_context=None):
    dataset = tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat()
    batch = GLOBAL_BATCH
    if input_context is not None and input_context.num_input_pipelines > 1:
        print("PIPELINE", input_context.input_pipeline_id, "OF", input_context.num_input_pipelines)
        dataset = dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
        batch //= input_context.num_input_pipelines
    return dataset.batch(batch)


def model_fn(features, labels, mode):
    hidden = tf.layers.dense(features["x"], 8, activation=tf.nn.tanh, name="hidden",
                             kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    logits = tf.layers.dense(hidden, 2, name="logits",
                             kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    strategy = tf.distribute.experimental.MultiWorkerMirroredStrategy()
    config = tf.estimator.RunConfig(model_dir=sys.argv[1], train_distribute=strategy,
                                    save_checkpoints_steps=10, log_step_count_steps=5)
    estimator = tf.estimator.Estimator(model_fn=model_fn, config=config)
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=int(sys.argv[2]))
    eval_spec = tf.estimator.EvalSpec(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(64), steps=4,
        start_delay_secs=0, throttle_secs=1)
    result = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    if result and result[0]:  # the evaluator task, or a local run
        print("EVALUATION", " ".join("%s=%.7g" % (k, result[0][k]) for k in sorted(result[0])))
    latest = tf.train.latest_checkpoint(sys.argv[1])
    if latest:  # a worker other than the chief writes no checkpoint
        print("KERNEL", " ".join("%.9g" % v for v in tf.train.load_variable(latest, "logits/kernel").ravel()))
    else:
        print("NO CHECKPOINT")
'''


def _free_port():
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    root = tmp_path_factory.mktemp("multi_worker")
    (root / "trainer.py").write_text(PROGRAM)
    env = dict(os.environ)
    env.pop("TF_USE_LEGACY_KERAS", None)
    done = subprocess.run([EXE, "upgrade", root / "trainer.py", "--outtree", root / "out", "--no-cache"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    source = root / "out" / "trainer.py"
    assert "shims.estimator.Estimator" in source.read_text()
    return source


def _env(cluster=None, task=("worker", 0)):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    for key in ("TF_USE_LEGACY_KERAS", "TF_CONFIG"):
        env.pop(key, None)
    if cluster:
        env["TF_CONFIG"] = json.dumps({"cluster": cluster,
                                       "task": {"type": task[0], "index": task[1]}})
    return env


def _start(source, model_dir, steps, cluster=None, task=("worker", 0)):
    return subprocess.Popen([sys.executable, str(source), str(model_dir), str(steps)],
                            env=_env(cluster, task), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _finish(proc, timeout=300):
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        pytest.fail(f"a worker did not finish in {timeout} s:\n{out[-3000:]}")
    return proc.returncode, out


def _losses(out):
    return [float(v) for v in re.findall(r"loss = ([-0-9.e]+), step", out)]


def _kernel(out):
    line = [l for l in out.splitlines() if l.startswith("KERNEL ")]
    assert line, out[-3000:]
    return np.array([float(v) for v in line[-1].split()[1:]])


def test_two_workers_train_the_model_one_worker_trains_with_the_global_batch(migrated, tmp_path):
    """Two workers on loopback ports, each reading its half of every global batch
    (input_context), give the single worker's run with the whole batch: the same logged
    losses and final variables (MultiWorkerMirroredStrategy averaging the gradients as
    TF 1.15's collective strategy did); only the chief writes checkpoints, and the
    cluster's evaluator task evaluates them up to the last, as the local run evaluated its
    last checkpoint."""
    cluster = {"worker": ["localhost:%d" % _free_port(), "localhost:%d" % _free_port()],
               "evaluator": ["localhost:%d" % _free_port()]}
    workers = [_start(migrated, tmp_path / ("chief" if i == 0 else "other"), 30, cluster, ("worker", i))
               for i in range(2)]
    evaluator = _start(migrated, tmp_path / "chief", 30, cluster, ("evaluator", 0))
    single = _start(migrated, tmp_path / "single", 30)
    results = [_finish(p) for p in workers + [single, evaluator]]
    for code, out in results:
        assert code == 0, out[-3000:]
    (_, chief), (_, other), (_, alone), (_, evaluated) = results
    final = [l for l in evaluated.splitlines() if l.startswith("EVALUATION ")]
    assert final and "global_step=30" in final[-1], evaluated[-3000:]
    assert final[-1] == [l for l in alone.splitlines() if l.startswith("EVALUATION ")][-1]
    assert "EVALUATION" not in chief + other
    assert "num_workers = 2" in chief
    assert "PIPELINE 0 OF 2" in chief and "PIPELINE 1 OF 2" in other and "PIPELINE" not in alone
    assert len(_losses(alone)) == 6 and np.allclose(_losses(chief), _losses(alone), rtol=1e-5, atol=1e-6)
    assert np.allclose(_kernel(chief), _kernel(alone), rtol=1e-5, atol=1e-6)
    assert "model.ckpt-30.index" in os.listdir(tmp_path / "chief")
    assert "NO CHECKPOINT" in other and np.allclose(_losses(other), _losses(chief))


def _latest_step(model_dir):
    steps = [int(m.group(1)) for f in os.listdir(model_dir) if (m := re.match(r"model\.ckpt-(\d+)\.index$", f))] \
        if os.path.isdir(model_dir) else []
    return max(steps, default=-1)


def test_a_killed_worker_stops_the_others_with_a_clear_error_and_training_resumes(migrated, tmp_path):
    """Killing one worker mid-run: the chief stops within seconds with one error naming the
    lost worker and the checkpoint to resume from (never a hang), and a new start resumes
    from that checkpoint's step."""
    cluster = ["localhost:%d" % _free_port(), "localhost:%d" % _free_port()]
    model_dir = tmp_path / "model"
    chief = _start(migrated, model_dir, 10 ** 7, {"worker": cluster}, ("worker", 0))
    other = _start(migrated, tmp_path / "other", 10 ** 7, {"worker": cluster}, ("worker", 1))
    try:
        deadline = time.time() + 240
        while _latest_step(model_dir) < 20:
            assert time.time() < deadline and chief.poll() is None, "the job did not reach step 20"
            time.sleep(0.5)
        other.send_signal(signal.SIGKILL)
        killed = time.time()
        code, out = _finish(chief, timeout=180)
        waited = time.time() - killed
    finally:
        for proc in (chief, other):
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert code != 0 and waited < 180
    error = [l for l in out.splitlines() if l.startswith("RuntimeError: shims.estimator: a worker")]
    assert error, out[-3000:]
    resume = _latest_step(model_dir)
    assert resume >= 20 and f"model.ckpt-{resume} (step {resume})" in error[0], error[0]
    code, out = _finish(_start(migrated, model_dir, resume + 5))  # one process, no cluster
    assert code == 0, out[-3000:]
    # train_distribute is set (one replica here): the step logged is read before the update,
    # as TF 1.15 logged it
    logged = [int(step) for step in re.findall(r"loss = [-0-9.e]+, step = (\d+)", out)]
    assert logged and logged[0] == resume, out[-3000:]
    assert _latest_step(model_dir) == resume + 5
