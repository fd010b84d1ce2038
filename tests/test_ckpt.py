"""tf-migrate ckpt with real checkpoints: TF1 Saver, tf.train.Checkpoint of shim layers,
Keras 3 and legacy Keras models, Keras .weights.h5; every failure mode and exit code."""
import inspect
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tfm_cli

pytest.importorskip("tensorflow")
import shims  # noqa: E402
import tensorflow as tf  # noqa: E402

import tf1_oracle  # noqa: E402

v1 = tf.compat.v1


def cli(*args, env=None):
    return tfm_cli.run(*args, env={"TF_CPP_MIN_LOG_LEVEL": "3", **(env or {})}, default_keras=False, timeout=300)


def net(x):
    with v1.variable_scope("net"):
        h = v1.layers.dense(x, 4, activation=tf.nn.relu, name="hidden")
        return v1.layers.dense(h, 2, name="out")


SAVE_TF1 = """
import tensorflow as tf
v1 = tf.compat.v1
{functions}
{name}(v1.placeholder(tf.float32, [None, {in_dim}]))
saver = v1.train.Saver()
with v1.Session() as session:
    session.run(v1.global_variables_initializer())
    for i, v in enumerate(v1.global_variables()):
        session.run(v.assign(tf.fill(v.shape, 0.1 * (i + 1) + {shift})))
    saver.save(session, "model")
"""


def save_tf1(directory, fn=net, shift=0.0, in_dim=3):
    """A Saver checkpoint of ``fn``'s variables written by real TF 1.15 (the function's own
    source runs there: TF 1.15 has tf.compat.v1 too), each variable filled with a value of
    its own; returns its prefix."""
    functions = "\n".join(textwrap.dedent(inspect.getsource(f)) for f in dict.fromkeys([net, fn]))
    code = SAVE_TF1.format(functions=functions, name=fn.__name__, in_dim=in_dim, shift=shift)
    return os.path.join(tf1_oracle.copy(code, directory), "model")


@pytest.fixture
def tf1(tmp_path, tf1_python):
    return save_tf1(tmp_path / "tf1")


def shim_checkpoint(tf1_path, directory, fn=net):
    layer = shims.legacy_layer(fn)
    layer(np.ones((1, 3), np.float32))
    shims.load_tf1_checkpoint(layer, tf1_path)
    return tf.train.Checkpoint(model=layer).save(os.path.join(str(directory), "model"))


def compare(a, b, *extra):
    out = cli("ckpt", "compare", a, b, "--format", "json", *extra)
    data = json.loads(out.stdout) if out.stdout.strip().startswith("{") else None
    return out, data


def test_ls(tf1):
    out = cli("ckpt", "ls", tf1, "--format", "json")
    assert out.returncode == 0
    data = json.loads(out.stdout)
    assert data["kind"] == "tf1"
    names = {v["name"]: v for v in data["variables"]}
    assert names["net/hidden/kernel"]["shape"] == [3, 4]
    assert names["net/hidden/kernel"]["bytes"] == 48 and names["net/hidden/kernel"]["dtype"] == "float32"
    text = cli("ckpt", "ls", tf1)
    assert text.returncode == 0 and "net/out/bias" in text.stdout


def test_tf1_vs_shim_layer_checkpoint(tf1, tmp_path):
    tf2 = shim_checkpoint(tf1, tmp_path / "tf2")
    out, data = compare(tf1, tf2)
    assert out.returncode == 0, out.stdout + out.stderr
    assert data["ok"] and len(data["matched"]) == 4 and not data["unexpected"]
    assert {m["how"] for m in data["matched"]} == {"name"}
    # a directory with a `checkpoint` file works too
    assert compare(os.path.dirname(tf1), os.path.dirname(tf2))[0].returncode == 0


def test_changed_value_fails(tf1, tmp_path):
    other = save_tf1(tmp_path / "other", shift=0.5)
    out, data = compare(tf1, other)
    assert out.returncode == 1 and not data["ok"]
    assert {m["reason"] for m in data["mismatched"]} == {"values"}
    assert data["mismatched"][0]["max_abs"] == pytest.approx(0.5)
    # within a tolerance it passes
    assert compare(tf1, other, "--atol", "0.6")[0].returncode == 0


def test_missing_and_extra_variables_fail(tf1, tmp_path):
    def smaller(x):
        with v1.variable_scope("net"):
            return v1.layers.dense(x, 4, activation=tf.nn.relu, name="hidden")

    def larger(x):
        with v1.variable_scope("extra"):
            v1.get_variable("bonus", [7])
        return net(x)

    out, data = compare(tf1, save_tf1(tmp_path / "small", smaller))
    assert out.returncode == 1 and sorted(data["missing"]) == ["net/out/bias", "net/out/kernel"]
    out, data = compare(tf1, save_tf1(tmp_path / "large", larger))
    assert out.returncode == 1 and data["unexpected"] == ["extra/bonus"] and not data["missing"]


