"""shims with real TensorFlow: a TF1 graph + Saver made on real TF 1.15 -> legacy_layer, strict loading,
regularization, tf.Module flavour, the Keras-3-first path, contrib math."""
import inspect
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("tensorflow")
import shims  # noqa: E402  (before tensorflow: selects tf_keras)
import tensorflow as tf  # noqa: E402

import tf1_oracle  # noqa: E402

v1 = tf.compat.v1


def regularizer(w):
    return 0.1 * tf.reduce_sum(w * w)


def model(x, training=False):
    """TF1 style: default_name scope, unnamed layers, get_variable, tensor.name."""
    with v1.variable_scope(None, default_name="net"):
        assert x.name  # graph-only attribute: works because legacy_layer traces fn
        h = v1.layers.dense(x, 4, activation=tf.nn.relu)
        h = v1.layers.dense(h, 4, kernel_regularizer=regularizer)
        h = v1.layers.dropout(h, 0.5, training=training)
        scale = v1.get_variable("scale", [4], initializer=v1.ones_initializer(),
                                regularizer=regularizer)
        with v1.variable_scope("head"):
            return v1.layers.dense(h * scale, 2)


TF1_RUN = """
import json
import numpy as np
import tensorflow as tf
v1 = tf.compat.v1
{functions}
inputs = np.array({inputs}, np.float32)
holder = v1.placeholder(tf.float32, inputs.shape)
out = {name}(holder)
reg = v1.losses.get_regularization_losses()
saver = v1.train.Saver()
with v1.Session() as session:
    session.run(v1.global_variables_initializer())
    for v in v1.global_variables():
        session.run(v.assign(v + 0.05 * tf.ones_like(v)))
    value = session.run(out, {{holder: inputs}})
    reg_value = float(session.run(v1.add_n(reg))) if reg else 0.0
    saver.save(session, "model")
names = sorted(v.op.name for v in v1.global_variables())
json.dump({{"value": value.tolist(), "reg": reg_value, "names": names}}, open("result.json", "w"))
"""


def tf1_run(fn, inputs, directory):
    """On real TF 1.15: build ``fn`` (its own source, with the regularizer), move the
    variables off their initial values, save; returns outputs, regularization loss,
    variable names and the checkpoint prefix (copied into ``directory``)."""
    functions = "\n".join(textwrap.dedent(inspect.getsource(f)) for f in (regularizer, model, fn))
    code = TF1_RUN.format(functions=functions, inputs=inputs.tolist(), name=fn.__name__)
    folder = tf1_oracle.copy(code, os.path.join(directory, "tf1"))
    with open(os.path.join(folder, "result.json")) as handle:
        result = json.load(handle)
    return (np.array(result["value"], np.float32), result["reg"], result["names"],
            os.path.join(folder, "model"))


@pytest.fixture(scope="module")
def reference(tmp_path_factory, tf1_python):
    inputs = np.random.RandomState(0).standard_normal((3, 5)).astype(np.float32)
    value, reg, names, path = tf1_run(model, inputs, str(tmp_path_factory.mktemp("tf1")))
    return inputs, value, reg, names, path


def test_tf1_checkpoint_loads_into_legacy_layer(reference):
    inputs, value, reg, names, path = reference
    assert "net/dense_1/kernel" in names and "net/head/dense/kernel" in names, names
    layer = shims.legacy_layer(model)
    layer(inputs)
    report = shims.load_tf1_checkpoint(layer, path)
    assert report.ok and len(report.matched) == len(names) == len(layer.variables)
    np.testing.assert_allclose(layer(inputs), value, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tf.function(layer)(inputs), value, rtol=1e-6, atol=1e-6)
    layer(inputs)  # more calls create nothing new
    assert len(layer.variables) == len(names)
    np.testing.assert_allclose(float(tf.add_n(layer.losses)), reg, rtol=1e-5)


def test_training_is_forwarded(reference):
    inputs = reference[0]
    layer = shims.legacy_layer(model)
    a = layer(inputs, training=False)
    b = layer(inputs, training=True)  # dropout active: some units are zeroed or scaled
    assert not np.allclose(a, b)


