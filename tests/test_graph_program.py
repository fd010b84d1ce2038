"""shims.GraphProgram with real TensorFlow: sess.run semantics, TF1 names (as real TF 1.15
gives them), checkpoints."""
import contextlib
import inspect
import io
import os
import json
import textwrap

import numpy as np
import pytest

import tf1_oracle

tf = pytest.importorskip("tensorflow")
import shims  # noqa: E402
from tensorflow.python.ops import resource_variable_ops  # noqa: E402


def build(x):
    w = tf.Variable(tf.ones([3, 1]), name="w")
    loss = tf.reduce_sum(tf.matmul(x, w))
    train = tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss)
    return {"w": w, "loss": loss, "train": train}


def test_only_what_the_fetches_need_runs():
    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    data = np.ones((2, 3), "float32")
    before = program.run("w").copy()
    assert program.run("loss", x=data) == pytest.approx(6.0)
    np.testing.assert_array_equal(program.run("w"), before)  # fetching the loss did not train
    train, loss = program.run(["train", "loss"], x=data)
    assert train is None and loss == pytest.approx(6.0)
    assert not np.array_equal(program.run("w"), before)


TF1_NAMES = """
import json
import tensorflow as tf
{source}
{name}(tf.compat.v1.placeholder(tf.float32, [None, 3]))
print(json.dumps([v.op.name for v in tf.compat.v1.global_variables()]))
"""


def tf1_names(fn):
    """The variables ``fn`` creates on real TF 1.15 (its own source runs there), by name, in
    creation order."""
    source = textwrap.dedent(inspect.getsource(fn))
    return json.loads(tf1_oracle.run(TF1_NAMES.format(source=source, name=fn.__name__)))


def test_variables_keep_their_tf1_names_and_slots(tmp_path, tf1_python):
    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    program.run("train", x=np.ones((1, 3), "float32"))
    names = [program.name_of(v) for v in program.variables]
    assert names == tf1_names(build)  # w, its Adam slots, beta1/2_power, as TF 1.15 names them
    program.run("train", x=np.ones((1, 3), "float32"))
    assert len(program.variables) == len(names)  # created once, whatever the number of steps
    path = program.save(str(tmp_path / "model"))
    assert dict(tf.train.list_variables(path)).keys() >= {"w", "w/Adam", "beta1_power"}
    fresh = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    fresh.restore(str(tmp_path))
    np.testing.assert_array_equal(fresh.run("w"), program.run("w"))


def test_an_unfed_placeholder_fails_only_when_needed():
    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    program.run("w")  # needs no feed
    with pytest.raises(Exception):
        program.run("loss")


def test_restore_names_what_is_missing(tmp_path):
    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    path = program.save(str(tmp_path / "model"))

    def other(x):
        return {"v": tf.Variable(tf.zeros([1]), name="other")}

    with pytest.raises(ValueError, match="other"):
        shims.GraphProgram(other, x=tf.TensorSpec([None, 3], tf.float32)).restore(path)


def test_unknown_fetch_is_a_clear_error():
    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    with pytest.raises(KeyError, match="nope"):
        program.run("nope", x=np.ones((1, 3), "float32"))


def test_same_names_in_one_graph_get_tf1_suffixes(tf1_python):
    """Two TF1 optimizers' non-slot variables (beta1_power, beta1_power_1) and two raw
    variables named alike stay distinct, named as real TF 1.15 names them; a second step
    reuses them."""
    def two(x):
        a = tf.Variable(tf.ones([3, 1]), name="w")
        b = tf.Variable(tf.ones([3, 1]), name="w")
        loss_a = tf.reduce_sum(tf.matmul(x, a))
        loss_b = tf.reduce_sum(tf.matmul(x, b))
        return {"a": tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss_a, var_list=[a]),
                "b": tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss_b, var_list=[b])}

    program = shims.GraphProgram(two, x=tf.TensorSpec([None, 3], tf.float32))
    program.run("a", x=np.ones((1, 3), "float32"))
    program.run("b", x=np.ones((1, 3), "float32"))
    names = sorted(program.name_of(v) for v in program.variables)
    assert names == sorted(tf1_names(two)) and {"w_1", "beta1_power_1"} <= set(names)
    assert program.variable("beta1_power").numpy() == pytest.approx(0.9 ** 2)
    assert program.variable("beta1_power_1").numpy() == pytest.approx(0.9 ** 2)


def two_objects(x):
    """What a TF1 script built into its one graph by handing its Session to two objects."""
    out = {}
    for scope in ("main", "target"):
        with tf.compat.v1.variable_scope(scope):
            w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.ones_initializer())
            b = tf.Variable(tf.zeros([1]))
        loss = tf.reduce_sum(tf.matmul(x, w) + b)
        out[scope] = tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss)
    return out


