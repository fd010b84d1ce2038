"""minimize written out (#56): `grads_and_vars = optimizer.compute_gradients(loss)`, the
gradients changed by hand (clipped), `train_op = optimizer.apply_gradients(clipped,
global_step=global_step)`. The native step computes the loss under the tape, the pairs
from the tape's gradients, the clipping as written, and applies it with the Keras
optimizer; equal to TF 1.15. Where the pairs are not TF1's (a variable the loss does not
reach, a run fetching them, another optimizer applying them) the program keeps the
GraphProgram form and says why."""
import pytest

from test_native_programs import TF1_LEFT, code_only, settled_and_verified, upgrade_says, upgraded

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.slow

CLIPPED = '''"""Gradients computed, clipped and applied by hand."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(4)
data = rng.rand(60, 4).astype(np.float32)
target = (data.dot([[0.3], [-0.2], [0.1], [0.4]]) + 0.1).astype(np.float32)

x = tf.placeholder(tf.float32, [None, 4])
y = tf.placeholder(tf.float32, [None, 1])
global_step = tf.Variable(0, trainable=False, name="global_step")
W1 = tf.Variable(tf.random_normal([4, 8], stddev=0.5, seed=1), name="W1")
b1 = tf.Variable(tf.zeros([8]), name="b1")
W2 = tf.Variable(tf.random_normal([8, 1], stddev=0.5, seed=2), name="W2")
hidden = tf.nn.relu(tf.matmul(x, W1) + b1)
pred = tf.matmul(hidden, W2)
loss = tf.reduce_mean(tf.square(pred - y))
optimizer = tf.train.AdamOptimizer(0.01)
grads_and_vars = optimizer.compute_gradients(loss)
clipped = [(tf.clip_by_value(grad, -0.05, 0.05), var) for grad, var in grads_and_vars]
train_op = optimizer.apply_gradients(clipped, global_step=global_step)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(20):
        _, value = sess.run([train_op, loss], {x: data, y: target})
        if step % 5 == 0:
            print("LOSS", step, value)
    print("STEP", sess.run(global_step))
    print("PRED", sess.run(pred, {x: data[:3]}).ravel().tolist())
'''
CLIP = "clipped = [(tf.clip_by_value(grad, -0.05, 0.05), var) for grad, var in grads_and_vars]\n"
APPLY = "train_op = optimizer.apply_gradients(clipped, global_step=global_step)\n"
RUN = "_, value = sess.run([train_op, loss], {x: data, y: target})"


@pytest.mark.parametrize("name, old, new", [
    ("clipped", "", ""),
    # clipped by norm, applied as a zip of gradients and variables
    ("by_norm", CLIP + APPLY,
     "grads = [tf.clip_by_norm(grad, 0.1) for grad, _ in grads_and_vars]\n"
     "train_op = optimizer.apply_gradients(zip(grads, [var for _, var in grads_and_vars]), "
     "global_step=global_step)\n"),
])
def test_gradients_written_out_become_the_steps_and_equal_tf_1_15(name, old, new, tmp_path, tf1_python):
    legacy, migrated = upgraded(tmp_path, name, CLIPPED.replace(old, new))
    assert not set(TF1_LEFT.findall(code_only(migrated))), migrated
    step = migrated[migrated.index("def train_step(x, y):"):]
    written = ["    with tf.GradientTape() as tape:", "    variables = [W1, b1, W2]",
               "    gradients = tape.gradient(loss, variables)",
               "    grads_and_vars = list(zip(gradients, variables))", "    global_step.assign_add(1)"]
    written += ["    " + CLIP.strip(), "    optimizer.apply_gradients(clipped)"] if name == "clipped" else [
        "    grads = [tf.clip_by_norm(grad, 0.1) for grad, _ in grads_and_vars]",
        "    optimizer.apply_gradients(zip(grads, [var for _, var in grads_and_vars]))"]
    assert [step.index(line) for line in written[:4]] == sorted(step.index(line) for line in written[:4]), step
    assert all(line in step for line in written), step
    report = settled_and_verified(tmp_path, legacy, name, tf1_python)
    assert {"W1/Adam", "W2/Adam_1", "global_step"} <= {v["name"] for v in report["variables"]}


GLOBAL_NORM = '''"""Dense layers, gradients clipped by their global norm, applied by hand."""
import numpy as np
import tensorflow as tf

tf.set_random_seed(5)
rng = np.random.RandomState(2)
data = rng.rand(40, 5).astype(np.float32)
labels = (data.sum(1) > 2.5).astype(np.int64)

x = tf.placeholder(tf.float32, [None, 5])
y = tf.placeholder(tf.int64, [None])
h = tf.layers.dense(x, 12, tf.nn.relu, name="hidden")
logits = tf.layers.dense(h, 2, name="logits")
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
opt = tf.train.MomentumOptimizer(0.1, 0.9)
gvs = opt.compute_gradients(loss)
grads, norm = tf.clip_by_global_norm([g for g, _ in gvs], 1.0)
train = opt.apply_gradients(zip(grads, [v for _, v in gvs]))
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(25):
        _, l, n = sess.run([train, loss, norm], {x: data, y: labels})
        if i % 5 == 0:
            print("LOSS", i, l, n)
    print("ACC", sess.run(accuracy, {x: data, y: labels}))
'''