def test_strict_load_names_what_is_missing(reference, tmp_path):
    inputs, path = reference[0], reference[4]

    def grown(x):
        out = model(x)
        with v1.variable_scope("net", reuse=v1.AUTO_REUSE):
            extra = v1.get_variable("extra", [2], initializer=v1.zeros_initializer())
        return out + extra

    layer = shims.legacy_layer(grown)
    layer(inputs)
    with pytest.raises(ValueError, match="net/extra|extra"):
        shims.load_tf1_checkpoint(layer, path)
    report = shims.load_tf1_checkpoint(layer, path, strict=False)
    assert not report.ok and len(report.missing) == 1 and "extra" in report.missing[0]


def test_shape_mismatch_is_reported(tmp_path, tf1_python):
    def small(x):
        return v1.layers.dense(x, 3, name="fc")

    def large(x):
        return v1.layers.dense(x, 4, name="fc")

    inputs = np.ones((2, 5), np.float32)
    path = tf1_run(small, inputs, str(tmp_path))[3]
    layer = shims.legacy_layer(large)
    layer(inputs)
    with pytest.raises(ValueError, match="mismatch"):
        shims.load_tf1_checkpoint(layer, path)


def test_legacy_module_and_checkpoint_round_trip(reference, tmp_path):
    inputs, value, _, names, path = reference
    module = shims.LegacyModule(model)
    module(inputs)
    shims.load_tf1_checkpoint(module, path)
    np.testing.assert_allclose(module(inputs), value, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(float(tf.add_n(module.losses)), reference[2], rtol=1e-5)
    saved = tf.train.Checkpoint(model=module).save(str(tmp_path / "tf2"))
    fresh = shims.LegacyModule(model)
    fresh(inputs)
    tf.train.Checkpoint(model=fresh).restore(saved).assert_existing_objects_matched()
    np.testing.assert_allclose(fresh(inputs), value, rtol=1e-6, atol=1e-6)


def test_eager_mode_without_tracing(reference):
    inputs, value, _, _, path = reference

    def eager_safe(x):  # no graph-only attributes
        with v1.variable_scope("net"):
            h = v1.layers.dense(x, 4, activation=tf.nn.relu)
            return v1.layers.dense(h, 4)

    layer = shims.legacy_layer(eager_safe, trace=False)
    first = layer(inputs)
    np.testing.assert_allclose(layer(inputs), first)  # same variables on the second call
    assert len(layer.variables) == 4


def test_get_or_create_layer_auto_names_match_tf1(reference):
    """Migrated code: Keras layers keyed like TF1 named them (dense, dense_1, reuse=True)."""
    inputs, value, _, names, path = reference

    def migrated(x, training=False):
        with v1.variable_scope(None, default_name="net"):
            h = shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(4, activation=tf.nn.relu),
                                          default_name="dense")(x)
            h = shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(4, kernel_regularizer=regularizer),
                                          default_name="dense")(h)
            scale = v1.get_variable("scale", [4], initializer=v1.ones_initializer(), regularizer=regularizer)
            with v1.variable_scope("head"):
                return shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(2),
                                                 default_name="dense")(h * scale)

    layer = shims.legacy_layer(migrated)
    layer(inputs)
    report = shims.load_tf1_checkpoint(layer, path)
    assert report.ok and len(report.matched) == len(names)
    np.testing.assert_allclose(layer(inputs), value, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tf.function(layer)(inputs), value, rtol=1e-6, atol=1e-6)


def test_get_or_create_layer_outside_a_shim_scope():
    with pytest.raises(ValueError, match="legacy_layer"):
        shims.get_or_create_layer("x", lambda: tf.keras.layers.Dense(1))


def test_deterministic_random_modes():
    assert shims.deterministic_random("num_random_ops") is not None
    with pytest.raises(ValueError):
        shims.deterministic_random("bogus")


@pytest.mark.parametrize("mode", ["constant", "num_random_ops"])
def test_deterministic_random_draws_what_tf_keras_tool_draws(mode):
    """shims' tool (no tf_keras, so a Keras 3 process can use it) draws what tf_keras's
    DeterministicRandomTestTool draws, op by op, in both modes."""
    from tf_keras.src.legacy_tf_layers.migration_utils import DeterministicRandomTestTool

    draws = []
    for tool in (DeterministicRandomTestTool(seed=7, mode=mode), shims.deterministic_random(mode, seed=7)):
        with tool.scope():
            draws.append([tf.random.uniform([3]).numpy() for _ in range(3)])
    assert all(np.array_equal(a, b) for a, b in zip(*draws))
    assert (mode == "constant") == np.array_equal(draws[1][0], draws[1][1])
    tool = shims.deterministic_random("num_random_ops")
    tool.operation_seed = 0
    with tool.scope():
        tf.random.uniform([1])
    tool.operation_seed = 0
    with pytest.raises(ValueError, match="used twice"), tool.scope():
        tf.random.uniform([1])