def test_programs_sharing_a_graph_are_named_as_its_one_tf1_graph(tf1_python):
    """Objects handed one Session (``DQN(sess, name="main")``, ``DQN(sess, name="target")``)
    built into one TF1 graph: the second Adam's beta1_power is beta1_power_1 there. Their
    programs in one SharedGraph have TF 1.15's names, built when each joins (in the order
    TF1 built them), and each trains its own variables."""
    def one(scope):
        def build(x):
            with tf.compat.v1.variable_scope(scope):
                w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.ones_initializer())
                b = tf.Variable(tf.zeros([1]))
            loss = tf.reduce_sum(tf.matmul(x, w) + b)
            return {"train": tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss), "w": w}
        return build

    graph = shims.SharedGraph()
    spec = tf.TensorSpec([None, 3], tf.float32)
    main = shims.GraphProgram(one("main"), x=spec).in_graph(graph)
    target = shims.GraphProgram(one("target"), x=spec).in_graph(graph)
    names = [p.name_of(v) for p in graph.programs for v in p.variables]
    assert sorted(names) == sorted(tf1_names(two_objects))
    assert "beta1_power_1" in [target.name_of(v) for v in target.variables]
    main.run("train", x=np.ones((1, 3), "float32"))
    main.run("train", x=np.ones((1, 3), "float32"))  # a second trace keeps the names
    assert [main.name_of(v) for v in main.variables] == [n for n in names if not n.startswith("target")
                                                         and n not in ("beta1_power_1", "beta2_power_1")]
    assert main.variable("beta1_power").numpy() == pytest.approx(0.9 ** 3)
    assert target.variable("beta1_power_1").numpy() == pytest.approx(0.9)  # never trained
    np.testing.assert_array_equal(target.run("w"), np.ones((3, 1)))
    assert len(graph.variables) == len(names)


def actor_and_critic(x):
    """The actor-critic tutorials' two objects, each training in its own
    ``variable_scope('train')``, built into one TF1 graph."""
    for scope in ("Actor", "Critic"):
        with tf.compat.v1.variable_scope(scope):
            y = tf.compat.v1.layers.dense(x, 1, name="l1")
        with tf.compat.v1.variable_scope("train"):
            tf.compat.v1.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(y))


def test_a_program_joining_a_shared_graph_numbers_its_name_scopes_after_the_others(tf1_python):
    """TF1 opened the critic's ``variable_scope('train')`` as name scope ``train_1`` (the
    actor's graph had taken ``train``), and Adam's beta powers, plain ``tf.Variable``s,
    took their names from it: ``train_1/beta1_power``, which a TF1 checkpoint holds."""
    def one(scope):
        def build(x):
            with tf.compat.v1.variable_scope(scope):
                y = tf.compat.v1.layers.dense(x, 1, name="l1")
            with tf.compat.v1.variable_scope("train"):
                return {"train": tf.compat.v1.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(y))}
        return build

    graph = shims.SharedGraph()
    spec = tf.TensorSpec([None, 3], tf.float32)
    actor = shims.GraphProgram(one("Actor"), x=spec).in_graph(graph)
    critic = shims.GraphProgram(one("Critic"), x=spec).in_graph(graph)
    critic.run("train", x=np.ones((1, 3), "float32"))
    actor.run("train", x=np.ones((1, 3), "float32"))  # a later trace of the first: its names
    names = [p.name_of(v) for p in graph.programs for v in p.variables]
    assert sorted(names) == sorted(tf1_names(actor_and_critic))
    assert "train_1/beta1_power" in names and "train/beta1_power" in names


def test_a_shared_graph_is_what_a_file_writer_is_handed(tmp_path):
    """``tf.summary.FileWriter("logs/", sess.graph)`` in a script whose session became a
    SharedGraph: ``.graph`` holds every program's ops built so far (TF1's ``sess.graph``
    held every object's), and the writer writes it for TensorBoard's graph view."""
    def one(scope):
        def build(x):
            with tf.compat.v1.variable_scope(scope):
                y = tf.compat.v1.layers.dense(x, 2, name="l1")
            return {"y": y}
        return build

    graph = shims.SharedGraph()
    assert graph.graph.get_operations() == []  # nothing made yet
    spec = tf.TensorSpec([None, 3], tf.float32)
    shims.GraphProgram(one("Actor"), x=spec).in_graph(graph)
    shims.GraphProgram(one("Critic"), x=spec).in_graph(graph)
    ops = {op.name for op in graph.graph.get_operations()}
    assert {"Actor/l1/MatMul", "Critic/l1/MatMul", "x", "x_1"} <= ops  # each program's input kept
    writer = shims.summary.FileWriter(str(tmp_path), graph.graph)
    writer.close()
    events = [e for f in tmp_path.iterdir() for e in tf.compat.v1.train.summary_iterator(str(f))]
    written = [e.graph_def for e in events if e.graph_def]
    assert len(written) == 1
    graph_def = tf.compat.v1.GraphDef.FromString(written[0])
    assert {"Actor/l1/MatMul", "Critic/l1/MatMul"} <= {n.name for n in graph_def.node}


