"""shims.estimator in-process: unsupported pieces get one clear error naming them."""
import os

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import shims  # noqa: E402
from shims import estimator  # noqa: E402


def input_fn():
    return tf.data.Dataset.from_tensors((np.ones((2, 3), "float32"), np.ones((2, 1), "float32"))).repeat()


def spec_for(mode, labels, features, **extra):
    out = tf.compat.v1.layers.dense(features, 1, name="out")
    loss = tf.reduce_mean(tf.square(out - labels))
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, **extra)


def test_train_counts_steps_and_resumes(tmp_path):
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path))
    model.train(input_fn, steps=3)
    assert int(model.get_variable_value("global_step")) == 3
    model.train(input_fn, max_steps=5)
    assert int(model.get_variable_value("global_step")) == 5
    model.train(input_fn, max_steps=5)  # already there: nothing runs
    assert int(model.get_variable_value("global_step")) == 5
    assert "out/kernel" in model.get_variable_names()


def test_a_relative_model_dir_resumes(tmp_path, monkeypatch):
    """`Estimator(model_fn, "runs/model")`: the checkpoint file names its checkpoints
    relative to model_dir, as TF 1.15's Estimator wrote it, and the next run resumes
    (it looked for runs/model/runs/model/model.ckpt-3 and refused to start)."""
    monkeypatch.chdir(tmp_path)
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features),
                                "runs/model")
    model.train(input_fn, steps=3)
    assert 'model_checkpoint_path: "model.ckpt-3"' in (tmp_path / "runs/model/checkpoint").read_text()
    model.train(input_fn, steps=2)
    assert int(model.get_variable_value("global_step")) == 5
    assert sorted(p.name for p in (tmp_path / "runs/model").glob("*.index")) == [
        "model.ckpt-0.index", "model.ckpt-3.index", "model.ckpt-5.index"]


def test_unsupported_scaffold_is_named(tmp_path):
    model = estimator.Estimator(lambda features, labels, mode: spec_for(
        mode, labels, features, scaffold=tf.compat.v1.train.Scaffold(init_op=tf.no_op())), str(tmp_path))
    with pytest.raises(NotImplementedError, match=r"scaffold=Scaffold\(init_op=...\)"):
        model.train(input_fn, steps=1)
    assert not os.listdir(tmp_path)


def test_hook_feeding_is_named(tmp_path):
    class Feeding(estimator.SessionRunHook):
        def before_run(self, run_context):
            return estimator.SessionRunArgs([], feed_dict={"x:0": 1.0})

    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path))
    with pytest.raises(NotImplementedError, match="feed_dict"):
        model.train(input_fn, steps=1, hooks=[Feeding()])


def test_hooks_see_values_and_stop(tmp_path):
    class Stopper(estimator.SessionRunHook):
        def __init__(self):
            self.seen = []

        def before_run(self, run_context):
            return estimator.SessionRunArgs({"step": "global_step:0"})

        def after_run(self, run_context, run_values):
            self.seen.append(int(run_values.results["step"]))
            if len(self.seen) == 2:
                run_context.request_stop()

    hook = Stopper()
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path))
    model.train(input_fn, steps=10, hooks=[hook])
    assert len(hook.seen) == 2 and int(model.get_variable_value("global_step")) == 2
    stop = estimator.StopAtStepHook(num_steps=3)
    model.train(input_fn, steps=10, hooks=[stop])
    assert int(model.get_variable_value("global_step")) == 5


def test_missing_train_op_and_no_checkpoint_are_clear(tmp_path):
    def no_train_op(features, labels, mode):
        return estimator.EstimatorSpec(mode, loss=tf.reduce_sum(features))

    with pytest.raises(ValueError, match="train_op"):
        estimator.Estimator(no_train_op, str(tmp_path / "a")).train(input_fn, steps=1)
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path / "b"))
    with pytest.raises(ValueError, match="could not find a trained model"):
        model.evaluate(lambda: input_fn().take(1))


def test_numpy_input_fn_and_train_and_evaluate(tmp_path):
    fn = estimator.inputs.numpy_input_fn(np.ones((6, 3), "float32"), np.ones((6, 1), "float32"),
                                         batch_size=2, num_epochs=None, shuffle=False)
    config = estimator.RunConfig(save_checkpoints_steps=2)
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path),
                                config=config)
    evaluation = estimator.inputs.numpy_input_fn(np.ones((6, 3), "float32"), np.ones((6, 1), "float32"),
                                                 batch_size=2, shuffle=False)
    result, _ = estimator.train_and_evaluate(model, estimator.TrainSpec(fn, max_steps=4),
                                             estimator.EvalSpec(evaluation, steps=None))
    assert result["global_step"] == 4 and np.isfinite(result["loss"])
    with pytest.raises(ValueError, match="shuffle"):
        estimator.inputs.numpy_input_fn(np.ones((2, 3)))


