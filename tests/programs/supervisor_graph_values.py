"""A tf.train.Supervisor given the program's graph values, as the TF1 guides wrote it: an
`init_op`, a `summary_op` (variables only: TF1's summary thread runs it unfed), a `saver` keeping the last 2 checkpoints and a
`global_step` variable of the program's own name (`step`), with `sv.saver.save(sess,
sv.save_path, global_step=sv.global_step)` every other step and the checkpoints kept
printed at the end."""
import os
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(4)
DATA = rng.rand(16, 3).astype(np.float32)
TARGET = (DATA.sum(axis=1, keepdims=True) * 0.5).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 3], name="x")
y = tf.placeholder(tf.float32, [None, 1], name="y")
hidden = tf.layers.dense(x, 4, activation=tf.nn.relu, name="hidden",
                         kernel_initializer=tf.truncated_normal_initializer(stddev=0.5, seed=1))
out = tf.layers.dense(hidden, 1, name="out", kernel_initializer=tf.truncated_normal_initializer(stddev=0.5, seed=2))
loss = tf.reduce_mean(tf.square(out - y))
step = tf.Variable(0, trainable=False, name="step")
train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=step)
summary_op = tf.summary.merge([tf.summary.scalar("step", step)])  # run by TF1's summary thread: no feeds
init_op = tf.global_variables_initializer()
saver = tf.train.Saver(max_to_keep=2)

logdir = sys.argv[1]
sv = tf.train.Supervisor(logdir=logdir, init_op=init_op, summary_op=summary_op, saver=saver,
                         global_step=step, save_model_secs=600)
with sv.managed_session() as sess:
    for i in range(8):
        _, value = sess.run([train_op, loss], feed_dict={x: DATA, y: TARGET})
        print("step %d loss %.6f" % (i, value))
        if i % 2 == 1:
            sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
kept = sorted(int(p.split("-")[-1].split(".")[0]) for p in os.listdir(logdir) if p.endswith(".index"))
print("KEPT", " ".join(str(k) for k in kept))
