"""Per-step time of whole-program runtimes against their baselines.

    python benchmarks/program_step.py [--width 512] [--depth 4] [--batch 256] [--steps 300]

1. shims.estimator: `Estimator.train` on a model_fn (an MLP of tf.compat.v1.layers, TF1
   AdamOptimizer.minimize(loss, global_step)) against a hand-written TF2 loop over the same
   tf.data input (Keras layers, GradientTape, a tf.function step), once with Keras' Adam and
   once with the same TF1 Adam math (tf.compat.v1.train.AdamOptimizer.apply_gradients). Per-step time is
   (time of train(steps=N+K) - time of train(steps=K)) / N, so building, restoring and
   checkpointing cancel out; the TF2 loop is timed the same way. Target: <= 1.1x.
2. Session programs: the TF1 program (graph mode, `sess.run([train, loss], feed_dict)`,
   run in a subprocess with TF1 behaviour) against its TFM501 conversion
   (`shims.GraphProgram.run`), both fed the same numpy batches. Target: converted <= 1x.
Each figure is the median of --repeats runs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

SESSION_TF1 = r"""
import json, sys, time
import numpy as np
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
args = json.loads(sys.argv[1])
data = np.random.RandomState(0).standard_normal((args["batch"] * 8, args["width"])).astype("float32")
labels = np.random.RandomState(1).randint(0, 10, args["batch"] * 8)
x = tf.placeholder(tf.float32, [None, args["width"]])
y = tf.placeholder(tf.int64, [None])
h = x
for i in range(args["depth"]):
    h = tf.layers.dense(h, args["width"], activation=tf.nn.relu, name="dense%d" % i)
loss = tf.losses.sparse_softmax_cross_entropy(y, tf.layers.dense(h, 10, name="logits"))
train = tf.train.AdamOptimizer(1e-3).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    def run(n):
        start = time.perf_counter()
        for i in range(n):
            b = (i % 8) * args["batch"]
            sess.run([train, loss], feed_dict={x: data[b:b + args["batch"]], y: labels[b:b + args["batch"]]})
        return time.perf_counter() - start
    run(20)
    print(json.dumps([run(args["steps"]) / args["steps"] for _ in range(args["repeats"])]))
"""


def session_converted(args):
    import shims  # noqa: F401
    import tensorflow as tf

    data = np.random.RandomState(0).standard_normal((args.batch * 8, args.width)).astype("float32")
    labels = np.random.RandomState(1).randint(0, 10, args.batch * 8)

    def build_graph(x, y):
        h = x
        for i in range(args.depth):
            h = tf.compat.v1.layers.dense(h, args.width, activation=tf.nn.relu, name="dense%d" % i)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(y, tf.compat.v1.layers.dense(h, 10, name="logits"))
        train = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(loss)
        return {"train": train, "loss": loss}

    program = shims.GraphProgram(build_graph, x=tf.TensorSpec([None, args.width], tf.float32),
                                 y=tf.TensorSpec([None], tf.int64))

    def run(n):
        start = time.perf_counter()
        for i in range(n):
            b = (i % 8) * args.batch
            program.run(["train", "loss"], x=data[b:b + args.batch], y=labels[b:b + args.batch])
        return time.perf_counter() - start

    run(20)
    return [run(args.steps) / args.steps for _ in range(args.repeats)]


def estimator_vs_tf2(args):
    import shims
    import tensorflow as tf

    data = np.random.RandomState(0).standard_normal((args.batch * 8, args.width)).astype("float32")
    labels = np.random.RandomState(1).randint(0, 10, args.batch * 8).astype("int64")

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((data, labels)).repeat().batch(args.batch)

    def model_fn(features, labels, mode):
        h = features
        for i in range(args.depth):
            h = tf.compat.v1.layers.dense(h, args.width, activation=tf.nn.relu, name="dense%d" % i)
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, tf.compat.v1.layers.dense(h, 10, name="logits"))
        train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(
            loss, global_step=tf.compat.v1.train.get_global_step())
        return shims.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def estimator_time(steps):
        model_dir = tempfile.mkdtemp(prefix="bench-estimator-")
        config = shims.estimator.RunConfig(save_checkpoints_steps=10 ** 9, log_step_count_steps=None)
        start = time.perf_counter()
        shims.estimator.Estimator(model_fn, model_dir, config=config).train(input_fn, steps=steps)
        return time.perf_counter() - start

    model = tf.keras.Sequential([tf.keras.Input((args.width,))] + [
        tf.keras.layers.Dense(args.width, activation="relu") for _ in range(args.depth)] +
        [tf.keras.layers.Dense(10)])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def make_step(optimizer):
        """A hand-written TF2 training step; Keras and TF1 optimizers share apply_gradients."""
        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        return step

    step = make_step(tf.keras.optimizers.Adam(1e-3))
    step_v1_adam = make_step(tf.compat.v1.train.AdamOptimizer(1e-3))

    def tf2_time(steps, step=step):
        start = time.perf_counter()
        for i, (x, y) in enumerate(input_fn()):
            if i == steps:
                break
            float(step(x, y))
        return time.perf_counter() - start

    warm = 20
    estimator, native, same_math = [], [], []
    for _ in range(args.repeats):
        estimator.append((estimator_time(warm + args.steps) - estimator_time(warm)) / args.steps)
        native.append((tf2_time(warm + args.steps) - tf2_time(warm)) / args.steps)
        same_math.append((tf2_time(warm + args.steps, step_v1_adam) - tf2_time(warm, step_v1_adam))
                         / args.steps)
    return estimator, native, same_math


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    config = json.dumps(vars(args))
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    tf1 = json.loads(subprocess.run([sys.executable, "-c", SESSION_TF1, config], env=env, check=True,
                                    capture_output=True, text=True).stdout.strip().splitlines()[-1])
    converted = session_converted(args)
    estimator, native, same_math = estimator_vs_tf2(args)
    med = statistics.median
    print(f"{args.depth}x{args.width} MLP, batch {args.batch}, Adam; ms/step, median of "
          f"{args.repeats} runs of {args.steps} steps\n")
    print("| program | baseline | ms/step | baseline ms/step | ratio |")
    print("|---|---|---:|---:|---:|")
    print(f"| TFM501 conversion (GraphProgram.run) | TF1 Session loop | {med(converted) * 1e3:.2f} | "
          f"{med(tf1) * 1e3:.2f} | {med(converted) / med(tf1):.3f}x |")
    print(f"| shims.estimator train | hand-written TF2 tf.function loop | {med(estimator) * 1e3:.2f} | "
          f"{med(native) * 1e3:.2f} | {med(estimator) / med(native):.3f}x |")
    print(f"| shims.estimator train | the same loop with TF1's Adam (compat.v1) | "
          f"{med(estimator) * 1e3:.2f} | {med(same_math) * 1e3:.2f} | "
          f"{med(estimator) / med(same_math):.3f}x |")


if __name__ == "__main__":
    main()
