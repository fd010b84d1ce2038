"""A TF1 Estimator program: a small CNN model_fn with tf.layers, a tf.data input_fn, eval
metrics (accuracy, a mean), predictions, and training resumed from model_dir."""
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(5)
IMAGES = rng.rand(64, 8, 8, 1).astype("float32")
LABELS = (IMAGES[:, :4].mean(axis=(1, 2, 3)) > IMAGES[:, 4:].mean(axis=(1, 2, 3))).astype("int32")


def train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"image": IMAGES}, LABELS)).repeat().batch(16)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"image": IMAGES}, LABELS)).batch(16)


def model_fn(features, labels, mode, params):
    net = tf.layers.conv2d(features["image"], 4, 3, padding="same", activation=tf.nn.relu,
                           kernel_initializer=tf.constant_initializer(0.1), name="conv")
    net = tf.layers.max_pooling2d(net, 2, 2)
    net = tf.layers.flatten(net)
    logits = tf.layers.dense(net, 2, kernel_initializer=tf.constant_initializer(0.01), name="logits")
    classes = tf.argmax(logits, axis=1)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"class": classes,
                                                             "probability": tf.nn.softmax(logits)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        metrics = {"accuracy": tf.metrics.accuracy(labels, classes),
                   "mean_logit": tf.metrics.mean(logits)}
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    optimizer = tf.train.MomentumOptimizer(params["learning_rate"], 0.9)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class StepLosses(tf.train.SessionRunHook):
    """Collects the loss of every training step (the model's loss tensor, by name)."""

    def __init__(self):
        self.losses = []

    def begin(self):
        self._loss = tf.get_collection(tf.GraphKeys.LOSSES)[0]

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        self.losses.append(run_values.results)


def main(model_dir):
    config = tf.estimator.RunConfig(save_checkpoints_steps=5, keep_checkpoint_max=2)
    estimator = tf.estimator.Estimator(model_fn, model_dir=model_dir, config=config,
                                       params={"learning_rate": 0.05})
    history = StepLosses()
    estimator.train(train_input_fn, steps=6, hooks=[history])
    estimator.train(train_input_fn, max_steps=21, hooks=[history])
    print("LOSSES", " ".join("%.6f" % v for v in history.losses))
    metrics = estimator.evaluate(eval_input_fn)
    print("EVAL %.6f %.6f %.6f %d" % (metrics["loss"], metrics["accuracy"], metrics["mean_logit"],
                                      metrics["global_step"]))
    predictions = list(estimator.predict(eval_input_fn))
    print("CLASSES", " ".join(str(p["class"]) for p in predictions[:16]))
    print("PROBABILITIES", " ".join("%.6f" % p["probability"][1] for p in predictions[:16]))
    print("KERNEL", " ".join("%.6f" % v for v in estimator.get_variable_value("logits/kernel")[:6, 0]))


if __name__ == "__main__":
    main(sys.argv[1])
