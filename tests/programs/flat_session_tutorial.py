"""The lab-by-lab tutorials' form: `sess = tf.Session()` at module level with no `with`, the
initializer made after the session (`init = tf.global_variables_initializer()`), the
accuracy built after training in the same block as the loop, and `sess.run` of TensorFlow
on plain arrays (`tf.argmax(labels[r:r + 1], 1)`: the label of one example)."""
from __future__ import print_function

import random

import numpy as np
import tensorflow as tf

tf.set_random_seed(777)
rng = np.random.RandomState(9)
x_data = rng.rand(60, 4).astype(np.float32)
y_data = np.eye(3)[(x_data[:, 0] * 2 + x_data[:, 2]).astype(int) % 3].astype(np.float32)

X = tf.placeholder(tf.float32, [None, 4])
Y = tf.placeholder(tf.float32, [None, 3])
W1 = tf.Variable(tf.random_normal([4, 8]), name="weight1")
b1 = tf.Variable(tf.random_normal([8]), name="bias1")
layer1 = tf.sigmoid(tf.matmul(X, W1) + b1)
W2 = tf.Variable(tf.random_normal([8, 3]), name="weight2")
b2 = tf.Variable(tf.random_normal([3]), name="bias2")
hypothesis = tf.matmul(layer1, W2) + b2
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=hypothesis, labels=Y))
optimizer = tf.train.AdamOptimizer(learning_rate=0.05).minimize(cost)

sess = tf.Session()
init = tf.global_variables_initializer()
sess.run(init)

for step in range(41):
    cost_val, _ = sess.run([cost, optimizer], feed_dict={X: x_data, Y: y_data})
    if step % 10 == 0:
        print("STEP", step, cost_val)

# Test model and check accuracy
correct_prediction = tf.equal(tf.argmax(hypothesis, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
print("ACCURACY", sess.run(accuracy, feed_dict={X: x_data, Y: y_data}))

r = random.randint(0, len(x_data) - 1)
print("LABEL", sess.run(tf.argmax(y_data[r:r + 1], 1))[0], r)
print("PREDICTION", sess.run(tf.argmax(hypothesis, 1), feed_dict={X: x_data[r:r + 1]})[0])
print("COUNTS", *sess.run(tf.reduce_sum(y_data, axis=0)))
sess.close()