def test_keras3_already_imported_path():
    code = (
        "import warnings, numpy as np\n"
        "import tensorflow as tf\n"
        "assert not tf.keras.__name__.startswith('tf_keras')\n"  # Keras 3 is active
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import shims\n"
        "assert any('import shims' in str(w.message) for w in caught), caught\n"
        "def fn(x):\n"
        "    w = tf.compat.v1.get_variable('w', [3, 2])\n"
        "    return tf.matmul(x, w)\n"
        "layer = shims.legacy_layer(fn)\n"
        "a = layer(np.ones((1, 3), np.float32)); b = layer(np.ones((1, 3), np.float32))\n"
        "assert np.allclose(a, b) and len(layer.variables) == 1\n"
        "print('ok')\n")
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-2000:]


# -- contrib ------------------------------------------------------------------------
CONTRIB = """
import json
import numpy as np
import tensorflow as tf
x = tf.constant(np.array({x}, np.float32))
out = {tf1}
values = {{}}
with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    for i, v in enumerate(tf.global_variables()):  # values of their own, not random ones
        value = np.arange(np.prod(v.shape.as_list()), dtype=np.float32).reshape(v.shape.as_list())
        values[v.op.name] = (np.sin(value) * 0.5 + 0.1 * i).tolist()
        session.run(v.assign(values[v.op.name]))
    print(json.dumps({{"values": values, "out": session.run(out).tolist()}}))
"""


def contrib_against_tf1(tf1, shim, x):
    """``tf1`` (a ``tf.contrib`` call on ``x``) on real TF 1.15 and ``shim`` (a function of
    the input) under shims.legacy_layer: the same variable names and shapes, and, with the
    same values in them, the same output."""
    want = json.loads(tf1_oracle.run(CONTRIB.format(x=x.tolist(), tf1=tf1)))
    layer = shims.legacy_layer(shim)
    layer(x)
    names = {v.name.split(":")[0]: v for v in layer.variables}
    assert sorted(names) == sorted(want["values"]), (sorted(names), sorted(want["values"]))
    for name, value in want["values"].items():
        names[name].assign(np.array(value, np.float32))
    np.testing.assert_allclose(layer(x).numpy(), np.array(want["out"], np.float32), rtol=1e-5, atol=1e-6)


def test_layer_norm_names_and_math(tf1_python):
    x = np.random.RandomState(1).standard_normal((2, 3, 5)).astype(np.float32)
    contrib_against_tf1("tf.contrib.layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)",
                        lambda t: shims.contrib.layer_norm(t, begin_norm_axis=-1, begin_params_axis=-1), x)
    # begin_norm_axis=1 (the contrib default) normalizes over every axis but the batch
    contrib_against_tf1("tf.contrib.layers.layer_norm(x)", lambda t: shims.contrib.layer_norm(t), x)


def test_fully_connected_names_and_math(tf1_python):
    x = np.random.RandomState(2).standard_normal((2, 4)).astype(np.float32)
    contrib_against_tf1("tf.contrib.layers.fully_connected(x, 3)",
                        lambda t: shims.contrib.fully_connected(t, 3), x)
    contrib_against_tf1("tf.contrib.layers.fully_connected(x, 3, scope='fc')",
                        lambda t: shims.contrib.fully_connected(t, 3, scope="fc"), x)


def test_flatten_and_l2_regularizer():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    assert shims.contrib.flatten(x).shape == (2, 12)
    w = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert float(shims.contrib.l2_regularizer(0.5)(w)) == pytest.approx(0.5 * 30 / 2)
    assert shims.contrib.l2_regularizer(0.0)(w) is None
    with pytest.raises(ValueError):
        shims.contrib.l2_regularizer(-1.0)


@pytest.mark.parametrize("uniform", [True, False])
def test_initializer_statistics(uniform):
    shape = [400, 300]
    fan_in, fan_out = 400.0, 300.0
    xavier = shims.contrib.xavier_initializer(uniform=uniform, seed=3)(shape).numpy()
    # Glorot: variance 2 / (fan_in + fan_out), whichever distribution
    assert xavier.std() == pytest.approx(np.sqrt(2.0 / (fan_in + fan_out)), rel=0.03)
    if uniform:
        assert np.abs(xavier).max() <= np.sqrt(6.0 / (fan_in + fan_out))
    he = shims.contrib.variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=uniform,
                                                    seed=4)(shape).numpy()
    # contrib's 1.3 factor compensates the truncation: variance ~= factor / fan_in
    assert he.std() == pytest.approx(np.sqrt(2.0 / fan_in), rel=0.03)


