"""A GAN as the GAN tutorials write it (aymericdamien's dcgan): a generator and a
discriminator of tf.layers calls in module functions, each in its variable scope, the
discriminator called twice and sharing its layers (reuse=True at the second call: TF1 names
both calls' layers Discriminator/dense, Discriminator/hidden, ...), each net trained on its
scope's variables (tf.get_collection(..., scope=...)) by its own Adam; a Saver writes the
trained nets into the folder given."""
import os
import sys

import numpy as np
import tensorflow as tf

tf.set_random_seed(2)  # one draw of initial values: the same check in every run

rng = np.random.RandomState(2)
real = rng.rand(64, 6).astype(np.float32)
noise_dim = 4


def generator(z, reuse=False):
    with tf.variable_scope("Generator", reuse=reuse):
        h = tf.layers.dense(z, 8, activation=tf.nn.relu)
        return tf.layers.dense(h, 6, activation=tf.nn.sigmoid)


def discriminator(x, reuse=False):
    with tf.variable_scope("Discriminator", reuse=reuse):
        h = tf.layers.dense(x, 8)
        h = tf.nn.leaky_relu(h, 0.2)
        h = tf.layers.dense(h, 8, activation=tf.nn.tanh, name="hidden")
        h = tf.layers.dense(h, 1, name="logit")
    return h


noise = tf.placeholder(tf.float32, [None, noise_dim])
images = tf.placeholder(tf.float32, [None, 6])
fake = generator(noise)
d_real = discriminator(images)
d_fake = discriminator(fake, reuse=True)
d_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_real, labels=tf.ones_like(d_real))) + \
    tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.zeros_like(d_fake)))
g_loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=d_fake, labels=tf.ones_like(d_fake)))
g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="Generator")
d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="Discriminator")
train_d = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(d_loss, var_list=d_vars)
train_g = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(g_loss, var_list=g_vars)
saver = tf.train.Saver()

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    draws = np.random.RandomState(3)
    for step in range(12):
        batch = real[(step % 4) * 16:(step % 4 + 1) * 16]
        z = draws.uniform(-1., 1., size=[16, noise_dim])
        _, dl = sess.run([train_d, d_loss], feed_dict={images: batch, noise: z})
        _, gl = sess.run([train_g, g_loss], feed_dict={noise: z})
        if step % 3 == 0:
            print("step", step, "d_loss", dl, "g_loss", gl)
    print("sample", sess.run(fake, feed_dict={noise: np.zeros([1, noise_dim])}).ravel().tolist())
    saver.save(sess, os.path.join(sys.argv[1] if len(sys.argv) > 1 else "gan", "gan.ckpt"))
