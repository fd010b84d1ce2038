"""BERT's pre-train then fine-tune, as its run_pretraining.py and run_classifier.py write it:
`tf.contrib.tpu.TPUEstimator(use_tpu=False)` with `tf.contrib.tpu.RunConfig` and
`TPUConfig(iterations_per_loop=..., per_host_input_for_training=PER_HOST_V2)`, input
functions reading `params["batch_size"]`, `tf.contrib.data.map_and_batch`, a model_fn
returning `TPUEstimatorSpec` with `host_call` (`tf.contrib.summary` scalars, read back
from the event files), `scaffold_fn` (the fine-tuning run starts from the
pre-trained checkpoint through `tf.train.init_from_checkpoint` and
`get_assignment_map_from_checkpoint`), `eval_metrics=(metric_fn, [tensors])`,
`tf.contrib.tpu.CrossShardOptimizer` behind `if use_tpu:`, and a training hook."""
import collections
import os
import re
import sys

import numpy as np
import tensorflow as tf

VOCAB, WIDTH, SEQ, LABELS = 12, 8, 5, 2
rng = np.random.RandomState(3)
TOKENS = rng.randint(0, VOCAB, size=(48, SEQ)).astype(np.int32)
CLASSES = (TOKENS.sum(axis=1) % 2).astype(np.int32)
REAL = np.ones(48, np.float32)
REAL[-5:] = 0.0  # padding examples, as run_classifier pads the last eval batch


def init(seed):
    return tf.truncated_normal_initializer(stddev=0.2, seed=seed)


def encoder(input_ids):
    with tf.variable_scope("bert"):
        with tf.variable_scope("embeddings"):
            table = tf.get_variable("word_embeddings", [VOCAB, WIDTH], initializer=init(1))
            embedded = tf.gather(table, input_ids)
        with tf.variable_scope("pooler"):
            first = tf.squeeze(embedded[:, 0:1, :], axis=1)
            mean = tf.reduce_mean(embedded, axis=1)
            return tf.layers.dense(tf.concat([first, mean], axis=-1), WIDTH, activation=tf.tanh,
                                   kernel_initializer=init(2), name="dense")


def get_assignment_map_from_checkpoint(tvars, init_checkpoint):
    """BERT's modeling.get_assignment_map_from_checkpoint."""
    name_to_variable = collections.OrderedDict()
    for var in tvars:
        m = re.match("^(.*):\\d+$", var.name)
        name_to_variable[m.group(1) if m is not None else var.name] = var
    assignment_map = collections.OrderedDict()
    initialized = {}
    for name, _ in tf.train.list_variables(init_checkpoint):
        if name not in name_to_variable:
            continue
        assignment_map[name] = name
        initialized[name] = 1
        initialized[name + ":0"] = 1
    return assignment_map, initialized


def pretrain_model_fn_builder(learning_rate, use_tpu):
    def model_fn(features, labels, mode, params):
        pooled = encoder(features["input_ids"])
        with tf.variable_scope("cls/predictions"):
            logits = tf.layers.dense(pooled, VOCAB, kernel_initializer=init(3), name="transform")
        per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=features["input_ids"][:, -1], logits=logits)
        loss = tf.reduce_mean(per_example)
        global_step = tf.train.get_global_step()
        lr = tf.train.exponential_decay(learning_rate, global_step, 4, 0.5)
        optimizer = tf.train.AdamOptimizer(lr)
        if use_tpu:
            optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
        train_op = optimizer.minimize(loss, global_step=global_step)

        def host_call_fn(gs, loss, lr):
            gs = gs[0]
            with tf.contrib.summary.create_file_writer(params["model_dir"],
                                                       max_queue=params["iterations"]).as_default():
                with tf.contrib.summary.always_record_summaries():
                    tf.contrib.summary.scalar("loss", loss[0], step=gs)
                    tf.contrib.summary.scalar("learning_rate", lr[0], step=gs)
                    return tf.contrib.summary.all_summary_ops()

        host_call = (host_call_fn, [tf.reshape(global_step, [1]), tf.reshape(loss, [1]),
                                    tf.reshape(lr, [1])])
        return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op,
                                               host_call=host_call)

    return model_fn


class LossHook(tf.train.SessionRunHook):
    def __init__(self, losses):
        self.losses = losses

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(tf.get_default_graph().get_tensor_by_name("total_loss:0"))

    def after_run(self, run_context, run_values):
        self.losses.append(run_values.results)


