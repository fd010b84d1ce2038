"""A conditional GAN as the GAN tutorials wrote it: module-level placeholders, a generator
and a discriminator of unnamed `tf.layers.dense` calls in functions, the discriminator
called twice and sharing its weights through `scope.reuse_variables()` (TF1 names both
calls' layers `discriminator/dense`, `discriminator/dense_1`), each net trained on its own
scope's variables (`tf.get_collection(..., scope=...)`); a module-level head whose layer
takes an initializer bound above it and a dropout given a placeholder where the noise
shape goes (`tf.layers.dropout(h, 0.3, is_training)`: TF1 never drops there)."""
import numpy as np
import tensorflow as tf

tf.set_random_seed(5)  # one draw of initial values: the same check in every run

rng = np.random.RandomState(5)
images = rng.rand(64, 6).astype(np.float32)
labels = np.eye(3, dtype=np.float32)[rng.randint(0, 3, 64)]

X = tf.placeholder(tf.float32, [None, 6])
Y = tf.placeholder(tf.float32, [None, 3])
Z = tf.placeholder(tf.float32, [None, 4])
is_training = tf.placeholder(tf.bool)


def generator(noise, labels):
    with tf.variable_scope("generator"):
        inputs = tf.concat([noise, labels], 1)
        hidden = tf.layers.dense(inputs, 8, activation=tf.nn.relu)
        return tf.layers.dense(hidden, 6, activation=tf.nn.sigmoid)


def discriminator(inputs, labels, reuse=None):
    with tf.variable_scope("discriminator") as scope:
        if reuse:
            scope.reuse_variables()
        inputs = tf.concat([inputs, labels], 1)
        hidden = tf.layers.dense(inputs, 8, activation=tf.nn.relu)
        return tf.layers.dense(hidden, 1, activation=None)


G = generator(Z, Y)
D_real = discriminator(X, Y)
D_gene = discriminator(G, Y, True)
loss_D = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=D_real, labels=tf.ones_like(D_real))) + \
    tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=D_gene, labels=tf.zeros_like(D_gene)))
loss_G = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(logits=D_gene, labels=tf.ones_like(D_gene)))
vars_D = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="discriminator")
vars_G = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="generator")
train_D = tf.train.AdamOptimizer(0.01).minimize(loss_D, var_list=vars_D)
train_G = tf.train.AdamOptimizer(0.01).minimize(loss_G, var_list=vars_G)

head_init = tf.random_normal_initializer(0., .1)
head = tf.layers.dense(G, 3, kernel_initializer=head_init, name="head")
head = tf.layers.dropout(head, 0.3, is_training)

sess = tf.Session()
sess.run(tf.global_variables_initializer())
noise = np.random.RandomState(6)
for epoch in range(3):
    for i in range(0, 64, 16):
        z = noise.uniform(-1., 1., size=[16, 4])
        _, d = sess.run([train_D, loss_D], {X: images[i:i + 16], Y: labels[i:i + 16], Z: z})
        _, g = sess.run([train_G, loss_G], {Y: labels[i:i + 16], Z: z})
    print("EPOCH", epoch, d, g)
print("HEAD", *sess.run(head, {Y: labels[:2], Z: np.zeros((2, 4)), is_training: True}).ravel())
