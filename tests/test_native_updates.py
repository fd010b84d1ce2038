"""Graph code that updates variables by hand (#56): gradient descent written out with
``W.assign(...)``, ``tf.assign_sub`` and back-propagation by hand in a list of ``tf.assign``
ops becomes native steps that update the variables where the graph code did, proven equal
to TF 1.15 by `verify --program`; what the native form does not cover keeps the
GraphProgram form and says why."""
import pytest

from test_native_classes import said
from test_native_programs import TF1_LEFT, cli, code_only, upgraded, verified

pytest.importorskip("tensorflow")

# a line fit by hand: the gradient of the mean squared error written out; one update bound
# to a name and fetched with the cost and the variable, one a tf.assign_sub run alone
BY_HAND = '''"""y = w * x + b fitted by gradient descent written out; cost, w and b printed."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(2)
xs = rng.rand(16).astype(np.float32)
ys = 3.0 * xs + 0.5 + 0.05 * rng.randn(16).astype(np.float32)

x = tf.placeholder(tf.float32, [None])
y = tf.placeholder(tf.float32, [None])
w = tf.Variable(tf.random_normal([1], seed=7), name="w")
b = tf.Variable(0.0, name="b")
prediction = x * w + b
cost = tf.reduce_mean(tf.square(prediction - y))
rate = 0.2
dw = tf.reduce_mean(2.0 * (prediction - y) * x)
db = tf.reduce_mean(2.0 * (prediction - y))
update_w = w.assign(w - rate * dw)
update_b = tf.assign_sub(b, rate * db)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(40):
        _, c, w_now = sess.run([update_w, cost, w], feed_dict={x: xs, y: ys})
        sess.run(update_b, feed_dict={x: xs, y: ys})
        if i % 5 == 0:
            print("step", i, "cost", c, "w", w_now)
    print("fit", sess.run(w), sess.run(b))
'''

# logistic regression by hand: a list of tf.assign ops, run with the cost in a run whose
# values are not read (every variable read before any update in TF1 too: the reads need no
# more than the placeholders, the updates wait for the gradients)
BACKPROP = '''"""A logistic regression trained by gradient descent written out."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(4)
data = rng.rand(12, 2).astype(np.float32)
target = (data[:, :1] > data[:, 1:]).astype(np.float32)

X = tf.placeholder(tf.float32, [None, 2])
Y = tf.placeholder(tf.float32, [None, 1])
W = tf.Variable(tf.random_normal([2, 1], seed=1))
b = tf.Variable(tf.zeros([1]))
out = tf.sigmoid(tf.matmul(X, W) + b)
cost = -tf.reduce_mean(Y * tf.log(out) + (1 - Y) * tf.log(1 - out))
d_logits = (out - Y) / tf.cast(tf.shape(X)[0], tf.float32)
d_W = tf.matmul(tf.transpose(X), d_logits)
step = [
    tf.assign(W, W - 0.5 * d_W),
    tf.assign(b, b - 0.5 * tf.reduce_sum(d_logits, axis=0)),
]

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(200):
        sess.run([step, cost], feed_dict={X: data, Y: target})
        if i % 40 == 0:
            print(i, sess.run(cost, feed_dict={X: data, Y: target}))
    print("W", sess.run(W))
'''


@pytest.mark.parametrize("name, source, lines", [
    ("by_hand", BY_HAND, ("def update_w(x, y):\n", "    w.assign(w - rate * dw)\n", "    b.assign_sub(rate * db)\n",
                          "    c, w_now = [value.numpy() for value in update_w(xs, ys)]\n", "    update_b(xs, ys)\n")),
    # the list of updates: one statement each, in the step the run calls (its values unread)
    ("backprop", BACKPROP, ("    W.assign(W - 0.5 * d_W)\n    b.assign(b - 0.5 * tf.reduce_sum(d_logits, axis=0))\n"
                            "    return cost\n", "    update_step(data, target)\n")),
])
def test_updates_written_by_hand_become_native_steps_equal_to_tf_1_15(name, source, lines, tmp_path, tf1_python):
    legacy, migrated = upgraded(tmp_path, name, source)
    assert not set(TF1_LEFT.findall(code_only(migrated))) and "shims" not in migrated, migrated
    for line in lines:
        assert line in migrated, migrated
    again = cli("upgrade", tmp_path / "out" / f"{name}.py", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr
    report = verified(legacy, tmp_path / "out" / f"{name}.py", tf1_python)
    assert report["init"]["shared"] and not report["init"]["not_used_by_migrated"], report["init"]
    if name == "backprop":  # the finding says TF1 imposed no order between the reads and the updates
        assert "the updates of 'step' read values computed from 'b', which one of them updates" in \
            cli("upgrade", legacy, "--no-cache").stdout


@pytest.mark.parametrize("old, new, why", [
    # the new values of a list of updates printed: TF1 gave them, a native step returns none
    ('        sess.run([step, cost], feed_dict={X: data, Y: target})\n',
     '        print(sess.run([step, cost], feed_dict={X: data, Y: target}))\n',
     "a run's values are read, those of 'step' among them: variable updates, whose new values TF1 gave "
     "(a native step runs them as a train op, returning none)"),
    ("d_W = tf.matmul(tf.transpose(X), d_logits)\n",
     "d_W = tf.matmul(tf.transpose(X), d_logits)\ntrain = tf.train.GradientDescentOptimizer(0.1).minimize(cost)\n",
     "an update of 'W', which an optimizer trains too"),
    ("    tf.assign(W, W - 0.5 * d_W),\n", "    tf.assign(W, W - 0.5 * d_W, use_locking=True),\n",
     "a variable update with keyword arguments (validate_shape, use_locking, name)"),
])
def test_updates_the_native_form_does_not_cover_say_why(old, new, why, tmp_path):
    assert old in BACKPROP
    out = said(tmp_path, BACKPROP.replace(old, new))
    assert f"not written as native TF2 steps: {why}" in out, out