def test_shape_mismatch_fails(tf1, tmp_path):
    def wide(x):
        with v1.variable_scope("net"):
            h = v1.layers.dense(x, 5, activation=tf.nn.relu, name="hidden")
            return v1.layers.dense(h, 2, name="out")

    out, data = compare(tf1, save_tf1(tmp_path / "wide", wide))
    assert out.returncode == 1
    assert {m["reason"] for m in data["mismatched"]} == {"shape/dtype"}
    assert any(m["new_shape"] == [3, 5] for m in data["mismatched"])


def test_broken_checkpoints_exit_2(tf1, tmp_path):
    missing = cli("ckpt", "compare", tf1, tmp_path / "nothing")
    assert missing.returncode == 2 and "no such checkpoint" in missing.stderr
    assert "Traceback" not in missing.stderr
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "model.index").write_bytes(b"this is not a checkpoint index")
    (corrupt / "model.data-00000-of-00001").write_bytes(b"\x00" * 64)
    out = cli("ckpt", "compare", tf1, corrupt / "model")
    assert out.returncode == 2 and "cannot read" in out.stderr and "Traceback" not in out.stderr
    # truncated data: the index is fine, the tensors are cut short
    truncated = tmp_path / "truncated"
    truncated.mkdir()
    prefix = os.path.basename(tf1)
    folder = os.path.dirname(tf1)
    for name in os.listdir(folder):
        if name.startswith(prefix):
            data = open(os.path.join(folder, name), "rb").read()
            if ".data-" in name:
                data = data[: len(data) // 3]
            open(truncated / name, "wb").write(data)
    out = cli("ckpt", "compare", tf1, truncated / prefix)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert cli("ckpt", "ls", tmp_path / "nothing").returncode == 2
    assert cli("ckpt", "compare", tf1, tf1, "--map", tmp_path / "missing.json").returncode == 2


def test_name_map_and_regex_rules(tf1, tmp_path):
    layer = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, activation="relu", name="hidden"),
                                 tf.keras.layers.Dense(2, name="out")])
    shims.load_tf1_checkpoint(layer, tf1, name_map=_write_map(tmp_path / "names.json", {
        "net/hidden": "layer_with_weights-0", "net/out": "layer_with_weights-1"}))
    path = tf.train.Checkpoint(model=layer).save(str(tmp_path / "keras" / "model"))
    out, data = compare(tf1, path, "--map", tmp_path / "names.json")
    assert out.returncode == 0, out.stdout
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"rules": [{"pattern": r"^layer_with_weights-0/", "replace": "net/hidden/"},
                                           {"pattern": r"^layer_with_weights-1/", "replace": "net/out/"}]}))
    assert compare(tf1, path, "--map", rules)[0].returncode == 0


def _write_map(path, entries):
    path.write_text(json.dumps({"format": "tf-migrate-names/1", "files": {"model.py": entries}}))
    return str(path)


KERAS3_SCRIPT = """
import os, sys, numpy as np
import tensorflow as tf
assert not tf.keras.__name__.startswith("tf_keras")
class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(4, activation="relu")
        self.out = tf.keras.layers.Dense(2)
    def call(self, x):
        return self.out(self.hidden(x))
model = Net()
model(np.ones((1, 3), np.float32))
for i, v in enumerate(model.variables):
    v.assign(tf.fill(v.shape, 0.1 * (i + 1)))
tf.train.Checkpoint(model=model).write(os.path.join(sys.argv[1], "ckpt", "model"))
model.save_weights(os.path.join(sys.argv[1], "model.weights.h5"))
"""


