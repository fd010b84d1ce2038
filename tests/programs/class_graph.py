"""A model class owning its Graph and Session: is_training placeholder, batch norm with
UPDATE_OPS control dependencies, train/evaluate methods with different fetches. The graph
is seeded: batch norm under Adam at 0.05 amplifies float differences between TF 1.15's and
TF 2.21's kernels, and from some random initial values they passed 1e-5 in the printed
losses by the third epoch (a flaky test); from the same values every run, it is a fixed
trajectory, equal to TF 1.15's to the printed digits."""
import numpy as np
import tensorflow as tf


class Classifier(object):
    def __init__(self, n_in, n_hidden, n_out, lr=0.05):
        self.graph = tf.Graph()
        with self.graph.as_default():
            tf.set_random_seed(1)  # the same initial values every run (see the docstring)
            self.x = tf.placeholder(tf.float32, [None, n_in], name="x")
            self.y = tf.placeholder(tf.int32, [None], name="y")
            self.is_training = tf.placeholder(tf.bool, [], name="is_training")
            h = tf.layers.dense(self.x, n_hidden, use_bias=False, name="hidden")  # BN follows
            h = tf.layers.batch_normalization(h, training=self.is_training, name="bn")
            h = tf.nn.relu(h)
            self.logits = tf.layers.dense(h, n_out, name="logits")
            self.loss = tf.losses.sparse_softmax_cross_entropy(labels=self.y, logits=self.logits)
            update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
            with tf.control_dependencies(update_ops):
                self.train_op = tf.train.AdamOptimizer(lr).minimize(self.loss)
            self.accuracy = tf.reduce_mean(tf.cast(
                tf.equal(tf.cast(tf.argmax(self.logits, 1), tf.int32), self.y), tf.float32))
            self.init = tf.global_variables_initializer()
        self.sess = tf.Session(graph=self.graph)
        self.sess.run(self.init)

    def train(self, x, y):
        _, loss = self.sess.run([self.train_op, self.loss],
                                feed_dict={self.x: x, self.y: y, self.is_training: True})
        return loss

    def evaluate(self, x, y):
        return self.sess.run([self.loss, self.accuracy],
                             feed_dict={self.x: x, self.y: y, self.is_training: False})


def main():
    rng = np.random.RandomState(5)
    x = rng.randn(160, 8).astype(np.float32) * 3 + 1
    y = (x[:, 0] * x[:, 1] > 1).astype(np.int32)
    model = Classifier(8, 16, 2)
    for epoch in range(3):
        for start in range(0, 160, 40):
            loss = model.train(x[start:start + 40], y[start:start + 40])
        val_loss, acc = model.evaluate(x, y)
        print("epoch %d train_loss %.5f val_loss %.5f acc %.4f" % (epoch, loss, val_loss, acc))


if __name__ == "__main__":
    main()
