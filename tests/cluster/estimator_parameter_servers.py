"""An Estimator in a TF_CONFIG cluster with parameter servers and no train_distribute: TF
1.15's between-graph replication (the variables on the parameter servers, the chief and
the workers training asynchronously), through train_and_evaluate (an evaluator task, when
the cluster has one, evaluates the checkpoints)."""
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(4)
X = rng.randn(256, 5).astype(np.float32)
Y = (X.dot(rng.randn(5, 1)) > 0).astype(np.int32).ravel()


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(16)


def model_fn(features, labels, mode):
    hidden = tf.layers.dense(features["x"], 8, activation=tf.nn.tanh, name="hidden",
                             kernel_initializer=tf.glorot_uniform_initializer(seed=1))
    logits = tf.layers.dense(hidden, 2, name="logits",
                             kernel_initializer=tf.glorot_uniform_initializer(seed=2))
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.estimator.ModeKeys.EVAL:
        accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy})
    train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    config = tf.estimator.RunConfig(model_dir=sys.argv[1], save_checkpoints_steps=10, log_step_count_steps=5)
    estimator = tf.estimator.Estimator(model_fn=model_fn, config=config)
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=int(sys.argv[2]))
    eval_spec = tf.estimator.EvalSpec(
        lambda: tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).batch(64), steps=4,
        start_delay_secs=0, throttle_secs=1)
    result = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    if result and result[0]:  # the evaluator task, or a local run
        print("EVALUATION", " ".join("%s=%.7g" % (k, result[0][k]) for k in sorted(result[0])))
    latest = tf.train.latest_checkpoint(sys.argv[1])
    if latest:
        print("KERNEL", " ".join("%.9g" % v for v in tf.train.load_variable(latest, "logits/kernel").ravel()))
        print("STEP", tf.train.load_variable(latest, "global_step"))
