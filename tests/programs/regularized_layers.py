"""Weight decay as TF1 scripts wrote it: tf.layers with kernel_regularizer (tf.contrib's
l2 and l1 regularizers, and a function of the script returning one), the loss adding
tf.losses.get_regularization_loss() and the sum of the REGULARIZATION_LOSSES collection,
trained with momentum."""
import numpy as np
import tensorflow as tf


def scaled_l1(scale):
    def l1(weights):
        return scale * tf.reduce_sum(tf.abs(weights))
    return l1


rng = np.random.RandomState(7)
X_data = rng.randn(96, 5).astype(np.float32)
y_data = (X_data[:, 0] - X_data[:, 1] + 0.5 * X_data[:, 2] > 0).astype(np.int32)

X = tf.placeholder(tf.float32, [None, 5], name="X")
y = tf.placeholder(tf.int32, [None], name="y")
l1_reg = scaled_l1(0.002)
hidden1 = tf.layers.dense(X, 8, activation=tf.nn.relu, name="hidden1",
                          kernel_initializer=tf.constant_initializer(0.1),
                          kernel_regularizer=tf.contrib.layers.l2_regularizer(0.05))
hidden2 = tf.layers.dense(hidden1, 6, activation=tf.nn.relu, name="hidden2",
                          kernel_initializer=tf.constant_initializer(-0.05), kernel_regularizer=l1_reg)
logits = tf.layers.dense(hidden2, 2, name="outputs", kernel_initializer=tf.constant_initializer(0.2),
                         kernel_regularizer=tf.contrib.layers.l1_regularizer(0.01))
base_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
reg_loss = tf.losses.get_regularization_loss()
loss = base_loss + reg_loss
collected = tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
training_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(15):
        _, base_val, reg_val = sess.run([training_op, base_loss, reg_loss], feed_dict={X: X_data, y: y_data})
        print("step", step, "loss", base_val, "regularization", reg_val)
    print("collected", sess.run(collected))
