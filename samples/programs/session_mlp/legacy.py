"""A TF1 training script: an MLP classifier on a synthetic dataset, trained with Adam from
feed_dict batches inside `with tf.Session()`, a dropout rate fed through
placeholder_with_default, a global step, and a Saver checkpoint."""
import os
import sys

import numpy as np
import tensorflow as tf


def main(model_dir):
    rng = np.random.RandomState(3)
    features = rng.randn(256, 8).astype("float32")
    labels = (features[:, :4].sum(axis=1) > features[:, 4:].sum(axis=1)).astype("int64")

    x = tf.placeholder(tf.float32, [None, 8], name="x")
    y = tf.placeholder(tf.int64, [None], name="y")
    drop = tf.placeholder_with_default(0.0, [], name="drop")
    global_step = tf.train.get_or_create_global_step()
    with tf.variable_scope("mlp"):
        hidden = tf.layers.dense(x, 16, activation=tf.nn.relu, name="hidden",
                                 kernel_initializer=tf.constant_initializer(0.05))
        hidden = tf.nn.dropout(hidden, rate=drop)
        logits = tf.layers.dense(hidden, 2, name="logits",
                                 kernel_initializer=tf.constant_initializer(-0.02))
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    saver = tf.train.Saver()

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = []
        for step in range(24):
            start = (step * 32) % 256
            _, value = sess.run([train_op, loss], feed_dict={x: features[start:start + 32],
                                                            y: labels[start:start + 32]})
            losses.append(value)
        acc, done = sess.run([accuracy, global_step], feed_dict={x: features, y: labels})
        path = saver.save(sess, os.path.join(model_dir, "model.ckpt"), global_step=done)
        print("LOSSES", " ".join("%.6f" % v for v in losses))
        print("ACCURACY", "%.6f" % acc, done)
        print("SAVED", int(os.path.exists(path + ".index")))


if __name__ == "__main__":
    main(sys.argv[1])
