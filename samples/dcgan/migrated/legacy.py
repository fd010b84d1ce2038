"""A DCGAN-style generator and discriminator: conv2d_transpose with batch norm,
leaky-ReLU convolutions, and the discriminator reused on real and generated
images through `reuse=True`."""
import shims.keras2
import tensorflow as tf


def generator(z, training):
    with tf.compat.v1.variable_scope("generator"):
        x = shims.get_or_create_layer("project", lambda: tf.keras.layers.Dense(4 * 4 * 32, name="project"))(z)
        x = tf.reshape(x, [-1, 4, 4, 32])
        x = tf.nn.relu(shims.get_or_create_layer("bn0", lambda: tf.keras.layers.BatchNormalization(name="bn0"))(x, training=training))
        x = shims.get_or_create_layer("deconv1", lambda: tf.keras.layers.Conv2DTranspose(16, 5, strides=2, padding="same", name="deconv1"))(x)
        x = tf.nn.relu(shims.get_or_create_layer("bn1", lambda: tf.keras.layers.BatchNormalization(name="bn1"))(x, training=training))
        x = shims.get_or_create_layer("deconv2", lambda: tf.keras.layers.Conv2DTranspose(3, 5, strides=2, padding="same", name="deconv2"))(x)
        return tf.tanh(x)


def discriminator(images, reuse=False):
    with tf.compat.v1.variable_scope("discriminator", reuse=reuse):
        x = shims.get_or_create_layer("conv1", lambda: tf.keras.layers.Conv2D(16, 5, strides=2, padding="same", name="conv1"))(images)
        x = tf.nn.leaky_relu(x, alpha=0.2)
        x = shims.get_or_create_layer("conv2", lambda: tf.keras.layers.Conv2D(32, 5, strides=2, padding="same", name="conv2"))(x)
        x = tf.nn.leaky_relu(x, alpha=0.2)
        x = shims.get_or_create_layer(None, lambda: tf.keras.layers.Flatten(), default_name="flatten")(x)
        return shims.get_or_create_layer("logit", lambda: tf.keras.layers.Dense(1, name="logit"))(x)


def build(z, images, training=False):
    fake = generator(z, training)
    real_logit = discriminator(images)
    fake_logit = discriminator(fake, reuse=True)
    return fake, real_logit, fake_logit