def optimizers_in_scopes(x):
    with tf.compat.v1.variable_scope("net"):
        w = tf.compat.v1.get_variable("w", [3, 1])
    loss = tf.reduce_sum(tf.matmul(x, w))
    with tf.compat.v1.variable_scope("train"):
        rms = tf.compat.v1.train.RMSPropOptimizer(0.1).minimize(loss)
    with tf.compat.v1.variable_scope("adam"):
        adam = tf.compat.v1.train.AdamOptimizer(0.1).minimize(loss)
    return {"rms": rms, "adam": adam}


def test_slots_are_named_in_the_variable_scope_the_optimizer_was_called_in(tf1_python):
    """``with tf.variable_scope('train'): opt.minimize(loss)`` (the RL tutorials' DQN):
    TF 1.15 names the slots ``train/net/w/RMSProp``, under the scope the optimizer ran in,
    so a checkpoint's and verify's names are those."""
    program = shims.GraphProgram(optimizers_in_scopes, x=tf.TensorSpec([None, 3], tf.float32))
    program.run(["rms", "adam"], x=np.ones((1, 3), "float32"))
    names = [program.name_of(v) for v in program.variables]
    assert sorted(names) == sorted(tf1_names(optimizers_in_scopes))
    assert "train/net/w/RMSProp" in names and "adam/net/w/Adam_1" in names


def test_a_program_made_in_a_variable_scope_builds_in_it(tf1_python):
    """``with tf.variable_scope("Natural_DQN"): natural = DQN(sess, ...)``: TF1 built the
    object's graph in that scope, so its variables (slots and beta powers too) are named in
    it; the object's program, made in the same scope, names them so."""
    source = textwrap.dedent(inspect.getsource(optimizers_in_scopes))
    want = json.loads(tf1_oracle.run(
        "import json\nimport tensorflow as tf\n" + source +
        "with tf.compat.v1.variable_scope('Natural_DQN'):\n"
        "    optimizers_in_scopes(tf.compat.v1.placeholder(tf.float32, [None, 3]))\n"
        "print(json.dumps([v.op.name for v in tf.compat.v1.global_variables()]))\n"))
    with tf.compat.v1.variable_scope("Natural_DQN"):
        program = shims.GraphProgram(optimizers_in_scopes, x=tf.TensorSpec([None, 3], tf.float32))
    program.run(["rms", "adam"], x=np.ones((1, 3), "float32"))
    names = [program.name_of(v) for v in program.variables]
    assert sorted(names) == sorted(want) and "Natural_DQN/net/w" in names


def test_a_shared_graph_is_joined_before_the_build_and_by_nothing_else():
    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    assert program.in_graph(None) is program  # no graph handed: the program is its own
    with pytest.raises(TypeError, match="shims.SharedGraph"):
        program.in_graph(tf.compat.v1.Session())
    program.run("w")
    with pytest.raises(ValueError, match="before the program is built"):
        program.in_graph(shims.SharedGraph())


def test_a_parameter_named_with_an_underscore_can_go_unfed():
    """``self._X = tf.placeholder(...)`` in a class: the parameter ``_X`` is an unfed
    input of a step that does not need it (op names cannot start with ``_``)."""
    def underscored(_X):
        w = tf.Variable(tf.ones([3, 1]), name="w")
        return {"w": w, "y": tf.matmul(_X, w)}

    program = shims.GraphProgram(underscored, _X=tf.TensorSpec([None, 3], tf.float32))
    np.testing.assert_array_equal(program.run("w"), np.ones((3, 1)))
    assert program.run("y", _X=np.ones((1, 3), "float32")) == pytest.approx(3.0)


def one_shot_stream():
    dataset = tf.data.Dataset.range(20).batch(2).map(lambda b: b * 3)
    batch = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    return {"batch": batch, "scaled": batch * 10, "total": tf.reduce_sum(batch)}


TF1_STREAM = """
import json
import tensorflow as tf
{source}
graph = one_shot_stream()
with tf.Session() as sess:
    out = [sess.run(graph[f]) for f in {order!r}]
    out.append(sess.run([graph["batch"], graph["scaled"]]))
print(json.dumps([getattr(v, "tolist", lambda: [a.tolist() for a in v])() for v in out]))
"""


