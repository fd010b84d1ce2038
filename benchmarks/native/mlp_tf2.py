"""native_step.py's hand-written TF2 port of mlp.py, as a TF2 developer writes it: Keras
layers made once, a tf.function step with a GradientTape and Keras' Adam."""
import numpy as np
import tensorflow as tf

tf.random.set_seed(1)
rng = np.random.RandomState(0)
data = rng.rand(4096, 64).astype(np.float32)
labels = (data[:, :32].sum(axis=1) > data[:, 32:].sum(axis=1)).astype(np.int64)

h1 = tf.keras.layers.Dense(256, activation="relu", name="h1")
h2 = tf.keras.layers.Dense(256, activation="relu", name="h2")
out = tf.keras.layers.Dense(2, name="out")
optimizer = tf.keras.optimizers.Adam(0.001, epsilon=1e-8)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = out(h2(h1(x)))
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    variables = h1.trainable_variables + h2.trainable_variables + out.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss


for step in range(300):
    at = (step * 128) % 4096
    value = train_step(data[at:at + 128], labels[at:at + 128]).numpy()
    if step % 50 == 0:
        print("LOSS", step, value)
