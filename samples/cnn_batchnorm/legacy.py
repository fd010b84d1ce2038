"""A TF1 CNN: conv / batch norm / pooling blocks, dropout and a dense head,
with the usual `training` flag."""
import tensorflow as tf


def conv_block(x, filters, index, training):
    with tf.variable_scope("block%d" % index):
        x = tf.layers.conv2d(x, filters, 3, padding="same", use_bias=False, name="conv")
        x = tf.layers.batch_normalization(x, momentum=0.9, training=training, name="bn")
        x = tf.nn.relu(x)
        return tf.layers.max_pooling2d(x, pool_size=2, strides=2, padding="same")


def build(images, training=False):
    x = images
    for i, filters in enumerate([16, 32]):
        x = conv_block(x, filters, i, training)
    x = tf.layers.flatten(x)
    x = tf.layers.dropout(x, rate=0.5, training=training)
    x = tf.layers.dense(x, 64, activation=tf.nn.relu, name="fc")
    return tf.layers.dense(x, 10, name="logits")
