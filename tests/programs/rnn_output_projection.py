"""A time-series RNN as the RNN chapters write it: a BasicRNNCell wrapped in
tf.contrib.rnn.OutputProjectionWrapper (one output per step) through dynamic_rnn, trained
with Adam on a generated series; then, after reset_graph(), the same model with the
projection done by one tf.layers.dense over the stacked outputs."""
import numpy as np
import tensorflow as tf


def reset_graph(seed=42):
    tf.reset_default_graph()
    tf.set_random_seed(seed)
    np.random.seed(seed)


n_steps, n_inputs, n_neurons, n_outputs = 8, 1, 6, 1
t = np.linspace(0, 3, 64 * (n_steps + 1)).reshape(64, n_steps + 1)
series = np.sin(t) + 0.1 * np.cos(5 * t)
X_batch = series[:, :-1].reshape(-1, n_steps, 1).astype(np.float32)
y_batch = series[:, 1:].reshape(-1, n_steps, 1).astype(np.float32)

reset_graph()

X = tf.placeholder(tf.float32, [None, n_steps, n_inputs])
y = tf.placeholder(tf.float32, [None, n_steps, n_outputs])
cell = tf.contrib.rnn.OutputProjectionWrapper(
    tf.contrib.rnn.BasicRNNCell(num_units=n_neurons, activation=tf.nn.relu),
    output_size=n_outputs)
outputs, states = tf.nn.dynamic_rnn(cell, X, dtype=tf.float32)
loss = tf.reduce_mean(tf.square(outputs - y))
training_op = tf.train.AdamOptimizer(0.01).minimize(loss)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    init.run()
    for iteration in range(30):
        sess.run(training_op, feed_dict={X: X_batch, y: y_batch})
        if iteration % 5 == 0:
            print(iteration, "MSE:", loss.eval(feed_dict={X: X_batch, y: y_batch}))
    print("projected", sess.run(outputs, feed_dict={X: X_batch[:1]}).ravel())

reset_graph()

X = tf.placeholder(tf.float32, [None, n_steps, n_inputs])
y = tf.placeholder(tf.float32, [None, n_steps, n_outputs])
cell = tf.nn.rnn_cell.BasicRNNCell(num_units=n_neurons, activation=tf.nn.relu)
rnn_outputs, states = tf.nn.dynamic_rnn(cell, X, dtype=tf.float32)
stacked_rnn_outputs = tf.reshape(rnn_outputs, [-1, n_neurons])
stacked_outputs = tf.layers.dense(stacked_rnn_outputs, n_outputs)
outputs = tf.reshape(stacked_outputs, [-1, n_steps, n_outputs])
loss = tf.reduce_mean(tf.square(outputs - y))
training_op = tf.train.AdamOptimizer(0.01).minimize(loss)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    init.run()
    for iteration in range(30):
        sess.run(training_op, feed_dict={X: X_batch, y: y_batch})
        if iteration % 5 == 0:
            print(iteration, "stacked MSE:", loss.eval(feed_dict={X: X_batch, y: y_batch}))
