"""Placeholders created under name/variable scopes; a keep_prob placeholder with dropout."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(7)
X = rng.rand(200, 10).astype(np.float32)
Y = np.eye(3)[rng.randint(0, 3, 200)].astype(np.float32)

with tf.name_scope("input"):
    x = tf.placeholder(tf.float32, [None, 10], name="x-input")
    y_ = tf.placeholder(tf.float32, [None, 3], name="y-input")
with tf.variable_scope("layer1"):
    w1 = tf.get_variable("weights", [10, 16], initializer=tf.truncated_normal_initializer(stddev=0.1, seed=2))
    b1 = tf.get_variable("biases", [16], initializer=tf.constant_initializer(0.1))
    h1 = tf.nn.relu(tf.matmul(x, w1) + b1)
with tf.name_scope("dropout"):
    keep_prob = tf.placeholder(tf.float32)
    dropped = tf.nn.dropout(h1, keep_prob)
with tf.variable_scope("layer2"):
    w2 = tf.get_variable("weights", [16, 3], initializer=tf.truncated_normal_initializer(stddev=0.1, seed=3))
    b2 = tf.get_variable("biases", [3], initializer=tf.constant_initializer(0.1))
    y = tf.matmul(dropped, w2) + b2
with tf.name_scope("cross_entropy"):
    cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y))
with tf.name_scope("train"):
    train_step = tf.train.AdamOptimizer(0.01).minimize(cross_entropy)
with tf.name_scope("accuracy"):
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1)), tf.float32))

sess = tf.InteractiveSession()
tf.global_variables_initializer().run()
for i in range(30):
    if i % 10 == 0:
        acc = sess.run(accuracy, feed_dict={x: X, y_: Y, keep_prob: 1.0})
        print("Accuracy at step %s: %s" % (i, acc))
    sess.run(train_step, feed_dict={x: X[:50], y_: Y[:50], keep_prob: 1.0})
print("final loss", cross_entropy.eval(feed_dict={x: X, y_: Y, keep_prob: 1.0}))
