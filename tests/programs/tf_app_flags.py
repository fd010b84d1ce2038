"""MNIST-style tutorial: main() under tf.app.run with tf.app.flags."""
from __future__ import absolute_import, division, print_function

import numpy as np
import tensorflow as tf

flags = tf.app.flags
FLAGS = flags.FLAGS
flags.DEFINE_integer("steps", 30, "training steps")
flags.DEFINE_float("learning_rate", 0.2, "learning rate")


def make_data():
    rng = np.random.RandomState(1)
    x = rng.randn(128, 6).astype(np.float32)
    y = (x[:, :3].sum(axis=1) > 0).astype(np.int64)
    return x, y


def main(_):
    x_data, y_data = make_data()
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    y_ = tf.placeholder(tf.int64, [None], name="labels")
    W = tf.Variable(tf.zeros([6, 2]), name="W")
    b = tf.Variable(tf.zeros([2]), name="b")
    logits = tf.matmul(x, W) + b
    cross_entropy = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y_, logits=logits))
    train_step = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(cross_entropy)
    correct = tf.equal(tf.argmax(logits, 1), y_)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    for i in range(FLAGS.steps):
        batch = slice((i * 32) % 128, (i * 32) % 128 + 32)
        _, ce = sess.run([train_step, cross_entropy], feed_dict={x: x_data[batch], y_: y_data[batch]})
        if i % 5 == 0:
            print("step %d, cross entropy %g" % (i, ce))
    print("test accuracy %g" % sess.run(accuracy, feed_dict={x: x_data, y_: y_data}))


if __name__ == "__main__":
    tf.app.run(main=main)
