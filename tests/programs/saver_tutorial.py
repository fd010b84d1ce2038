"""The save-and-restore tutorials' form: a global step counted by the optimizer,
`sess = tf.Session()` with no `with`, then `saver = tf.train.Saver(tf.global_variables())`,
the latest checkpoint restored if there is one (else the initializer run), summaries merged
after the session (`merged = tf.summary.merge_all()`, written with a FileWriter given
`sess.graph`), and the checkpoint saved at the global step, restored and trained on from
(a second run of the program starts from the first one's checkpoint)."""
import os
import sys

import numpy as np
import tensorflow as tf

model_dir = sys.argv[1] if len(sys.argv) > 1 else "model"
rng = np.random.RandomState(4)
x_data = rng.rand(24, 2).astype(np.float32)
y_data = np.eye(3, dtype=np.float32)[(x_data[:, 0] * 3).astype(int) % 3]

global_step = tf.Variable(0, trainable=False, name="global_step")
X = tf.placeholder(tf.float32)
Y = tf.placeholder(tf.float32)
with tf.name_scope("layer1"):
    W1 = tf.Variable(tf.random_uniform([2, 10], -1., 1.), name="W1")
    L1 = tf.nn.relu(tf.matmul(X, W1))
with tf.name_scope("output"):
    W2 = tf.Variable(tf.random_uniform([10, 3], -1., 1.), name="W2")
    model = tf.matmul(L1, W2)
with tf.name_scope("optimizer"):
    cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=Y, logits=model))
    train_op = tf.train.AdamOptimizer(learning_rate=0.01).minimize(cost, global_step=global_step)
    tf.summary.scalar("cost", cost)
tf.summary.histogram("Weights", W1)

sess = tf.Session()
saver = tf.train.Saver(tf.global_variables())
ckpt = tf.train.get_checkpoint_state(model_dir)
if ckpt and tf.train.checkpoint_exists(ckpt.model_checkpoint_path):
    saver.restore(sess, ckpt.model_checkpoint_path)
else:
    sess.run(tf.global_variables_initializer())

merged = tf.summary.merge_all()
writer = tf.summary.FileWriter(os.path.join(model_dir, "logs"), sess.graph)
for run in range(2):
    for step in range(5):
        sess.run(train_op, feed_dict={X: x_data, Y: y_data})
        print("STEP", sess.run(global_step), sess.run(cost, feed_dict={X: x_data, Y: y_data}))
        summary = sess.run(merged, feed_dict={X: x_data, Y: y_data})
        writer.add_summary(summary, global_step=sess.run(global_step))
    saver.save(sess, os.path.join(model_dir, "dnn.ckpt"), global_step=global_step)
    ckpt = tf.train.get_checkpoint_state(model_dir)
    saver.restore(sess, ckpt.model_checkpoint_path)

prediction = tf.argmax(model, 1)
print("PREDICTED", *sess.run(prediction, feed_dict={X: x_data[:6]}))
