"""TF1 model code that reads its sizes from static shapes with `.value` (the batch, the
width, every dimension), keeps a raw `tf.Variable` global step and a scale next to its
`get_variable` weights, and records summaries while it builds the graph."""
import tensorflow as tf


def build(features):
    global_step = tf.Variable(0, name="global_step", trainable=False, dtype=tf.int64)
    batch = features.get_shape()[0].value
    width = features.shape[-1].value
    dims = [d.value for d in features.get_shape()]
    with tf.variable_scope("head"):
        weights = tf.get_variable("weights", [width, 8],
                                  initializer=tf.glorot_uniform_initializer(seed=1))
        scale = tf.Variable(0.5, name="scale")
    hidden = tf.nn.relu(tf.matmul(features, weights)) * scale
    hidden = hidden + tf.cast(global_step, tf.float32)
    tf.summary.histogram("hidden", hidden)
    tf.summary.scalar("hidden_mean", tf.reduce_mean(hidden))
    return tf.reshape(hidden, [batch, 2, dims[1] // width * 4])
