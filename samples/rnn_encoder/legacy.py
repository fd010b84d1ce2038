"""A TF1 sequence encoder on tf.contrib.rnn: an embedding table, two stacked layers (an
LSTM with a residual connection, a GRU with dropout that is only active in training),
tf.nn.dynamic_rnn, and a tf.contrib.layers projection of the last output. The sizes come
from the static shapes, read TF1-style with `.value`."""
import tensorflow as tf
from tensorflow.contrib import rnn


def build(ids, is_training=False):
    vocab, width = 100, 16
    with tf.variable_scope("embedding"):
        table = tf.get_variable("table", [vocab, width],
                                initializer=tf.truncated_normal_initializer(stddev=0.1))
        inputs = tf.nn.embedding_lookup(table, ids)
    units = inputs.get_shape()[-1].value
    keep = 0.8 if is_training else 1.0
    cells = [rnn.ResidualWrapper(rnn.LSTMCell(units)),
             rnn.DropoutWrapper(tf.contrib.rnn.GRUCell(units), output_keep_prob=keep)]
    outputs, state = tf.nn.dynamic_rnn(rnn.MultiRNNCell(cells), inputs, dtype=tf.float32,
                                       scope="encoder")
    last = outputs[:, -1, :]
    return tf.contrib.layers.fully_connected(last, 4, activation_fn=tf.tanh, scope="project")
