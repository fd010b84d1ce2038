"""TF1's `tf.losses` in native steps (#56, #57): `sparse_softmax_cross_entropy(labels,
logits)` is the batch mean of `tf.nn.sparse_softmax_cross_entropy_with_logits` and
`mean_squared_error(labels, predictions)` the mean of `tf.math.squared_difference`, as
TF1 computed them with its defaults, on float32 inputs; equal to TF 1.15. With other
arguments, inputs not proven float32, or the LOSSES collection read, TF1's function stays
(through tf.compat.v1)."""
import pytest

from test_native_programs import TF1_LEFT, code_only, settled_and_verified, upgraded

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow

TWO_HEADS = '''"""One hidden layer, two heads: a class (cross entropy) and a value (squared error)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(8)
data = rng.rand(40, 4).astype(np.float32)
classes = (data[:, 0] > data[:, 1]).astype(np.int64)
values = data.sum(axis=1, keepdims=True)

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.int64, [None])
v = tf.placeholder(tf.float32, [None, 1])
hidden = tf.layers.dense(x, 10, tf.nn.tanh, name="hidden",
                         kernel_initializer=tf.truncated_normal_initializer(stddev=0.3, seed=1))
logits = tf.layers.dense(hidden, 2, name="logits", kernel_initializer=tf.constant_initializer(0.1))
value = tf.layers.dense(hidden, 1, name="value", kernel_initializer=tf.constant_initializer(-0.1))
class_loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
value_loss = tf.losses.mean_squared_error(v, value)
loss = class_loss + 0.5 * value_loss
train = tf.train.GradientDescentOptimizer(0.2).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(20):
        _, a, b = sess.run([train, class_loss, value_loss], {x: data, y: classes, v: values})
        if i % 5 == 0:
            print("LOSSES", i, a, b)
'''


def test_tf1_losses_are_written_as_tf2_computes_them_and_equal_tf_1_15(tmp_path, tf1_python):
    legacy, migrated = upgraded(tmp_path, "heads", TWO_HEADS)
    assert not set(TF1_LEFT.findall(code_only(migrated))), migrated
    assert "class_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))" \
        in migrated, migrated
    assert "value_loss = tf.reduce_mean(tf.math.squared_difference(value, v))" in migrated, migrated
    report = settled_and_verified(tmp_path, legacy, "heads", tf1_python)
    assert {"hidden/kernel", "value/bias"} <= {v["name"] for v in report["variables"]}


@pytest.mark.parametrize("old, new", [
    ("tf.losses.mean_squared_error(v, value)", "tf.losses.mean_squared_error(v, value, weights=2.0)"),
    # float64 values: TF1 cast them to float32 first
    ("v = tf.placeholder(tf.float32, [None, 1])", "v = tf.placeholder(tf.float64, [None, 1])"),
    # the LOSSES collection TF1 added them to, read by a function of the module
    ('values = data.sum(axis=1, keepdims=True)\n',
     'values = data.sum(axis=1, keepdims=True)\n\n\ndef collected():\n    return tf.losses.get_losses()\n\n\n'),
])
def test_tf1s_own_loss_stays_where_tf2s_is_not_proven_the_same(old, new, tmp_path):
    assert old in TWO_HEADS
    _, migrated = upgraded(tmp_path, "heads", TWO_HEADS.replace(old, new))
    assert "tf.compat.v1.losses.mean_squared_error(" in migrated, migrated
    assert "Session" not in code_only(migrated) and "def train_step(" in migrated, migrated
