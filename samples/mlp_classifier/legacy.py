"""A TF1 MLP classifier: unnamed tf.layers.dense in a loop, dropout, an L2
penalty on every kernel, softmax cross-entropy."""
import tensorflow as tf

HIDDEN = (64, 32)


def build(features, training=False):
    regularizer = tf.keras.regularizers.l2(1e-4)
    x = features
    with tf.variable_scope("mlp"):
        for units in HIDDEN:
            x = tf.layers.dense(x, units, activation=tf.nn.relu,
                                kernel_regularizer=regularizer)
            x = tf.layers.dropout(x, rate=0.2, training=training)
        logits = tf.layers.dense(x, 10, name="logits")
    return tf.nn.softmax(logits)
