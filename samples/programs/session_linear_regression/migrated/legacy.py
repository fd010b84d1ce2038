"""The first TF1 tutorial: linear regression on noisy points, placeholders fed from numpy,
a module-level `with tf.Session() as sess:` loop, and the fitted weights fetched at the end."""
import sys

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(1)
train_X = rng.uniform(-1, 1, size=(64, 1)).astype("float32")
train_Y = (3.0 * train_X - 0.5 + 0.1 * rng.randn(64, 1)).astype("float32")

W = tf.Variable(tf.zeros([1, 1]), name="weight")
b = tf.Variable(tf.zeros([1]), name="bias")
optimizer = tf.keras.optimizers.SGD(learning_rate=0.5)


def forward(X, Y):
    pred = tf.add(tf.matmul(X, W), b)
    cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * 16)
    return cost


@tf.function(input_signature=[tf.TensorSpec([None, 1], tf.float32), tf.TensorSpec([None, 1], tf.float32)])
def train_step(X, Y):
    with tf.GradientTape() as tape:
        cost = forward(X, Y)
    variables = [W, b]
    gradients = tape.gradient(cost, variables)
    optimizer.apply_gradients(zip(gradients, variables))
    return cost


@tf.function(input_signature=[tf.TensorSpec([None, 1], tf.float32), tf.TensorSpec([None, 1], tf.float32)])
def compute_cost(X, Y):
    cost = forward(X, Y)
    return cost


costs = []
for epoch in range(25):
    start = (epoch * 16) % 64
    c = train_step(train_X[start:start + 16], train_Y[start:start + 16]).numpy()
    costs.append(c)
training_cost = compute_cost(train_X, train_Y).numpy()
print("COSTS", " ".join("%.6f" % c for c in costs))
print("FINAL", "%.6f" % training_cost, "%.6f" % W.numpy()[0, 0], "%.6f" % b.numpy()[0])
