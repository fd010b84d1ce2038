"""Checkpoint fault injection (#12): damaged checkpoints are never called OK when
TensorFlow's own reader rejects them, never hang, never give a traceback; string,
bfloat16 and partitioned variables are read as TensorFlow reads them.

The oracle is TensorFlow itself: ``tf.train.load_checkpoint`` plus ``get_tensor`` of
every key. A damaged copy that tf-migrate calls OK against the intact original must
load whole in TensorFlow, with the original's values."""
import os
import shutil
import signal
import struct
import subprocess
import sys
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("tensorflow")
import tensorflow as tf  # noqa: E402

from migrate.checkpoints.bundle import Bundle, _mask, _Table, _varint  # noqa: E402
from migrate.checkpoints.ckpt import CkptError, compare, open_side, verify_side  # noqa: E402
from migrate.checkpoints.names import NameMap  # noqa: E402
from test_ckpt import cli  # noqa: E402

import tf1_oracle  # noqa: E402


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory, tf1_python):
    """A TF1 Saver checkpoint and a TF2 object checkpoint with strings and bfloat16."""
    root = tmp_path_factory.mktemp("ckpts")
    tf1 = tf1_oracle.save_variables(  # written by real TF 1.15
        root / "tf1", "[('dense/kernel', np.arange(6, dtype=np.float32).reshape(2, 3)), "
                      "('dense/step', np.array([1, 2], np.int64)), "
                      "('vocab', np.array([b'vocab', b'', b'\\xc3\\xb6']))]")
    tf2 = tf.train.Checkpoint(
        w=tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)),
        half=tf.Variable(tf.constant([1.5, -2.0], tf.bfloat16)),
        words=tf.Variable([b"hello", b"w\x00rld"]),
    ).write(str(root / "tf2" / "model"))
    return {"tf1": tf1, "tf2": tf2}


ORACLE = r"""
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

def load(prefix):
    reader = tf.train.load_checkpoint(prefix)
    return {key: reader.get_tensor(key) for key in reader.get_variable_to_shape_map()}

def same(a, b):
    return a.keys() == b.keys() and all(
        np.asarray(a[k]).dtype == np.asarray(b[k]).dtype and np.array_equal(a[k], b[k]) for k in a)

print("ready", flush=True)
for line in sys.stdin:
    damaged, original = line.rstrip("\n").split("\t")
    try:
        values = load(damaged)
    except Exception:
        print("rejected", flush=True)
        continue
    print("same" if same(values, load(original)) else "other values", flush=True)
"""


