"""A TF1 CNN training script: conv + batch norm + dropout driven by an `is_training`
placeholder, the batch-norm moving averages updated through UPDATE_OPS control
dependencies, a Momentum optimizer, and an evaluation pass in inference mode at the end."""
import sys

import numpy as np
import tensorflow as tf


def main():
    rng = np.random.RandomState(9)
    images = rng.rand(96, 8, 8, 1).astype("float32")
    labels = (images[:, :, :4].mean(axis=(1, 2, 3)) > images[:, :, 4:].mean(axis=(1, 2, 3))).astype("int64")

    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int64, [None])
    is_training = tf.placeholder(tf.bool, [], name="is_training")
    net = tf.layers.conv2d(x, 6, 3, padding="same", name="conv1",
                           kernel_initializer=tf.truncated_normal_initializer(stddev=0.1, seed=1))
    net = tf.layers.batch_normalization(net, training=is_training, momentum=0.9, name="bn1")
    net = tf.nn.relu(net)
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.flatten(net)
    net = tf.layers.dropout(net, rate=0.25, training=is_training, seed=3)
    logits = tf.layers.dense(net, 2, name="logits",
                             kernel_initializer=tf.truncated_normal_initializer(stddev=0.1, seed=2))
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    moving_mean = [v for v in tf.global_variables() if v.name == "bn1/moving_mean:0"][0]

    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    losses = []
    for step in range(24):
        start = (step * 16) % 96
        _, value = sess.run([train_op, loss], {x: images[start:start + 16], y: labels[start:start + 16],
                                               is_training: True})
        losses.append(value)
    acc, test_loss = sess.run([accuracy, loss], {x: images, y: labels, is_training: False})
    print("LOSSES", " ".join("%.6f" % v for v in losses))
    print("EVAL", "%.6f %.6f" % (acc, test_loss))
    print("MOVING_MEAN", " ".join("%.6f" % v for v in sess.run(moving_mean)))
    sess.close()


if __name__ == "__main__":
    main()
