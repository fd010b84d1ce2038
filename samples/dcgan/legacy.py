"""A DCGAN-style generator and discriminator: conv2d_transpose with batch norm,
leaky-ReLU convolutions, and the discriminator reused on real and generated
images through `reuse=True`."""
import tensorflow as tf


def generator(z, training):
    with tf.variable_scope("generator"):
        x = tf.layers.dense(z, 4 * 4 * 32, name="project")
        x = tf.reshape(x, [-1, 4, 4, 32])
        x = tf.nn.relu(tf.layers.batch_normalization(x, training=training, name="bn0"))
        x = tf.layers.conv2d_transpose(x, 16, 5, strides=2, padding="same", name="deconv1")
        x = tf.nn.relu(tf.layers.batch_normalization(x, training=training, name="bn1"))
        x = tf.layers.conv2d_transpose(x, 3, 5, strides=2, padding="same", name="deconv2")
        return tf.tanh(x)


def discriminator(images, reuse=False):
    with tf.variable_scope("discriminator", reuse=reuse):
        x = tf.layers.conv2d(images, 16, 5, strides=2, padding="same", name="conv1")
        x = tf.nn.leaky_relu(x, alpha=0.2)
        x = tf.layers.conv2d(x, 32, 5, strides=2, padding="same", name="conv2")
        x = tf.nn.leaky_relu(x, alpha=0.2)
        x = tf.layers.flatten(x)
        return tf.layers.dense(x, 1, name="logit")


def build(z, images, training=False):
    fake = generator(z, training)
    real_logit = discriminator(images)
    fake_logit = discriminator(fake, reuse=True)
    return fake, real_logit, fake_logit
