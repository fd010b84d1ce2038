"""A TF1 training script: an MLP classifier on a synthetic dataset, trained with Adam from
feed_dict batches inside `with tf.Session()`, a dropout rate fed through
placeholder_with_default, a global step, and a Saver checkpoint."""
import shims.keras2
import os
import sys

import numpy as np
import tensorflow as tf


def main(model_dir):
    rng = np.random.RandomState(3)
    features = rng.randn(256, 8).astype("float32")
    labels = (features[:, :4].sum(axis=1) > features[:, 4:].sum(axis=1)).astype("int64")
    def build_graph(x, y, drop):
        global_step = tf.compat.v1.train.get_or_create_global_step()
        with tf.compat.v1.variable_scope("mlp"):
            hidden = shims.get_or_create_layer("hidden", lambda: tf.keras.layers.Dense(16, activation=tf.nn.relu, kernel_initializer=tf.compat.v1.constant_initializer(0.05), name="hidden"))(x)
            hidden = tf.nn.dropout(hidden, rate=drop)
            logits = shims.get_or_create_layer("logits", lambda: tf.keras.layers.Dense(2, kernel_initializer=tf.compat.v1.constant_initializer(-0.02), name="logits"))(hidden)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
        train_op = tf.compat.v1.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        return {"train_op": train_op, "loss": loss, "accuracy": accuracy, "global_step": global_step}
    program = shims.GraphProgram(build_graph, x=tf.TensorSpec([None, 8], tf.float32), y=tf.TensorSpec([None], tf.int64), drop=shims.Default(0.0, []))
    losses = []
    for step in range(24):
        start = (step * 32) % 256
        _, value = program.run(["train_op", "loss"], x=features[start:start + 32], y=labels[start:start + 32])
        losses.append(value)
    acc, done = program.run(["accuracy", "global_step"], x=features, y=labels)
    path = program.save(os.path.join(model_dir, "model.ckpt"), global_step=done)
    print("LOSSES", " ".join("%.6f" % v for v in losses))
    print("ACCURACY", "%.6f" % acc, done)
    print("SAVED", int(os.path.exists(path + ".index")))


if __name__ == "__main__":
    main(sys.argv[1])
