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

    global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
    optimizer = tf.keras.optimizers.Adam(learning_rate=0.01, epsilon=1e-08)
    mlp_hidden_layer = tf.keras.layers.Dense(16, activation=tf.nn.relu, kernel_initializer=tf.constant_initializer(0.05), name="hidden")
    mlp_logits_layer = tf.keras.layers.Dense(2, kernel_initializer=tf.constant_initializer(-0.02), name="logits")
    checkpoint = tf.train.Checkpoint(global_step=global_step, mlp_hidden_layer=mlp_hidden_layer, mlp_logits_layer=mlp_logits_layer, optimizer=optimizer)
    manager = tf.train.CheckpointManager(checkpoint, model_dir, max_to_keep=5, checkpoint_name="model.ckpt")
    def forward(x, drop):
        with tf.name_scope("mlp"):
            hidden = mlp_hidden_layer(x)
            hidden = tf.nn.dropout(hidden, rate=drop)
            logits = mlp_logits_layer(hidden)
        return logits
    @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([None], tf.int64), tf.TensorSpec([], tf.float32)])
    def train_step(x, y, drop=0.0):
        with tf.GradientTape() as tape:
            logits = forward(x, drop)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        variables = [*mlp_hidden_layer.trainable_variables, *mlp_logits_layer.trainable_variables]
        gradients = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(gradients, variables))
        global_step.assign_add(1)
        return loss
    @tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([None], tf.int64), tf.TensorSpec([], tf.float32)])
    def compute_accuracy_global_step(x, y, drop=0.0):
        logits = forward(x, drop)
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
        return accuracy, global_step
    losses = []
    for step in range(24):
        start = (step * 32) % 256
        value = train_step(features[start:start + 32], labels[start:start + 32]).numpy()
        losses.append(value)
    acc, done = [value.numpy() for value in compute_accuracy_global_step(features, labels)]
    path = manager.save(checkpoint_number=done)
    print("LOSSES", " ".join("%.6f" % v for v in losses))
    print("ACCURACY", "%.6f" % acc, done)
    print("SAVED", int(os.path.exists(path + ".index")))


if __name__ == "__main__":
    main(sys.argv[1])
