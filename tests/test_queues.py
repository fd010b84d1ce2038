"""shims.queues (TFM118's runtime) against real TF 1.15's queues: the same records, keys and
batches, epoch by epoch, read through a shims.GraphProgram as a Session read the queue."""
import json
import os

import numpy as np
import pytest

import tf1_oracle
import tfm_cli

tf = pytest.importorskip("tensorflow")
import shims  # noqa: E402

pytestmark = pytest.mark.slow

# writes the same files on both sides (into a folder of its own) and prints what every
# pipeline gives until OutOfRangeError; paths are printed relative to that folder
DATA = '''
import json, os, tempfile
import numpy as np
import tensorflow as tf
TF1 = tf.__version__.startswith("1.")
folder = tempfile.mkdtemp()
with open(os.path.join(folder, "a.csv"), "w") as handle:
    handle.write("h1,h2\\n1,2\\n3,4\\n\\n5,6\\n")
with open(os.path.join(folder, "b.csv"), "w") as handle:
    handle.write("h1,h2\\n7,8\\n9,10\\n")
writer = (tf.python_io if TF1 else tf.io).TFRecordWriter(os.path.join(folder, "r.tfr"))
for record in [b"a", b"bcd", b"", b"efghij"]:
    writer.write(record)
writer.close()
with open(os.path.join(folder, "f.bin"), "wb") as handle:
    handle.write(b"HH" + bytes(range(12)) + b"F")
CSV = [os.path.join(folder, "a.csv"), os.path.join(folder, "b.csv")]
TFR = [os.path.join(folder, "r.tfr")]
BIN = [os.path.join(folder, "f.bin")]
ROWS = [np.arange(10), np.arange(10) * 2]


def plain(value):
    if isinstance(value, bytes):
        return value.decode("latin-1").replace(folder, "D")
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in sorted(value.items())}
    return plain(value.tolist()) if hasattr(value, "tolist") else value
'''

TF1_SIDE = DATA + '''
pipelines = {}
def text():
    q = tf.train.string_input_producer(CSV, num_epochs=2, shuffle=False)
    k, v = tf.TextLineReader(skip_header_lines=1).read(q)
    return tf.train.batch([k, v], 3, allow_smaller_final_batch=True)
def records():
    k, v = tf.TFRecordReader().read(tf.train.string_input_producer(TFR, num_epochs=1, shuffle=False))
    return tf.train.batch({"key": k, "value": v}, 2)
def fixed():
    reader = tf.FixedLengthRecordReader(4, header_bytes=2, footer_bytes=1)
    k, v = reader.read(tf.train.string_input_producer(BIN, num_epochs=1, shuffle=False))
    return tf.train.batch([k, v], 1)
def slices():
    f, l = tf.train.slice_input_producer(ROWS, shuffle=False, num_epochs=3)
    return tf.train.batch([f * 10, l], 4)
def whole():
    k, v = tf.WholeFileReader().read(tf.train.string_input_producer(CSV, num_epochs=1, shuffle=False))
    return tf.train.batch([k, v], 1)
def padded():
    f, = tf.train.slice_input_producer([ROWS[0]], shuffle=False, num_epochs=1)
    return tf.train.batch([tf.range(f % 4)], 3, dynamic_pad=True)
def single():
    f, = tf.train.slice_input_producer([ROWS[0]], shuffle=False, num_epochs=1)
    return tf.train.batch([f * 3], 4)
def many():
    f, l = tf.train.slice_input_producer(ROWS, shuffle=False, num_epochs=1)
    return tf.train.batch([tf.stack([f, f + 1]), tf.stack([l, l])], 3, enqueue_many=True)
out = {}
for name, make in [("text", text), ("records", records), ("fixed", fixed), ("slices", slices),
                   ("whole", whole), ("padded", padded), ("single", single), ("many", many)]:
    with tf.Graph().as_default():
        batch = make()
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            got = []
            try:
                while True:
                    got.append(plain(sess.run(batch)))
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    out[name] = got
print(json.dumps(out))
'''


