"""A MonitoredTrainingSession given a `tf.train.Scaffold`, as fine-tuning scripts write it:
a backbone pre-trained by a Session program of its own and saved with a Saver, then a
training graph whose scaffold's `init_fn` restores that backbone through a `tf.train.Saver`
over the backbone's variables (run only when the checkpoint folder has nothing to resume),
and whose `saver=tf.train.Saver(max_to_keep=2)` decides how many checkpoints stay."""
import os
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(3)
DATA = rng.randn(32, 4).astype(np.float32)
TARGET = (DATA[:, :1] * 2.0 - DATA[:, 1:2]).astype(np.float32)


def backbone(x):
    with tf.variable_scope("backbone"):
        return tf.layers.dense(x, 6, activation=tf.nn.tanh, name="dense",
                               kernel_initializer=tf.truncated_normal_initializer(stddev=0.5, seed=1))


def pretrain(path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.float32, [None, 1])
        out = tf.layers.dense(backbone(x), 1, name="pre_head",
                              kernel_initializer=tf.truncated_normal_initializer(stddev=0.3, seed=2))
        loss = tf.reduce_mean(tf.square(out - y))
        train_op = tf.train.AdamOptimizer(0.05).minimize(loss)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                _, value = sess.run([train_op, loss], feed_dict={x: DATA, y: TARGET})
                print("PRETRAIN %.6f" % value)
            saver.save(sess, path)


def train(pretrained, checkpoint_dir):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.float32, [None, 1])
        out = tf.layers.dense(backbone(x), 1, name="head",
                              kernel_initializer=tf.truncated_normal_initializer(stddev=0.3, seed=3))
        loss = tf.reduce_mean(tf.square(out - y))
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
        restorer = tf.train.Saver(tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="backbone"))

        def init_fn(scaffold, session):
            restorer.restore(session, pretrained)

        scaffold = tf.train.Scaffold(init_fn=init_fn, saver=tf.train.Saver(max_to_keep=2))
        with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, scaffold=scaffold,
                                               hooks=[tf.train.StopAtStepHook(last_step=8)],
                                               save_checkpoint_steps=2) as sess:
            while not sess.should_stop():
                _, value = sess.run([train_op, loss], feed_dict={x: DATA, y: TARGET})
                print("TRAIN %.6f" % value)


def main(out):
    pretrained = os.path.join(out, "pretrain", "model")
    pretrain(pretrained)
    train(pretrained, os.path.join(out, "model"))
    kept = sorted(int(p.split("-")[-1].split(".")[0]) for p in os.listdir(os.path.join(out, "model"))
                  if p.endswith(".index"))
    print("KEPT", " ".join(str(k) for k in kept))


if __name__ == "__main__":
    main(sys.argv[1])
