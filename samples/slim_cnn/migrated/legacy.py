"""A tf.contrib.slim CNN as slim's model zoo wrote them: an arg_scope giving every conv and
fully connected layer batch norm, an L2 penalty and its defaults, `slim.repeat`, pooling,
dropout, and the `is_training` flag threaded through batch norm's parameters."""
import shims.keras2
import tensorflow as tf
import tf_slim as slim


def build(images, is_training=False):
    batch_norm_params = {"is_training": is_training, "decay": 0.9, "epsilon": 1e-3, "scale": True}
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_regularizer=slim.l2_regularizer(1e-4),
                        normalizer_fn=shims.contrib.batch_norm,
                        normalizer_params=batch_norm_params):
        with slim.arg_scope([slim.conv2d], padding="SAME"):
            net = slim.conv2d(images, 16, [3, 3], scope="conv1")
            net = slim.max_pool2d(net, [2, 2], scope="pool1")
            net = slim.repeat(net, 2, slim.conv2d, 32, [3, 3], scope="conv2")
            net = slim.max_pool2d(net, [2, 2], scope="pool2")
        net = slim.flatten(net)
        net = slim.fully_connected(net, 64, scope="fc1")
    net = slim.dropout(net, 0.5, is_training=is_training, scope="dropout1")
    logits = slim.fully_connected(net, 10, activation_fn=None, scope="logits")
    return tf.identity(logits, name="logits")
