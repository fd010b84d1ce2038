"""tf.data fed from placeholders: an initializable iterator re-initialized every epoch and
read until OutOfRangeError, with a held-out loss fetched from the same stream mid-epoch
(TF1's one iterator: every run reads the next batch, whatever it fetches)."""
import numpy as np
import tensorflow as tf

tf.set_random_seed(7)  # one draw of initial values: the same check in every run

rng = np.random.RandomState(7)
train_x = rng.randn(50, 4).astype(np.float32)
train_y = (train_x.dot([[1.0], [0.5], [-1.5], [2.0]]) - 0.2).astype(np.float32)

features_ph = tf.placeholder(tf.float32, [None, 4], name="features")
labels_ph = tf.placeholder(tf.float32, [None, 1], name="labels")
dataset = tf.data.Dataset.from_tensor_slices((features_ph, labels_ph)).batch(8)
iterator = dataset.make_initializable_iterator()
batch_x, batch_y = iterator.get_next()

hidden = tf.layers.dense(batch_x, 6, activation=tf.nn.relu, name="hidden")
pred = tf.layers.dense(hidden, 1, name="pred")
loss = tf.reduce_mean(tf.square(pred - batch_y))
train_op = tf.train.AdamOptimizer(0.02).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for epoch in range(4):
        sess.run(iterator.initializer, feed_dict={features_ph: train_x, labels_ph: train_y})
        step = 0
        while True:
            try:
                if step == 3:
                    print("epoch %d held-out batch loss %.6f" % (epoch, sess.run(loss)))
                _, value = sess.run([train_op, loss])
            except tf.errors.OutOfRangeError:
                break
            step += 1
        print("epoch %d steps %d last loss %.6f" % (epoch, step, value))