def test_layers_clipped_by_global_norm_fetching_the_norm_equal_tf_1_15(tmp_path, tf1_python):
    """tf.layers trained through the pairs (the layers' variables listed as TF1 listed
    them), clipped by their global norm, the norm fetched with the train op: TF1 computed
    it from the gradients before the update, as the step does."""
    legacy, migrated = upgraded(tmp_path, "global_norm", GLOBAL_NORM)
    assert not set(TF1_LEFT.findall(code_only(migrated))), migrated
    step = migrated[migrated.index("def train_step(x, y):"):]
    assert "    variables = [*hidden_layer.trainable_variables, *logits_layer.trainable_variables]\n" \
           "    gradients = tape.gradient(loss, variables)\n" \
           "    gvs = list(zip(gradients, variables))\n" \
           "    grads, norm = tf.clip_by_global_norm([g for g, _ in gvs], 1.0)\n" \
           "    opt.apply_gradients(zip(grads, [v for _, v in gvs]))\n" \
           "    return loss, norm\n" in step, step
    assert "opt = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)" in migrated, migrated
    report = settled_and_verified(tmp_path, legacy, "global_norm", tf1_python)
    assert {"hidden/kernel/Momentum", "logits/bias"} <= {v["name"] for v in report["variables"]}


@pytest.mark.parametrize("old, new, why", [
    # TF1 listed every trainable variable, this one paired with None
    ('b1 = tf.Variable(tf.zeros([8]), name="b1")\n',
     'b1 = tf.Variable(tf.zeros([8]), name="b1")\nunused = tf.Variable(tf.zeros([2]), name="unused")\n',
     "over trainable variables its loss does not reach"),
    (RUN, "_, value, pairs = sess.run([train_op, loss, clipped], {x: data, y: target})",
     "a run fetching 'clipped', compute_gradients' pairs"),
    (APPLY, APPLY.replace("optimizer.apply", "tf.train.AdamOptimizer(0.01).apply"),
     "apply_gradients() by another optimizer than the one that computed its gradients"),
    (CLIP + APPLY, "train_op = optimizer.apply_gradients([(tf.clip_by_value(g, -1., 1.), v) "
                   "for g, v in grads_and_vars])\n",
     "apply_gradients() of pairs computed in its call"),
])
def test_pairs_tf1_gave_otherwise_keep_the_graph_program_and_say_why(old, new, why, tmp_path):
    assert old in CLIPPED
    out = upgrade_says(tmp_path, "clipped", CLIPPED.replace(old, new))
    assert "(shims.GraphProgram); not written as native TF2 steps: " in out and why in out, out


TAPED = '''"""Gradients taken with tf.gradients over the trainable variables, clipped by their global
norm, applied with zip (the PTB tutorial's form)."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(2)
data = rng.rand(40, 5).astype(np.float32)
labels = (data.sum(1) > 2.5).astype(np.int64)

x = tf.placeholder(tf.float32, [None, 5])
y = tf.placeholder(tf.int64, [None])
W = tf.Variable(tf.random_normal([5, 8], stddev=0.4, seed=3), name="W")
b = tf.Variable(tf.zeros([8]), name="b")
V = tf.Variable(tf.random_normal([8, 2], stddev=0.4, seed=4), name="V")
logits = tf.matmul(tf.nn.relu(tf.matmul(x, W) + b), V)
cost = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
tvars = tf.trainable_variables()
grads, norm = tf.clip_by_global_norm(tf.gradients(cost, tvars), 1.0)
optimizer = tf.train.GradientDescentOptimizer(0.5)
train_op = optimizer.apply_gradients(zip(grads, tvars))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for i in range(20):
        _, c, n = sess.run([train_op, cost, norm], {x: data, y: labels})
        if i % 5 == 0:
            print("COST", i, c, n)
'''


def test_tf_gradients_over_the_trainable_variables_are_the_tapes_and_equal_tf_1_15(tmp_path, tf1_python):
    """`grads, norm = tf.clip_by_global_norm(tf.gradients(cost, tvars), 1.0)` and
    `apply_gradients(zip(grads, tvars))` (the PTB tutorial's form): the collection is the
    list TF1 gave, the step's statement asks the tape."""
    legacy, migrated = upgraded(tmp_path, "taped", TAPED)
    assert not set(TF1_LEFT.findall(code_only(migrated))), migrated
    assert "tvars = [W, b, V]\n" in migrated, migrated
    assert "        cost = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))\n" \
           "    grads, norm = tf.clip_by_global_norm(tape.gradient(cost, tvars), 1.0)\n" \
           "    optimizer.apply_gradients(zip(grads, tvars))\n" \
           "    return cost, norm\n" in migrated, migrated
    report = settled_and_verified(tmp_path, legacy, "taped", tf1_python)
    assert {"W", "b", "V"} <= {v["name"] for v in report["variables"]}


@pytest.mark.parametrize("old, new, why", [
    ("        _, c, n = sess.run([train_op, cost, norm], {x: data, y: labels})\n",
     "        _, c, n = sess.run([train_op, cost, norm], {x: data, y: labels})\n"
     "        sess.run(grads, {x: data, y: labels})\n",
     "a run computing 'grads' (tf.gradients) without its train op, whose tape gives them"),
    ("W = tf.Variable(tf.random_normal([5, 8], stddev=0.4, seed=3), name=\"W\")",
     "W = tf.Variable(tf.random_normal([5, 8], stddev=0.4, seed=3), name=\"W\")\nh = tf.layers.dense(x, 3)",
     "tf.gradients() over a collection holding layers' variables"),
    ("tf.gradients(cost, tvars)", "tf.gradients(cost, tvars, stop_gradients=[b])",
     "tf.gradients() of something other than a graph name, or with its other arguments"),
])
def test_tf_gradients_the_tape_cannot_give_keep_the_graph_program_and_say_why(old, new, why, tmp_path):
    assert old in TAPED
    out = upgrade_says(tmp_path, "taped", TAPED.replace(old, new))
    assert "(shims.GraphProgram); not written as native TF2 steps: " + why in out, out
