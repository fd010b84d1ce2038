"""A TF1 CNN training script: conv + batch norm + dropout driven by an `is_training`
placeholder, the batch-norm moving averages updated through UPDATE_OPS control
dependencies, a Momentum optimizer, and an evaluation pass in inference mode at the end."""
import shims.keras2
import sys

import numpy as np
import tensorflow as tf


def main():
    rng = np.random.RandomState(9)
    images = rng.rand(96, 8, 8, 1).astype("float32")
    labels = (images[:, :, :4].mean(axis=(1, 2, 3)) > images[:, :, 4:].mean(axis=(1, 2, 3))).astype("int64")
    def build_graph(x, y, is_training):
        net = shims.get_or_create_layer("conv1", lambda: tf.keras.layers.Conv2D(6, 3, padding="same", kernel_initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.1, seed=1), name="conv1"))(x)
        net = shims.get_or_create_layer("bn1", lambda: tf.keras.layers.BatchNormalization(momentum=0.9, name="bn1"))(net, training=is_training)
        net = tf.nn.relu(net)
        net = shims.get_or_create_layer(None, lambda: tf.keras.layers.MaxPooling2D(2, strides=2), default_name="max_pooling2d")(net)
        net = shims.get_or_create_layer(None, lambda: tf.keras.layers.Flatten(), default_name="flatten")(net)
        net = shims.dropout(net, rate=0.25, training=is_training, seed=3)
        logits = shims.get_or_create_layer("logits", lambda: tf.keras.layers.Dense(2, kernel_initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.1, seed=2), name="logits"))(net)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(y, logits)
        update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = tf.compat.v1.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        moving_mean = [v for v in tf.compat.v1.global_variables() if v.name == "bn1/moving_mean:0"][0]
        return {"train_op": train_op, "loss": loss, "accuracy": accuracy, "moving_mean": moving_mean}
    program = shims.GraphProgram(build_graph, x=tf.TensorSpec([None, 8, 8, 1], tf.float32), y=tf.TensorSpec([None], tf.int64), is_training=tf.TensorSpec([], tf.bool))
    losses = []
    for step in range(24):
        start = (step * 16) % 96
        _, value = program.run(["train_op", "loss"], x=images[start:start + 16], y=labels[start:start + 16], is_training=True)
        losses.append(value)
    acc, test_loss = program.run(["accuracy", "loss"], x=images, y=labels, is_training=False)
    print("LOSSES", " ".join("%.6f" % v for v in losses))
    print("EVAL", "%.6f %.6f" % (acc, test_loss))
    print("MOVING_MEAN", " ".join("%.6f" % v for v in program.run("moving_mean")))


if __name__ == "__main__":
    main()
