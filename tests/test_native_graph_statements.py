"""Graph statements that bind nothing but read graph values (a print of a tensor, an
``assert`` on static shapes, hunkim's tutorials' form): TF1 ran them once while building the
graph; the native form runs them where the first kind of run computing their values is
traced, once, on the same symbolic tensors. Proven on TF 1.15; a statement no run computes
the values of keeps GraphProgram and says so."""
import pytest

from test_native_batchnorm import cli, proven  # (the CLI and the proof, shared)

PROGRAM = '''"""Softmax regression on one-hot labels, with the tutorial's checks among the graph code."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(1)
x_data = rng.rand(30, 4).astype(np.float32)
y_data = rng.randint(0, 3, (30, 1)).astype(np.int32)

X = tf.placeholder(tf.float32, [None, 4])
Y = tf.placeholder(tf.int32, [None, 1])
Y_one_hot = tf.one_hot(Y, 3)
print("one_hot rank", len(Y_one_hot.shape), "classes", Y_one_hot.shape[-1])
Y_one_hot = tf.reshape(Y_one_hot, [-1, 3])
W = tf.Variable(tf.random_normal([4, 3], seed=1), name="weight")
b = tf.Variable(tf.zeros([3]), name="bias")
logits = tf.matmul(X, W) + b
assert logits.shape.as_list() == Y_one_hot.shape.as_list()
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=Y_one_hot, logits=logits))
train = tf.train.GradientDescentOptimizer(0.5).minimize(cost)
prediction = tf.argmax(logits, 1)

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(20):
        _, c = sess.run([train, cost], {X: x_data, Y: y_data})
        if step % 5 == 0:
            print("step", step, "cost", c)
    print("pred", sess.run(prediction, {X: x_data}).tolist())
'''


def upgraded(tmp_path, source):
    (tmp_path / "src").mkdir(exist_ok=True)
    legacy = tmp_path / "src" / "checks.py"
    legacy.write_text(source)
    done = cli("upgrade", legacy, "--outtree", tmp_path / "out", "--no-cache")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return legacy, (tmp_path / "out" / "checks.py").read_text(), cli("upgrade", legacy, "--no-cache").stdout


@pytest.mark.slow
def test_prints_and_asserts_of_graph_values_run_where_their_step_is_traced(tmp_path, tf1_python):
    legacy, migrated, said = upgraded(tmp_path, PROGRAM)
    assert "GraphProgram" not in migrated and "compat.v1" not in migrated, said + migrated
    step = migrated[migrated.index("def train_step"):migrated.index("def compute_prediction")]
    assert step.index("Y_one_hot = tf.one_hot(Y, 3)") < step.index('print("one_hot rank"') \
        < step.index("Y_one_hot = tf.reshape(Y_one_hot, [-1, 3])"), step  # where it stood among them
    assert "assert logits.shape.as_list() == Y_one_hot.shape.as_list()" in step, step
    assert migrated.count('print("one_hot rank"') == 1 and migrated.count("assert logits") == 1, migrated
    report = proven(legacy, tmp_path / "out" / "checks.py", tf1_python)
    lines = [line for stream in report["streams"].values() for line in stream["lines"]]
    assert sum(line["tf1"] == [3, 3] for line in lines) == 1, lines  # printed once, as TF1 printed it


def test_a_graph_statement_no_run_computes_keeps_the_graph_program(tmp_path):
    source = PROGRAM.replace('prediction = tf.argmax(logits, 1)\n',
                             'prediction = tf.argmax(logits, 1)\nprint("prediction", prediction)\n')
    source = source.replace('    print("pred", sess.run(prediction, {X: x_data}).tolist())\n', "")
    _, migrated, said = upgraded(tmp_path, source)
    assert "shims.GraphProgram(" in migrated, migrated
    assert "not written as native TF2 steps: the graph statement 'print(\"prediction\", prediction)' " \
           "reads values no run computes" in said, said


def test_a_print_among_the_shared_model_keeps_it_in_each_step(tmp_path):
    """A print between statements several steps share would see, after a forward function,
    the values the statements below it bound: the steps keep their own statements."""
    source = PROGRAM.replace("logits = tf.matmul(X, W) + b\n",
                             "hidden = tf.matmul(X, W)\nprint(\"hidden\", hidden.shape[-1])\nhidden = hidden + 0.0\n"
                             "logits = hidden + b\n")
    _, migrated, said = upgraded(tmp_path, source)
    assert "GraphProgram" not in migrated and "def forward" not in migrated, said + migrated
    step = migrated[migrated.index("def train_step"):migrated.index("def compute_prediction")]
    assert step.index("hidden = tf.matmul(X, W)") < step.index('print("hidden"') \
        < step.index("hidden = hidden + 0.0"), step
    assert migrated.count('print("hidden"') == 1, migrated
