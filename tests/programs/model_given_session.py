"""Model classes handed the script's Session, as the lab-by-lab tutorials and DQN examples
wrote them: ``Model(sess, "m1")`` keeps ``self.sess = sess``, builds its graph in a
``_build_net()`` method under ``tf.variable_scope(self.name)``, and its methods run
``self.sess.run(...)``; the script makes the session, two models (an ensemble), runs the
initializer once for both, and trains them side by side."""
import numpy as np
import tensorflow as tf

learning_rate = 0.05
training_epochs = 3
batch_size = 40


class Model:

    def __init__(self, sess, name, seed):
        self.sess = sess
        self.name = name
        self.seed = seed
        self._build_net()

    def _build_net(self):
        with tf.variable_scope(self.name):
            self.keep_prob = tf.placeholder(tf.float32)
            self.X = tf.placeholder(tf.float32, [None, 8])
            self._Y = tf.placeholder(tf.float32, [None, 3])

            W1 = tf.get_variable("W1", shape=[8, 16],
                                 initializer=tf.glorot_uniform_initializer(seed=self.seed))
            b1 = tf.Variable(tf.zeros([16]))
            L1 = tf.nn.relu(tf.matmul(self.X, W1) + b1)
            L1 = tf.nn.dropout(L1, keep_prob=self.keep_prob, seed=self.seed + 1)

            W2 = tf.get_variable("W2", shape=[16, 3],
                                 initializer=tf.glorot_uniform_initializer(seed=self.seed + 2))
            b2 = tf.Variable(tf.random_normal([3], seed=self.seed + 3))
            self.logits = tf.matmul(L1, W2) + b2

        self.cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(
            logits=self.logits, labels=self._Y))
        self.optimizer = tf.train.AdamOptimizer(
            learning_rate=learning_rate).minimize(self.cost)

        correct_prediction = tf.equal(tf.argmax(self.logits, 1), tf.argmax(self._Y, 1))
        self.accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))

    def predict(self, x_test, keep_prop=1.0):
        return self.sess.run(self.logits, feed_dict={self.X: x_test, self.keep_prob: keep_prop})

    def get_accuracy(self, x_test, y_test, keep_prop=1.0):
        return self.sess.run(self.accuracy,
                             feed_dict={self.X: x_test, self._Y: y_test, self.keep_prob: keep_prop})

    def train(self, x_data, y_data, keep_prop=0.7):
        return self.sess.run([self.cost, self.optimizer], feed_dict={
            self.X: x_data, self._Y: y_data, self.keep_prob: keep_prop})


rng = np.random.RandomState(3)
x_all = rng.randn(160, 8).astype(np.float32)
labels = (x_all[:, 0] > 0).astype(np.int64) + (x_all[:, 1] > 0.5).astype(np.int64)
y_all = np.eye(3, dtype=np.float32)[labels]

sess = tf.Session()
models = []
for m in range(2):
    models.append(Model(sess, "model" + str(m), seed=10 * m + 1))

sess.run(tf.global_variables_initializer())

print('Learning Started!')
for epoch in range(training_epochs):
    avg_cost_list = np.zeros(len(models))
    total_batch = len(x_all) // batch_size
    for i in range(total_batch):
        batch_xs = x_all[i * batch_size:(i + 1) * batch_size]
        batch_ys = y_all[i * batch_size:(i + 1) * batch_size]
        for m_idx, m in enumerate(models):
            c, _ = m.train(batch_xs, batch_ys)
            avg_cost_list[m_idx] += c / total_batch
    print('Epoch:', '%04d' % (epoch + 1), 'cost =', avg_cost_list)
print('Learning Finished!')

predictions = np.zeros([len(x_all), 3])
for m_idx, m in enumerate(models):
    print(m_idx, 'Accuracy:', m.get_accuracy(x_all, y_all))
    predictions += m.predict(x_all)
print('Ensemble accuracy:', np.mean(np.argmax(predictions, 1) == labels))
sess.close()
