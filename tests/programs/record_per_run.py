"""TFRecords read one example per run, as TF1's books taught it: the program writes its
examples with a TFRecordWriter, makes a TFRecordReader, then a string_input_producer
(no shuffling), parse_single_example per record, no batch, a session opened without
`with`, queue runners under a Coordinator, and plain SGD on one example per step."""
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

out = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
path = os.path.join(out, "examples.tfrecords")
rng = np.random.RandomState(9)
writer = tf.python_io.TFRecordWriter(path)
for _ in range(12):
    x = rng.randn(3).astype(np.float32)
    example = tf.train.Example(features=tf.train.Features(feature={
        "x": tf.train.Feature(float_list=tf.train.FloatList(value=x.tolist())),
        "y": tf.train.Feature(float_list=tf.train.FloatList(value=[float(x.sum() > 0)]))}))
    writer.write(example.SerializeToString())
writer.close()

reader = tf.TFRecordReader()
filename_queue = tf.train.string_input_producer([path], shuffle=False)
_, serialized_example = reader.read(filename_queue)
features = tf.parse_single_example(serialized_example, features={
    "x": tf.FixedLenFeature([3], tf.float32),
    "y": tf.FixedLenFeature([1], tf.float32)})
x = tf.reshape(features["x"], [1, 3])
y = tf.reshape(features["y"], [1, 1])
w = tf.Variable(tf.zeros([3, 1]), name="w")
b = tf.Variable(tf.zeros([1]), name="b")
loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=tf.matmul(x, w) + b))
train_op = tf.train.GradientDescentOptimizer(0.3).minimize(loss)

sess = tf.Session()
sess.run(tf.global_variables_initializer())
coord = tf.train.Coordinator()
threads = tf.train.start_queue_runners(sess=sess, coord=coord)
for i in range(18):
    _, value = sess.run([train_op, loss])
    if i % 3 == 0:
        print("example %d loss %.6f" % (i, value))
coord.request_stop()
coord.join(threads)
sess.close()