def test_every_step_reads_the_programs_one_iterator(tf1_python):
    """TF1 had one iterator per make_one_shot_iterator call, read by every sess.run
    whatever it fetched. Steps are separate functions here: each read a copy of its own
    (a step fetching another name started at the first batch again). Compared with real
    TF 1.15: the same batches, in the same order, across different fetches."""
    order = ["batch", "batch", "scaled", "total", "batch"]
    source = textwrap.dedent(inspect.getsource(one_shot_stream))
    want = json.loads(tf1_oracle.run(TF1_STREAM.format(source=source, order=order)))
    program = shims.GraphProgram(one_shot_stream)
    got = [program.run(f).tolist() for f in order]
    got.append([a.tolist() for a in program.run(["batch", "scaled"])])
    assert got == want


TF1_FETCHED_VARIABLE = """
import json
import numpy as np
import tensorflow as tf
{source}
x = tf.placeholder(tf.float32, [None, 3])
graph = build(x)
step = tf.train.get_or_create_global_step()
bump = tf.assign_add(step, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    out = []
    for _ in range(3):
        _, _, w, s = sess.run([graph["train"], bump, graph["w"], step], {{x: np.ones((1, 3), "float32")}})
        out.append([w.ravel().tolist(), int(s)])
print(json.dumps(out))
"""


def test_a_fetched_variable_is_read_after_the_fetched_ops_ran(tf1_python):
    """TF1's variables were references, read when the run ended: `sess.run([train_op, w,
    global_step])` gave the values after the update (the loops printing `step` beside the
    train op print 1, 2, 3 on TF 1.15). A converted step read them before."""
    source = textwrap.dedent(inspect.getsource(build))
    want = json.loads(tf1_oracle.run(TF1_FETCHED_VARIABLE.format(source=source)))

    def with_step(x):
        graph = dict(build(x))
        graph["step"] = tf.compat.v1.train.get_or_create_global_step()
        graph["bump"] = tf.compat.v1.assign_add(graph["step"], 1)
        return graph

    program = shims.GraphProgram(with_step, x=tf.TensorSpec([None, 3], tf.float32))
    got = []
    for _ in range(3):
        _, _, w, s = program.run(["train", "bump", "w", "step"], x=np.ones((1, 3), "float32"))
        got.append([w.ravel().tolist(), int(s)])
    assert [s for _, s in got] == [s for _, s in want] == [1, 2, 3]
    np.testing.assert_allclose([w for w, _ in got], [w for w, _ in want], rtol=1e-6)


def test_each_program_lists_only_its_own_variables():
    """A step graph shares the variable collections of the graph around it: a second
    program (an Estimator's evaluate after train, a fine-tuning model after pre-training)
    listed the first one's variables in `trainable_variables()`, so BERT's assignment map
    named weights of another model."""
    seen = {}

    def first(x):
        return {"y": tf.compat.v1.layers.dense(x, 2, name="pretrain_head")}

    def second(x):
        y = tf.compat.v1.layers.dense(x, 2, name="classifier")
        seen["trainable"] = [v.name for v in tf.compat.v1.trainable_variables()]
        seen["global"] = [v.name for v in tf.compat.v1.global_variables()]
        return {"y": y}

    shims.GraphProgram(first, x=tf.TensorSpec([None, 3], tf.float32)).run("y", x=np.ones((1, 3), "float32"))
    shims.GraphProgram(second, x=tf.TensorSpec([None, 3], tf.float32)).run("y", x=np.ones((1, 3), "float32"))
    assert sorted(seen["trainable"]) == sorted(seen["global"]) == ["classifier/bias:0", "classifier/kernel:0"]


def test_summary_writers_are_made_once_per_program(tmp_path):
    """`tf.contrib.summary.create_file_writer` in graph code (a TPUEstimator host call): TF2
    made a writer per traced step and deleted it with its Python object, so the steps
    failed (`Resource ... SummaryWriterInterface does not exist`) and each trace left an
    event file. A program's writers are made once, one event file, flushed on request."""
    def build(x):
        with tf.summary.create_file_writer(str(tmp_path)).as_default(), tf.summary.record_if(True):
            written = tf.summary.scalar("x", x, step=tf.constant(1, tf.int64))
        return {"written": written, "double": x * 2.0}

    program = shims.GraphProgram(build, x=tf.TensorSpec([], tf.float32))
    assert program.run("double", x=1.0) == 2.0
    for value in (3.0, 4.0):
        program.run("written", x=value)
    program.flush_summary_writers()
    files = os.listdir(tmp_path)
    assert len(files) == 1, files
    values = [float(tf.make_ndarray(v.tensor)) for e in tf.compat.v1.train.summary_iterator(
        str(tmp_path / files[0])) for v in e.summary.value]
    assert values == [3.0, 4.0]


