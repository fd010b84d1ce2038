"""Step time of one model three ways: TF1 code through shims.legacy_layer, the codemod's
output (Keras layers through shims.get_or_create_layer), and native Keras.

    python benchmarks/shims_step.py [--steps 200] [--width 512] [--batch 256]

A training step is forward + GradientTape + SGD update, eagerly and under tf.function;
each figure is the median over --steps steps after warm-up. Target: legacy_layer within
1.05x of native Keras under tf.function.
"""
import argparse
import statistics
import time

import shims  # noqa: F401  (selects tf_keras before tensorflow)
import numpy as np
import tensorflow as tf

v1 = tf.compat.v1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    x = tf.constant(np.random.RandomState(0).standard_normal((args.batch, args.width)).astype("float32"))
    y = tf.constant(np.random.RandomState(1).randint(0, 10, args.batch))

    def tf1_model(inputs):
        h = inputs
        for i in range(args.depth):
            h = v1.layers.dense(h, args.width, activation=tf.nn.relu, name=f"dense{i}")
        return v1.layers.dense(h, 10, name="logits")

    def migrated_model(inputs):
        h = inputs
        for i in range(args.depth):
            h = shims.get_or_create_layer(f"dense{i}", lambda: tf.keras.layers.Dense(
                args.width, activation=tf.nn.relu, name=f"dense{i}"))(h)
        return shims.get_or_create_layer("logits", lambda: tf.keras.layers.Dense(10, name="logits"))(h)

    native = tf.keras.Sequential([tf.keras.Input((args.width,))] + [
        tf.keras.layers.Dense(args.width, activation="relu") for _ in range(args.depth)] +
        [tf.keras.layers.Dense(10)])
    models = {"native Keras": native,
              "shims.legacy_layer(TF1 code)": shims.legacy_layer(tf1_model),
              "shims.legacy_layer(migrated code)": shims.legacy_layer(migrated_model)}
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    results = {}
    for name, model in models.items():
        model(x)
        optimizer = tf.keras.optimizers.SGD(0.01)

        def step():
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        for mode, fn in (("eager", step), ("tf.function", tf.function(step))):
            for _ in range(10):
                fn()
            times = []
            for _ in range(args.steps):
                start = time.perf_counter()
                float(fn())
                times.append(time.perf_counter() - start)
            results[(name, mode)] = statistics.median(times)
    print(f"{args.depth}x{args.width} MLP, batch {args.batch}, median of {args.steps} steps\n")
    print("| model | eager (ms/step) | tf.function (ms/step) | vs native under tf.function |")
    print("|---|---:|---:|---:|")
    base = results[("native Keras", "tf.function")]
    for name in models:
        eager, traced = results[(name, "eager")], results[(name, "tf.function")]
        print(f"| {name} | {eager * 1e3:.2f} | {traced * 1e3:.2f} | {traced / base:.3f}x |")


if __name__ == "__main__":
    main()
