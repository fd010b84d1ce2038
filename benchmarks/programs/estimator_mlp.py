"""An Estimator trainer as TF 1.x projects wrote them: a model_fn with tf.layers, numpy
input, RunConfig logging; train then evaluate."""
import sys
import tempfile

import numpy as np
import tensorflow as tf

tf.logging.set_verbosity(tf.logging.INFO)


def model_fn(features, labels, mode):
    net = tf.layers.dense(features["x"], 256, activation=tf.nn.relu, name="hidden1")
    net = tf.layers.dense(net, 256, activation=tf.nn.relu, name="hidden2")
    logits = tf.layers.dense(net, 10, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer(1e-3).minimize(loss, tf.train.get_global_step())
    accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops={"accuracy": accuracy})


rng = np.random.RandomState(0)
x = rng.randn(2048, 64).astype("float32")
y = (x[:, :10].argmax(1)).astype("int32")
model_dir = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
train_fn = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=128, num_epochs=None, shuffle=False)
eval_fn = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=128, num_epochs=1, shuffle=False)
estimator = tf.estimator.Estimator(model_fn, model_dir, config=tf.estimator.RunConfig(log_step_count_steps=50))
estimator.train(train_fn, steps=200)
print(estimator.evaluate(eval_fn))