def test_keras3_checkpoint_and_weights_h5(tf1, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    out = subprocess.run([sys.executable, "-c", KERAS3_SCRIPT, str(tmp_path)], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    keras3 = str(tmp_path / "ckpt" / "model")
    listing = json.loads(cli("ckpt", "ls", keras3, "--format", "json").stdout)
    assert listing["kind"] == "tf2" and len(listing["variables"]) == 4
    names = _write_map(tmp_path / "names.json", {"net/hidden": "hidden", "net/out": "out"})
    # the TF1 checkpoint holds the same values in the same order (0.1, 0.2, ...)
    result, data = compare(tf1, keras3, "--map", names)
    assert result.returncode == 0, result.stdout
    h5 = str(tmp_path / "model.weights.h5")
    h5_list = json.loads(cli("ckpt", "ls", h5, "--format", "json").stdout)
    assert h5_list["kind"] == "h5" and len(h5_list["variables"]) == 4
    result, data = compare(h5, keras3)
    assert result.returncode == 0, result.stdout
    assert {m["how"] for m in data["matched"]} == {"shape"}  # h5 keeps no weight names


def test_legacy_keras_checkpoint(tf1, tmp_path):
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4, activation="relu"),
                                 tf.keras.layers.Dense(2)])
    shims.load_tf1_checkpoint(model, tf1, strict=False)  # shape+dtype matching fills it
    path = tf.train.Checkpoint(model=model).save(str(tmp_path / "legacy" / "model"))
    result, data = compare(tf1, path)
    assert result.returncode == 0, result.stdout
    assert {m["how"] for m in data["matched"]} <= {"shape", "suffix", "name"}


def test_convert_plain_and_back_to_tf1(tf1, tmp_path):
    out = cli("ckpt", "convert", tf1, tmp_path / "plain" / "model")
    assert out.returncode == 0, out.stderr
    plain = str(tmp_path / "plain" / "model")
    listing = json.loads(cli("ckpt", "ls", plain, "--format", "json").stdout)
    assert any(v["name"].startswith("vars/") for v in listing["variables"])
    tf2 = shim_checkpoint(tf1, tmp_path / "tf2")
    back = cli("ckpt", "convert", tf2, tmp_path / "back" / "model", "--to", "tf1")
    assert back.returncode == 0, back.stderr
    result, data = compare(tf1, tmp_path / "back" / "model")
    assert result.returncode == 0 and len(data["matched"]) == 4 and data["matched"][0]["how"] == "name"


def test_convert_with_model_factory(tf1, tmp_path):
    factory = tmp_path / "factory.py"
    factory.write_text(
        "import shims\nimport numpy as np\nimport tensorflow as tf\n"
        "def net(x):\n"
        "    with tf.compat.v1.variable_scope('net'):\n"
        "        h = shims.get_or_create_layer('hidden', lambda: tf.keras.layers.Dense(4, activation='relu'))(x)\n"
        "        return shims.get_or_create_layer('out', lambda: tf.keras.layers.Dense(2))(h)\n"
        "def make():\n"
        "    layer = shims.legacy_layer(net)\n"
        "    layer(np.ones((1, 3), np.float32))\n"
        "    return layer\n")
    out = cli("ckpt", "convert", tf1, tmp_path / "new" / "model", "--model", f"{factory}:make")
    assert out.returncode == 0, out.stderr
    sys.path.insert(0, str(tmp_path))
    import factory as module  # noqa: E402

    fresh = module.make()
    status = tf.train.Checkpoint(model=fresh).restore(str(tmp_path / "new" / "model"))
    status.assert_existing_objects_matched()
    assert compare(tf1, tmp_path / "new" / "model")[0].returncode == 0
    bad = cli("ckpt", "convert", tf1, tmp_path / "x", "--model", f"{factory}:nope")
    assert bad.returncode == 2 and "no callable" in bad.stderr


def test_streamed_comparison_across_chunks(tmp_path, tf1_python):
    """A tensor larger than one streamed chunk (8 MB), differing only in its last chunk."""
    big = "[('big', np.arange(3 * 2**20, dtype=np.float32) + np.eye(1, 3 * 2**20, 3 * 2**20 - 5, dtype=np.float32)[0] * {})]"  # 12 MB: one full chunk and a tail
    a = tf1_oracle.save_variables(tmp_path / "a", big.format(0.0))
    same = tf1_oracle.save_variables(tmp_path / "same", big.format(0.0))
    b = tf1_oracle.save_variables(tmp_path / "b", big.format(2.5))
    assert compare(a, same)[0].returncode == 0
    out, data = compare(a, b)
    assert out.returncode == 1
    assert data["mismatched"][0]["max_abs"] == pytest.approx(2.5)


