"""A small GAN tutorial's form: weights kept in dicts, network functions taking them as
defaults (`def G(z, w=g_weights)`: the default is a graph value, read when the function is
defined), and a run that fetches a new call of one (`sess.run(G(z), feed_dict=...)`, which
TF1 built into the graph on each such run, sharing the weights)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
real = rng.rand(64, 6).astype(np.float32)
z_size, x_size, hidden = 4, 6, 8


def init(shape):
    return tf.random_normal(shape=shape, stddev=1.0 / shape[0], seed=7)


z = tf.placeholder('float', shape=(None, z_size))
X = tf.placeholder('float', shape=(None, x_size))
g_weights = {
    'w1': tf.Variable(init(shape=(z_size, hidden))),
    'b1': tf.Variable(tf.zeros(shape=[hidden])),
    'out': tf.Variable(init(shape=(hidden, x_size))),
}
d_weights = {
    'w1': tf.Variable(init(shape=(x_size, hidden))),
    'out': tf.Variable(init(shape=(hidden, 1))),
}


def G(z, w=g_weights):
    h1 = tf.tanh(tf.matmul(z, w['w1']) + w['b1'])
    return tf.matmul(h1, w['out'])


def D(x, w=d_weights):
    return tf.matmul(tf.tanh(tf.matmul(x, w['w1'])), w['out'])


dout_real = D(X)
dout_fake = D(G(z))
G_obj = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=dout_fake, labels=tf.ones_like(dout_fake)))
D_obj = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=dout_real, labels=tf.ones_like(dout_real))) \
    + tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=dout_fake, labels=tf.zeros_like(dout_fake)))
G_opt = tf.train.GradientDescentOptimizer(0.5).minimize(G_obj, var_list=list(g_weights.values()))
D_opt = tf.train.GradientDescentOptimizer(0.5).minimize(D_obj, var_list=list(d_weights.values()))


def noise(n):
    return rng.normal(size=(n, z_size))


with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(12):
        batch = real[(i * 16) % 64:(i * 16) % 64 + 16]
        sess.run(D_opt, feed_dict={X: batch, z: noise(16)})
        sess.run(G_opt, feed_dict={z: noise(16)})
        g_cost = sess.run(G_obj, feed_dict={z: noise(16)})
        sample = sess.run(G(z), feed_dict={z: noise(2)})
        print("STEP", i, g_cost, sample.max(), sample.min())
