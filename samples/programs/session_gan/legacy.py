"""A TF1 GAN on 1-D data: generator and discriminator built with variable scopes and
reuse, two Adam optimizers each restricted to its network's var_list, alternating
updates fed real samples and noise from numpy."""
import numpy as np
import tensorflow as tf


def generator(z):
    with tf.variable_scope("generator"):
        h = tf.layers.dense(z, 16, tf.nn.relu, name="h",
                            kernel_initializer=tf.random_normal_initializer(stddev=0.3, seed=1))
        return tf.layers.dense(h, 1, name="out",
                               kernel_initializer=tf.random_normal_initializer(stddev=0.3, seed=2))


def discriminator(x, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        h = tf.layers.dense(x, 16, tf.nn.relu, name="h",
                            kernel_initializer=tf.random_normal_initializer(stddev=0.3, seed=3))
        return tf.layers.dense(h, 1, name="out",
                               kernel_initializer=tf.random_normal_initializer(stddev=0.3, seed=4))


def main():
    rng = np.random.RandomState(4)
    real = tf.placeholder(tf.float32, [None, 1], name="real")
    noise = tf.placeholder(tf.float32, [None, 4], name="noise")
    fake = generator(noise)
    d_real = discriminator(real)
    d_fake = discriminator(fake, reuse=True)
    bce = tf.nn.sigmoid_cross_entropy_with_logits
    d_loss = tf.reduce_mean(bce(labels=tf.ones_like(d_real), logits=d_real)) + \
        tf.reduce_mean(bce(labels=tf.zeros_like(d_fake), logits=d_fake))
    g_loss = tf.reduce_mean(bce(labels=tf.ones_like(d_fake), logits=d_fake))
    d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
    g_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
    d_step = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(d_loss, var_list=d_vars)
    g_step = tf.train.AdamOptimizer(0.01, beta1=0.5).minimize(g_loss, var_list=g_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        d_losses, g_losses = [], []
        for step in range(20):
            batch = rng.normal(2.0, 0.5, size=(32, 1)).astype("float32")
            z = rng.uniform(-1, 1, size=(32, 4)).astype("float32")
            _, dl = sess.run([d_step, d_loss], feed_dict={real: batch, noise: z})
            _, gl = sess.run([g_step, g_loss], feed_dict={noise: z})
            d_losses.append(dl)
            g_losses.append(gl)
        samples = sess.run(fake, feed_dict={noise: rng.uniform(-1, 1, size=(6, 4)).astype("float32")})
        print("D_LOSSES", " ".join("%.6f" % v for v in d_losses))
        print("G_LOSSES", " ".join("%.6f" % v for v in g_losses))
        print("SAMPLES", " ".join("%.6f" % v for v in samples.ravel()))


if __name__ == "__main__":
    main()
