"""Graph expressions fetched where they are written, as tutorials evaluate a model:
`sess.run(tf.argmax(logits, 1), ...)` for predictions, an accuracy built inside the run
call, arithmetic on a loss (`loss * 100`), and a dict of fetches mixing names and
expressions. (Seeded: 12 Adam steps at 0.05 from an unlucky draw of initial values carried
TF 1.15's and TF 2.21's rounding past 1e-5 in the final variables; from this one they stay
within a fifth of it.)"""
from __future__ import print_function

import numpy as np
import tensorflow as tf

tf.set_random_seed(2)
rng = np.random.RandomState(3)
features = rng.rand(64, 5).astype(np.float32)
classes = (features.sum(axis=1) > 2.5).astype(np.int64)

x = tf.placeholder(tf.float32, [None, 5], name="x")
y = tf.placeholder(tf.int64, [None], name="y")
hidden = tf.layers.dense(x, 8, activation=tf.nn.tanh, name="hidden")
logits = tf.layers.dense(hidden, 2, name="logits")
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.AdamOptimizer(0.05).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(12):
        batch = slice((step % 4) * 16, (step % 4 + 1) * 16)
        _, value = sess.run([train_op, loss], feed_dict={x: features[batch], y: classes[batch]})
        print("step %d loss %.6f scaled %.4f" % (
            step, value, sess.run(loss * 100, {x: features[batch], y: classes[batch]})))
    predictions = sess.run(tf.argmax(logits, 1), feed_dict={x: features[:8]})
    print("predictions", predictions.tolist())
    accuracy = sess.run(tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32)),
                        feed_dict={x: features, y: classes})
    print("accuracy %.6f" % accuracy)
    out = sess.run({"loss": loss, "probs": tf.nn.softmax(logits)[:2]}, feed_dict={x: features, y: classes})
    print("final", out["loss"], out["probs"].tolist())
