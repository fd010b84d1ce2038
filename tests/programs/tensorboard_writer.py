"""The TensorBoard tutorial form: scalar and histogram summaries in the graph code, then in
the session's block a ``FileWriter`` given ``sess.graph`` and ``merged =
tf.summary.merge_all()``, the merged summary fetched with the training op and added to the
writer every epoch. The program reads back what it wrote."""
from __future__ import print_function

import tempfile

import numpy as np
import tensorflow as tf

tf.set_random_seed(5)  # one draw of initial values: the same check in every run

rng = np.random.RandomState(5)
data_x = rng.randn(64, 5).astype(np.float32)
data_y = (data_x.dot(rng.randn(5, 1)) + 0.3).astype(np.float32)

X = tf.placeholder(tf.float32, [None, 5], name="X")
Y = tf.placeholder(tf.float32, [None, 1], name="Y")
with tf.name_scope("model"):
    W = tf.Variable(tf.zeros([5, 1]), name="W")
    b = tf.Variable(tf.zeros([1]), name="b")
    prediction = tf.matmul(X, W) + b
with tf.name_scope("cost"):
    cost = tf.reduce_mean(tf.square(prediction - Y))
    train_op = tf.train.AdamOptimizer(0.05).minimize(cost)
    tf.summary.scalar("cost", cost)
tf.summary.histogram("weights", W)

logdir = tempfile.mkdtemp()
with tf.Session() as sess:
    writer = tf.summary.FileWriter(logdir, sess.graph)
    merged = tf.summary.merge_all()
    tf.global_variables_initializer().run()
    for epoch in range(6):
        for start in range(0, 64, 16):
            sess.run(train_op, feed_dict={X: data_x[start:start + 16], Y: data_y[start:start + 16]})
        summary, c = sess.run([merged, cost], feed_dict={X: data_x, Y: data_y})
        writer.add_summary(summary, epoch)
        values = {v.tag: v for v in tf.Summary.FromString(summary).value}
        print("COST", c, values["cost/cost"].simple_value, values["weights"].histo.num)
    writer.close()

events = [tf.Event.FromString(record) for path in tf.gfile.Glob(logdir + "/events.*")
          for record in tf.python_io.tf_record_iterator(path)]
print("GRAPH", int(any(e.HasField("graph_def") for e in events)))
print("WRITTEN", [v.simple_value for e in events for v in e.summary.value if v.tag == "cost/cost"][-1])