def test_hooks_get_the_graph_and_a_session_as_in_tf1(tmp_path):
    """What TF1 hooks do with the session and the graph: `before_run` finding a tensor
    through `get_default_graph()` (it raised KeyError: no such tensor in the eager
    context), and `after_create_session` / `end` calling `session.run` (they got None)."""
    class Reader(estimator.SessionRunHook):
        def __init__(self):
            self.kernel, self.steps, self.final = None, [], None

        def after_create_session(self, session, coord):
            self.kernel = session.run("out/kernel:0")

        def before_run(self, run_context):
            graph = tf.compat.v1.get_default_graph()
            return estimator.SessionRunArgs((graph.get_tensor_by_name("out/BiasAdd:0"),
                                             tf.compat.v1.train.get_global_step()))

        def after_run(self, run_context, run_values):
            out, step = run_values.results
            assert out.shape == (2, 1)
            self.steps.append(int(step))

        def end(self, session):
            self.final = session.run({"step": tf.compat.v1.train.get_global_step()})

    hook = Reader()
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path))
    model.train(input_fn, steps=3, hooks=[hook])
    assert hook.kernel.shape == (3, 1) and hook.steps == [1, 2, 3] and hook.final == {"step": 3}


def test_tpu_estimator_spec_on_cpu(tmp_path):
    """TPUEstimator(use_tpu=False), TF 1.15's CPU path: params["batch_size"] from
    train_batch_size, eval_metrics as (fn, tensors), scaffold_fn called, a host call run
    with every step; a malformed eval_metrics is one clear error."""
    seen = {"batch": [], "scaffold": 0, "host": []}

    def model_fn(features, labels, mode, params):
        seen["batch"].append(params["batch_size"])
        out = tf.compat.v1.layers.dense(features, 1, name="out")
        loss = tf.reduce_mean(tf.square(out - labels))

        def scaffold_fn():
            seen["scaffold"] += 1
            return tf.compat.v1.train.Scaffold()

        if mode == estimator.ModeKeys.EVAL:
            return estimator.TPUEstimatorSpec(mode, loss=loss, scaffold_fn=scaffold_fn, eval_metrics=(
                lambda labels, out: {"mse": tf.compat.v1.metrics.mean_squared_error(labels, out)},
                [labels, out]))
        step = tf.compat.v1.train.get_global_step()
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
        host = (lambda s: tf.py_function(lambda v: seen["host"].append(int(v[0])) or 0, [s], tf.int64),
                [tf.reshape(step, [1])])
        return estimator.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, scaffold_fn=scaffold_fn,
                                          host_call=host)

    def batched(params):
        return tf.data.Dataset.from_tensors((np.ones((3,), "float32"), np.ones((1,), "float32"))).repeat(
        ).batch(params["batch_size"])

    config = estimator.RunConfig(model_dir=str(tmp_path),
                                 tpu_config=estimator.TPUConfig(iterations_per_loop=4))
    model = estimator.TPUEstimator(model_fn=model_fn, config=config, use_tpu=False, train_batch_size=4,
                                   eval_batch_size=2)
    model.train(batched, max_steps=3)
    result = model.evaluate(lambda params: batched(params).take(2))
    assert seen["batch"][0] == 4 and seen["batch"][-1] == 2 and seen["scaffold"] >= 2
    assert len(seen["host"]) == 3 and "mse" in result and result["global_step"] == 3
    with pytest.raises(ValueError, match="iterations_per_loop"):
        estimator.TPUConfig(iterations_per_loop=0)
    bad = estimator.TPUEstimatorSpec("eval", loss=tf.constant(1.0), eval_metrics={"mse": None})
    with pytest.raises(ValueError, match=r"eval_metrics must be \(fn, tensors\)"):
        bad.as_estimator_spec()


