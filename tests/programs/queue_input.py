"""Queue-runner input, as TF1 tutorials read data: slice_input_producer over numpy arrays,
tf.train.batch, a Coordinator and start_queue_runners (one thread, no shuffling: a fixed
order). Batches span epochs (no num_epochs), as the queue kept filling."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(6)
features = rng.randn(40, 3).astype(np.float32)
labels = (features.sum(axis=1, keepdims=True) > 0).astype(np.float32)

feature, label = tf.train.slice_input_producer([features, labels], shuffle=False)
x, y = tf.train.batch([feature, label], batch_size=6, num_threads=1)
w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
logits = tf.matmul(x, w) + b
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    for step in range(10):
        _, l = sess.run([train_op, loss])
        print("step %d loss %.6f" % (step, l))
    coord.request_stop()
    coord.join(threads)
