"""A TF1 CNN: conv / batch norm / pooling blocks, dropout and a dense head,
with the usual `training` flag."""
import shims.keras2
import tensorflow as tf


def conv_block(x, filters, index, training):
    with tf.compat.v1.variable_scope("block%d" % index):
        x = shims.get_or_create_layer("conv", lambda: tf.keras.layers.Conv2D(filters, 3, padding="same", use_bias=False, name="conv"))(x)
        x = shims.get_or_create_layer("bn", lambda: tf.keras.layers.BatchNormalization(momentum=0.9, name="bn"))(x, training=training)
        x = tf.nn.relu(x)
        return shims.get_or_create_layer(None, lambda: tf.keras.layers.MaxPooling2D(2, strides=2, padding="same"), default_name="max_pooling2d")(x)


def build(images, training=False):
    x = images
    for i, filters in enumerate([16, 32]):
        x = conv_block(x, filters, i, training)
    x = shims.get_or_create_layer(None, lambda: tf.keras.layers.Flatten(), default_name="flatten")(x)
    x = shims.get_or_create_layer(None, lambda: tf.keras.layers.Dropout(0.5), default_name="dropout")(x, training=training)
    x = shims.get_or_create_layer("fc", lambda: tf.keras.layers.Dense(64, activation=tf.nn.relu, name="fc"))(x)
    return shims.get_or_create_layer("logits", lambda: tf.keras.layers.Dense(10, name="logits"))(x)
