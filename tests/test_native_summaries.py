"""A Session program's summaries in the native form (#57): the summary ops a run fetched
(`merge_all`, one summary), written by the step itself under `writer.as_default(step=...)`
with `tf.summary` v2 and TF1's tags, the FileWriter a `tf.summary.create_file_writer`. The
event files of the TF1 program on real TF 1.15 and of its migration hold the same tags at
the same steps: equal scalars, histograms of as many values over the same range."""
import glob
import os
import subprocess
import sys

import pytest

import tf1_oracle
import tfm_cli

tf = pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow


HEAD = '''import sys

import numpy as np
import tensorflow as tf

logdir = sys.argv[1]
rng = np.random.RandomState(3)
x_data = rng.rand(40, 3).astype(np.float32)
y_data = (x_data.sum(axis=1, keepdims=True) > 1.5).astype(np.float32)

X = tf.placeholder(tf.float32, [None, 3])
Y = tf.placeholder(tf.float32, [None, 1])
with tf.name_scope("layer"):
    W = tf.Variable(tf.random_normal([3, 1], seed=1), name="weight")
    b = tf.Variable(tf.zeros([1]), name="bias")
    hypothesis = tf.sigmoid(tf.matmul(X, W) + b)
    tf.summary.histogram("weights", W)
    tf.summary.histogram("hypothesis", hypothesis)
with tf.name_scope("cost"):
    cost = -tf.reduce_mean(Y * tf.log(hypothesis) + (1 - Y) * tf.log(1 - hypothesis))
    cost_summ = tf.summary.scalar("cost", cost)
train = tf.train.GradientDescentOptimizer(learning_rate=0.5).minimize(cost)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.cast(hypothesis > 0.5, tf.float32), Y), tf.float32))
'''
PROGRAMS = {
    # every summary merged, fetched with the train op; the graph added to the writer
    "merged": HEAD + '''tf.summary.scalar("accuracy", accuracy)
merged = tf.summary.merge_all()

with tf.Session() as sess:
    writer = tf.summary.FileWriter(logdir)
    writer.add_graph(sess.graph)
    sess.run(tf.global_variables_initializer())
    for step in range(30):
        s, _ = sess.run([merged, train], feed_dict={X: x_data, Y: y_data})
        writer.add_summary(s, global_step=step)
        if step % 10 == 0:
            print(step, sess.run(cost, feed_dict={X: x_data, Y: y_data}))
    writer.close()
    print("accuracy", sess.run(accuracy, feed_dict={X: x_data, Y: y_data}))
''',
    # one summary evaluated alone every other step, a writer of the default graph
    "alone": HEAD + '''writer = tf.summary.FileWriter(logdir, tf.get_default_graph())

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for epoch in range(20):
        if epoch % 2 == 0:
            summary_str = cost_summ.eval(feed_dict={X: x_data, Y: y_data})
            writer.add_summary(summary_str, epoch)
        sess.run(train, feed_dict={X: x_data, Y: y_data})
    print("cost", sess.run(cost, feed_dict={X: x_data, Y: y_data}))
writer.close()
''',
}


# a variable's summary fetched with its train op: TF1 reads the variable with no order
# against the update (a race; the native step reads it before, as the loss's gradient did)
RACED = {"merged": {"layer/weights"}}


def cli(*args):
    return tfm_cli.run(*args)


def events(folder):
    """{(tag, step): value}: a scalar's value, a histogram's (count, min, max), as TF1's
    summary protos and TF2's tensor summaries hold them."""
    out = {}
    for path in glob.glob(os.path.join(str(folder), "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    out[(value.tag, event.step)] = float(value.simple_value)
                elif value.HasField("histo"):
                    out[(value.tag, event.step)] = (value.histo.num, value.histo.min, value.histo.max)
                elif value.metadata.plugin_data.plugin_name == "scalars":
                    out[(value.tag, event.step)] = float(tf.make_ndarray(value.tensor))
                elif value.metadata.plugin_data.plugin_name == "histograms":
                    buckets = tf.make_ndarray(value.tensor)
                    out[(value.tag, event.step)] = (float(buckets[:, 2].sum()), float(buckets[0, 0]),
                                                    float(buckets[-1, 1]))
    return out


@pytest.mark.parametrize("kind", sorted(PROGRAMS))
def test_summaries_are_written_by_the_native_steps_as_tf1_wrote_them(kind, tmp_path, tf1_python):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "board.py").write_text(PROGRAMS[kind])
    done = cli("upgrade", tmp_path / "src" / "board.py", "--outtree", tmp_path / "out", "--no-cache")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    migrated = (tmp_path / "out" / "board.py").read_text()
    assert "writer = tf.summary.create_file_writer(logdir)" in migrated, migrated
    assert "with writer.as_default(step=step):" in migrated and 'tf.summary.scalar("cost/cost", cost)' in migrated
    for left in ("FileWriter", "add_summary", "add_graph", "merge_all", "compat.v1", "shims", "Session"):
        assert left not in migrated, (left, migrated)
    again = cli("upgrade", tmp_path / "out" / "board.py", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr

    tf1_logs, tf2_logs = tmp_path / "tf1_logs", tmp_path / "tf2_logs"
    tf1_logs.mkdir()
    printed = tf1_oracle.run_script(str(tmp_path / "src" / "board.py"), str(tf1_logs))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0")
    env.pop("TF_USE_LEGACY_KERAS", None)
    native = subprocess.run([sys.executable, str(tmp_path / "out" / "board.py"), str(tf2_logs)],
                            capture_output=True, text=True, timeout=900, env=env)
    assert native.returncode == 0, native.stderr[-3000:]
    assert len(printed.split()) == len(native.stdout.split())
    old, new = events(tf1_logs), events(tf2_logs)
    assert old and sorted(old) == sorted(new), (sorted(set(old) ^ set(new))[:6])
    for key, value in old.items():
        if isinstance(value, float):
            assert abs(value - new[key]) <= 1e-5 + 1e-5 * abs(value), (key, value, new[key])
        elif key[0] in RACED.get(kind, ()):  # as many values (TF1 read it before or after the update)
            assert value[0] == new[key][0], (key, value, new[key])
        else:  # a histogram: as many values, over the same range
            assert value[0] == new[key][0] and abs(value[1] - new[key][1]) < 1e-5 \
                and abs(value[2] - new[key][2]) < 1e-5, (key, value, new[key])
