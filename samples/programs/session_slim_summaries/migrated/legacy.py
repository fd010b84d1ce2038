"""A TF1 training script on tf.contrib.slim, as slim users wrote them: an arg_scope giving
conv and fully connected layers batch norm, a global step from tf.contrib.framework, the
moving averages updated through UPDATE_OPS, summaries merged with merge_all and written
by a FileWriter every few steps, and the event file read back at the end."""
import shims.keras2
import glob
import os
import sys

import numpy as np
import tensorflow as tf
import tf_slim as slim


def network(images, is_training):
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        normalizer_fn=shims.contrib.batch_norm,
                        normalizer_params={"is_training": is_training, "decay": 0.9},
                        weights_initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.1, seed=1)):
        net = slim.conv2d(images, 6, [3, 3], scope="conv1")
        net = slim.max_pool2d(net, [2, 2], scope="pool1")
        net = slim.fully_connected(slim.flatten(net), 8, scope="fc1")
    return slim.fully_connected(net, 2, activation_fn=None, normalizer_fn=None, scope="logits")


def main():
    # one graph-level seed: every run starts from the same weights (unseeded, each TF1 run drew
    # its own, and Adam after batch norm turns the last-digit differences of some draws into
    # weight differences above verify's tolerance)
    tf.compat.v1.set_random_seed(1)
    log_dir = os.path.join(sys.argv[1], "logs")
    rng = np.random.RandomState(4)
    images = rng.rand(64, 8, 8, 1).astype("float32")
    labels = (images[:, :4].mean(axis=(1, 2, 3)) > images[:, 4:].mean(axis=(1, 2, 3))).astype("int64")
    def build_graph(x, y, is_training):
        tf.compat.v1.set_random_seed(1)
        logits = network(x, is_training)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(y, logits)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        global_step = shims.contrib.framework.get_or_create_global_step()
        tf.compat.v1.summary.scalar("loss", loss)
        tf.compat.v1.summary.histogram("logits", logits)
        merged = tf.compat.v1.summary.merge_all()
        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
        return {"merged": merged, "train_op": train_op, "loss": loss, "accuracy": accuracy, "global_step": global_step}
    program = shims.GraphProgram(build_graph, x=tf.TensorSpec([None, 8, 8, 1], tf.float32), y=tf.TensorSpec([None], tf.int64), is_training=tf.TensorSpec([], tf.bool))
    writer = shims.summary.FileWriter(log_dir)
    losses = []
    for step in range(24):
        start = (step * 16) % 64
        feed = {"x": images[start:start + 16], "y": labels[start:start + 16], "is_training": True}
        summary, _, value = program.run(["merged", "train_op", "loss"], **feed)
        if step % 6 == 0:
            writer.add_summary(summary, step)
        losses.append(value)
    writer.close()
    acc = program.run("accuracy", x=images, y=labels, is_training=False)
    print("LOSSES", " ".join("%.6f" % v for v in losses))
    print("EVAL", "%.6f" % acc)
    print("STEP", program.run("global_step"))

    logged = []
    for path in glob.glob(os.path.join(log_dir, "events.*")):
        for event in tf.compat.v1.train.summary_iterator(path):
            logged += [(event.step, v.simple_value) for v in event.summary.value if v.tag == "loss"]
    print("LOGGED_LOSS", " ".join("%d %.6f" % pair for pair in sorted(logged)))


if __name__ == "__main__":
    main()
