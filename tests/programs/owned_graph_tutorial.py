"""Course-notebook style: graph = tf.Graph(), constants for the validation set, a
Session(graph=graph), predictions read with .eval()."""
from __future__ import print_function
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(2)
train_dataset = rng.rand(300, 20).astype(np.float32)
train_labels = np.eye(4)[rng.randint(0, 4, 300)].astype(np.float32)
valid_dataset = rng.rand(50, 20).astype(np.float32)
valid_labels = np.eye(4)[rng.randint(0, 4, 50)].astype(np.float32)
batch_size = 64


def accuracy(predictions, labels):
    return 100.0 * np.sum(np.argmax(predictions, 1) == np.argmax(labels, 1)) / predictions.shape[0]


graph = tf.Graph()
with graph.as_default():
    tf_train_dataset = tf.placeholder(tf.float32, shape=(batch_size, 20))
    tf_train_labels = tf.placeholder(tf.float32, shape=(batch_size, 4))
    tf_valid_dataset = tf.constant(valid_dataset)
    weights = tf.Variable(tf.truncated_normal([20, 4], seed=4))
    biases = tf.Variable(tf.zeros([4]))
    logits = tf.matmul(tf_train_dataset, weights) + biases
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf_train_labels, logits=logits))
    optimizer = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    train_prediction = tf.nn.softmax(logits)
    valid_prediction = tf.nn.softmax(tf.matmul(tf_valid_dataset, weights) + biases)

num_steps = 31
with tf.Session(graph=graph) as session:
    tf.global_variables_initializer().run()
    print("Initialized")
    for step in range(num_steps):
        offset = (step * batch_size) % (train_labels.shape[0] - batch_size)
        batch_data = train_dataset[offset:(offset + batch_size), :]
        batch_labels = train_labels[offset:(offset + batch_size), :]
        feed_dict = {tf_train_dataset: batch_data, tf_train_labels: batch_labels}
        _, l, predictions = session.run([optimizer, loss, train_prediction], feed_dict=feed_dict)
        if step % 10 == 0:
            print("Minibatch loss at step %d: %f" % (step, l))
            print("Minibatch accuracy: %.1f%%" % accuracy(predictions, batch_labels))
            print("Validation accuracy: %.1f%%" % accuracy(valid_prediction.eval(), valid_labels))
