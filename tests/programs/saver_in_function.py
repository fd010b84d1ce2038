"""The session passed to functions: train(sess, steps) saves with a Saver inside it
(global_step=), evaluate(session, ...) names it otherwise; a new session restores."""
import os
import sys

import numpy as np
import tensorflow as tf

out_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/saver_fn"
rng = np.random.RandomState(11)
data = rng.randn(96, 5).astype(np.float32)
target = np.tanh(data[:, :2].sum(axis=1, keepdims=True)).astype(np.float32)

inputs = tf.placeholder(tf.float32, [None, 5], name="inputs")
targets = tf.placeholder(tf.float32, [None, 1], name="targets")
hidden = tf.layers.dense(inputs, 12, activation=tf.nn.tanh, name="hidden")
prediction = tf.layers.dense(hidden, 1, name="prediction")
loss = tf.losses.mean_squared_error(targets, prediction)
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.RMSPropOptimizer(0.01).minimize(loss, global_step=global_step)
saver = tf.train.Saver(max_to_keep=2)


def train(sess, steps):
    for i in range(steps):
        _, l = sess.run([train_op, loss], feed_dict={inputs: data, targets: target})
        if i % 5 == 0:
            print("step %d loss %.6f" % (i, l))
    return saver.save(sess, os.path.join(out_dir, "model.ckpt"), global_step=global_step)


with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    path = train(sess, 20)

def evaluate(session, x, y):
    return session.run(loss, feed_dict={inputs: x, targets: y})


with tf.Session() as sess:
    saver.restore(sess, path)
    print("restored at step", sess.run(global_step))
    print("eval loss %.6f" % evaluate(sess, data, target))
