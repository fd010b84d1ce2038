"""A character-level LSTM as TF1 tutorials write it: tf.nn.rnn_cell.LSTMCell under
dynamic_rnn, a softmax over the vocabulary, gradient clipping, Adam; batch 32."""
import numpy as np
import tensorflow as tf

VOCAB, HIDDEN, LENGTH, BATCH, STEPS = 64, 128, 40, 32, 40

tf.set_random_seed(3)
rng = np.random.RandomState(0)
text = rng.randint(0, VOCAB, size=BATCH * LENGTH * 4 + 1).astype("int32")

inputs = tf.placeholder(tf.int32, [None, LENGTH])
targets = tf.placeholder(tf.int32, [None, LENGTH])
embedding = tf.get_variable("embedding", [VOCAB, 32])
cell = tf.nn.rnn_cell.LSTMCell(HIDDEN)
outputs, _ = tf.nn.dynamic_rnn(cell, tf.nn.embedding_lookup(embedding, inputs), dtype=tf.float32)
logits = tf.layers.dense(outputs, VOCAB, name="softmax")
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits))
optimizer = tf.train.AdamOptimizer(2e-3)
grads, variables = zip(*optimizer.compute_gradients(loss))
grads, _ = tf.clip_by_global_norm(grads, 5.0)
train_op = optimizer.apply_gradients(zip(grads, variables))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(STEPS):
        start = (step * BATCH * LENGTH) % (len(text) - BATCH * LENGTH - 1)
        x = text[start:start + BATCH * LENGTH].reshape(BATCH, LENGTH)
        y = text[start + 1:start + 1 + BATCH * LENGTH].reshape(BATCH, LENGTH)
        _, value = sess.run([train_op, loss], {inputs: x, targets: y})
        if step % 10 == 0:
            print("step %d loss %.5f" % (step, value))
