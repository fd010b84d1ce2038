"""A TF1 MLP classifier: unnamed tf.layers.dense in a loop, dropout, an L2
penalty on every kernel, softmax cross-entropy."""
import shims.keras2
import tensorflow as tf

HIDDEN = (64, 32)


def build(features, training=False):
    regularizer = tf.keras.regularizers.l2(1e-4)
    x = features
    with tf.compat.v1.variable_scope("mlp"):
        for units in HIDDEN:
            x = shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(units, activation=tf.nn.relu, kernel_regularizer=regularizer), default_name="dense")(x)
            x = shims.get_or_create_layer(None, lambda: tf.keras.layers.Dropout(0.2), default_name="dropout")(x, training=training)
        logits = shims.get_or_create_layer("logits", lambda: tf.keras.layers.Dense(10, name="logits"))(x)
    return tf.nn.softmax(logits)
