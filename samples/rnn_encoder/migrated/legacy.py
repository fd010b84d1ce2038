"""A TF1 sequence encoder on tf.contrib.rnn: an embedding table, two stacked layers (an
LSTM with a residual connection, a GRU with dropout that is only active in training),
tf.nn.dynamic_rnn, and a tf.contrib.layers projection of the last output. The sizes come
from the static shapes, read TF1-style with `.value`."""
import shims.keras2
import tensorflow as tf


def build(ids, is_training=False):
    vocab, width = 100, 16
    with tf.compat.v1.variable_scope("embedding"):
        table = tf.compat.v1.get_variable("table", [vocab, width],
                                initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.1))
        inputs = tf.nn.embedding_lookup(table, ids)
    units = tf.compat.dimension_value(inputs.get_shape()[-1])
    keep = 0.8 if is_training else 1.0
    cells = [shims.contrib.rnn.ResidualWrapper(shims.contrib.rnn.LSTMCell(units)),
             shims.contrib.rnn.DropoutWrapper(shims.contrib.rnn.GRUCell(units), output_keep_prob=keep)]
    outputs, state = tf.compat.v1.nn.dynamic_rnn(shims.contrib.rnn.MultiRNNCell(cells), inputs, dtype=tf.float32,
                                       scope="encoder")
    last = outputs[:, -1, :]
    return shims.contrib.fully_connected(last, 4, activation_fn=tf.tanh, scope="project")