def classifier_model_fn_builder(init_checkpoint, learning_rate, use_tpu, losses):
    def model_fn(features, labels, mode, params):
        is_real_example = features["is_real_example"]
        label_ids = features["label_ids"]
        pooled = encoder(features["input_ids"])
        output_weights = tf.get_variable("output_weights", [LABELS, WIDTH], initializer=init(4))
        output_bias = tf.get_variable("output_bias", [LABELS], initializer=tf.zeros_initializer())
        logits = tf.nn.bias_add(tf.matmul(pooled, output_weights, transpose_b=True), output_bias)
        probabilities = tf.nn.softmax(logits, axis=-1)
        log_probs = tf.nn.log_softmax(logits, axis=-1)
        one_hot = tf.one_hot(label_ids, depth=LABELS, dtype=tf.float32)
        per_example_loss = -tf.reduce_sum(one_hot * log_probs, axis=-1)
        total_loss = tf.identity(tf.reduce_mean(per_example_loss), name="total_loss")

        tvars = tf.trainable_variables()
        assignment_map, initialized = get_assignment_map_from_checkpoint(tvars, init_checkpoint)

        def tpu_scaffold():
            tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
            return tf.train.Scaffold()

        scaffold_fn = tpu_scaffold
        tf.logging.info("**** Trainable Variables ****")
        for var in tvars:
            tf.logging.info("  name = %s, shape = %s%s", var.name, var.shape,
                            ", *INIT_FROM_CKPT*" if var.name in initialized else "")

        if mode == tf.estimator.ModeKeys.TRAIN:
            optimizer = tf.train.MomentumOptimizer(learning_rate, 0.9)
            if use_tpu:
                optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
            train_op = optimizer.minimize(total_loss, global_step=tf.train.get_global_step())
            return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=total_loss, train_op=train_op,
                                                   scaffold_fn=scaffold_fn,
                                                   training_hooks=[LossHook(losses)])
        if mode == tf.estimator.ModeKeys.EVAL:
            def metric_fn(per_example_loss, label_ids, logits, is_real_example):
                predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
                accuracy = tf.metrics.accuracy(labels=label_ids, predictions=predictions,
                                               weights=is_real_example)
                loss = tf.metrics.mean(values=per_example_loss, weights=is_real_example)
                return {"eval_accuracy": accuracy, "eval_loss": loss}

            eval_metrics = (metric_fn, [per_example_loss, label_ids, logits, is_real_example])
            return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=total_loss,
                                                   eval_metrics=eval_metrics, scaffold_fn=scaffold_fn)
        return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, predictions={"probabilities": probabilities},
                                               scaffold_fn=scaffold_fn)

    return model_fn


def input_fn_builder(with_labels, is_training, drop_remainder):
    def input_fn(params):
        batch_size = params["batch_size"]
        features = {"input_ids": TOKENS}
        if with_labels:
            features.update(label_ids=CLASSES, is_real_example=REAL)
        d = tf.data.Dataset.from_tensor_slices(features)
        if is_training:
            d = d.repeat()
        return d.apply(tf.contrib.data.map_and_batch(lambda record: record, batch_size=batch_size,
                                                     drop_remainder=drop_remainder))

    return input_fn


def run_config(model_dir, iterations):
    is_per_host = tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2
    return tf.contrib.tpu.RunConfig(
        cluster=None, master=None, model_dir=model_dir, save_checkpoints_steps=6,
        tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=iterations, num_shards=8,
                                            per_host_input_for_training=is_per_host))


def main(output_dir):
    tf.logging.set_verbosity(tf.logging.WARN)
    use_tpu = False
    pretrain_dir = os.path.join(output_dir, "pretraining")
    pretrainer = tf.contrib.tpu.TPUEstimator(
        use_tpu=use_tpu, model_fn=pretrain_model_fn_builder(0.05, use_tpu),
        config=run_config(pretrain_dir, 4), train_batch_size=8, eval_batch_size=8,
        params={"model_dir": pretrain_dir, "iterations": 4})
    pretrainer.train(input_fn_builder(False, True, True), max_steps=10)

    losses = []
    classifier = tf.contrib.tpu.TPUEstimator(
        use_tpu=use_tpu,
        model_fn=classifier_model_fn_builder(tf.train.latest_checkpoint(pretrain_dir), 0.1,
                                             use_tpu, losses),
        config=run_config(os.path.join(output_dir, "classifier"), 3),
        train_batch_size=6, eval_batch_size=8, predict_batch_size=8)
    classifier.train(input_fn_builder(True, True, True), max_steps=12)
    result = classifier.evaluate(input_fn_builder(True, False, False), steps=None)
    predictions = list(classifier.predict(input_fn_builder(True, False, False)))
    print("LOSSES", " ".join("%.6f" % v for v in losses))
    print("EVAL %.6f %.6f %.6f %d" % (result["eval_accuracy"], result["eval_loss"], result["loss"],
                                      result["global_step"]))
    print("PROBABILITIES", " ".join("%.6f" % p["probabilities"][1] for p in predictions[:16]))
    summaries = collections.defaultdict(list)  # in the order written (which step a host call
    # reads the global step at is not ordered with the train op's increment, in TF1 too)
    for path in sorted(tf.gfile.Glob(os.path.join(pretrain_dir, "events.out.tfevents.*.v2"))):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                number = tf.make_ndarray(value.tensor) if value.HasField("tensor") else value.simple_value
                summaries[value.tag].append(float(number))
    print("SUMMARY_LOSS", " ".join("%.6f" % v for v in summaries["loss"]))
    print("SUMMARY_LR", " ".join("%.6f" % v for v in summaries["learning_rate"]))
    print("PRETRAINED", " ".join("%.6f" % v for v in
                                 pretrainer.get_variable_value("bert/pooler/dense/kernel")[0, :6]))
    print("TUNED", " ".join("%.6f" % v for v in
                            classifier.get_variable_value("bert/pooler/dense/kernel")[0, :6]))


if __name__ == "__main__":
    main(sys.argv[1])