class Oracle:
    """TensorFlow's reader in a process of its own: on some damaged indexes it aborts
    (a CHECK failure), which counts as a rejection and costs a restart."""

    def __init__(self):
        self.process = None

    def _start(self):
        self.process = subprocess.Popen([sys.executable, "-c", ORACLE], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
        assert self.process.stdout.readline().strip() == "ready"

    def __call__(self, damaged, original):
        """"same", "other values" or "rejected"."""
        if self.process is None or self.process.poll() is not None:
            self._start()
        try:
            self.process.stdin.write(f"{damaged}\t{original}\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline().strip()
        except BrokenPipeError:
            answer = ""
        if not answer:  # it died on this checkpoint
            self.process.wait()
            self.process = None
            return "rejected"
        return answer

    def close(self):
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait()


@pytest.fixture(scope="module")
def oracle():
    tf_reader = Oracle()
    yield tf_reader
    tf_reader.close()


def tf_loads(prefix):
    """Every tensor as TensorFlow's reader gives it (intact checkpoints only)."""
    reader = tf.train.load_checkpoint(prefix)
    return {key: reader.get_tensor(key) for key in reader.get_variable_to_shape_map()}


@contextmanager
def time_limit(seconds):
    def expire(*_):
        raise TimeoutError("tf-migrate hung on a damaged checkpoint")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def verdict(original, damaged_prefix):
    """"ok", "renamed" (OK, but some variable matched by shape or suffix, as a renamed
    one would), "different" or "corrupt": tf-migrate's compare of the damaged copy
    against the original, every entry included. Any other exception fails the test."""
    with time_limit(30):
        try:
            old = open_side(original, slots=True, everything=True)
            new = open_side(damaged_prefix, slots=True, everything=True)
            result = compare(old, new, NameMap.load(None))
        except CkptError:
            return "corrupt"
    if not result["ok"]:
        return "different"
    return "ok" if all(m["how"] == "name" for m in result["matched"]) else "renamed"


def same_values(a, b):
    return a.keys() == b.keys() and all(
        np.asarray(a[k]).dtype == np.asarray(b[k]).dtype and np.array_equal(a[k], b[k]) for k in a)


def copy_checkpoint(prefix, folder):
    os.makedirs(folder, exist_ok=True)
    for suffix in (".index", ".data-00000-of-00001"):
        shutil.copyfile(prefix + suffix, os.path.join(folder, "model" + suffix))
    return os.path.join(folder, "model")


def check_never_ok_when_tf_rejects(oracle, original, damaged_prefix, always=False):
    """tf-migrate's verdict, and TensorFlow's when it matters (an OK, or ``always``)."""
    ours = verdict(original, damaged_prefix)
    theirs = oracle(damaged_prefix, original) if ours in ("ok", "renamed") or always else None
    if ours in ("ok", "renamed"):
        assert theirs != "rejected", "tf-migrate said OK for a checkpoint TensorFlow rejects"
    if ours == "ok":
        assert theirs == "same", "OK, but TensorFlow reads other values"
    return ours, theirs


def index_blocks(data):
    """(offset, size) of the index block and of every data block of an .index file."""
    table = _Table(data)
    blocks = [(table.index_offset, table.index_size)]
    for _, handle in table._entries(data[table.index_offset:table.index_offset + table.index_size]):
        offset, pos = _varint(handle, 0)
        size, _ = _varint(handle, pos)
        blocks.append((offset, size))
    return blocks


def reseal(data, blocks):
    """Recompute every block's CRC32C, so only the parsing checks stand between a damaged
    entry and an OK."""
    import crc32c

    data = bytearray(data)
    for offset, size in blocks:
        crc = _mask(crc32c.crc32c(bytes(data[offset:offset + size + 1])))
        data[offset + size + 1:offset + size + 5] = struct.pack("<I", crc)
    return bytes(data)


# -- every single-byte change of the index ---------------------------------------------
@pytest.mark.parametrize("which", ["tf1", "tf2"])
def test_every_index_byte_flip(checkpoints, oracle, tmp_path, which):
    """#12.5: each byte of the .index flipped in turn; 'OK' only when TensorFlow loads
    the same values. With block checksums checked, a flip inside a block is corrupt."""
    original = checkpoints[which]
    data = open(original + ".index", "rb").read()
    blocks = index_blocks(data)
    inside = {i for offset, size in blocks for i in range(offset, offset + size + 5)}
    prefix = copy_checkpoint(original, tmp_path / "damaged")
    verdicts = {}
    for i in range(len(data)):
        with open(prefix + ".index", "wb") as handle:
            handle.write(data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:])
        ours, _ = check_never_ok_when_tf_rejects(oracle, original, prefix)
        verdicts[i] = ours
        if i in inside:
            assert ours == "corrupt", f"byte {i} of a checksummed block flipped, but {ours}"
    assert list(verdicts.values()).count("corrupt") >= len(inside)


@pytest.mark.parametrize("which", ["tf1", "tf2"])
def test_resealed_entry_damage_is_caught_by_the_parser(checkpoints, oracle, tmp_path, which):
    """#12.6: entry bytes changed and the block checksums recomputed: the protobuf and
    range checks alone must refuse what TensorFlow refuses, without hanging (a
    wire-type change once killed the reader thread and the compare waited forever)."""
    original = checkpoints[which]
    data = open(original + ".index", "rb").read()
    blocks = index_blocks(data)
    prefix = copy_checkpoint(original, tmp_path / "damaged")
    seen = set()
    for offset, size in blocks[1:]:
        for i in range(offset, offset + size):
            for bit in (0x01, 0x02, 0x08, 0x80):
                damaged = bytearray(data)
                damaged[i] ^= bit
                with open(prefix + ".index", "wb") as handle:
                    handle.write(reseal(damaged, blocks))
                ours, _ = check_never_ok_when_tf_rejects(oracle, original, prefix)
                seen.add(ours)
    assert "corrupt" in seen


SETTINGS = settings(max_examples=int(os.environ.get("TFM_FUZZ_EXAMPLES", "60")), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@SETTINGS
@given(which=st.sampled_from(["tf1", "tf2"]), part=st.sampled_from([".index", ".data-00000-of-00001"]),
       kind=st.sampled_from(["flip", "truncate", "insert", "zero"]), where=st.integers(0, 10 ** 6),
       value=st.integers(1, 255))
def test_random_damage_never_ok_when_tf_rejects(checkpoints, oracle, tmp_path, which, part, kind, where,
                                               value):
    """#12.5: random flips, truncations, insertions and zeroed bytes in either file."""
    original = checkpoints[which]
    prefix = copy_checkpoint(original, tmp_path / f"d-{which}-{kind}-{where}-{value}")
    data = open(original + part, "rb").read()
    i = where % len(data)
    if kind == "flip":
        data = data[:i] + bytes([data[i] ^ value]) + data[i + 1:]
    elif kind == "truncate":
        data = data[:i]
    elif kind == "insert":
        data = data[:i] + bytes([value]) + data[i:]
    else:
        data = data[:i] + bytes(min(value, len(data) - i)) + data[i + value:]
    with open(prefix + part, "wb") as handle:
        handle.write(data)
    ours, theirs = check_never_ok_when_tf_rejects(oracle, original, prefix, always=part != ".index")
    if theirs == "rejected":
        assert ours == "corrupt"  # damaged data is corruption, not "values differ"


def test_flipped_data_byte_is_corrupt_not_different(checkpoints, tmp_path):
    """#12.5: a flipped byte in the data file used to read as 'values differ'."""
    prefix = copy_checkpoint(checkpoints["tf1"], tmp_path / "d")
    data = bytearray(open(prefix + ".data-00000-of-00001", "rb").read())
    data[5] ^= 0x40
    open(prefix + ".data-00000-of-00001", "wb").write(bytes(data))
    out = cli("ckpt", "compare", checkpoints["tf1"], prefix)
    assert out.returncode == 2 and "checksum mismatch" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_a_damaged_bookkeeping_entry_is_not_ok(checkpoints, tmp_path):
    """#12.5: the object graph is skipped by the comparison but still checked."""
    prefix = copy_checkpoint(checkpoints["tf2"], tmp_path / "d")
    bundle = Bundle(prefix)
    _, offset, size, _ = bundle.locate("_CHECKPOINTABLE_OBJECT_GRAPH")
    bundle.close()
    data = bytearray(open(prefix + ".data-00000-of-00001", "rb").read())
    data[offset + size - 3] ^= 0x01
    open(prefix + ".data-00000-of-00001", "wb").write(bytes(data))
    with pytest.raises(Exception):
        tf_loads(prefix)
    out = cli("ckpt", "compare", checkpoints["tf2"], prefix)
    assert out.returncode == 2 and "_CHECKPOINTABLE_OBJECT_GRAPH" in out.stderr


@pytest.mark.parametrize("damage", ["truncate", "missing"])
def test_ls_checks_the_data_file(checkpoints, tmp_path, damage):
    """#12.19: a truncated or missing data file no longer lists fine."""
    prefix = copy_checkpoint(checkpoints["tf1"], tmp_path / "d")
    data_file = prefix + ".data-00000-of-00001"
    if damage == "missing":
        os.remove(data_file)
    else:
        os.truncate(data_file, os.path.getsize(data_file) - 3)
    out = cli("ckpt", "ls", prefix)
    assert out.returncode == 2
    assert ("truncated" if damage == "truncate" else "No such file") in out.stderr


def test_ls_verify_reads_every_tensor(checkpoints, tmp_path):
    prefix = copy_checkpoint(checkpoints["tf1"], tmp_path / "d")
    assert cli("ckpt", "ls", prefix, "--verify").returncode == 0
    data = bytearray(open(prefix + ".data-00000-of-00001", "rb").read())
    data[-1] ^= 0x01
    open(prefix + ".data-00000-of-00001", "wb").write(bytes(data))
    assert cli("ckpt", "ls", prefix).returncode == 0  # sizes are fine
    out = cli("ckpt", "ls", prefix, "--verify")
    assert out.returncode == 2 and "checksum mismatch" in out.stderr


def test_strings_and_bfloat16_read_as_tensorflow_reads_them(checkpoints):
    """#12.7, #12.23: strings are object arrays of bytes, not the bundle's raw bytes;
    bfloat16 has its real size."""
    for prefix in checkpoints.values():
        side = open_side(prefix, slots=True, everything=True)
        expected = tf_loads(prefix)
        for key in side.variables:
            assert same_values({key: side.read(key)}, {key: expected[key]})
    rows = cli("ckpt", "ls", checkpoints["tf2"], "--format", "json")
    sizes = {r["name"].split("/")[0]: (r["dtype"], r["bytes"]) for r in __import__("json").loads(rows.stdout)["variables"]}
    assert sizes["half"] == ("bfloat16", 4)


@pytest.mark.parametrize("direction", ["tf2", "tf1"])
def test_convert_keeps_string_variables(checkpoints, tmp_path, direction):
    """#12.7: convert used to turn strings into uint8 arrays of raw bundle bytes."""
    source = checkpoints["tf1" if direction == "tf2" else "tf2"]
    out = cli("ckpt", "convert", source, tmp_path / "out", *(["--to", "tf1"] if direction == "tf1" else []))
    assert out.returncode == 0, out.stderr
    written = tf_loads(str(tmp_path / "out"))
    strings = [v for v in written.values() if np.asarray(v).dtype == object and np.asarray(v).size > 1]
    assert strings, written.keys()
    wanted = [b"vocab", b"", b"\xc3\xb6"] if direction == "tf2" else [b"hello", b"w\x00rld"]
    assert [list(s) for s in strings] == [wanted]
    assert cli("ckpt", "compare", source, tmp_path / "out").returncode == 0


PARTITIONED = """
import tensorflow as tf
tf.get_variable("w", shape=[10, 3], partitioner=tf.fixed_size_partitioner(3))
with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    tf.train.Saver().save(session, "model", write_meta_graph=False)
"""


def test_partitioned_variables_fall_back_to_tensorflow(tmp_path, tf1_python):
    """#12.12: partitioned-variable slices used to raise UnicodeDecodeError (a checkpoint
    real TF 1.15 wrote)."""
    prefix = os.path.join(tf1_oracle.copy(PARTITIONED, tmp_path / "tf1"), "model")
    out = cli("ckpt", "ls", prefix, "--verify", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert [(r["name"], r["shape"]) for r in __import__("json").loads(out.stdout)["variables"]] == [("w", [10, 3])]
    assert cli("ckpt", "compare", prefix, prefix).returncode == 0


def test_many_small_tensors_compare_quickly_enough_to_finish(tmp_path, tf1_python):
    """#12.20 (speed is measured in benchmarks/ckpt_compare.py --small): every one of
    2,000 tensors is compared and checked."""
    prefix = tf1_oracle.save_variables(
        tmp_path / "tf1", "[('v%d' % i, np.full((2, 2), i, np.float32)) for i in range(2000)]")
    result = compare(open_side(prefix), open_side(prefix), NameMap.load(None))
    assert result["ok"] and len(result["matched"]) == 2000
    verify_side(open_side(prefix, everything=True))
