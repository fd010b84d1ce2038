"""A GAN written with tf.contrib.layers: a generator projecting noise through
fully_connected and conv2d_transpose with contrib batch norm, a discriminator of strided
convolutions reused on real and generated images, and summaries of both while the graph
is built."""
import shims.keras2
import tensorflow as tf

tcl = shims.contrib.layers


def generator(z, is_training):
    with tf.compat.v1.variable_scope("generator"):
        net = tcl.fully_connected(z, 4 * 4 * 16, normalizer_fn=tcl.batch_norm,
                                  normalizer_params={"is_training": is_training})
        net = tf.reshape(net, [-1, 4, 4, 16])
        net = tcl.conv2d_transpose(net, 8, [4, 4], stride=2, normalizer_fn=tcl.batch_norm,
                                   normalizer_params={"is_training": is_training})
        net = tcl.conv2d_transpose(net, 3, [4, 4], stride=2, activation_fn=tf.tanh)
        tf.compat.v1.summary.image("generated", net, max_outputs=2)
        return net


def discriminator(images, is_training, reuse=False):
    with tf.compat.v1.variable_scope("discriminator", reuse=reuse):
        net = tcl.conv2d(images, 8, [4, 4], stride=2, activation_fn=tf.nn.leaky_relu)
        net = tcl.conv2d(net, 16, [4, 4], stride=2, activation_fn=tf.nn.leaky_relu,
                         normalizer_fn=tcl.batch_norm,
                         normalizer_params={"is_training": is_training})
        logits = tcl.fully_connected(tcl.flatten(net), 1, activation_fn=None)
        tf.compat.v1.summary.histogram("logits", logits)
        return logits


def build(z, images, is_training=False):
    fake = generator(z, is_training)
    real_logits = discriminator(images, is_training)
    fake_logits = discriminator(fake, is_training, reuse=True)
    tf.compat.v1.summary.scalar("fake_score", tf.reduce_mean(tf.sigmoid(fake_logits)))
    return fake, real_logits, fake_logits
