"""A graph value fed in place of what it computes (#58): TF1 let a run feed any tensor
(`sess.run(ctrain, {S: bs, a: ba})`, DDPG's critic learning from the batch's actions where
the actor's output stood). A native step takes it as a parameter and does not compute it;
where that would change what TF1 computed (the run fetches it, trains what it is computed
from, its dtype or the shape a layer is built from is unproven) the program says why and
stays in graph mode. Also: a class method the graph calls is read like a module function
(a builder taking arguments makes variables: not a value's method), and a method's own
locals are not the graph's names of the same spelling."""
import os

import pytest

from test_native_programs import TF1_LEFT, cli, code_only, upgraded

pytest.importorskip("tensorflow")

DDPG = open(os.path.join(os.path.dirname(__file__), "programs", "ddpg_soft_target.py")).read()
CRITIC_RUN = "_, td = self.sess.run([self.ctrain, self.td_error], {self.S: bs, self.a: ba, self.R: br, self.S_: bs_})"
ACTOR_RUN = "self.sess.run(self.atrain, {self.S: bs})"


def said(tmp_path, source) -> str:
    path = tmp_path / "agent.py"
    path.write_text(source)
    return cli("upgrade", path, "--no-cache").stdout


def test_the_fed_value_is_the_critic_steps_parameter(tmp_path):
    """The critic's step takes the batch's actions (a float32 tensor of any shape: its
    signature's TensorSpec(None, tf.float32)) and calls no actor layer; the steps calling the
    critic's layers on the actor's own action are traced first (Keras builds a layer from its
    first input's shape, which the fed parameter's signature does not give)."""
    _, migrated = upgraded(tmp_path, "ddpg", DDPG)
    assert not set(TF1_LEFT.findall(code_only(migrated))), migrated
    critic = migrated[migrated.index("    def train_step_1(self, S, S_, R, a_1):"):]
    critic = critic[:critic.index("\n    def ", 10)]
    assert "actor_eval" not in critic and "self.forward(" not in critic, critic
    assert "tf.TensorSpec([None, 1], tf.float32), tf.TensorSpec(None, tf.float32)])" in migrated, migrated
    assert "self.train_step_1(S=bs, S_=bs_, R=br, a_1=ba)" in migrated, migrated
    init = migrated[migrated.index("def __init__"):migrated.index("def forward")]
    assert init.index("self.train_step.get_concrete_function()") \
        < init.index("self.train_step_1.get_concrete_function()"), init
    again = cli("upgrade", tmp_path / "out" / "ddpg.py", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr


@pytest.mark.parametrize("old, new, why", [
    (CRITIC_RUN, CRITIC_RUN.replace("_, td = ", "_, td, _ = ").replace("self.td_error]", "self.td_error, self.a]"),
     "a run fetching 'self.a', which it feeds"),
    # TF1's gradients of the actor still flowed through what computes the fed value
    (ACTOR_RUN, "self.sess.run(self.atrain, {self.S: bs, self.a: ba})",
     "a run feeding 'self.a' while training variables it is computed from"),
    ('self.a = tf.multiply(a, self.a_bound, name="scaled_a")', "self.a = tf.cast(a, tf.float32) * self.a_bound",
     "computed by more than layers and float32 arithmetic"),
    # a variable of the state: its dtype is its initial value's (this read crashed the reader)
    ('self.a = tf.multiply(a, self.a_bound, name="scaled_a")',
     'W = tf.get_variable("W", [a_dim, a_dim])\n                self.a = tf.tanh(tf.matmul(a, W)) * self.a_bound',
     "computed by more than layers and float32 arithmetic"),
    # the critic's evaluation layers are then called only on the fed actions
    (ACTOR_RUN, "pass", "is called on a fed graph value ('self.a') by the only steps calling it"),
])
def test_a_fed_value_a_step_cannot_take_keeps_the_program_and_says_why(old, new, why, tmp_path):
    assert old in DDPG
    out = said(tmp_path, DDPG.replace(old, new))
    assert "Session program kept in TF1 graph mode: a feed of self.a, a graph value, not a placeholder" in out, out
    assert why in out, out


BUILDER = '''import numpy as np
import tensorflow as tf


class Agent(object):
    def __init__(self):
        self.s = tf.placeholder(tf.float32, [None, 3], "s")
        self.q = self._net(self.s, "eval")
        self.loss = tf.reduce_mean(tf.square(self.q - 1.0))
        self.train_op = tf.train.GradientDescentOptimizer(0.1).minimize(self.loss)
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def _net(self, s, scope):
        with tf.variable_scope(scope):
            return tf.layers.dense(s, 1, name="q")

    def learn(self, s):
        return self.sess.run([self.train_op, self.loss], {self.s: s})[1]


print("LOSS", Agent().learn(np.ones((2, 3), np.float32)))
'''


def test_a_method_the_graph_calls_with_arguments_is_read_as_code(tmp_path):
    """`self._net(self.s, "eval")` makes a layer: it was taken for a value's method (its
    variables then neither made once nor trained: `variables = []`); it is read as the
    module's functions are, and the program says why it is not native."""
    out = said(tmp_path, BUILDER)
    assert "not written as native TF2 steps: the graph uses self._net(), which calls" in out, out
    done = cli("upgrade", tmp_path / "agent.py", "--diff", "--no-cache").stdout
    assert "variables = []" not in done and "shims.GraphProgram" in done, done


LOCALS = '''import numpy as np
import tensorflow as tf


class Agent(object):
    def __init__(self):
        self.s = tf.placeholder(tf.float32, [None, 3], "s")
        l1 = tf.layers.dense(self.s, 4, tf.nn.relu, name="l1")
        self.q = tf.layers.dense(l1, 1, name="q")
        kl = tf.reduce_mean(tf.square(self.q))
        self.loss = kl + 0.0
        self.train_op = tf.train.GradientDescentOptimizer(0.1).minimize(self.loss)
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def learn(self, s):
        l1 = s * 2.0  # the method's own locals, not __init__'s graph names
        _, kl = self.sess.run([self.train_op, self.loss], {self.s: l1})
        return kl


print("LOSS", Agent().learn(np.ones((2, 3), np.float32)))
'''


def test_a_methods_own_locals_are_not_the_graphs_names(tmp_path):
    """`l1`, `kl` are __init__'s graph locals and `learn`'s own: `learn` binding them is no
    rebinding of the graph's (they said "graph name 'kl' is rebound after the graph is built")."""
    out = said(tmp_path, LOCALS)
    assert "Session program converted to native TF2" in out, out
    assert "rebound" not in out, out