def test_max_to_keep_counts_every_checkpoint_the_program_wrote(tmp_path):
    """`saver = tf.train.Saver(max_to_keep=2)` then `saver.save(sess, path, global_step=i)`
    in a loop kept the last two on TF1. Each converted save made a Saver of its own, which
    knew only the checkpoint it wrote: every checkpoint stayed (a long run filled the disk)."""
    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    for step in range(1, 6):
        program.run("train", x=np.ones((1, 3), "float32"))
        program.save(str(tmp_path / "model"), global_step=step, max_to_keep=2)
    kept = sorted(p.name for p in tmp_path.glob("*.index"))
    assert kept == ["model-4.index", "model-5.index"], kept
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model-5")


REPLICAS = """
import sys
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import shims


def build(x, y, training):
    w = tf.compat.v1.get_variable("w", [6, 1], initializer=tf.compat.v1.constant_initializer(0.1))
    b = tf.Variable(tf.zeros([1]), name="b")
    h = tf.compat.v1.layers.batch_normalization(x, training=training, name="bn")
    loss = tf.compat.v1.losses.mean_squared_error(y, tf.matmul(h, w) + b)
    step = tf.compat.v1.train.get_or_create_global_step()
    with tf.control_dependencies(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)):
        train = tf.compat.v1.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
    return {"loss": loss, "train": train}


def program(strategy=None):
    made = shims.GraphProgram(build, x=tf.TensorSpec([None, 6]), y=tf.TensorSpec([None, 1]),
                              training=tf.TensorSpec([], tf.bool))
    return made.on_strategy(strategy, scale_loss=True) if strategy else made


rng = np.random.RandomState(0)
X = rng.randn(64, 6).astype(np.float32)
Y = X.sum(1, keepdims=True).astype(np.float32)
two, one = program(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])), program()
for a, b in zip(one.variables, two.variables):
    b.assign(a)
for start in (0, 16, 32):  # each replica the same batch: the same statistics, the same step
    batch = {"x": X[start:start + 16], "y": Y[start:start + 16], "training": True}
    losses = [out["loss"] for out in two.run_replicas({"train": "train", "loss": "loss"}, [batch] * 2)]
    alone = one.run(["train", "loss"], **batch)[1]
print("LOSS", abs(np.mean(losses) - alone) < 1e-5, two.loss_scaled)
print("NAMES", [two.name_of(v) for v in two.variables] == [one.name_of(v) for v in one.variables])
print("KINDS", sorted({type(v).__name__ for v in two.variables}))
same = [two.name_of(v) for a, v in zip(one.variables, two.variables)
        if not np.allclose(a.numpy(), v.numpy(), rtol=1e-5, atol=1e-6)]
print("DIFFER", same)
print("RUN", two.run("loss", x=X[:4], y=Y[:4], training=False) == one.run("loss", x=X[:4], y=Y[:4], training=False))
path = two.save(sys.argv[1] + "/model", global_step=3)
saved = dict(tf.train.list_variables(path))
print("SAVED", sorted(saved) == sorted(one.name_of(v) for v in one.global_variables()),
      np.allclose(tf.train.load_variable(path, "bn/moving_mean"), one.variable("bn/moving_mean").numpy()))
again = program(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]))
again.restore(sys.argv[1])
moving = again.variable("bn/moving_mean")
print("RESTORED", all(np.allclose(c.numpy(), one.variable("bn/moving_mean").numpy())
                      for c in moving.values))
try:
    program(tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:7"])).run("loss", x=X, y=Y, training=False)
except NotImplementedError as exc:
    print("MISSING", "/cpu:7" in str(exc).lower() or "CPU:7" in str(exc))
"""


