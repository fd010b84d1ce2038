"""File input as TF1's "Reading data" guide wrote it: CSV files named by a
string_input_producer (two epochs, no shuffling), a TextLineReader skipping each header,
decode_csv and scaling run per record, tf.train.batch, queue runners under a Coordinator,
and a loop read until OutOfRangeError. The program writes its own data files first."""
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

tf.set_random_seed(11)  # one draw of initial values: the same check in every run

out = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
data_dir = os.path.join(out, "data")
if not os.path.isdir(data_dir):
    os.makedirs(data_dir)
rng = np.random.RandomState(11)
filenames = []
for part in range(3):
    path = os.path.join(data_dir, "part-%d.csv" % part)
    with open(path, "w") as handle:
        handle.write("a,b,c,label\n")
        for row in rng.randn(14, 3):
            handle.write("%.4f,%.4f,%.4f,%d\n" % (row[0], row[1], row[2], int(row.sum() > 0)))
    filenames.append(path)

filename_queue = tf.train.string_input_producer(filenames, num_epochs=2, shuffle=False)
reader = tf.TextLineReader(skip_header_lines=1)
key, line = reader.read(filename_queue)
a, b, c, label = tf.decode_csv(line, record_defaults=[[0.0], [0.0], [0.0], [0]])
features = tf.stack([a, b, c]) * 0.5
target = tf.cast(tf.expand_dims(label, 0), tf.float32)
x, y = tf.train.batch([features, target], batch_size=5)

hidden = tf.layers.dense(x, 4, activation=tf.nn.tanh, name="hidden")
logits = tf.layers.dense(hidden, 1, name="logits")
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=global_step)

with tf.Session() as sess:
    sess.run(tf.group(tf.global_variables_initializer(), tf.local_variables_initializer()))
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    step = 0
    try:
        while not coord.should_stop():
            _, step, value = sess.run([train_op, global_step, loss])
            if step % 4 == 0:
                print("step %d loss %.6f" % (step, value))
    except tf.errors.OutOfRangeError:
        print("done after %d steps" % step)
    finally:
        coord.request_stop()
    coord.join(threads)
