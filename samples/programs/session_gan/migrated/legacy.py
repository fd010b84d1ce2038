"""A TF1 GAN on 1-D data: generator and discriminator built with variable scopes and
reuse, two Adam optimizers each restricted to its network's var_list, alternating
updates fed real samples and noise from numpy."""
import shims.keras2
import numpy as np
import tensorflow as tf


def generator(z):
    with tf.compat.v1.variable_scope("generator"):
        h = shims.get_or_create_layer("h", lambda: tf.keras.layers.Dense(16, activation=tf.nn.relu, kernel_initializer=tf.compat.v1.random_normal_initializer(stddev=0.3, seed=1), name="h"))(z)
        return shims.get_or_create_layer("out", lambda: tf.keras.layers.Dense(1, kernel_initializer=tf.compat.v1.random_normal_initializer(stddev=0.3, seed=2), name="out"))(h)


def discriminator(x, reuse=False):
    with tf.compat.v1.variable_scope("discriminator", reuse=reuse):
        h = shims.get_or_create_layer("h", lambda: tf.keras.layers.Dense(16, activation=tf.nn.relu, kernel_initializer=tf.compat.v1.random_normal_initializer(stddev=0.3, seed=3), name="h"))(x)
        return shims.get_or_create_layer("out", lambda: tf.keras.layers.Dense(1, kernel_initializer=tf.compat.v1.random_normal_initializer(stddev=0.3, seed=4), name="out"))(h)


def main():
    rng = np.random.RandomState(4)
    bce = tf.nn.sigmoid_cross_entropy_with_logits
    def build_graph(real, noise):
        fake = generator(noise)
        d_real = discriminator(real)
        d_fake = discriminator(fake, reuse=True)
        d_loss = tf.reduce_mean(bce(labels=tf.ones_like(d_real), logits=d_real)) + \
        tf.reduce_mean(bce(labels=tf.zeros_like(d_fake), logits=d_fake))
        g_loss = tf.reduce_mean(bce(labels=tf.ones_like(d_fake), logits=d_fake))
        d_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
        g_vars = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
        d_step = tf.compat.v1.train.AdamOptimizer(0.01, beta1=0.5).minimize(d_loss, var_list=d_vars)
        g_step = tf.compat.v1.train.AdamOptimizer(0.01, beta1=0.5).minimize(g_loss, var_list=g_vars)
        return {"d_step": d_step, "d_loss": d_loss, "g_step": g_step, "g_loss": g_loss, "fake": fake}
    program = shims.GraphProgram(build_graph, real=tf.TensorSpec([None, 1], tf.float32), noise=tf.TensorSpec([None, 4], tf.float32))
    d_losses, g_losses = [], []
    for step in range(20):
        batch = rng.normal(2.0, 0.5, size=(32, 1)).astype("float32")
        z = rng.uniform(-1, 1, size=(32, 4)).astype("float32")
        _, dl = program.run(["d_step", "d_loss"], real=batch, noise=z)
        _, gl = program.run(["g_step", "g_loss"], noise=z)
        d_losses.append(dl)
        g_losses.append(gl)
    samples = program.run("fake", noise=rng.uniform(-1, 1, size=(6, 4)).astype("float32"))
    print("D_LOSSES", " ".join("%.6f" % v for v in d_losses))
    print("G_LOSSES", " ".join("%.6f" % v for v in g_losses))
    print("SAMPLES", " ".join("%.6f" % v for v in samples.ravel()))


if __name__ == "__main__":
    main()
