"""TF1 model code that reads its sizes from static shapes with `.value` (the batch, the
width, every dimension), keeps a raw `tf.Variable` global step and a scale next to its
`get_variable` weights, and records summaries while it builds the graph."""
import tensorflow as tf


def build(features):
    global_step = tf.Variable(0, name="global_step", trainable=False, dtype=tf.int64)
    batch = tf.compat.dimension_value(features.get_shape()[0])
    width = tf.compat.dimension_value(features.shape[-1])
    dims = [tf.compat.dimension_value(d) for d in features.get_shape()]
    with tf.compat.v1.variable_scope("head"):
        weights = tf.compat.v1.get_variable("weights", [width, 8],
                                  initializer=tf.compat.v1.glorot_uniform_initializer(seed=1))
        scale = tf.Variable(0.5, name="scale")
    hidden = tf.nn.relu(tf.matmul(features, weights)) * scale
    hidden = hidden + tf.cast(global_step, tf.float32)
    tf.compat.v1.summary.histogram("hidden", hidden)
    tf.compat.v1.summary.scalar("hidden_mean", tf.reduce_mean(hidden))
    return tf.reshape(hidden, [batch, 2, dims[1] // width * 4])
