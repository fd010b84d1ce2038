"""The "Deep MNIST for experts" form: an InteractiveSession made first, then the graph,
the initializer run amid it (before the loss and the optimizer exist), then `op.run()`
and `t.eval()` with feeds, and the session closed at the end."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(0)
DATA = rng.rand(48, 6).astype(np.float32)
LABELS = np.eye(3, dtype=np.float32)[DATA[:, :3].argmax(axis=1)]

sess = tf.InteractiveSession()
x = tf.placeholder(tf.float32, shape=[None, 6])
y_ = tf.placeholder(tf.float32, shape=[None, 3])
W = tf.Variable(tf.truncated_normal([6, 3], stddev=0.1, seed=1))
b = tf.Variable(tf.constant(0.1, shape=[3]))
sess.run(tf.global_variables_initializer())
y = tf.matmul(x, W) + b
cross_entropy = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y_, logits=y))
train_step = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)
correct_prediction = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
for i in range(6):
    batch = (DATA[i * 8:(i + 1) * 8], LABELS[i * 8:(i + 1) * 8])
    if i % 2 == 0:
        train_accuracy = accuracy.eval(feed_dict={x: batch[0], y_: batch[1]})
        print("step %d, training accuracy %g" % (i, train_accuracy))
    train_step.run(feed_dict={x: batch[0], y_: batch[1]})
print("test accuracy %g" % accuracy.eval(feed_dict={x: DATA, y_: LABELS}))
print("loss %.6f" % cross_entropy.eval(feed_dict={x: DATA, y_: LABELS}))
sess.close()
