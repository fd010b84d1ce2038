"""Monitored sessions as scripts write them outside a `with`: `sess =
tf.train.MonitoredTrainingSession(...)` driven by `while not sess.should_stop()` and closed
by `sess.close()` (the last step's checkpoint is written then), then, in a graph of its own
(the cifar10_eval form), `tf.train.MonitoredSession(session_creator=
tf.train.ChiefSessionCreator(checkpoint_dir=...))` restoring what training wrote."""
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(4)
FEATURES = rng.randn(96, 4).astype(np.float32)
TARGETS = np.tanh(FEATURES.dot(rng.randn(4, 1))).astype(np.float32)


def model(x):
    hidden = tf.layers.dense(x, 6, activation=tf.nn.relu, name="hidden",
                             kernel_initializer=tf.truncated_normal_initializer(stddev=0.4, seed=1))
    return tf.layers.dense(hidden, 1, name="out",
                           kernel_initializer=tf.truncated_normal_initializer(stddev=0.4, seed=2))


def train(model_dir):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        loss = tf.reduce_mean(tf.square(model(x) - y))
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=global_step)
        sess = tf.train.MonitoredTrainingSession(checkpoint_dir=model_dir, save_checkpoint_steps=10,
                                                 hooks=[tf.train.StopAtStepHook(last_step=25)])
        losses, i = [], 0
        while not sess.should_stop():
            batch = slice((i * 16) % 96, (i * 16) % 96 + 16)
            _, value = sess.run([train_op, loss], feed_dict={x: FEATURES[batch], y: TARGETS[batch]})
            losses.append(value)
            i += 1
        sess.close()
        print("LOSSES", " ".join("%.6f" % v for v in losses))


def predict(model_dir):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        pred = model(x)
        global_step = tf.train.get_or_create_global_step()
        creator = tf.train.ChiefSessionCreator(checkpoint_dir=model_dir)
        with tf.train.MonitoredSession(session_creator=creator) as session:
            values, step = session.run([pred, global_step], feed_dict={x: FEATURES[:12]})
        print("PREDICTIONS", " ".join("%.6f" % v for v in values.ravel()))
        print("STEP", step)


if __name__ == "__main__":
    train(sys.argv[1])
    predict(sys.argv[1])
