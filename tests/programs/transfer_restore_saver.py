"""Transfer learning as handson-ml and fine-tuning scripts wrote it: a model trained and
saved whole, then a new graph (tf.reset_default_graph()) reusing its lower layers (built
in a tf.name_scope): the variables to take picked with tf.get_collection(...,
scope="hidden[12]"), a tf.train.Saver over a dict of them by op name restoring from the
first checkpoint after the initializer ran, only the new layers trained
(minimize(var_list=...)), the head saved by a Saver over a list, and a third graph
restoring that head alone."""
import os
import sys

import numpy as np
import tensorflow as tf

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.RandomState(0)
data = rng.randn(64, 5).astype(np.float32)
labels = (data[:, 0] > 0).astype(np.int64) + (data[:, 1] > 0)

tf.set_random_seed(1)
X = tf.placeholder(tf.float32, [None, 5], name="X")
y = tf.placeholder(tf.int64, [None], name="y")
hidden1 = tf.layers.dense(X, 8, activation=tf.nn.relu, name="hidden1")
hidden2 = tf.layers.dense(hidden1, 6, activation=tf.nn.relu, name="hidden2")
logits = tf.layers.dense(hidden2, 3, name="outputs")
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
training_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
saver = tf.train.Saver()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(10):
        _, loss_val = sess.run([training_op, loss], feed_dict={X: data, y: labels})
        print("PRETRAIN", step, loss_val)
    saver.save(sess, os.path.join(out, "pretrained.ckpt"))

tf.reset_default_graph()
tf.set_random_seed(2)
X = tf.placeholder(tf.float32, [None, 5], name="X")
y = tf.placeholder(tf.int64, [None], name="y")
with tf.name_scope("dnn"):  # tf.layers' variables ignore it: hidden1/kernel, not dnn/hidden1/kernel
    hidden1 = tf.layers.dense(X, 8, activation=tf.nn.relu, name="hidden1")
    hidden2 = tf.layers.dense(hidden1, 6, activation=tf.nn.relu, name="hidden2")
    hidden3 = tf.layers.dense(hidden2, 4, activation=tf.nn.relu, name="hidden3")
    logits = tf.layers.dense(hidden3, 2, name="new_outputs")
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.minimum(y, 1), logits=logits))
train_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="hidden3|new_outputs")
training_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss, var_list=train_vars)
reuse_vars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="hidden[12]")
reuse_vars_dict = dict([(var.op.name, var) for var in reuse_vars])
restore_saver = tf.train.Saver(reuse_vars_dict)
head_saver = tf.train.Saver(var_list=train_vars)
init = tf.global_variables_initializer()
with tf.Session() as sess:
    init.run()
    restore_saver.restore(sess, os.path.join(out, "pretrained.ckpt"))
    for step in range(10):
        _, loss_val = sess.run([training_op, loss], feed_dict={X: data, y: labels})
        print("TRANSFER", step, loss_val)
    head_saver.save(sess, os.path.join(out, "head.ckpt"))

tf.reset_default_graph()
features = tf.placeholder(tf.float32, [None, 6], name="features")
hidden3 = tf.layers.dense(features, 4, activation=tf.nn.relu, name="hidden3")
logits = tf.layers.dense(hidden3, 2, name="new_outputs")
head_saver = tf.train.Saver()
with tf.Session() as sess:
    head_saver.restore(sess, os.path.join(out, "head.ckpt"))
    print("HEAD", *sess.run(tf.reduce_sum(logits, axis=0), feed_dict={features: np.abs(data[:8]).repeat(2, 1)[:, :6]}))