def test_tpu_estimator_with_use_tpu_on_a_machine_without_one_runs_the_cpu_path(tmp_path, caplog):
    """#27: TPUEstimator(use_tpu=True) without a TPU (TF 1.15 stopped, finding none) runs
    the CPU/GPU path with one note; the model_fn's CrossShardOptimizer is the optimizer it
    wraps (one shard: the same update, the same slot names) and takes only TF1's
    reductions."""
    def model_fn(features, labels, mode, params):
        assert params["use_tpu"] is False and params["batch_size"] == 4
        out = tf.compat.v1.layers.dense(features, 1, name="out")
        loss = tf.reduce_mean(tf.square(out - labels))
        optimizer = estimator.CrossShardOptimizer(tf.compat.v1.train.AdamOptimizer(0.1))
        train_op = optimizer.minimize(loss, tf.compat.v1.train.get_global_step())
        return estimator.TPUEstimatorSpec(mode, loss=loss, train_op=train_op)

    def batched(params):
        return tf.data.Dataset.from_tensors((np.ones((3,), "float32"), np.ones((1,), "float32"))).repeat(
        ).batch(params["batch_size"])

    with caplog.at_level("WARNING", logger="tensorflow"):
        model = estimator.TPUEstimator(model_fn=model_fn, model_dir=str(tmp_path), use_tpu=True,
                                       train_batch_size=4)
    assert [r.message for r in caplog.records if "this machine has no TPU" in r.message]
    model.train(batched, max_steps=2)
    assert "out/kernel/Adam" in model.get_variable_names() and model.get_variable_value("global_step") == 2
    with pytest.raises(ValueError, match="Unsupported reduction: none"):
        estimator.CrossShardOptimizer(tf.compat.v1.train.AdamOptimizer(0.1), reduction="none")


TF1_RUN_CONFIG = """
import json, os
os.environ["TF_CONFIG"] = {tf_config!r}
import tensorflow as tf
config = tf.estimator.RunConfig()
print(json.dumps({{k: getattr(config, k) for k in ("task_type", "task_id", "is_chief", "num_ps_replicas",
                                                    "num_worker_replicas", "master")}}))
"""

CLUSTERS = {
    "worker_of_a_ps_cluster": {"cluster": {"chief": ["h0:2222"], "worker": ["h1:2222", "h2:2222"],
                                           "ps": ["h3:2222"]}, "task": {"type": "worker", "index": 1}},
    "chief": {"cluster": {"chief": ["h0:2222"], "worker": ["h1:2222"]}, "task": {"type": "chief", "index": 0}},
    "managed_single_master": {"cluster": {"master": ["h0:2222"]}, "task": {"type": "master", "index": 0},
                              "environment": "cloud"},
}


@pytest.mark.parametrize("name", sorted(CLUSTERS))
def test_run_config_reads_tf_config_as_tf1_and_a_cluster_is_refused(name, tmp_path, monkeypatch, tf1_python):
    """A cluster manager's TF_CONFIG: RunConfig's task, chief and replica counts are TF
    1.15's (asked of real TF 1.15). A cluster of more than one task was ignored, so every
    task (parameter servers too) trained a model of its own into the same model_dir; now
    train() is one clear error and nothing is written. One task (a managed service's single
    master) trains as before; a cluster with parameter servers trains on
    ParameterServerStrategy (tests/test_distributed.py runs one)."""
    import json
    import tf1_oracle

    tf_config = json.dumps(CLUSTERS[name])
    want = json.loads(tf1_oracle.run(TF1_RUN_CONFIG.format(tf_config=tf_config)).strip().splitlines()[-1])
    monkeypatch.setenv("TF_CONFIG", tf_config)
    config = estimator.RunConfig()
    assert {k: getattr(config, k) for k in want} == want
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features),
                                str(tmp_path / "model"), config=config)
    if name == "managed_single_master":
        model.train(input_fn, steps=2)
        assert int(model.get_variable_value("global_step")) == 2
        return
    if name == "worker_of_a_ps_cluster":  # it serves the chief's steps (ParameterServerStrategy)
        served = []

        def serve(task):
            served.append((task.job_name, task.worker_index))
            raise SystemExit(0)  # (the real one returns when the chief has ended)

        from shims import cluster
        monkeypatch.setattr(cluster.ParameterServers, "_start", lambda task: None)  # (no h2:2222 here)
        monkeypatch.setattr(cluster.ParameterServers, "serve", serve)
        with pytest.raises(SystemExit):
            model.train(input_fn, steps=2)
        assert served == [("worker", 2)]  # the chief is worker 0, TF_CONFIG's worker 1 is worker 2
        assert not (tmp_path / "model").exists() or not os.listdir(tmp_path / "model")
        return
    with pytest.raises(RuntimeError, match=r"TF_CONFIG puts this process in a cluster .* as "
                                           + want["task_type"] + ":" + str(want["task_id"])):
        model.train(input_fn, steps=2)
    with pytest.raises(RuntimeError, match="train_and_evaluate"):
        estimator.train_and_evaluate(model, estimator.TrainSpec(input_fn, max_steps=2),
                                     estimator.EvalSpec(input_fn, steps=1))
    assert not (tmp_path / "model").exists() or not os.listdir(tmp_path / "model")
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not JSON"):
        estimator.RunConfig()


