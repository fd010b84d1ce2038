"""A research-repo entry point: absl flags, main(argv) under app.run, the model in a
function, a polynomially decayed learning rate on the global step. The graph-level seed
fixes TF1's draws of the weights (verify shares them with the migrated run): Adam at 0.05
on a Huber loss amplifies float rounding, and an unseeded draw once ended 1e-4 apart
after 25 steps, above verify's tolerance."""
import numpy as np
import tensorflow as tf
from absl import app, flags

FLAGS = flags.FLAGS
flags.DEFINE_integer("train_steps", 25, "steps")
flags.DEFINE_integer("batch", 16, "batch size")


def model(x):
    h = tf.layers.dense(x, 16, activation=tf.nn.elu, name="fc1")
    h = tf.layers.dense(h, 16, activation=tf.nn.elu, name="fc2")
    return tf.squeeze(tf.layers.dense(h, 1, name="out"), axis=1)


def main(argv):
    del argv
    tf.set_random_seed(1)
    rng = np.random.RandomState(8)
    data = rng.uniform(-1, 1, (64, 2)).astype(np.float32)
    target = np.sin(3 * data[:, 0]) * data[:, 1]
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = tf.placeholder(tf.float32, [None], name="y")
    pred = model(x)
    loss = tf.losses.huber_loss(y, pred)
    step = tf.train.get_or_create_global_step()
    lr = tf.train.polynomial_decay(0.05, step, FLAGS.train_steps, 0.005)
    train_op = tf.train.AdamOptimizer(lr).minimize(loss, global_step=step)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(FLAGS.train_steps):
            start = (i * FLAGS.batch) % 64
            _, loss_value, lr_value = sess.run([train_op, loss, lr],
                                               {x: data[start:start + FLAGS.batch], y: target[start:start + FLAGS.batch]})
            if i % 4 == 0:
                print("I1125 step=%d loss=%.6f lr=%.5f" % (i, loss_value, lr_value))


if __name__ == "__main__":
    app.run(main)