def test_pipelines_give_what_tf1_queues_gave():
    want = json.loads(tf1_oracle.run(TF1_SIDE))
    scope = {}
    exec(DATA, scope)
    q = shims.queues
    csv, tfr, binary, rows, plain = (scope[k] for k in ("CSV", "TFR", "BIN", "ROWS", "plain"))

    def element(f, label):
        return f * 10, label

    def pair(f, label):
        return tf.stack([f, f + 1]), tf.stack([label, label])

    makers = {
        "text": lambda: q.batch(q.TextLineReader(skip_header_lines=1).read(
            q.string_input_producer(csv, num_epochs=2, shuffle=False)), 3, allow_smaller_final_batch=True),
        "records": lambda: q.batch(q.TFRecordReader().read(
            q.string_input_producer(tfr, num_epochs=1, shuffle=False)).map(
            lambda k, v: {"key": k, "value": v}), 2),
        "fixed": lambda: q.batch(q.FixedLengthRecordReader(4, header_bytes=2, footer_bytes=1).read(
            q.string_input_producer(binary, num_epochs=1, shuffle=False)), 1),
        "slices": lambda: q.batch(q.slice_input_producer(rows, shuffle=False, num_epochs=3).map(element), 4),
        "whole": lambda: q.batch(q.WholeFileReader().read(
            q.string_input_producer(csv, num_epochs=1, shuffle=False)), 1),
        "padded": lambda: q.batch(q.slice_input_producer([rows[0]], shuffle=False, num_epochs=1).map(
            lambda f: (tf.range(f % 4),)), 3, dynamic_pad=True),
        "single": lambda: q.batch(q.slice_input_producer([rows[0]], shuffle=False, num_epochs=1).map(
            lambda f: (f * 3,)), 4),
        "many": lambda: q.batch(q.slice_input_producer(rows, shuffle=False, num_epochs=1).map(pair), 3,
                                enqueue_many=True),
    }
    for name, make in makers.items():
        def build(make=make):
            return {"batch": make()}

        program = shims.GraphProgram(build)
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            while True:
                got.append(plain(program.run("batch")))
        assert got == want[name], name


def test_a_shuffled_producer_gives_every_element_once_per_epoch():
    """TF1 reshuffled the whole input every epoch (its order is its own draw): each epoch
    holds every element once."""
    def build():
        return {"x": shims.queues.batch(shims.queues.slice_input_producer(
            [np.arange(12)], num_epochs=3, seed=3), 4)}

    program = shims.GraphProgram(build)
    seen = np.concatenate([program.run("x") for _ in range(9)])  # one tensor in, one out
    for epoch in range(3):
        assert sorted(seen[epoch * 12:(epoch + 1) * 12].tolist()) == list(range(12))
    assert seen[:12].tolist() != list(range(12))
    with pytest.raises(tf.errors.OutOfRangeError):
        program.run("x")


KEPT_IN_GRAPH_MODE = '''
import os, tempfile
import tensorflow as tf
folder = tempfile.mkdtemp()
for name, rows in (("a.csv", "1,2\\n3,4\\n"), ("b.csv", "5,6\\n7,8\\n9,10\\n")):
    with open(os.path.join(folder, name), "w") as handle:
        handle.write(rows)
files = tf.train.match_filenames_once(os.path.join(folder, "*.csv"))
queue = tf.train.string_input_producer(files, num_epochs=2, shuffle=False)
reader = tf.TextLineReader()
_, line = reader.read(queue)
first, second = tf.decode_csv(line, record_defaults=[[0.0], [0.0]])
pair = tf.stack([first, second])
batch = tf.train.batch([pair], batch_size=3)
total = tf.placeholder(tf.float32, [])
scaled = batch[0] * total
with tf.Session() as sess:
    sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    feeds = {total: 1.0}
    feeds[total] = 2.0  # a feed_dict changed after it was built: the program stays in graph mode
    try:
        while True:
            print(sess.run(scaled, feed_dict=feeds).tolist())
    except tf.errors.OutOfRangeError:
        print("done")
    coord.request_stop()
    coord.join(threads)
'''


def test_a_pipeline_in_a_program_kept_in_graph_mode_reads_what_tf1_read(tmp_path):
    """A program TFM501 keeps in graph mode still gets its pipeline as tf.data (TFM118). Its
    file list is a variable (`match_filenames_once`), which a one-shot iterator cannot read
    in a graph: the iterator starts when the program starts its queue runners, once its
    variables are initialized, as TF1's queues did. Same batches as TF 1.15, then the end."""
    import subprocess
    import sys

    want = tf1_oracle.run(KEPT_IN_GRAPH_MODE)
    (tmp_path / "kept.py").write_text(KEPT_IN_GRAPH_MODE)
    done = tfm_cli.run("upgrade", tmp_path / "kept.py", "--outtree", tmp_path / "out", "--no-cache",
                       default_keras=False, timeout=300)
    assert "TFM501 Session program kept in TF1 graph mode" in done.stdout, done.stdout
    migrated = (tmp_path / "out" / "kept.py").read_text()
    assert "shims.queues.batch(" in migrated and "disable_eager_execution()" in migrated
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    run = subprocess.run([sys.executable, tmp_path / "out" / "kept.py"], capture_output=True, text=True,
                         timeout=300, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout == want and want.endswith("done\n"), (want, run.stdout)
