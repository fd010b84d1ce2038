"""native_step.py's TF1 program: a 64 -> 256 -> 256 -> 2 MLP of tf.layers.dense, trained
with Adam on feed_dict batches of 128 in a Session loop (300 steps), losses printed."""
import numpy as np
import tensorflow as tf

tf.set_random_seed(1)
rng = np.random.RandomState(0)
data = rng.rand(4096, 64).astype(np.float32)
labels = (data[:, :32].sum(axis=1) > data[:, 32:].sum(axis=1)).astype(np.int64)

x = tf.placeholder(tf.float32, [None, 64])
y = tf.placeholder(tf.int64, [None])
hidden = tf.layers.dense(x, 256, tf.nn.relu, name="h1")
hidden = tf.layers.dense(hidden, 256, tf.nn.relu, name="h2")
logits = tf.layers.dense(hidden, 2, name="out")
loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
train = tf.train.AdamOptimizer(0.001).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(300):
        at = (step * 128) % 4096
        _, value = sess.run([train, loss], {x: data[at:at + 128], y: labels[at:at + 128]})
        if step % 50 == 0:
            print("LOSS", step, value)
