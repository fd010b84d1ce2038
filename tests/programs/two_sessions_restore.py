"""Save, then restore in a second session, as the save/restore tutorials wrote it: a first
session initializes, trains and saves; a second session runs the initializer again, then
restores the checkpoint and trains on; each session builds the same accuracy ops again
after its training and reads them with .eval()."""
import os
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(5)
FEATURES = rng.randn(64, 6).astype(np.float32)
LABELS = np.eye(3, dtype=np.float32)[(FEATURES[:, :3].argmax(axis=1))]
model_path = os.path.join(sys.argv[1], "model.ckpt")

x = tf.placeholder("float", [None, 6])
y = tf.placeholder("float", [None, 3])
weights = {"h1": tf.Variable(tf.random_normal([6, 8], seed=1)), "out": tf.Variable(tf.random_normal([8, 3], seed=2))}
biases = {"b1": tf.Variable(tf.zeros([8])), "out": tf.Variable(tf.zeros([3]))}
layer = tf.nn.relu(tf.add(tf.matmul(x, weights["h1"]), biases["b1"]))
pred = tf.matmul(layer, weights["out"]) + biases["out"]
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=pred, labels=y))
optimizer = tf.train.AdamOptimizer(learning_rate=0.01).minimize(cost)
init = tf.global_variables_initializer()
saver = tf.train.Saver()

print("Starting 1st session...")
with tf.Session() as sess:
    sess.run(init)
    for epoch in range(4):
        _, c = sess.run([optimizer, cost], feed_dict={x: FEATURES, y: LABELS})
        print("Epoch:", "%04d" % (epoch + 1), "cost=", "{:.9f}".format(c))
    # Test model
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    print("Accuracy:", accuracy.eval({x: FEATURES, y: LABELS}))
    save_path = saver.save(sess, model_path)

print("Starting 2nd session...")
with tf.Session() as sess:
    # Initialize variables
    sess.run(init)
    # Restore model weights from previously saved model
    saver.restore(sess, model_path)
    for epoch in range(4):
        _, c = sess.run([optimizer, cost], feed_dict={x: FEATURES, y: LABELS})
        print("Epoch:", "%04d" % (epoch + 5), "cost=", "{:.9f}".format(c))
    # Test model
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    print("Accuracy:", accuracy.eval({x: FEATURES, y: LABELS}))
