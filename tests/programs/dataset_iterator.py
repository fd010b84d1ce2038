"""tf.data input: a one-shot iterator's get_next() feeding the model, no placeholders."""
import numpy as np
import tensorflow as tf

tf.set_random_seed(4)  # one draw of initial values: the same check in every run

rng = np.random.RandomState(4)
xs = rng.randn(120, 3).astype(np.float32)
ys = (xs.dot([[0.5], [-1.0], [2.0]]) + 0.1).astype(np.float32)

dataset = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(20).repeat()
iterator = dataset.make_one_shot_iterator()
features, labels = iterator.get_next()
w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
pred = tf.matmul(features, w) + b
loss = tf.losses.mean_squared_error(labels, pred)
train = tf.train.AdagradOptimizer(0.3).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(18):
        _, l = sess.run([train, loss])
        if step % 3 == 0:
            print("step: %d loss: %.6f" % (step, l))
