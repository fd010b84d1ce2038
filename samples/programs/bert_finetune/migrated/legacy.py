"""A BERT-style classifier fine-tune as TF1 projects wrote it: a model_fn built from
get_variable (embeddings, a hand-written layer norm, an attention block, a pooler, output
weights), BERT's create_optimizer (warmup + polynomial decay, global-norm clipping) with a
hand-written AdamWeightDecayOptimizer, a user SessionRunHook recording the loss per step,
and evaluate/predict after training resumed from model_dir."""
import shims.keras2
import re
import sys

import numpy as np
import tensorflow as tf

VOCAB, WIDTH, LENGTH = 50, 16, 8
rng = np.random.RandomState(21)
IDS = rng.randint(0, VOCAB, size=(48, LENGTH)).astype("int32")
LABELS = (IDS[:, 0] > VOCAB // 2).astype("int32")


def init(seed):
    return tf.compat.v1.truncated_normal_initializer(stddev=0.02, seed=seed)


def layer_norm(x, name):
    with tf.compat.v1.variable_scope(name):
        gamma = tf.compat.v1.get_variable("gamma", [WIDTH], initializer=tf.compat.v1.ones_initializer())
        beta = tf.compat.v1.get_variable("beta", [WIDTH], initializer=tf.compat.v1.zeros_initializer())
        mean, variance = tf.nn.moments(x, [-1], keepdims=True)
        return (x - mean) * tf.math.rsqrt(variance + 1e-12) * gamma + beta


def encoder(ids):
    with tf.compat.v1.variable_scope("bert"):
        with tf.compat.v1.variable_scope("embeddings"):
            table = tf.compat.v1.get_variable("word_embeddings", [VOCAB, WIDTH], initializer=init(1))
            position = tf.compat.v1.get_variable("position_embeddings", [LENGTH, WIDTH], initializer=init(2))
            x = layer_norm(tf.gather(table, ids) + position, "LayerNorm")
        with tf.compat.v1.variable_scope("encoder/layer_0/attention"):
            query = shims.get_or_create_layer("query", lambda: tf.keras.layers.Dense(WIDTH, kernel_initializer=init(3), name="query"))(x)
            key = shims.get_or_create_layer("key", lambda: tf.keras.layers.Dense(WIDTH, kernel_initializer=init(4), name="key"))(x)
            value = shims.get_or_create_layer("value", lambda: tf.keras.layers.Dense(WIDTH, kernel_initializer=init(5), name="value"))(x)
            scores = tf.matmul(query, key, transpose_b=True) / np.sqrt(WIDTH)
            context = tf.matmul(tf.nn.softmax(scores), value)
            x = layer_norm(x + shims.get_or_create_layer("output", lambda: tf.keras.layers.Dense(WIDTH, kernel_initializer=init(6), name="output"))(context),
                           "LayerNorm")
        with tf.compat.v1.variable_scope("pooler"):
            return shims.get_or_create_layer("dense", lambda: tf.keras.layers.Dense(WIDTH, activation=tf.tanh, kernel_initializer=init(7), name="dense"))(x[:, 0])


class AdamWeightDecayOptimizer(tf.compat.v1.train.Optimizer):
    """BERT's optimizer: Adam with decoupled weight decay, no bias correction."""

    def __init__(self, learning_rate, weight_decay_rate=0.0, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-6, exclude_from_weight_decay=None, name="AdamWeightDecayOptimizer"):
        super(AdamWeightDecayOptimizer, self).__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.exclude_from_weight_decay = exclude_from_weight_decay

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for (grad, param) in grads_and_vars:
            if grad is None or param is None:
                continue
            param_name = re.match("^(.*):\\d+$", param.name).group(1)
            m = tf.compat.v1.get_variable(name=param_name + "/adam_m", shape=param.shape.as_list(),
                                dtype=tf.float32, trainable=False, initializer=tf.compat.v1.zeros_initializer())
            v = tf.compat.v1.get_variable(name=param_name + "/adam_v", shape=param.shape.as_list(),
                                dtype=tf.float32, trainable=False, initializer=tf.compat.v1.zeros_initializer())
            next_m = tf.multiply(self.beta_1, m) + tf.multiply(1.0 - self.beta_1, grad)
            next_v = tf.multiply(self.beta_2, v) + tf.multiply(1.0 - self.beta_2, tf.square(grad))
            update = next_m / (tf.sqrt(next_v) + self.epsilon)
            if self._do_use_weight_decay(param_name):
                update += self.weight_decay_rate * param
            next_param = param - self.learning_rate * update
            assignments.extend([param.assign(next_param), m.assign(next_m), v.assign(next_v)])
        return tf.group(*assignments, name=name)

    def _do_use_weight_decay(self, param_name):
        if not self.weight_decay_rate:
            return False
        for r in self.exclude_from_weight_decay or []:
            if re.search(r, param_name) is not None:
                return False
        return True


def create_optimizer(loss, init_lr, num_train_steps, num_warmup_steps):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    learning_rate = tf.constant(value=init_lr, shape=[], dtype=tf.float32)
    learning_rate = tf.compat.v1.train.polynomial_decay(learning_rate, global_step, num_train_steps,
                                              end_learning_rate=0.0, power=1.0, cycle=False)
    global_steps_int = tf.cast(global_step, tf.int32)
    warmup_steps_int = tf.constant(num_warmup_steps, dtype=tf.int32)
    warmup_percent_done = tf.cast(global_steps_int, tf.float32) / tf.cast(warmup_steps_int, tf.float32)
    warmup_learning_rate = init_lr * warmup_percent_done
    is_warmup = tf.cast(global_steps_int < warmup_steps_int, tf.float32)
    learning_rate = (1.0 - is_warmup) * learning_rate + is_warmup * warmup_learning_rate
    optimizer = AdamWeightDecayOptimizer(learning_rate=learning_rate, weight_decay_rate=0.01,
                                         exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"])
    tvars = tf.compat.v1.trainable_variables()
    grads = tf.gradients(loss, tvars)
    (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
    train_op = optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)
    # BERT groups the increment with train_op unordered, so whether the learning rate reads
    # the old or the new step is up to the scheduler (TF 1.x itself gives different losses
    # from run to run); ordered here so that the sample has one right answer.
    with tf.control_dependencies([train_op]):
        new_global_step = global_step + 1
        return tf.group(train_op, [global_step.assign(new_global_step)])


def model_fn(features, labels, mode, params):
    pooled = encoder(features["ids"])
    output_weights = tf.compat.v1.get_variable("output_weights", [2, WIDTH], initializer=init(8))
    output_bias = tf.compat.v1.get_variable("output_bias", [2], initializer=tf.compat.v1.zeros_initializer())
    logits = tf.nn.bias_add(tf.matmul(pooled, output_weights, transpose_b=True), output_bias)
    probabilities = tf.nn.softmax(logits, axis=-1)
    if mode == shims.estimator.ModeKeys.PREDICT:
        return shims.estimator.EstimatorSpec(mode, predictions={"probabilities": probabilities})
    one_hot = tf.one_hot(labels, depth=2, dtype=tf.float32)
    loss = tf.reduce_mean(-tf.reduce_sum(one_hot * tf.nn.log_softmax(logits, axis=-1), axis=-1))
    loss = tf.identity(loss, name="total_loss")
    if mode == shims.estimator.ModeKeys.EVAL:
        predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return shims.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.compat.v1.metrics.accuracy(labels, predictions)})
    train_op = create_optimizer(loss, params["learning_rate"], params["steps"], params["warmup"])
    return shims.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