def test_hparams():
    hp = shims.contrib.HParams(learning_rate=0.1, layers=[64, 32], name="bert", use_tpu=False)
    hp.parse("learning_rate=0.5,layers=[8,4],use_tpu=true,name=small")
    assert hp.values() == {"learning_rate": 0.5, "layers": [8, 4], "name": "small", "use_tpu": True}
    hp.override_from_dict({"learning_rate": 1})
    assert hp.learning_rate == 1.0 and isinstance(hp.learning_rate, float)
    with pytest.raises(ValueError):
        hp.parse("nope=1")
    copy = shims.contrib.HParams(learning_rate=0.0, layers=[1], name="", use_tpu=True)
    assert copy.parse_json(hp.to_json()).values() == hp.values()
    assert shims.contrib.training.HParams is shims.contrib.HParams


# -- raw tf.Variable in legacy code, summaries ------------------------------------------
@pytest.mark.parametrize("trace", [True, False])
def test_raw_variables_are_created_once_with_their_tf1_names(trace, tmp_path):
    def build(x):
        with v1.variable_scope("head"):
            w = v1.get_variable("w", [3, 2], initializer=v1.ones_initializer())
            step = tf.Variable(0, name="global_step", trainable=False, dtype=tf.int64)
        with tf.name_scope("scales"):
            a = tf.Variable(2.0, name="scale")
            b = tf.Variable(3.0, name="scale")  # TF1 made scale_1
        bias = tf.Variable(tf.zeros([2]))  # unnamed: Variable
        step.assign_add(1)
        return tf.matmul(x, w) * a * b + bias + tf.cast(step, tf.float32)

    layer = shims.legacy_layer(build, trace=trace)
    x = np.ones((1, 3), np.float32)
    first, second = layer(x).numpy(), layer(x).numpy()
    names = sorted(v.name for v in layer.variables)
    assert names == ["Variable:0", "head/global_step:0", "head/w:0", "scales/scale:0",
                     "scales/scale_1:0"]
    np.testing.assert_allclose(second - first, 1.0)  # one step, kept between calls
    assert sorted(v.name for v in layer.trainable_variables) == \
        ["Variable:0", "head/w:0", "scales/scale:0", "scales/scale_1:0"]
    saved = tf.train.Checkpoint(layer=layer).save(str(tmp_path / "ckpt"))
    keys = " ".join(name for name, _ in tf.train.list_variables(saved))
    assert "head.Sglobal_step" in keys and "scales.Sscale_1" in keys


def test_summary_file_writer_works_eagerly(tmp_path):
    import shims.summary

    writer = shims.summary.FileWriter(str(tmp_path))
    serialized = v1.summary.scalar("loss", tf.constant(0.25))  # eager: the serialized bytes
    writer.add_summary(serialized, global_step=np.int64(3))
    writer.add_summary(serialized.numpy(), 4)
    writer.close()
    events = [e for path in tmp_path.iterdir() for e in v1.train.summary_iterator(str(path))]
    logged = [(e.step, v.tag, v.simple_value) for e in events for v in e.summary.value]
    assert logged == [(3, "loss", 0.25), (4, "loss", 0.25)]
    with pytest.raises(ValueError):
        shims.summary.FileWriter(str(tmp_path), session=object())