def test_evaluate_and_predict_run_their_hooks(tmp_path):
    """Hooks given to evaluate() and predict() (and a spec's evaluation_hooks) were begun and
    never run: no before_run/after_run, no end. They run around every step now, and a
    request_stop() ends the pass, as TF 1.15's monitored session did."""
    class Seen(estimator.SessionRunHook):
        def __init__(self, stop_after=None):
            self.values, self.ended, self.stop_after = [], False, stop_after

        def before_run(self, run_context):
            return estimator.SessionRunArgs(tf.compat.v1.train.get_global_step())

        def after_run(self, run_context, run_values):
            self.values.append(int(run_values.results))
            if self.stop_after and len(self.values) >= self.stop_after:
                run_context.request_stop()

        def end(self, session):
            self.ended = True

    def model_fn(features, labels, mode):
        out = tf.compat.v1.layers.dense(features, 1, name="out")
        if mode == estimator.ModeKeys.PREDICT:
            return estimator.EstimatorSpec(mode, predictions={"out": out})
        return spec_for(mode, labels, features)

    model = estimator.Estimator(model_fn, str(tmp_path))
    model.train(input_fn, steps=2)
    seen = Seen()
    model.evaluate(lambda: input_fn().take(3), hooks=[seen])
    assert seen.values == [2, 2, 2] and seen.ended
    stopper = Seen(stop_after=1)
    rows = list(model.predict(lambda: tf.data.Dataset.from_tensors(np.ones((2, 3), "float32")).repeat(4),
                              hooks=[stopper]))
    assert len(rows) == 2 and stopper.values == [2] and stopper.ended


STRATEGY = """
import os, sys
import numpy as np
import shims
import tensorflow as tf

cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)


def model_fn(features, labels, mode):
    out = tf.compat.v1.layers.dense(features, 1, name="out",
                                    kernel_initializer=tf.compat.v1.constant_initializer(0.2))
    loss = tf.reduce_mean(tf.square(out - labels))
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.MomentumOptimizer(0.1, 0.9).minimize(loss, step)
    return shims.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


x = np.random.RandomState(0).randn(48, 3).astype("float32")
y = x.dot([[1.0], [-2.0], [0.5]]).astype("float32")


def input_fn(batch):
    return lambda: tf.data.Dataset.from_tensor_slices((x, y)).batch(batch)


def train(name, strategy, batch, steps=3):
    config = shims.estimator.RunConfig(train_distribute=strategy)
    model = shims.estimator.Estimator(model_fn, os.path.join(root, name), config=config)
    model.train(input_fn(batch), steps=steps)
    return model


root = sys.argv[1]
kernels = {}
for name, strategy in (("none", None), ("one", tf.distribute.MirroredStrategy(devices=["/cpu:0"]))):
    kernels[name] = train(name, strategy, 4).get_variable_value("out/kernel")
print("SAME", bool(np.array_equal(kernels["none"], kernels["one"])))
two = train("two", tf.distribute.MirroredStrategy(devices=["/cpu:0", "/cpu:1"]), 4)
double = train("double", None, 8)
print("STEPS", two.get_variable_value("global_step"), double.get_variable_value("global_step"))
print("CLOSE", bool(np.allclose(two.get_variable_value("out/kernel"),
                                double.get_variable_value("out/kernel"), rtol=1e-5, atol=1e-6)),
      bool(np.array_equal(two.get_variable_value("out/kernel"), kernels["one"])))
for name, strategy in (
        ("three", tf.distribute.MirroredStrategy(devices=["/cpu:0", "/cpu:1", "/cpu:2"])),
        ("central", tf.distribute.experimental.CentralStorageStrategy(["/cpu:0", "/cpu:1"]))):
    try:
        train(name, strategy, 4)
    except NotImplementedError as exc:
        print("REFUSED", name, str(exc).splitlines()[0][:240])
    print("WRITTEN", name, os.path.exists(os.path.join(root, name)))
"""


