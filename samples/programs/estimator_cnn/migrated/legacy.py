"""A TF1 Estimator program: a small CNN model_fn with tf.layers, a tf.data input_fn, eval
metrics (accuracy, a mean), predictions, and training resumed from model_dir."""
import shims.keras2
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
    net = shims.get_or_create_layer("conv", lambda: tf.keras.layers.Conv2D(4, 3, padding="same", activation=tf.nn.relu, kernel_initializer=tf.compat.v1.constant_initializer(0.1), name="conv"))(features["image"])
    net = shims.get_or_create_layer(None, lambda: tf.keras.layers.MaxPooling2D(2, strides=2), default_name="max_pooling2d")(net)
    net = shims.get_or_create_layer(None, lambda: tf.keras.layers.Flatten(), default_name="flatten")(net)
    logits = shims.get_or_create_layer("logits", lambda: tf.keras.layers.Dense(2, kernel_initializer=tf.compat.v1.constant_initializer(0.01), name="logits"))(net)
    classes = tf.argmax(logits, axis=1)
    if mode == shims.estimator.ModeKeys.PREDICT:
        return shims.estimator.EstimatorSpec(mode, predictions={"class": classes,
                                                             "probability": tf.nn.softmax(logits)})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == shims.estimator.ModeKeys.EVAL:
        metrics = {"accuracy": tf.compat.v1.metrics.accuracy(labels, classes),
                   "mean_logit": tf.compat.v1.metrics.mean(logits)}
        return shims.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    optimizer = tf.compat.v1.train.MomentumOptimizer(params["learning_rate"], 0.9)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return shims.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class StepLosses(shims.estimator.SessionRunHook):
    """Collects the loss of every training step (the model's loss tensor, by name)."""

    def __init__(self):
        self.losses = []

    def begin(self):
        self._loss = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.LOSSES)[0]

    def before_run(self, run_context):
        return shims.estimator.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        self.losses.append(run_values.results)


def main(model_dir):
    config = shims.estimator.RunConfig(save_checkpoints_steps=5, keep_checkpoint_max=2)
    estimator = shims.estimator.Estimator(model_fn, model_dir=model_dir, config=config,
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
