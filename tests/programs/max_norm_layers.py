"""Max-norm regularization as handson-ml wrote it: a function of the script returns a
regularizer that adds a clip op (`tf.assign` of `tf.clip_by_norm`) to a collection as a side
effect and returns no loss; `tf.layers.dense(..., kernel_regularizer=max_norm_reg)`, the
clip ops read with `tf.get_collection` and run after each training step."""
import numpy as np
import tensorflow as tf


def max_norm_regularizer(threshold, axes=1, name="max_norm", collection="max_norm"):
    def max_norm(weights):
        clipped = tf.clip_by_norm(weights, clip_norm=threshold, axes=axes)
        clip_weights = tf.assign(weights, clipped, name=name)
        tf.add_to_collection(collection, clip_weights)
        return None  # there is no regularization loss term
    return max_norm


tf.set_random_seed(3)
X = tf.placeholder(tf.float32, [None, 6], name="X")
y = tf.placeholder(tf.int64, [None], name="y")
max_norm_reg = max_norm_regularizer(threshold=0.5)
hidden1 = tf.layers.dense(X, 8, activation=tf.nn.relu, kernel_regularizer=max_norm_reg, name="hidden1")
hidden2 = tf.layers.dense(hidden1, 8, activation=tf.nn.relu, kernel_regularizer=max_norm_reg, name="hidden2")
logits = tf.layers.dense(hidden2, 3, name="outputs")
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
training_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
clip_all_weights = tf.get_collection("max_norm")

rng = np.random.RandomState(0)
data = rng.randn(64, 6).astype(np.float32)
labels = (data[:, 0] > 0).astype(np.int64) + (data[:, 1] > 0)
with tf.Session() as sess:
    tf.global_variables_initializer().run()
    for epoch in range(20):
        sess.run(training_op, feed_dict={X: data, y: labels})
        sess.run(clip_all_weights)
        print("EPOCH", epoch, sess.run(loss, feed_dict={X: data, y: labels}))
