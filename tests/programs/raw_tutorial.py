"""The raw-TensorFlow tutorial form: weights and biases in dicts, a model function reading
them, the accuracy built inside the session after training, read with .eval({...})."""
from __future__ import print_function

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(12)
train_x = rng.rand(120, 6).astype(np.float32)
train_y = np.eye(3)[(train_x[:, 0] * 3).astype(int) % 3].astype(np.float32)

learning_rate = 0.1
training_epochs = 6
batch_size = 40
n_input, n_hidden, n_classes = 6, 10, 3

X = tf.placeholder("float", [None, n_input])
Y = tf.placeholder("float", [None, n_classes])

weights = {
    'h1': tf.Variable(tf.random_normal([n_input, n_hidden], seed=1)),
    'out': tf.Variable(tf.random_normal([n_hidden, n_classes], seed=2))
}
biases = {
    'b1': tf.Variable(tf.zeros([n_hidden])),
    'out': tf.Variable(tf.zeros([n_classes]))
}


def neural_net(x):
    layer_1 = tf.nn.sigmoid(tf.add(tf.matmul(x, weights['h1']), biases['b1']))
    return tf.matmul(layer_1, weights['out']) + biases['out']


logits = neural_net(X)
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(logits=logits, labels=Y))
train_op = tf.train.GradientDescentOptimizer(learning_rate=learning_rate).minimize(loss_op)
init = tf.global_variables_initializer()

with tf.Session() as sess:
    sess.run(init)
    for epoch in range(training_epochs):
        avg_cost = 0.
        total_batch = int(len(train_x) / batch_size)
        for i in range(total_batch):
            batch_x = train_x[i * batch_size:(i + 1) * batch_size]
            batch_y = train_y[i * batch_size:(i + 1) * batch_size]
            _, c = sess.run([train_op, loss_op], feed_dict={X: batch_x, Y: batch_y})
            avg_cost += c / total_batch
        print("Epoch:", '%04d' % (epoch + 1), "cost={:.9f}".format(avg_cost))
    print("Optimization Finished!")

    pred = tf.nn.softmax(logits)
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    print("Accuracy:", accuracy.eval({X: train_x, Y: train_y}))
