"""The numbered-tutorial form: the weights made by module-level helper functions
(``w_h = init_weights([4, 12])``, ``def init_weights(shape): return tf.Variable(...)``)
before the placeholders' graph uses them, a model function taking them as arguments, the
optimizer's ``minimize(cost)`` finding them in the graph, and the initializer run with
``.run()`` inside the session's block."""
from __future__ import print_function

import numpy as np
import tensorflow as tf


def init_weights(shape):
    return tf.Variable(tf.random_normal(shape, stddev=0.1))


def init_bias(size, value=0.0):
    return tf.Variable(tf.constant(value, shape=[size]))


def model(X, w_h, b_h, w_o):
    h = tf.nn.relu(tf.matmul(X, w_h) + b_h)
    return tf.matmul(h, w_o)


rng = np.random.RandomState(3)
train_x = rng.randn(96, 4).astype(np.float32)
train_y = np.eye(3)[(train_x[:, 0] > 0).astype(int) + (train_x[:, 1] > 0.5).astype(int)].astype(np.float32)

w_h = init_weights([4, 12])
b_h = init_bias(12, 0.1)
w_o = init_weights([12, 3])

X = tf.placeholder("float", [None, 4])
Y = tf.placeholder("float", [None, 3])
py_x = model(X, w_h, b_h, w_o)
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=py_x, labels=Y))
train_op = tf.train.RMSPropOptimizer(0.01, 0.9).minimize(cost)
predict_op = tf.argmax(py_x, 1)

with tf.Session() as sess:
    tf.global_variables_initializer().run()
    for epoch in range(4):
        for start in range(0, len(train_x), 32):
            _, c = sess.run([train_op, cost], feed_dict={X: train_x[start:start + 32],
                                                         Y: train_y[start:start + 32]})
            print("COST", c)
        print("ACCURACY", np.mean(np.argmax(train_y, axis=1) == sess.run(predict_op, feed_dict={X: train_x})))
