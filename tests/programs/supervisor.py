"""The PTB tutorial's form: a tf.train.Supervisor over a log folder, managed_session(),
sv.should_stop() in the loop, a global step, and sv.saver.save(sess, path,
global_step=sv.global_step) when training ends. Run again on the same folder, the managed
session restores the latest checkpoint and training goes on from there."""
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

logdir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
rng = np.random.RandomState(3)
data = rng.randn(24, 4).astype(np.float32)
target = (data.dot([[0.5], [-1.0], [2.0], [0.0]]) + 0.25).astype(np.float32)

with tf.name_scope("model"):
    inputs = tf.placeholder(tf.float32, [None, 4], name="inputs")
    targets = tf.placeholder(tf.float32, [None, 1], name="targets")
hidden = tf.layers.dense(inputs, 5, activation=tf.nn.relu, name="hidden")
output = tf.layers.dense(hidden, 1, name="output")
loss = tf.losses.mean_squared_error(targets, output)
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.RMSPropOptimizer(0.01).minimize(loss, global_step=global_step)

sv = tf.train.Supervisor(logdir=logdir)
with sv.managed_session() as session:
    for epoch in range(12):
        if sv.should_stop():
            break
        _, cost, step = session.run([train_op, loss, global_step],
                                    feed_dict={inputs: data, targets: target})
        print("step %d cost %.6f" % (step, cost))
    saved = sv.saver.save(session, os.path.join(logdir, "final"), global_step=sv.global_step)
    print("saved at step %s" % saved.rsplit("-", 1)[1])
