"""Variables given Python values in the training loop, as the save/restore tutorials and
char-rnn's trainer wrote them: ``sess.run(tf.assign(lr, base * decay ** epoch))`` each
epoch, ``sess.run(last_epoch.assign(epoch + 1))`` before a save, ``sess.run(tf.assign_add(seen, 16))``;
the Saver made after the session, restoring the last checkpoint if there is one
(``tf.train.get_checkpoint_state``) and resuming from the epoch it stored."""
import os
import sys

import numpy as np
import tensorflow as tf

model_dir = sys.argv[1] if len(sys.argv) > 1 else "/tmp/python_value_assigns"
rng = np.random.RandomState(4)
x_data = rng.randn(64, 5).astype(np.float32)
y_data = (x_data @ rng.randn(5, 1) + 0.3).astype(np.float32)

X = tf.placeholder(tf.float32, [None, 5])
Y = tf.placeholder(tf.float32, [None, 1])
W = tf.get_variable("W", [5, 1], initializer=tf.glorot_uniform_initializer(seed=7))
b = tf.Variable(tf.zeros([1]), name="b")
lr = tf.Variable(0.0, trainable=False, name="lr")
last_epoch = tf.Variable(0, name="last_epoch")
seen = tf.Variable(0, name="seen")
cost = tf.reduce_mean(tf.square(tf.matmul(X, W) + b - Y))
train = tf.train.MomentumOptimizer(lr, 0.9).minimize(cost)

sess = tf.Session()
sess.run(tf.global_variables_initializer())
saver = tf.train.Saver(max_to_keep=2)
for run in range(2):  # the second run resumes from the first one's checkpoint
    checkpoint = tf.train.get_checkpoint_state(model_dir)
    if checkpoint and checkpoint.model_checkpoint_path:
        saver.restore(sess, checkpoint.model_checkpoint_path)
        print("RESTORED", run)
    start_from = sess.run(last_epoch)
    print("START", start_from)
    for epoch in range(start_from, 3 * (run + 1)):
        rate = sess.run(tf.assign(lr, 0.05 * (0.8 ** epoch)))
        for i in range(0, 64, 16):
            c, _ = sess.run([cost, train], feed_dict={X: x_data[i:i + 16], Y: y_data[i:i + 16]})
            seen_now = sess.run(tf.assign_add(seen, 16))
        print("EPOCH", epoch, rate, c, seen_now)
        sess.run(last_epoch.assign(epoch + 1))
        saver.save(sess, os.path.join(model_dir, "model"), global_step=epoch)
print("FINAL", *sess.run(W).ravel(), *sess.run(b), sess.run(lr), sess.run(last_epoch))
sess.close()
