"""TensorFlow's own feed tutorial's form (`fully_connected_feed.py`): placeholders made by a
function (`images_placeholder, labels_placeholder = placeholder_inputs(BATCH_SIZE)`, a
shape read from its argument), the model built by module functions inside
`with tf.Graph().as_default():` in a function, feed dicts filled by a function
(`feed_dict = fill_feed_dict(data_set, images_pl, labels_pl)`, and one given straight to a
run), the session and graph values passed to an evaluation function (`do_eval(sess,
eval_correct, images_placeholder, labels_placeholder, data_set)`), summaries written with
`sess.graph`, and checkpoints saved at the loop's step."""
import math
import os
import sys
import time

import numpy as np
import tensorflow as tf

BATCH_SIZE = 25
PIXELS = 12
CLASSES = 4


class DataSet(object):
    def __init__(self, seed, count):
        rng = np.random.RandomState(seed)
        self.images = rng.rand(count, PIXELS).astype(np.float32)
        self.labels = (self.images[:, :CLASSES].argmax(axis=1)).astype(np.int32)
        self.num_examples = count
        self._index = 0

    def next_batch(self, batch_size):
        start = self._index
        self._index = (self._index + batch_size) % self.num_examples
        return self.images[start:start + batch_size], self.labels[start:start + batch_size]


def placeholder_inputs(batch_size):
    """Placeholders for a batch of images and labels."""
    images_placeholder = tf.placeholder(tf.float32, shape=(batch_size, PIXELS))
    labels_placeholder = tf.placeholder(tf.int32, shape=(batch_size))
    return images_placeholder, labels_placeholder


def inference(images, hidden_units):
    with tf.name_scope("hidden1"):
        weights = tf.Variable(tf.truncated_normal([PIXELS, hidden_units],
                                                  stddev=1.0 / math.sqrt(float(PIXELS))), name="weights")
        biases = tf.Variable(tf.zeros([hidden_units]), name="biases")
        hidden1 = tf.nn.relu(tf.matmul(images, weights) + biases)
    with tf.name_scope("softmax_linear"):
        weights = tf.Variable(tf.truncated_normal([hidden_units, CLASSES],
                                                  stddev=1.0 / math.sqrt(float(hidden_units))), name="weights")
        biases = tf.Variable(tf.zeros([CLASSES]), name="biases")
        logits = tf.matmul(hidden1, weights) + biases
    return logits


def loss_of(logits, labels):
    labels = tf.to_int64(labels)
    return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


def training(loss, learning_rate):
    tf.summary.scalar("loss", loss)
    optimizer = tf.train.GradientDescentOptimizer(learning_rate)
    global_step = tf.Variable(0, name="global_step", trainable=False)
    return optimizer.minimize(loss, global_step=global_step)


def evaluation(logits, labels):
    correct = tf.nn.in_top_k(logits, labels, 1)
    return tf.reduce_sum(tf.cast(correct, tf.int32))


def fill_feed_dict(data_set, images_pl, labels_pl):
    """The feed dict of the next batch."""
    images_feed, labels_feed = data_set.next_batch(BATCH_SIZE)
    feed_dict = {
        images_pl: images_feed,
        labels_pl: labels_feed,
    }
    return feed_dict


def do_eval(sess, eval_correct, images_placeholder, labels_placeholder, data_set):
    true_count = 0
    steps_per_epoch = data_set.num_examples // BATCH_SIZE
    num_examples = steps_per_epoch * BATCH_SIZE
    for step in range(steps_per_epoch):
        feed_dict = fill_feed_dict(data_set, images_placeholder, labels_placeholder)
        true_count += sess.run(eval_correct, feed_dict=feed_dict)
    print("EVAL", num_examples, true_count, float(true_count) / num_examples)


def run_training(log_dir):
    train, validation = DataSet(1, 200), DataSet(2, 100)
    with tf.Graph().as_default():
        images_placeholder, labels_placeholder = placeholder_inputs(BATCH_SIZE)
        logits = inference(images_placeholder, 16)
        loss = loss_of(logits, labels_placeholder)
        train_op = training(loss, 0.5)
        eval_correct = evaluation(logits, labels_placeholder)
        summary = tf.summary.merge_all()
        init = tf.global_variables_initializer()
        saver = tf.train.Saver()
        sess = tf.Session()
        summary_writer = tf.summary.FileWriter(log_dir, sess.graph)
        sess.run(init)
        for step in range(40):
            start_time = time.time()
            feed_dict = fill_feed_dict(train, images_placeholder, labels_placeholder)
            _, loss_value = sess.run([train_op, loss], feed_dict=feed_dict)
            duration = time.time() - start_time
            if step % 10 == 0:
                print("STEP", step, loss_value)
                print("VALIDATION_LOSS", sess.run(loss, feed_dict=fill_feed_dict(
                    validation, images_placeholder, labels_placeholder)))
                summary_str = sess.run(summary, feed_dict=feed_dict)
                summary_writer.add_summary(summary_str, step)
                summary_writer.flush()
            if (step + 1) % 20 == 0:
                saver.save(sess, os.path.join(log_dir, "model.ckpt"), global_step=step)
                do_eval(sess, eval_correct, images_placeholder, labels_placeholder, train)
                do_eval(sess, eval_correct, images_placeholder, labels_placeholder, validation)
        print("CHECKPOINT", len(tf.train.get_checkpoint_state(log_dir).all_model_checkpoint_paths))


if __name__ == "__main__":
    run_training(sys.argv[1] if len(sys.argv) > 1 else "logs")
