"""TensorBoard as the tutorials wrote it (handson-ml chapter 9): a scalar summary of the loss,
`tf.summary.FileWriter(logdir, tf.get_default_graph())` made before the session, the
summary evaluated every other batch and added with its step, the writer closed after the
session; then the event file read back (its values and whether it holds the graph)."""
import os
import sys
from datetime import datetime

import numpy as np
import tensorflow as tf

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.RandomState(42)
data = np.c_[np.ones((200, 1)), rng.randn(200, 3)].astype(np.float32)
target = (data @ np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32) + 0.1).astype(np.float32)

X = tf.placeholder(tf.float32, shape=(None, 4), name="X")
y = tf.placeholder(tf.float32, shape=(None, 1), name="y")
theta = tf.Variable(tf.random_uniform([4, 1], -1.0, 1.0, seed=42), name="theta")
error = tf.matmul(X, theta) - y
mse = tf.reduce_mean(tf.square(error), name="mse")
training_op = tf.train.GradientDescentOptimizer(learning_rate=0.05).minimize(mse)
init = tf.global_variables_initializer()

logdir = os.path.join(out, "run-{}".format(datetime.utcnow().strftime("%Y%m%d%H%M%S")))
mse_summary = tf.summary.scalar("MSE", mse)
file_writer = tf.summary.FileWriter(logdir, tf.get_default_graph())

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(10):
        for batch_index in range(4):
            X_batch, y_batch = data[batch_index * 50:(batch_index + 1) * 50], target[batch_index * 50:(batch_index + 1) * 50]
            if batch_index % 2 == 0:
                summary_str = mse_summary.eval(feed_dict={X: X_batch, y: y_batch})
                step = epoch * 4 + batch_index
                file_writer.add_summary(summary_str, step)
            sess.run(training_op, feed_dict={X: X_batch, y: y_batch})
        print("EPOCH", epoch, mse.eval(feed_dict={X: data, y: target}))
    best_theta = theta.eval()
file_writer.close()
print("THETA", *best_theta.ravel())
events = [f for f in os.listdir(logdir) if f.startswith("events.")]
values = []
graph_nodes = 0
for event in tf.train.summary_iterator(os.path.join(logdir, events[0])):
    if event.HasField("graph_def"):
        graph_def = tf.GraphDef()
        graph_def.ParseFromString(event.graph_def)
        graph_nodes = len(graph_def.node)
    for value in event.summary.value:
        values.append(value.simple_value)
print("SUMMARIES", len(values), *values)
print("GRAPH_WRITTEN", int(graph_nodes > 0))
