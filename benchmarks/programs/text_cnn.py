"""A text CNN as the public tutorials write it (Kim 2014): embedding 18000x128, conv2d
windows 3/4/5 over the sequence, max-pool over time, dropout, Adam; batch 64."""
import numpy as np
import tensorflow as tf

VOCAB, EMBED, LENGTH, FILTERS, CLASSES, BATCH, STEPS = 18000, 128, 56, 128, 2, 64, 60

tf.set_random_seed(1)
rng = np.random.RandomState(0)
data_x = rng.randint(0, VOCAB, size=(BATCH * 8, LENGTH)).astype("int32")
data_y = np.eye(CLASSES, dtype="float32")[rng.randint(0, CLASSES, size=BATCH * 8)]

input_x = tf.placeholder(tf.int32, [None, LENGTH], name="input_x")
input_y = tf.placeholder(tf.float32, [None, CLASSES], name="input_y")
keep_prob = tf.placeholder(tf.float32, name="keep_prob")

with tf.name_scope("embedding"):
    W = tf.Variable(tf.random_uniform([VOCAB, EMBED], -1.0, 1.0), name="W")
    embedded = tf.expand_dims(tf.nn.embedding_lookup(W, input_x), -1)

pooled_outputs = []
for size in (3, 4, 5):
    with tf.name_scope("conv-maxpool-%s" % size):
        filt = tf.Variable(tf.truncated_normal([size, EMBED, 1, FILTERS], stddev=0.1), name="W")
        bias = tf.Variable(tf.constant(0.1, shape=[FILTERS]), name="b")
        conv = tf.nn.conv2d(embedded, filt, strides=[1, 1, 1, 1], padding="VALID", name="conv")
        h = tf.nn.relu(tf.nn.bias_add(conv, bias), name="relu")
        pooled = tf.nn.max_pool(h, ksize=[1, LENGTH - size + 1, 1, 1], strides=[1, 1, 1, 1],
                                padding="VALID", name="pool")
        pooled_outputs.append(pooled)

h_pool = tf.reshape(tf.concat(pooled_outputs, 3), [-1, FILTERS * 3])
h_drop = tf.nn.dropout(h_pool, keep_prob)
with tf.name_scope("output"):
    W_out = tf.get_variable("W_out", shape=[FILTERS * 3, CLASSES],
                            initializer=tf.contrib.layers.xavier_initializer())
    b_out = tf.Variable(tf.constant(0.1, shape=[CLASSES]), name="b")
    scores = tf.nn.xw_plus_b(h_drop, W_out, b_out, name="scores")
loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=scores, labels=input_y))
train_op = tf.train.AdamOptimizer(1e-3).minimize(loss)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        start = (step * BATCH) % len(data_x)
        feed = {input_x: data_x[start:start + BATCH], input_y: data_y[start:start + BATCH],
                keep_prob: 1.0}
        _, value = sess.run([train_op, loss], feed)
        if step % 20 == 0:
            print("step %d, loss %g" % (step, value))