def test_a_program_runs_once_per_replica_of_a_mirrored_strategy(tmp_path):
    """GraphProgram.on_strategy: the build runs once per replica on two logical CPU devices
    (mirrored variables under their TF1 names, slots and batch-norm statistics included);
    two replicas fed the same batch, the v1 optimizer dividing their losses before the
    strategy sums the gradients, equal one device on it (undivided, the step would be
    twice as long); checkpoints keep TF1 names, batch norm's per-replica
    statistics are saved as their mean and restored into every replica; a device the
    machine lacks is refused (TensorFlow would wait for it forever)."""
    import subprocess
    import sys

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    proc = subprocess.run([sys.executable, "-c", REPLICAS, str(tmp_path)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for line in ("LOSS True True", "NAMES True", "KINDS ['MirroredVariable', 'SyncOnReadVariable']",
                 "DIFFER []", "RUN True", "SAVED True True", "RESTORED True", "MISSING True"):
        assert line in proc.stdout, proc.stdout


TOWERS = """
import sys
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import shims

print("OUTSIDE", shims.towers(range(3)))


def build(x, count=2):
    opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    grads, first = [], None
    for i in shims.towers(range(count)):
        part = x[i * 4:(i + 1) * 4]
        w = tf.compat.v1.get_variable("w", [3, 1], initializer=tf.compat.v1.ones_initializer())
        loss = tf.reduce_mean(tf.matmul(part, w))
        if i == 0:
            first = loss
        grads.append(opt.compute_gradients(loss))
    mean = [(tf.add_n([g for g, _ in gv]) / len(gv), gv[0][1]) for gv in zip(*grads)]
    return {"train": opt.apply_gradients(mean), "loss": loss, "first": first}


X = np.arange(24, dtype=np.float32).reshape(8, 3)
towers = shims.GraphProgram(build, x=tf.TensorSpec([8, 3])).on_towers(2)
alone = shims.GraphProgram(build, x=tf.TensorSpec([8, 3]))  # every tower in one graph
print("TOWERS", towers.towers, towers.strategy.num_replicas_in_sync, alone.towers)
for _ in range(3):
    a, b = towers.run(["train", "loss", "first"], x=X), alone.run(["train", "loss", "first"], x=X)
print("SAME", np.allclose(a[1], b[1]), np.allclose(a[2], b[2]), a[1] != a[2],
      np.allclose(towers.variable("w").numpy(), alone.variable("w").numpy()))
path = towers.save(sys.argv[1] + "/model", global_step=3)
again = shims.GraphProgram(build, x=tf.TensorSpec([8, 3])).on_towers(2)
again.restore(path)
print("RESTORED", [type(v).__name__ for v in again.variables] == ["MirroredVariable"] * 1,
      all(np.allclose(c.numpy(), alone.variable("w").numpy()) for c in again.variable("w").values))
try:
    shims.GraphProgram(lambda x: build(x, count=3), x=tf.TensorSpec([8, 3])).on_towers(2).run("loss", x=X)
except ValueError as exc:
    print("COUNT", "runs 3 towers" in str(exc) and "on 2" in str(exc))
try:
    towers.run_replicas("loss", [{"x": X}] * 2)
except RuntimeError as exc:
    print("REPLICAS", "use run()" in str(exc))
try:
    shims.GraphProgram(build, x=tf.TensorSpec([8, 3])).on_towers(0)
except ValueError as exc:
    print("ZERO", "at least 1" in str(exc))
print("FEWER", shims.GraphProgram(build, x=tf.TensorSpec([8, 3])).on_towers(3).strategy)
"""


def test_towers_run_as_replicas_and_equal_every_tower_in_one_graph(tmp_path):
    """GraphProgram.on_towers on two logical CPU devices: `shims.towers` gives each replica
    its own tower (all of them outside a tower program), the strategy's combination of the
    replicas' gradients equals the hand-written mean over every tower in one graph, a fetch
    is the last tower's and a value one tower alone built is that tower's, a checkpoint
    restores into every replica's copy; a loop whose count differs from the program's, a
    count below 1 and per-replica feeds are clear errors; more towers than devices run in
    one replica (no strategy)."""
    import subprocess
    import sys

    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    proc = subprocess.run([sys.executable, "-c", TOWERS, str(tmp_path)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for line in ("OUTSIDE [0, 1, 2]", "TOWERS 2 2 0", "SAME True True True True", "RESTORED True True",
                 "COUNT True", "REPLICAS True", "ZERO True", "FEWER None"):
        assert line in proc.stdout, proc.stdout + proc.stderr[-2000:]


def test_keras_layers_built_in_a_step_keep_tf1_names_and_update_their_statistics():
    """Keras layers built in a step under `tf.name_scope` (a tower's `tower_0`) get the names
    TF1's `tf.layers` gave them, by variable scope (`fc/kernel`, not `tower_0/fc/kernel`):
    a layer made by `get_or_create_layer` and one held outside the build alike, while TF1's
    own legacy layers keep theirs; batch norm's moving statistics move through UPDATE_OPS."""
    held = tf.keras.layers.Dense(2, name="held")

    def build(x):
        with tf.name_scope("tower_0"):
            h = shims.get_or_create_layer("fc", lambda: tf.keras.layers.Dense(3, name="fc"))(x)
            h = shims.get_or_create_layer("bn", lambda: tf.keras.layers.BatchNormalization(name="bn"))(
                h, training=True)
            h = held(h)
            with tf.compat.v1.variable_scope("legacy"):
                h = tf.compat.v1.layers.dense(h, 1, name="out")
        loss = tf.reduce_mean(h)
        with tf.control_dependencies(tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)):
            train = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss)
        return {"train": train}

    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 2]))
    program.run("train", x=np.array([[1.0, 2.0], [3.0, 5.0]], np.float32))
    assert sorted(program.name_of(v) for v in program.variables) == [
        "bn/beta", "bn/gamma", "bn/moving_mean", "bn/moving_variance", "fc/bias", "fc/kernel",
        "held/bias", "held/kernel", "legacy/out/bias", "legacy/out/kernel"]
    assert np.any(np.abs(program.variable("bn/moving_mean").numpy()) > 1e-6)


