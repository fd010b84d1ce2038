"""An Estimator whose model_fn returns a `tf.train.Scaffold`, as detection and slim-based
trainers write it: `init_fn` restoring a backbone from another model's checkpoint through a
`tf.train.Saver` over a name map (or slim's `assign_from_checkpoint_fn`, the same thing),
run only when model_dir has no checkpoint of its own, and `saver=tf.train.Saver(max_to_keep=2)`
deciding how many checkpoints stay; a hook given to evaluate() sees each evaluation batch."""
import os
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(6)
FEATURES = rng.randn(64, 5).astype(np.float32)
LABELS = (FEATURES[:, :2].sum(axis=1) > 0).astype(np.int32)


def backbone(x):
    with tf.variable_scope("backbone"):
        return tf.layers.dense(x, 8, activation=tf.nn.relu, name="dense",
                               kernel_initializer=tf.truncated_normal_initializer(stddev=0.5, seed=1))


def pretrain_fn(features, labels, mode):
    logits = tf.layers.dense(backbone(features), 2, name="pretrain_head",
                             kernel_initializer=tf.truncated_normal_initializer(stddev=0.3, seed=3))
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def model_fn(features, labels, mode, params):
    logits = tf.layers.dense(backbone(features), 2, name="head",
                             kernel_initializer=tf.truncated_normal_initializer(stddev=0.3, seed=2))
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    backbone_vars = {v.op.name: v for v in tf.global_variables() if v.op.name.startswith("backbone/")}
    restorer = tf.train.Saver(backbone_vars)

    def init_fn(scaffold, session):
        restorer.restore(session, params["backbone"])

    scaffold = tf.train.Scaffold(init_fn=init_fn, saver=tf.train.Saver(max_to_keep=2))
    if mode == tf.estimator.ModeKeys.EVAL:
        accuracy = tf.metrics.accuracy(labels, tf.argmax(logits, axis=1))
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={"accuracy": accuracy},
                                          scaffold=scaffold)
    train_op = tf.train.GradientDescentOptimizer(0.2).minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)


def input_fn():
    return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).repeat().batch(16)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices((FEATURES, LABELS)).batch(16)


class Losses(tf.train.SessionRunHook):
    def __init__(self):
        self.values = []

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(tf.get_collection(tf.GraphKeys.LOSSES)[0])

    def after_run(self, run_context, run_values):
        self.values.append(run_values.results)


def main(out):
    pretrainer = tf.estimator.Estimator(pretrain_fn, os.path.join(out, "pretrain"))
    pretrainer.train(input_fn, max_steps=10)
    config = tf.estimator.RunConfig(save_checkpoints_steps=4)
    model = tf.estimator.Estimator(model_fn, os.path.join(out, "model"), config=config,
                                   params={"backbone": pretrainer.latest_checkpoint()})
    losses = Losses()
    model.train(input_fn, max_steps=8, hooks=[losses])
    model.train(input_fn, max_steps=14, hooks=[losses])  # resumes: init_fn does not run again
    eval_losses = Losses()  # an evaluation hook: it sees every evaluation batch
    metrics = model.evaluate(eval_input_fn, hooks=[eval_losses])
    print("LOSSES", " ".join("%.6f" % v for v in losses.values))
    print("EVAL_BATCHES", " ".join("%.6f" % v for v in eval_losses.values))
    print("EVAL %.6f %.6f %d" % (metrics["loss"], metrics["accuracy"], metrics["global_step"]))
    print("BACKBONE", " ".join("%.6f" % v for v in model.get_variable_value("backbone/dense/kernel")[0]))
    kept = sorted(int(p.split("-")[-1].split(".")[0]) for p in os.listdir(os.path.join(out, "model"))
                  if p.endswith(".index"))
    print("KEPT", " ".join(str(k) for k in kept))


if __name__ == "__main__":
    main(sys.argv[1])
