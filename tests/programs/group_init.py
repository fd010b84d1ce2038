"""init_op = tf.group(global, local) and a loop variable named like a graph value (b)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
features = rng.randn(256, 4).astype(np.float32)
labels = (features.dot([1.0, -1.0, 0.5, 0.0]) > 0).astype(np.float32).reshape(-1, 1)

x = tf.placeholder(tf.float32, shape=[None, 4])
y = tf.placeholder(tf.float32, shape=[None, 1])
w = tf.Variable(tf.random_normal([4, 1], stddev=0.1, seed=1), name="weights")
b = tf.Variable(tf.zeros([1]), name="bias")
logits = tf.matmul(x, w) + b
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
train_op = optimizer.minimize(loss)
init_op = tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())

with tf.Session() as sess:
    sess.run(init_op)
    for step in range(24):
        b = (step % 8) * 32
        _, l = sess.run([train_op, loss], feed_dict={x: features[b:b + 32], y: labels[b:b + 32]})
        if step % 4 == 0:
            print("Epoch:", '%04d' % (step + 1), "cost=", "{:.9f}".format(l))
    print("Done")
