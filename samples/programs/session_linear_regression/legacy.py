"""The first TF1 tutorial: linear regression on noisy points, placeholders fed from numpy,
a module-level `with tf.Session() as sess:` loop, and the fitted weights fetched at the end."""
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(1)
train_X = rng.uniform(-1, 1, size=(64, 1)).astype("float32")
train_Y = (3.0 * train_X - 0.5 + 0.1 * rng.randn(64, 1)).astype("float32")

X = tf.placeholder(tf.float32, [None, 1], name="X")
Y = tf.placeholder(tf.float32, [None, 1], name="Y")
W = tf.Variable(tf.zeros([1, 1]), name="weight")
b = tf.Variable(tf.zeros([1]), name="bias")
pred = tf.add(tf.matmul(X, W), b)
cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * 16)
optimizer = tf.train.GradientDescentOptimizer(0.5).minimize(cost)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    costs = []
    for epoch in range(25):
        start = (epoch * 16) % 64
        _, c = sess.run([optimizer, cost], feed_dict={X: train_X[start:start + 16],
                                                      Y: train_Y[start:start + 16]})
        costs.append(c)
    training_cost = sess.run(cost, feed_dict={X: train_X, Y: train_Y})
    print("COSTS", " ".join("%.6f" % c for c in costs))
    print("FINAL", "%.6f" % training_cost, "%.6f" % sess.run(W)[0, 0], "%.6f" % sess.run(b)[0])