def test_the_step_s_graph_goes_to_a_file_writer_and_plain_tensorflow_runs_to_numpy(tmp_path):
    """``program.graph`` is what TF1 code handed a FileWriter as ``sess.graph``: the step's
    graph, with the program's ops, written for TensorBoard's graph view. ``shims.evaluated``
    gives what ``sess.run`` gave for TensorFlow on plain arrays: numpy, in the fetch's
    structure."""
    from tensorflow.core.util import event_pb2

    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    assert "MatMul" in {op.type for op in program.graph.get_operations()}
    writer = shims.summary.FileWriter(str(tmp_path), program.graph)
    writer.close()
    events = [event_pb2.Event.FromString(r.numpy()) for path in tmp_path.iterdir()
              for r in tf.data.TFRecordDataset(str(path))]
    assert any(e.HasField("graph_def") for e in events)
    labels = np.eye(3, dtype=np.float32)[[2, 0]]
    value = shims.evaluated(tf.argmax(labels, 1))
    assert isinstance(value, np.ndarray) and value.tolist() == [2, 0]
    pair = shims.evaluated([tf.reduce_sum(labels), {"n": tf.size(labels)}, 3])
    assert pair[0] == pytest.approx(2.0) and pair[1]["n"] == 6 and pair[2] == 3


STRUCTURES_TF1 = '''
import collections
import tensorflow as tf
Pair = collections.namedtuple("Pair", "a b")
W = tf.Variable(5.0)
gvs = tf.train.GradientDescentOptimizer(0.01).compute_gradients(tf.square(W))
values = {"gvs": gvs, "pair": (W, W * 2), "named": Pair(W, W + 1), "listed": [W]}
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for fetch in (values["gvs"], values["pair"], values["named"], values["listed"],
                  (values["pair"], values["gvs"])):
        print(repr(sess.run(fetch)).replace("np.float32(", "").replace(")", "").replace("(", ""),
              type(sess.run(fetch)).__name__)
'''


def test_fetched_values_keep_the_structure_session_run_gave(tmp_path):
    """``compute_gradients``' (gradient, variable) pairs come back as tuples, a namedtuple as
    itself, a list as a list: what TF 1.15's ``Session.run`` gave (a printed ``gvs_val`` was
    `[(37.33, 4.63)]` there and `[[37.33, 4.63]]` migrated, hunkim's lab 3-X)."""
    import collections

    Pair = collections.namedtuple("Pair", "a b")

    def structures():
        W = tf.Variable(5.0)
        gvs = tf.compat.v1.train.GradientDescentOptimizer(0.01).compute_gradients(tf.square(W))
        return {"gvs": gvs, "pair": (W, W * 2), "named": Pair(W, W + 1), "listed": [W]}

    program = shims.GraphProgram(structures)
    got = []
    for fetch in ("gvs", "pair", "named", "listed", ("pair", "gvs")):
        value = program.run(fetch)
        got.append(repr(value).replace("np.float32(", "").replace(")", "").replace("(", "")
                   + " " + type(value).__name__)
    script = tmp_path / "structures.py"
    script.write_text(STRUCTURES_TF1)
    want = tf1_oracle.run_script(script, tmp_path).strip().splitlines()
    assert [g.replace("Pair", "") for g in got] == [w.replace("Pair", "") for w in want], (got, want)
    assert isinstance(program.run("named"), Pair) and isinstance(program.run("gvs")[0], tuple)


def test_a_feed_of_python_lists_is_read_as_tf1_read_it(tf1_python):
    """A feed of nested Python lists (`[image] * batch_size`, a float list fed to an int
    placeholder) is taken to the placeholder's dtype as TF 1.15's session took it
    (np.asarray), not refused as convert_to_tensor would."""
    source = ("import json\nimport tensorflow as tf\n"
              "i = tf.placeholder(tf.int32, [None, 2])\nf = tf.placeholder(tf.float32, [None, 2])\n"
              "with tf.Session() as s:\n"
              "    print(json.dumps(s.run([i * 2, f * 2], {i: [[1.7, -2.2], [3.0, 4]], f: [[1, 2]] * 3})"
              "[0].tolist() + [s.run(f * 2, {f: [[1, 2]] * 3}).tolist()]))\n")
    want = json.loads(tf1_oracle.run(source))
    program = shims.GraphProgram(lambda i, f: {"i2": i * 2, "f2": f * 2},
                                 i=tf.TensorSpec([None, 2], tf.int32), f=tf.TensorSpec([None, 2], tf.float32))
    i2, f2 = program.run(["i2", "f2"], i=[[1.7, -2.2], [3.0, 4]], f=[[1, 2]] * 3)
    assert i2.tolist() + [f2.tolist()] == want
    assert i2.dtype == np.int32 and f2.dtype == np.float32


