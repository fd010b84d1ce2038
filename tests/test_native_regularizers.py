"""Weight decay in native programs (#56): tf.layers' kernel_regularizer= / bias_regularizer=
given to the Keras layers (tf.contrib's as Keras' of the same value, the script's callables as
they are) and TF1's REGULARIZATION_LOSSES read as the layers' ``.losses``; proven on real
TF 1.15 with `verify --program`. What TF1 did otherwise (a regularizer assigning, one
returning None, losses read before a run builds the layers) stays on GraphProgram, the
finding saying why."""
import pytest

from test_native_programs import TF1_LEFT, cli, code_only, upgraded, verified

pytest.importorskip("tensorflow")

PROGRAM = '''"""Weight decay in a model function: tf.contrib's l2 regularizer bound to a name (its scale a
module constant), l1 on a bias, l1_l2 on the output layer; the script sums the losses of
tf.losses.get_regularization_losses() into its loss and prints the total."""
import numpy as np
import tensorflow as tf

WEIGHT_DECAY = 0.01
rng = np.random.RandomState(5)
data = rng.randn(48, 4).astype(np.float32)
target = (data[:, :1] * 2.0 - data[:, 1:2]).astype(np.float32)
decay = tf.contrib.layers.l2_regularizer(scale=WEIGHT_DECAY)


def model(x):
    h = tf.layers.dense(x, 6, activation=tf.nn.tanh, name="h", kernel_regularizer=decay,
                        bias_regularizer=tf.contrib.layers.l1_regularizer(0.005),
                        kernel_initializer=tf.constant_initializer(0.2))
    return tf.layers.dense(h, 1, name="out", kernel_initializer=tf.constant_initializer(-0.1),
                           kernel_regularizer=tf.contrib.layers.l1_l2_regularizer(0.001, 0.02))


x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
pred = model(x)
penalties = tf.losses.get_regularization_losses()
loss = tf.reduce_mean(tf.square(pred - y)) + tf.add_n(penalties)
total = tf.losses.get_regularization_loss()
train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(12):
        _, l = sess.run([train_op, loss], {x: data, y: target})
        print("step", step, l)
    print("penalty", sess.run(total))
'''


def test_regularized_layers_take_keras_regularizers_and_their_losses_are_the_layers(tmp_path, tf1_python):
    """TF1's l2 is scale * sum(w**2) / 2: Keras' L2 of half the scale; l1 is Keras' L1; l1_l2
    both. The name bound to one stays where it was (the layers made before the model read
    it); the collection read in the graph is the layers' `.losses`, in TF1's order."""
    legacy, migrated = upgraded(tmp_path, "decay", PROGRAM)
    assert "decay = tf.keras.regularizers.L2(WEIGHT_DECAY / 2)\n" in migrated, migrated
    assert ('h_layer = tf.keras.layers.Dense(6, activation=tf.nn.tanh, kernel_regularizer=decay, '
            'bias_regularizer=tf.keras.regularizers.L1(0.005), kernel_initializer=tf.constant_initializer(0.2), '
            'name="h")') in migrated, migrated
    assert "kernel_regularizer=tf.keras.regularizers.L1L2(l1=0.001, l2=0.02 / 2)" in migrated, migrated
    assert "penalties = [*h_layer.losses, *out_layer.losses]" in migrated, migrated
    assert "total = tf.add_n([*h_layer.losses, *out_layer.losses])" in migrated, migrated
    assert not TF1_LEFT.findall(code_only(migrated)) and "shims" not in migrated, migrated
    report = verified(legacy, tmp_path / "out" / "decay.py", tf1_python)
    assert {"h/kernel", "h/bias", "out/kernel"} <= {v["name"] for v in report["variables"]}
    again = cli("upgrade", tmp_path / "out" / "decay.py", "--check", "--no-cache")
    assert again.returncode == 0, again.stdout


@pytest.mark.parametrize("old, new, why", [
    ("decay = tf.contrib.layers.l2_regularizer(scale=WEIGHT_DECAY)\n",
     "def decay(weights):\n    tf.add_to_collection(\"norms\", tf.norm(weights))\n    return None\n",
     "tf.layers.dense's kernel_regularizer= is a regularizer using tf.add_to_collection"),
    ("decay = tf.contrib.layers.l2_regularizer(scale=WEIGHT_DECAY)\n",
     "def decay(weights):\n    return None\n",
     "is a regularizer returning None (TF1 added no loss for it; Keras would fail)"),
    ("tf.contrib.layers.l1_regularizer(0.005)", "tf.contrib.layers.l1_regularizer(0.0)",
     "is a l1_regularizer of scale 0 (TF1 adds no loss for it)"),
    ("tf.losses.get_regularization_losses()", 'tf.losses.get_regularization_losses(scope="h")',
     "tf.losses.get_regularization_losses of a scope"),
    ("    for step in range(12):\n", "    print(\"before\", sess.run(total))\n    for step in range(12):\n",
     "a run reads the regularization losses before a run calls their layers"),
])
def test_weight_decay_the_native_form_cannot_write_as_tf1_ran_it_says_why(old, new, why, tmp_path):
    assert old in PROGRAM
    said = cli("upgrade", upgraded(tmp_path, "kept", PROGRAM.replace(old, new))[0], "--no-cache").stdout
    assert why in said.replace("\n", " "), said
