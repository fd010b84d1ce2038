"""A fetched expression reading a Python value (#58): the tutorials' linear regression
prints its error on test points with `sess.run(tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 *
test_X.shape[0]), ...)`, `test_X` bound in the session's block. TF1 built that expression
at the run, from the value then; every such program stayed in TF1 graph mode. A native
step traced at that run reads the same value, when the run is its step's only caller and
runs once; otherwise the program stays and says why."""
import pytest

from test_native_programs import TF1_LEFT, code_only, settled_and_verified, upgrade_says, upgraded

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow

FIT = '''"""A line fitted one sample at a time; its error on held-out points printed from a fetch
that divides by their count, a Python value bound in the session's block."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
xs = np.linspace(0.0, 4.0, 12)
ys = 0.7 * xs + 1.3 + rng.normal(0.0, 0.1, 12)

X = tf.placeholder("float")
Y = tf.placeholder("float")
W = tf.Variable(rng.randn(), name="weight")
b = tf.Variable(rng.randn(), name="bias")
pred = tf.add(tf.multiply(X, W), b)
cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * xs.shape[0])
optimizer = tf.train.GradientDescentOptimizer(0.02).minimize(cost)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(40):
        for (x, y) in zip(xs, ys):
            sess.run(optimizer, feed_dict={X: x, Y: y})
        if (epoch + 1) % 10 == 0:
            print("COST", sess.run(cost, feed_dict={X: xs, Y: ys}), sess.run(W), sess.run(b))

    held_x = np.asarray([0.5, 1.5, 2.5, 3.5, 4.5])
    held_y = 0.7 * held_x + 1.3
    held_cost = sess.run(tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * held_x.shape[0]),
                         feed_dict={X: held_x, Y: held_y})
    print("HELD", held_cost)
    print("SCALED", sess.run(W * held_x.shape[0]))
'''
HELD_RUN = """    held_cost = sess.run(tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * held_x.shape[0]),
                         feed_dict={X: held_x, Y: held_y})
"""


def test_the_expression_is_a_step_reading_the_value_and_equals_tf_1_15(tmp_path, tf1_python):
    legacy, migrated = upgraded(tmp_path, "fit", FIT)
    assert not set(TF1_LEFT.findall(code_only(migrated))), migrated
    assert "def compute_held_cost(X, Y):" in migrated, migrated  # named after what it is assigned to
    assert "    return tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * held_x.shape[0])" in migrated, migrated
    assert "held_cost = compute_held_cost(held_x, held_y).numpy()" in migrated, migrated
    assert 'print("SCALED", compute().numpy())' in migrated, migrated
    report = settled_and_verified(tmp_path, legacy, "fit", tf1_python)
    printed = {line["template"] for line in report["streams"]["printed"]["lines"]}
    assert {"HELD #", "SCALED #"} <= printed, printed  # compared with TF 1.15's, not only run


@pytest.mark.parametrize("old, new, why", [
    # run again with other held-out points: a step traced once would keep the first ones
    (HELD_RUN, "    for held_x in (held_x, held_x[:2]):\n    " + HELD_RUN.replace("\n    ", "\n        "),
     "its run is in a loop, a block or a function"),
    (HELD_RUN, HELD_RUN + HELD_RUN.replace("held_cost =", "held_again ="),
     "another run calls the same step"),
    (HELD_RUN, HELD_RUN.replace("held_x.shape[0]", "len(sess.graph.get_operations())"),
     "it reads the session 'sess'"),
])
def test_a_value_the_step_could_keep_stale_keeps_the_program_and_says_why(old, new, why, tmp_path):
    assert old in FIT
    out = upgrade_says(tmp_path, "fit", FIT.replace(old, new))
    assert "Session program kept in TF1 graph mode: a fetch that is not a graph name: " \
           "tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * " in out, out
    assert "only a native step traced at that run reads " in out and ", and not here: " + why in out, out