def test_ls_and_compare_are_readable_at_80_columns(tmp_path, tf1_python):
    """#16: at 80 columns every name is shown whole (one entry per block when the table
    does not fit), missing and unexpected entries keep their shapes."""
    long = "encoder/layer_with_a_rather_long_name_0/attention/self/query_projection/kernel"
    old = tf1_oracle.save_variables(tmp_path / "old", f"[({long!r}, np.ones((3, 4), np.float32)), "
                                           "('only_in_old/bias', np.ones((2,), np.float32))]")
    new = tf1_oracle.save_variables(tmp_path / "new", f"[({long!r}, np.ones((3, 4), np.float32)), "
                                           "('only_in_new/kernel', np.ones((5, 5), np.float32))]")
    listed = cli("ckpt", "ls", old, env={"COLUMNS": "80"})
    assert listed.returncode == 0 and long in listed.stdout and "…" not in listed.stdout
    assert "(3, 4)" in listed.stdout
    compared = cli("ckpt", "compare", old, new, env={"COLUMNS": "80"})
    assert compared.returncode == 1 and "…" not in compared.stdout
    assert long in compared.stdout and "only_in_old/bias" in compared.stdout
    assert "(2,) float32" in compared.stdout and "(5, 5) float32" in compared.stdout
    wide = cli("ckpt", "ls", old, env={"COLUMNS": "200"})
    assert "┃ name" in wide.stdout  # a table when it fits


RESTORE = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import factory
import tensorflow as tf
model = factory.make()
status = tf.train.Checkpoint(model=model).restore(sys.argv[2])
status.assert_existing_objects_matched()
keras = "2" if tf.keras.__name__.startswith("tf_keras") else "3"
print(json.dumps({"keras": keras, "sums": sorted(round(float(np.sum(v)), 4) for v in model.weights)}))
"""


@pytest.mark.parametrize("generation", ["3", "2"])
def test_convert_model_for_each_keras_generation(tf1, tmp_path, generation):
    """#16: --model used to build under tf_keras whatever the migrated code used, so a
    Keras 3 model could not restore the result."""
    factory = tmp_path / "factory.py"
    factory.write_text(
        "import numpy as np\nimport tensorflow as tf\n"
        "def make():\n"
        "    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation='relu', name='hidden'),\n"
        "                                 tf.keras.layers.Dense(2, name='out')])\n"
        "    model(np.ones((1, 3), np.float32))\n"
        "    return model\n")
    out = cli("ckpt", "convert", tf1, tmp_path / "new" / "model", "--model", f"{factory}:make",
              "--keras", generation)
    assert out.returncode == 0, out.stderr
    assert f"Keras {generation} object layout" in out.stdout
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_USE_LEGACY_KERAS="1" if generation == "2" else "0")
    done = subprocess.run([sys.executable, "-c", RESTORE, str(tmp_path), str(tmp_path / "new" / "model")],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    restored = json.loads(done.stdout.strip().splitlines()[-1])
    assert restored["keras"] == generation
    reader = tf.train.load_checkpoint(tf1)
    want = sorted(round(float(np.sum(reader.get_tensor(k))), 4) for k in reader.get_variable_to_shape_map()
                  if "global_step" not in k)
    assert restored["sums"] == want


CONVERT_SOURCE = '''
import sys
import numpy as np
import tensorflow as tf
x = tf.placeholder(tf.float32, [None, 4])
y = tf.layers.dense(tf.layers.dense(x, 3, name="hidden"), 1, name="out")
loss = tf.reduce_mean(tf.square(y))
step = tf.train.get_or_create_global_step()
train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    for _ in range(3):
        session.run(train, {x: np.ones((2, 4), np.float32)})
    tf.train.Saver().save(session, sys.argv[1] + "/model.ckpt")
'''


def test_convert_carries_every_tensor_or_names_what_it_left(tmp_path, tf1_python):
    """A real TF 1.15 Saver checkpoint with Adam's slots and global_step: the plain layout
    and the way back to TF1 names carry all 15 tensors (compared with --slots --all); the
    count is printed, and nothing is dropped without a word."""
    import tf1_oracle

    folder = tmp_path / "tf1"
    folder.mkdir()
    tf1_oracle.run(CONVERT_SOURCE, folder)
    tf1 = folder / "model.ckpt"
    out = cli("ckpt", "convert", tf1, tmp_path / "plain" / "model")
    assert out.returncode == 0, out.stderr
    assert "15 of 15 tensors" in out.stdout and "not converted" not in out.stdout
    back = cli("ckpt", "convert", tmp_path / "plain" / "model", tmp_path / "back" / "model", "--to", "tf1")
    assert back.returncode == 0 and "15 of 15 tensors" in back.stdout, back.stdout + back.stderr
    same = cli("ckpt", "compare", tf1, tmp_path / "back" / "model", "--slots", "--all")
    assert same.returncode == 0 and "15 matched" in same.stdout, same.stdout
    weights = cli("ckpt", "compare", tf1, tmp_path / "back" / "model")
    assert "5 matched" in weights.stdout  # 4 weights and the global step both sides hold
    alone = cli("ckpt", "compare", tf1, tmp_path / "plain" / "model")  # a TF2 layout: vars/global_step
    assert "global_step" in alone.stdout
