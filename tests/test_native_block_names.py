"""A session block binding a name of the graph's state (#56): hunkim's `b = sess.run(hypothesis,
...)` after `b = tf.Variable(...)`, a loop's `b = (step % 8) * 32`. TF1's graph kept the
variable; the native steps read it by its name, so the block's own binding is renamed, when
its first occurrence binds it in a statement list holding every later one. Otherwise the
program keeps the GraphProgram form and the finding says why."""
import libcst as cst
import pytest

from migrate.rules.tfm501_session_programs.native import session
from test_native_programs import TF1_LEFT, cli, code_only, upgraded, verified

pytest.importorskip("tensorflow")

PROGRAM = '''"""hunkim's lab-06-1 form: the bias is `b`, and so is a prediction the block reads back."""
import numpy as np
import tensorflow as tf

x_data = np.array([[1, 2, 1, 1], [2, 1, 3, 2], [3, 1, 3, 4], [4, 1, 5, 5], [1, 7, 5, 5],
                   [1, 2, 5, 6], [1, 6, 6, 6], [1, 7, 7, 7]], dtype=np.float32)
y_data = np.eye(3, dtype=np.float32)[[2, 2, 2, 1, 1, 1, 0, 0]]
X = tf.placeholder("float", [None, 4])
Y = tf.placeholder("float", [None, 3])
W = tf.Variable(tf.random_normal([4, 3], seed=1), name="weight")
b = tf.Variable(tf.random_normal([3], seed=2), name="bias")
hypothesis = tf.nn.softmax(tf.matmul(X, W) + b)
cost = tf.reduce_mean(-tf.reduce_sum(Y * tf.log(hypothesis), axis=1))
optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.1).minimize(cost)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(201):
        sess.run(optimizer, feed_dict={X: x_data, Y: y_data})
        if step % 50 == 0:
            print(step, sess.run(cost, feed_dict={X: x_data, Y: y_data}))
    b = sess.run(hypothesis, feed_dict={X: [[1, 3, 4, 3]]})
    print(b, sess.run(tf.argmax(b, 1)))
'''


def test_a_block_binding_a_state_name_gets_its_own_name(tmp_path, tf1_python):
    legacy, migrated = upgraded(tmp_path, "softmax", PROGRAM)
    assert 'b = tf.Variable(tf.random.normal([3], seed=2), name="bias")' in migrated, migrated
    assert "b_1 = compute_hypothesis([[1, 3, 4, 3]]).numpy()\nprint(b_1, tf.argmax(b_1, 1).numpy())" in migrated, \
        migrated
    assert "hypothesis = tf.nn.softmax(tf.matmul(X, W) + b)" in migrated, migrated
    assert not TF1_LEFT.findall(code_only(migrated)) and "shims" not in migrated, migrated
    said = cli("upgrade", legacy, "--no-cache").stdout
    assert "the session's block bound the graph's 'b' to a Python value: that binding is renamed" in said, said
    verified(legacy, tmp_path / "out" / "softmax.py", tf1_python)
    again = cli("upgrade", tmp_path / "out" / "softmax.py", "--check", "--no-cache")
    assert again.returncode == 0, again.stdout


@pytest.mark.parametrize("block, why", [
    ("with tf.Session() as sess:\n    print(sess.run(b))\n    b = sess.run(h)\n",
     "the session's block uses 'b', the graph's, before binding it in its statements"),
    ("with tf.Session() as sess:\n    for step in range(3):\n        b = step\n    print(b)\n",
     "the session's block rebinds 'b', which the graph reads, and reads it elsewhere"),
    ("with tf.Session() as sess:\n    if cond:\n        b = 1\n    print(b)\n",
     "the session's block uses 'b', the graph's, before binding it in its statements"),
])
def test_a_block_whose_reads_may_be_the_graphs_is_not_renamed(block, why):
    """The guard under the planner's (which keeps such programs in graph mode today): a read
    before the binding, or outside the statements after it, may be of the graph's variable."""
    assert session.renamed(list(cst.parse_module(block).body), ["b"]) == why


def test_a_block_whose_reads_follow_its_binding_is_renamed():
    body = list(cst.parse_module("with tf.Session() as sess:\n    for step in range(3):\n"
                                 "        b = step * 2\n        print(b, x.b, f(b=b))\nprint(a)\n").body)
    renames = session.renamed(body, ["b"])
    assert [name for _, name in renames] == ["b"] * 3  # the target and two reads; x.b and b= aside