def test_a_distribution_strategy_runs_model_fn_per_replica(tmp_path):
    """RunConfig(train_distribute=...): one replica computes what no strategy computes; two
    replicas run model_fn once each on consecutive batches (TF 1.15's split), the v1
    optimizer averaging their gradients, so 3 steps of batch 4 on two replicas equal 3
    steps of batch 8 on one device; a strategy over devices this machine lacks (TF 2 would
    wait for them forever) or one that is not mirrored is one clear error before anything
    is written."""
    import subprocess
    import sys

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([sys.executable, "-c", STRATEGY, str(tmp_path)], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "SAME True" in proc.stdout
    assert "STEPS 3 3" in proc.stdout
    assert "CLOSE True False" in proc.stdout, proc.stdout
    assert "REFUSED three shims.estimator: RunConfig(train_distribute=...): MirroredStrategy has replicas " \
        "on devices this machine does not have: /job:localhost/replica:0/task:0/device:CPU:2" in proc.stdout
    assert "REFUSED central shims.estimator: RunConfig(train_distribute=...): CentralStorageStrategy" \
        in proc.stdout
    assert "WRITTEN three False" in proc.stdout and "WRITTEN central False" in proc.stdout


# a TF1 trainer with a strategy of one replica (RunConfig(train_distribute=...) set from a
# flag, as the official models did), its log lines on stdout
ONE_REPLICA = '''
import logging, sys, tempfile
import numpy as np
import tensorflow as tf

x = np.random.RandomState(0).randn(24, 3).astype("float32")
y = x.dot([[1.0], [-2.0], [0.5]]).astype("float32")


def model_fn(features, labels, mode):
    out = tf.layers.dense(features, 1, name="out", kernel_initializer=tf.constant_initializer(0.2))
    loss = tf.reduce_mean(tf.square(out - labels))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(4)


handler = logging.StreamHandler(sys.stdout)
handler.setFormatter(logging.Formatter("%(message)s"))
logging.getLogger("tensorflow").addHandler(handler)
tf.logging.set_verbosity(tf.logging.INFO)
for strategy in (None, tf.distribute.MirroredStrategy(devices=["/cpu:0"])):
    config = tf.estimator.RunConfig(model_dir=tempfile.mkdtemp(), train_distribute=strategy,
                                    log_step_count_steps=1)
    estimator = tf.estimator.Estimator(model_fn, config=config)
    estimator.train(input_fn, steps=3)
    print("kernel", estimator.get_variable_value("out/kernel").ravel().tolist())
'''


def _logged(stdout):
    """(loss, step) of each logged step, and each printed kernel."""
    import re

    steps = [(float(m.group(1)), int(m.group(2)))
             for m in re.finditer(r"^loss = ([-\d.e]+), step = (\d+)", stdout, re.M)]
    kernels = [line for line in stdout.splitlines() if line.startswith("kernel")]
    return steps, kernels


def test_a_one_replica_strategy_logs_steps_as_tf1_did(tmp_path, tf1_python):
    """TF 1.15's Estimator took its distributed path whenever train_distribute was set,
    one replica too, and logged the step read before the update (0, 1, 2 where no
    strategy logged 1, 2, 3); the migrated trainer logs the same lines."""
    import json
    import subprocess
    import sys

    import tf1_oracle
    from test_cli import cli

    want_steps, want_kernels = _logged(tf1_oracle.run(ONE_REPLICA))
    assert [step for _, step in want_steps] == [1, 2, 3, 0, 1, 2]
    program = tmp_path / "trainer.py"
    program.write_text(ONE_REPLICA)
    assert cli("upgrade", program, "--write").returncode == 0
    out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert out.returncode == 0, out.stderr[-3000:]
    steps, kernels = _logged(out.stdout)
    assert [step for _, step in steps] == [step for _, step in want_steps], out.stdout
    np.testing.assert_allclose([loss for loss, _ in steps], [loss for loss, _ in want_steps], rtol=1e-5)
    assert len(kernels) == 2 and kernels[0] == kernels[1]
    np.testing.assert_allclose(json.loads(kernels[0][len("kernel "):]),
                               json.loads(want_kernels[0][len("kernel "):]), rtol=1e-5)
