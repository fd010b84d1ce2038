"""A model object the script runs, the way text-classification and research repositories
wrote it: a class builds its graph in ``_build()`` and ``_build_train_op()`` methods
``__init__`` calls, keeping its placeholders (one with a default: the dropout keep
probability) and its results as attributes; the script makes ``model =
TextClassifier(...)`` and a ``tf.train.Saver()``, opens a session and runs
``sess.run([model.train_op, model.global_step, ...], feed_dict={model.inputs: ...})``, a
dict of fetches fed by a dict bound to a name, and the predictions, and saves at the
model's global step."""
import os
import sys

import numpy as np
import tensorflow as tf


class TextClassifier(object):
    def __init__(self, vocab_size, seq_len, embed_dim, n_classes, learning_rate=0.01):
        self.vocab_size = vocab_size
        self.seq_len = seq_len
        self.embed_dim = embed_dim
        self.n_classes = n_classes
        self.learning_rate = learning_rate
        self._build()
        self._build_train_op()

    def _build(self):
        self.inputs = tf.placeholder(tf.int32, [None, self.seq_len], name="inputs")
        self.labels = tf.placeholder(tf.int64, [None], name="labels")
        self.keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")
        with tf.variable_scope("embedding"):
            embeddings = tf.get_variable(
                "embeddings", [self.vocab_size, self.embed_dim],
                initializer=tf.random_uniform_initializer(-0.5, 0.5, seed=11))
            embedded = tf.nn.embedding_lookup(embeddings, self.inputs)
        pooled = tf.reduce_mean(embedded, axis=1)
        hidden = tf.layers.dense(pooled, 16, activation=tf.nn.relu, name="hidden",
                                 kernel_initializer=tf.glorot_uniform_initializer(seed=12))
        hidden = tf.nn.dropout(hidden, keep_prob=self.keep_prob, seed=13)
        self.logits = tf.layers.dense(hidden, self.n_classes, name="logits",
                                      kernel_initializer=tf.glorot_uniform_initializer(seed=14))
        self.predictions = tf.argmax(self.logits, 1, name="predictions")
        self.loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=self.labels, logits=self.logits))
        self.accuracy = tf.reduce_mean(tf.cast(tf.equal(self.predictions, self.labels), tf.float32))

    def _build_train_op(self):
        self.global_step = tf.Variable(0, trainable=False, name="global_step")
        optimizer = tf.train.AdamOptimizer(self.learning_rate)
        self.train_op = optimizer.minimize(self.loss, global_step=self.global_step)


def main(model_dir):
    rng = np.random.RandomState(8)
    x = rng.randint(0, 50, size=(96, 6)).astype(np.int32)
    y = (x[:, 0] > 25).astype(np.int64) + (x[:, 1] > 40).astype(np.int64)
    model = TextClassifier(vocab_size=50, seq_len=6, embed_dim=8, n_classes=3)
    saver = tf.train.Saver(max_to_keep=2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(3):
            for start in range(0, 96, 32):
                _, step, loss, acc = sess.run(
                    [model.train_op, model.global_step, model.loss, model.accuracy],
                    feed_dict={model.inputs: x[start:start + 32], model.labels: y[start:start + 32],
                               model.keep_prob: 0.8})
            print("epoch %d step %d loss %.6f acc %.4f" % (epoch, step, loss, acc))
        feed = {model.inputs: x, model.labels: y}
        metrics = sess.run({"loss": model.loss, "accuracy": model.accuracy}, feed_dict=feed)
        print("eval loss %.6f accuracy %.4f" % (metrics["loss"], metrics["accuracy"]))
        print("predictions", sess.run(model.predictions, {model.inputs: x[:8]}))
        path = saver.save(sess, os.path.join(model_dir, "model"), global_step=model.global_step)
        print("saved at step", path.rsplit("-", 1)[1])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/model_object")