@pytest.mark.parametrize("config, want", [
    # a Kubernetes operator's cluster: the chief is worker 0, the workers follow
    ({"cluster": {"chief": ["c:1"], "worker": ["w0:1", "w1:1"], "ps": ["p0:1", "p1:1"]},
      "task": {"type": "worker", "index": 1}}, ("p0:1,p1:1", "c:1,w0:1,w1:1", "worker", 2)),
    ({"cluster": {"chief": ["c:1"], "worker": ["w0:1"], "ps": ["p0:1"]}, "task": {"type": "chief", "index": 0}},
     ("p0:1", "c:1,w0:1", "worker", 0)),
    ({"cluster": {"master": ["m:1"], "worker": ["w0:1"], "ps": ["p0:1"]}, "task": {"type": "ps", "index": 0}},
     ("p0:1", "m:1,w0:1", "ps", 0)),
    # workers only (Ray Train, TFJob without parameter servers); an evaluator keeps its type
    ({"cluster": {"worker": ["w0:1", "w1:1"]}, "task": {"type": "worker", "index": 1}}, ("", "w0:1,w1:1", "worker", 1)),
    ({"cluster": {"chief": ["c:1"]}, "task": {"type": "evaluator", "index": 0}}, ("", "c:1", "evaluator", 0)),
    # no TF_CONFIG, or one without a cluster: the program's own defaults
    (None, ("D", "D", "D", "D")),
    ({"task": {"type": "worker", "index": 3}}, ("D", "D", "D", "D")),
])
def test_cluster_flags_default_to_what_tf_config_says(monkeypatch, config, want):
    """#27, TFM121: a TF1 cluster program's --ps_hosts, --worker_hosts, --job_name and
    --task_index default to TF_CONFIG as cluster managers set it."""
    if config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    got = tuple(shims.cluster.tf_config_flag(name, "D") for name in shims.cluster.CLUSTER_FLAGS)
    assert got == want


def test_a_bad_tf_config_or_flag_name_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not a cluster description"):
        shims.cluster.tf_config_flag("ps_hosts", "")
    with pytest.raises(ValueError, match="'log_dir' is not one of ps_hosts"):
        shims.cluster.tf_config_flag("log_dir", "")
    monkeypatch.setenv("TFM_LOST_TASK_SECONDS", "soon")
    with pytest.raises(ValueError, match="TFM_LOST_TASK_SECONDS='soon' is not a number"):
        shims.cluster.lost_task_seconds()


def test_a_multi_worker_task_knows_the_workers_as_tf1_numbered_them(capsys):
    """#27: shims.cluster.MultiWorker takes tf.train.Server's arguments; the workers are the
    cluster's chief (or master) and then its worker tasks; a parameter server's join()
    returns at once with one line; one worker needs no strategy; bad tasks are one error."""
    cluster = tf.train.ClusterSpec({"ps": ["p:1"], "chief": ["c:1"], "worker": ["w0:1", "w1:1"]})
    worker = shims.cluster.MultiWorker(cluster, job_name="worker", task_index=1)
    assert worker.workers == ["c:1", "w0:1", "w1:1"] and worker.worker_index == 2 and not worker.is_chief
    chief = shims.cluster.MultiWorker({"chief": ["c:1"], "worker": ["w0:1"]}, job_name="chief", task_index=0)
    assert chief.is_chief and chief.target == ""
    server_def = tf.train.ServerDef(cluster=cluster.as_cluster_def(), job_name="worker", task_index=0)
    assert shims.cluster.MultiWorker(server_def).worker_index == 1
    ps = shims.cluster.MultiWorker(cluster, job_name="ps", task_index=0)
    ps.join()
    assert "/job:ps/task:0 has no work" in capsys.readouterr().err
    with pytest.raises(RuntimeError, match="not a worker job"):
        ps.strategy()
    with pytest.raises(RuntimeError, match="it trains, it does not serve"):
        worker.join()
    alone = shims.cluster.MultiWorker({"ps": ["p:1"], "worker": ["w:1"]}, job_name="worker", task_index=0)
    assert alone.strategy() is None  # one worker: the program as it is
    with pytest.raises(ValueError, match="task 3 of job 'worker', which has 2"):
        shims.cluster.MultiWorker(cluster, job_name="worker", task_index=3)
    with pytest.raises(ValueError, match="job 'evaluator' is not in the cluster"):
        shims.cluster.MultiWorker(cluster, job_name="evaluator", task_index=0)


