"""An LSTM over sequences with dynamic_rnn, the last output to a dense head."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(9)
seq = rng.randn(32, 7, 3).astype(np.float32)
target = seq.sum(axis=(1, 2)).reshape(-1, 1).astype(np.float32) / 5.0

inputs = tf.placeholder(tf.float32, [None, 7, 3])
y = tf.placeholder(tf.float32, [None, 1])
cell = tf.nn.rnn_cell.BasicLSTMCell(10)
outputs, state = tf.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
last = outputs[:, -1, :]
pred = tf.layers.dense(last, 1)
loss = tf.reduce_mean(tf.square(pred - y))
train_op = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for epoch in range(15):
        _, l = sess.run([train_op, loss], feed_dict={inputs: seq, y: target})
        if epoch % 3 == 0:
            print("epoch", epoch, "mse", l)