class LossHistory(shims.estimator.SessionRunHook):
    """Records the loss of every training step."""

    def __init__(self):
        self.losses = []

    def begin(self):
        self._loss = tf.compat.v1.get_default_graph().get_tensor_by_name("total_loss:0")

    def before_run(self, run_context):
        return shims.estimator.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        self.losses.append(run_values.results)


def input_fn(repeat):
    def make():
        data = tf.data.Dataset.from_tensor_slices(({"ids": IDS}, LABELS))
        return (data.repeat() if repeat else data).batch(8)
    return make


def main(model_dir):
    params = {"learning_rate": 5e-3, "steps": 30, "warmup": 3}
    estimator = shims.estimator.Estimator(model_fn, model_dir=model_dir, params=params)
    history = LossHistory()
    estimator.train(input_fn(True), max_steps=12, hooks=[history])
    estimator.train(input_fn(True), max_steps=24, hooks=[history])
    metrics = estimator.evaluate(input_fn(False))
    probabilities = [p["probabilities"][1] for p in estimator.predict(input_fn(False))]
    print("LOSSES", " ".join("%.6f" % v for v in history.losses))
    print("EVAL %.6f %.6f %d" % (metrics["loss"], metrics["accuracy"], metrics["global_step"]))
    print("PROBABILITIES", " ".join("%.6f" % v for v in probabilities[:12]))
    print("OUTPUT", " ".join("%.6f" % v for v in estimator.get_variable_value("output_weights")[1, :6]))
    print("SLOT", " ".join("%.6f" % v for v in
                           estimator.get_variable_value("bert/pooler/dense/kernel/adam_v")[0, :6]))


if __name__ == "__main__":
    main(sys.argv[1])