def test_a_sync_replicas_optimizer_on_workers_is_its_wrapped_optimizer():
    """#27: shims.cluster.SyncReplicasOptimizer computes and applies the wrapped v1
    optimizer's gradients (the same slots and variables as TF1's, whose checkpoints it
    keeps); backup workers, variable averages and a replica count other than the
    program's workers are refused; its hook does nothing."""
    with pytest.raises(NotImplementedError, match="backup workers"):
        shims.cluster.SyncReplicasOptimizer(tf.compat.v1.train.AdamOptimizer(0.1), 2, total_num_replicas=3)
    with pytest.raises(NotImplementedError, match="variable_averages"):
        shims.cluster.SyncReplicasOptimizer(tf.compat.v1.train.AdamOptimizer(0.1), 1,
                                            variable_averages=object())

    def build(x, count):
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.ones_initializer())
        loss = tf.reduce_mean(tf.matmul(x, w))
        opt = shims.cluster.SyncReplicasOptimizer(tf.compat.v1.train.AdamOptimizer(0.1), count)
        step = tf.compat.v1.train.get_or_create_global_step()
        return {"train": opt.minimize(loss, global_step=step), "w": w}

    def plain(x):
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.ones_initializer())
        step = tf.compat.v1.train.get_or_create_global_step()
        train = tf.compat.v1.train.AdamOptimizer(0.1).minimize(tf.reduce_mean(tf.matmul(x, w)), global_step=step)
        return {"train": train, "w": w}

    data = np.arange(12, dtype=np.float32).reshape(4, 3)
    spec = tf.TensorSpec([None, 3], tf.float32)
    synced = shims.GraphProgram(lambda x: build(x, 1), x=spec)
    alone = shims.GraphProgram(plain, x=spec)
    for _ in range(3):
        synced.run("train", x=data)
        alone.run("train", x=data)
    assert sorted(synced.name_of(v) for v in synced.variables) == sorted(alone.name_of(v) for v in alone.variables)
    np.testing.assert_allclose(synced.run("w", x=data), alone.run("w", x=data))
    hook = shims.cluster.SyncReplicasOptimizer(tf.compat.v1.train.AdamOptimizer(0.1), 1).make_session_run_hook(True)
    assert type(hook) is tf.compat.v1.train.SessionRunHook  # TF's own, with nothing to do
    wrong = shims.GraphProgram(lambda x: build(x, 2), x=spec)
    with pytest.raises(ValueError, match="replicas_to_aggregate=2, but the program runs on 1 worker"):
        wrong.run("train", x=data)


SEQUENCE_LOSS_TF1 = """
import json
import numpy as np
import tensorflow as tf
rng = np.random.RandomState(2)
logits = rng.randn(3, 4, 5).astype(np.float32)
targets = rng.randint(0, 5, size=(3, 4)).astype(np.int32)
weights = (rng.rand(3, 4) > 0.3).astype(np.float32)
options = json.loads('{options}')
with tf.Session() as sess:
    print(json.dumps([np.asarray(sess.run(tf.contrib.seq2seq.sequence_loss(
        tf.constant(logits), tf.constant(targets), tf.constant(weights), **o))).tolist() for o in options]))
"""


def test_sequence_loss_reduces_as_tf1_did():
    """``tf.contrib.seq2seq.sequence_loss`` -> ``shims.contrib.seq2seq.sequence_loss``: the
    weighted cross-entropy with each of TF 1.15's reductions (a masked weight included)
    equals TF 1.15's own (hunkim's RNN labs train on it)."""
    from shims.contrib.seq2seq import sequence_loss

    options = [{}, {"average_across_timesteps": False}, {"average_across_batch": False},
               {"average_across_timesteps": False, "average_across_batch": False},
               {"average_across_timesteps": False, "average_across_batch": False,
                "sum_over_timesteps": True, "sum_over_batch": True},
               {"average_across_timesteps": False, "sum_over_timesteps": True},
               {"average_across_batch": False, "sum_over_batch": True}]
    want = json.loads(tf1_oracle.run(SEQUENCE_LOSS_TF1.replace("{options}", json.dumps(options))))
    rng = np.random.RandomState(2)
    logits = rng.randn(3, 4, 5).astype(np.float32)
    targets = rng.randint(0, 5, size=(3, 4)).astype(np.int32)
    weights = (rng.rand(3, 4) > 0.3).astype(np.float32)
    for option, expected in zip(options, want):
        got = sequence_loss(logits, targets, weights, **option).numpy()
        np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-6, atol=1e-7, err_msg=str(option))
    with pytest.raises(ValueError, match="cannot be set to True at same time"):
        sequence_loss(logits, targets, weights, sum_over_batch=True)


def test_the_mnist_package_holds_input_data():
    """#59: TF 1.x's `tensorflow.examples.tutorials.mnist` imported its `input_data`, so
    `from tensorflow.examples.tutorials import mnist` and then `mnist.input_data.read_data_sets`
    worked; migrated to `from shims.tutorials import mnist`, it had no `input_data`."""
    import importlib
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "from shims.tutorials import mnist; "
                           "print(mnist.input_data.read_data_sets.__name__)"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "read_data_sets", done.stderr[-2000:]
    assert importlib.import_module("shims.tutorials.mnist").input_data.DataSet
