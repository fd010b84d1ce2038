"""Experiments one after another in one script, as notebooks and tutorial chapters write
them: each starts a new graph (``reset_graph()``, a function of the script calling
``tf.reset_default_graph()``, or the call itself) and binds the same names again (``X``,
``y``, ``loss``, ``training_op``, ``saver``). The first trains and saves, then a second
session restores and predicts with ``.eval()``; the second builds a deeper network with
``tf.layers`` whose last layer has the first one's name (``outputs``); the third only evaluates an expression of a placeholder."""
from __future__ import division, print_function

import os
import sys

import numpy as np
import tensorflow as tf


def reset_graph(seed=42):
    tf.reset_default_graph()
    tf.set_random_seed(seed)
    np.random.seed(seed)


rng = np.random.RandomState(3)
X_train = rng.rand(120, 4).astype(np.float32)
y_train = (X_train[:, 0] + X_train[:, 1] > X_train[:, 2] + X_train[:, 3]).astype(np.int32)
n_inputs = 4
model_path = os.path.join(sys.argv[1], "my_model_final.ckpt")


def shuffle_batch(X, y, batch_size):
    rnd_idx = np.random.permutation(len(X))
    n_batches = len(X) // batch_size
    for batch_idx in np.array_split(rnd_idx, n_batches):
        yield X[batch_idx], y[batch_idx]


reset_graph()

X = tf.placeholder(tf.float32, shape=(None, n_inputs), name="X")
y = tf.placeholder(tf.int32, shape=(None), name="y")

with tf.name_scope("linear"):
    logits = tf.layers.dense(X, 2, name="outputs",
                             kernel_initializer=tf.constant_initializer(np.linspace(-0.5, 0.5, 8).reshape(4, 2)))

with tf.name_scope("loss"):
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))

with tf.name_scope("train"):
    training_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

with tf.name_scope("eval"):
    accuracy = tf.reduce_mean(tf.cast(tf.nn.in_top_k(logits, y, 1), tf.float32))

init = tf.global_variables_initializer()
saver = tf.train.Saver()

with tf.Session() as sess:
    init.run()
    for epoch in range(5):
        for X_batch, y_batch in shuffle_batch(X_train, y_train, 30):
            sess.run(training_op, feed_dict={X: X_batch, y: y_batch})
        loss_val = loss.eval(feed_dict={X: X_train, y: y_train})
        print("linear epoch", epoch, "loss", loss_val, "accuracy", accuracy.eval(feed_dict={X: X_train, y: y_train}))
    save_path = saver.save(sess, model_path)

with tf.Session() as sess:
    saver.restore(sess, save_path)
    Z = logits.eval(feed_dict={X: X_train[:5]})
    print("restored logits", Z.ravel())

reset_graph()

X = tf.placeholder(tf.float32, shape=(None, n_inputs), name="X")
y = tf.placeholder(tf.int32, shape=(None), name="y")

with tf.name_scope("dnn"):
    hidden1 = tf.layers.dense(X, 6, name="hidden1", activation=tf.nn.relu,
                              kernel_initializer=tf.constant_initializer(0.1))
    logits = tf.layers.dense(hidden1, 2, name="outputs",
                             kernel_initializer=tf.constant_initializer(-0.05))

with tf.name_scope("loss"):
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))

with tf.name_scope("train"):
    training_op = tf.train.AdamOptimizer(0.01).minimize(loss)

init = tf.global_variables_initializer()
saver = tf.train.Saver()

with tf.Session() as sess:
    init.run()
    for epoch in range(5):
        for X_batch, y_batch in shuffle_batch(X_train, y_train, 30):
            _, loss_val = sess.run([training_op, loss], feed_dict={X: X_batch, y: y_batch})
        print("dnn epoch", epoch, "last batch loss", loss_val)
    saver.save(sess, os.path.join(sys.argv[1], "dnn.ckpt"))

tf.reset_default_graph()

A = tf.placeholder(tf.float32, shape=(None, 3))
B = A * 2 + 5
with tf.Session() as sess:
    B_val_1 = B.eval(feed_dict={A: [[1, 2, 3]]})
    B_val_2 = B.eval(feed_dict={A: [[4, 5, 6], [7, 8, 9]]})

print("B", B_val_1, B_val_2)

best = None
for trial, learning_rate in enumerate([0.01, 0.1, 0.5]):
    reset_graph()
    X = tf.placeholder(tf.float32, shape=(None, n_inputs), name="X")
    y = tf.placeholder(tf.int32, shape=(None), name="y")
    hidden1 = tf.layers.dense(X, 5, name="hidden1", activation=tf.nn.relu,
                              kernel_initializer=tf.constant_initializer(0.2))
    logits = tf.layers.dense(hidden1, 2, name="outputs", kernel_initializer=tf.constant_initializer(-0.1))
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    training_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(loss)
    init = tf.global_variables_initializer()
    with tf.Session() as sess:
        init.run()
        for epoch in range(3):
            for X_batch, y_batch in shuffle_batch(X_train, y_train, 30):
                sess.run(training_op, feed_dict={X: X_batch, y: y_batch})
        loss_val = loss.eval(feed_dict={X: X_train, y: y_train})
    print("trial", trial, "learning rate", learning_rate, "loss", loss_val)
    if best is None or loss_val < best[1]:
        best = (learning_rate, loss_val)
print("best learning rate", best[0], "loss", best[1])