def test_save_and_restore_take_tf1_savers_parameters_by_their_names(tmp_path):
    """`saver.save(sess=session, save_path=save_path)` (Hvass-Labs' save-and-restore
    tutorial), `write_meta_graph=False`: converted, the program's save and restore take
    TF1's Saver parameters by TF1's names."""
    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 3], tf.float32))
    program.run("train", x=np.ones((2, 3), "float32"))
    trained = program.run("w").copy()
    path = program.save(save_path=str(tmp_path / "best"), global_step=3, write_meta_graph=False,
                        write_state=False)
    assert path.endswith("best-3") and not os.path.exists(path + ".meta")
    assert not os.path.exists(tmp_path / "checkpoint")  # write_state=False: no state file
    program.run("train", x=np.ones((2, 3), "float32"))
    program.restore(save_path=path)
    np.testing.assert_array_equal(program.run("w"), trained)


def test_tf1_graph_runs_a_block_in_graph_mode_on_a_graph_seeded_as_tf1s_was():
    """`with shims.tf1_graph():` (a section TFM501 keeps in graph mode beside eager ones): a
    new default graph while the block runs, seeded with the seed set last, which eagerly
    is the process's (TF1's `reset_default_graph(); set_random_seed(11)` seeded the graph
    the section built), which the block may reset again; eager again after it, and nested
    in graph mode it takes that graph's seed."""
    tf.compat.v1.set_random_seed(11)
    try:
        with shims.tf1_graph() as graph:
            assert not tf.executing_eagerly() and tf.compat.v1.get_default_graph() is graph
            assert graph.seed == 11
            x = tf.compat.v1.placeholder(tf.float32, [None, 2])
            with tf.compat.v1.Session() as sess:
                assert sess.run(x * 2, {x: [[1, 2]]}).tolist() == [[2, 4]]
            graph.seed = 5
            with shims.tf1_graph() as inner:
                assert inner is not graph and inner.seed == 5
            tf.compat.v1.reset_default_graph()  # a search's trials, each on a new graph
            tf.compat.v1.set_random_seed(3)
            assert tf.compat.v1.get_default_graph() is not graph and tf.compat.v1.get_default_graph().seed == 3
        assert tf.executing_eagerly()
    finally:
        tf.compat.v1.set_random_seed(None)


def test_tf1_graph_makes_tf1s_variables(tf1_python):
    """Under `shims.tf1_graph()` variables are TF 1.15's (ref variables, `tf.Variable(...)`
    too): TF1 code reading `hidden1/kernel:0` or `theta:0` by name gets the variable's value
    and finds `hidden1/kernel/Assign` (resource variables gave a handle and no such op);
    eager code after it makes resource variables again."""
    source = textwrap.dedent("""
        x = tf.compat.v1.placeholder(tf.float32, [None, 2])
        h = tf.compat.v1.layers.dense(x, 3, name="hidden1", kernel_initializer=tf.compat.v1.ones_initializer())
        graph = tf.compat.v1.get_default_graph()
        theta = tf.Variable(tf.ones([2, 1]), name="theta")
        kernel = graph.get_tensor_by_name("hidden1/kernel:0")
        assign = graph.get_operation_by_name("hidden1/kernel/Assign")
        loss = tf.reduce_sum(tf.abs(kernel)) + tf.reduce_sum(h)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            print(json.dumps([kernel.dtype.name, assign.type, graph.get_tensor_by_name("theta:0").dtype.name,
                              float(sess.run(loss, {x: [[1, 2]]}))]))
    """)
    tf1 = json.loads(tf1_oracle.run("import json\nimport tensorflow as tf\n" + source).splitlines()[-1])
    out = io.StringIO()
    with shims.tf1_graph(), contextlib.redirect_stdout(out):
        exec(source, {"tf": tf, "json": json})
    assert json.loads(out.getvalue()) == tf1
    assert tf1[:3] == ["float32_ref", "Assign", "float32_ref"]
    assert isinstance(tf.Variable(1.0), resource_variable_ops.ResourceVariable)
