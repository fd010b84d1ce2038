"""A class's Session program, native (#58): an agent that builds its graph in __init__ (and
the build methods it calls), keeps placeholders as attributes, makes its own session and
runs it from its methods becomes a class with its layers made where it called them and
each kind of run a tf.function method; target networks follow by variable copies (hard
and soft). Proven on real TF 1.15 by `verify --program`; a class the native form does not
cover keeps the GraphProgram form and the finding says why."""
import pytest

from test_native_programs import TF1_LEFT, cli, code_only, upgraded, verified

pytest.importorskip("tensorflow")

DDPG_CRITIC = '''"""A critic with a target network softly updated toward it (tau), as DDPG code wrote it."""
import numpy as np
import tensorflow as tf

TAU = 0.1


class Critic(object):
    def __init__(self, n_features, lr=0.01):
        self.n_features = n_features
        self._build_net()
        e_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="critic/eval")
        t_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="critic/target")
        self.soft_update = [tf.assign(t, (1 - TAU) * t + TAU * e) for t, e in zip(t_params, e_params)]
        self.loss = tf.reduce_mean(tf.squared_difference(self.r + 0.9 * self.q_, self.q))
        self.train_op = tf.train.AdamOptimizer(lr).minimize(self.loss)
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def _build_net(self):
        self.s = tf.placeholder(tf.float32, [None, self.n_features], "s")
        self.s_ = tf.placeholder(tf.float32, [None, self.n_features], "s_")
        self.r = tf.placeholder(tf.float32, [None, 1], "r")
        init = tf.random_normal_initializer(0., 0.3, seed=4)
        with tf.variable_scope("critic"):
            with tf.variable_scope("eval"):
                h = tf.layers.dense(self.s, 8, tf.nn.relu, kernel_initializer=init, name="l1")
                self.q = tf.layers.dense(h, 1, kernel_initializer=init, name="q")
            with tf.variable_scope("target"):
                h_ = tf.layers.dense(self.s_, 8, tf.nn.relu, kernel_initializer=init, name="l1", trainable=False)
                self.q_ = tf.stop_gradient(tf.layers.dense(h_, 1, kernel_initializer=init, name="q",
                                                           trainable=False))

    def learn(self, s, r, s_):
        _, loss = self.sess.run([self.train_op, self.loss], {self.s: s, self.r: r, self.s_: s_})
        self.sess.run(self.soft_update)
        return loss

    def target_values(self, s_):
        return self.sess.run(self.q_, {self.s_: s_})


def main():
    rng = np.random.RandomState(1)
    critic = Critic(3)
    losses = []
    for step in range(25):
        s = rng.randn(6, 3).astype(np.float32)
        s_ = s + 0.1
        r = s[:, :1] * 0.5
        losses.append(critic.learn(s, r, s_))
    print("LOSSES", " ".join("%.6g" % v for v in losses[-10:]))
    print("TARGET", " ".join("%.5g" % v for v in critic.target_values(np.eye(3, dtype=np.float32)).ravel()))


if __name__ == "__main__":
    main()
'''


def test_a_copy_assigning_the_loops_second_variable_is_the_same_copy(tmp_path, tf1_python):
    """`[tf.assign(t, ...) for e, t in zip(e_params, t_params)]` (PPO's `[oldp.assign(p) for p,
    oldp in zip(pi_params, oldpi_params)]`): the variables assigned are the second
    collection's; the step assigns them as TF1 did, and the program is EQUIVALENT."""
    source = DDPG_CRITIC.replace("for t, e in zip(t_params, e_params)]", "for e, t in zip(e_params, t_params)]")
    assert source != DDPG_CRITIC
    legacy, migrated = upgraded(tmp_path, "critic", source)
    assert not set(TF1_LEFT.findall(code_only(migrated))), migrated
    assert "for t, e in zip([*self.critic_target_l1_layer.variables" in migrated, migrated
    verified(legacy, tmp_path / "out" / "critic.py", tf1_python)


@pytest.mark.parametrize("optimizer, slot", [
    ("AdamOptimizer(lr)", "critic/eval/l1/kernel/Adam"),
    # Keras' RMSprop trains the Keras layers; its mean square set to TF1's start (1) once made
    ("RMSPropOptimizer(lr, momentum=0.9)", "critic/eval/l1/kernel/RMSProp_1"),
])
def test_a_soft_target_update_becomes_a_step_of_assignments_equal_to_tf_1_15(optimizer, slot, tmp_path,
                                                                               tf1_python):
    legacy, migrated = upgraded(tmp_path, "critic", DDPG_CRITIC.replace("AdamOptimizer(lr)", optimizer))
    assert not set(TF1_LEFT.findall(code_only(migrated))), migrated
    assert "t.assign((1 - TAU) * t + TAU * e)" in migrated, migrated
    assert "def soft_update(self):" in migrated and "self.soft_update()" in migrated, migrated
    assert 'with tf.name_scope("critic/eval"):' in migrated, migrated  # TF1's variable names
    assert "self.train_step.get_concrete_function()" in migrated, migrated  # layers made before a copy
    again = cli("upgrade", tmp_path / "out" / "critic.py", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr
    report = verified(legacy, tmp_path / "out" / "critic.py", tf1_python)
    names = {v["name"] for v in report["variables"]}
    assert {"critic/target/l1/kernel", "critic/eval/q/bias", slot} <= names, names


def said(tmp_path, source):
    """What upgrade says of ``source`` (its TFM501 findings)."""
    path = tmp_path / "agent.py"
    path.write_text(source)
    return cli("upgrade", path, "--no-cache").stdout


AGENT = '''import numpy as np
import tensorflow as tf


class Agent(object):
    def __init__(self, n_features, n_actions):
        self.s = tf.placeholder(tf.float32, [None, n_features])
        self.a = tf.placeholder(tf.int32, [None])
        self.logits = tf.layers.dense(self.s, n_actions, name="pi")
        self.loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.a, logits=self.logits){extra})
        self.train_op = {optimizer}.minimize(self.loss)
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def learn(self, s, a):
        {learn}
        _, loss = self.sess.run([self.train_op, self.loss], {{self.s: s, self.a: a}})
        return loss
'''


@pytest.mark.parametrize("extra, optimizer, learn, why", [
    (" + tf.reduce_sum(tf.one_hot(self.a, n_actions))", "tf.train.AdamOptimizer(0.01)", "pass",
     "a step reads __init__'s local 'n_actions' (keep it on the object to convert)"),
    ("", "tf.train.FtrlOptimizer(0.01)", "pass",
     "FtrlOptimizer is kept (its Keras form is not proven equal here) and trains Keras "
     "layers, whose variables a TF1 optimizer cannot update"),
])
def test_a_class_the_native_form_does_not_cover_says_why(tmp_path, extra, optimizer, learn, why):
    out = said(tmp_path, AGENT.format(extra=extra, optimizer=optimizer, learn=learn))
    assert f"shims.GraphProgram); not written as native TF2 steps: {why}" in out, out


def test_a_class_program_is_written_as_methods(tmp_path):
    out = said(tmp_path, AGENT.format(extra="", optimizer="tf.train.GradientDescentOptimizer(0.1)", learn="pass"))
    assert "Session program converted to native TF2" in out, out
    done = cli("upgrade", tmp_path / "agent.py", "--diff", "--no-cache").stdout
    for line in ('+        self.pi_layer = tf.keras.layers.Dense(n_actions, name="pi")',
                 "+        self.optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)",
                 "+        self.train_step = tf.function(self.train_step, input_signature=[",
                 "+    def train_step(self, s, a):",
                 "+            logits = self.pi_layer(s)",
                 "+        loss = self.train_step(s, a).numpy()"):
        assert line in done, done


def test_copies_of_two_trained_nets_keep_the_graph_program_form(tmp_path):
    """TF1's collections of two trained scopes held the optimizer's slots, and zip() paired
    those too: copying the variables alone would not be TF1's program."""
    source = '''import tensorflow as tf


class Twin(object):
    def __init__(self):
        self.x = tf.placeholder(tf.float32, [None, 2])
        with tf.variable_scope("a"):
            ya = tf.layers.dense(self.x, 1, name="d")
        with tf.variable_scope("b"):
            yb = tf.layers.dense(self.x, 1, name="d")
        self.loss = tf.reduce_mean(ya + yb)
        self.train_op = tf.train.AdamOptimizer(0.1).minimize(self.loss)
        a_vars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="a")
        b_vars = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="b")
        self.sync = [tf.assign(t, e) for t, e in zip(a_vars, b_vars)]
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def step(self, x):
        self.sess.run(self.sync)
        _, loss = self.sess.run([self.train_op, self.loss], {self.x: x})
        return loss
'''
    out = said(tmp_path, source)
    assert "not written as native TF2 steps: variable copies between two trained collections (TF1 copied " \
           "their optimizer slots too)" in out, out


BUILT = '''import tensorflow as tf


class Agent(object):
    def __init__(self, n_features):
        self.n_features = n_features
        self._build_inputs()
        self._build_net()
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def _build_inputs(self):
        self.s = tf.placeholder(tf.float32, [None, self.n_features])

    def _build_net(self):
        self.q = tf.layers.dense(self.s, 2, name="q")

    def act(self, s):
        return self.sess.run(self.q, {self.s: s})
'''


def test_a_graph_made_by_build_methods_alone_is_native_and_an_emptied_one_goes(tmp_path):
    """The layers stay in the build method that made them; a build method left with
    nothing to do (placeholders only) goes, with its call."""
    out = said(tmp_path, BUILT)
    assert "Session program converted to native TF2" in out, out
    done = cli("upgrade", tmp_path / "agent.py", "--diff", "--no-cache").stdout
    for line in ("-        self._build_inputs()", "-    def _build_inputs(self):",
                 '+        self.q_layer = tf.keras.layers.Dense(2, name="q")',
                 "+        self.compute_q = tf.function(self.compute_q, input_signature=["
                 "tf.TensorSpec([None, self.n_features], tf.float32)])",
                 "+        return self.compute_q(s).numpy()"):
        assert line in done, done
    assert "    def _build_net(self):\n" in done, done


GET_VARIABLE_AGENT = '''"""A DQN whose nets are raw tf.get_variable weights in nested variable scopes, each
variable put in its net's own collection (as many RL tutorials wrote it); the target net is
replaced from the collection pairs, RMSProp trains the evaluation net."""
import numpy as np
import tensorflow as tf

np.random.seed(3)
tf.set_random_seed(3)


class QAgent:
    def __init__(self, n_actions, n_features, learning_rate=0.05, reward_decay=0.9,
                 replace_target_iter=4, memory_size=30, batch_size=6, log_dir=None):
        self.n_actions = n_actions
        self.n_features = n_features
        self.lr = learning_rate
        self.gamma = reward_decay
        self.replace_target_iter = replace_target_iter
        self.memory_size = memory_size
        self.batch_size = batch_size
        self.learn_step_counter = 0
        self.memory_counter = 0
        self.memory = np.zeros((self.memory_size, n_features * 2 + 2))
        self._build_net()
        t_params = tf.get_collection('target_params')
        e_params = tf.get_collection('eval_params')
        self.replace_target_op = [tf.assign(t, e) for t, e in zip(t_params, e_params)]
        self.sess = tf.Session()
        if log_dir:
            tf.summary.FileWriter(log_dir, self.sess.graph)
        self.sess.run(tf.global_variables_initializer())
        self.cost_his = []

    def _build_net(self):
        self.s = tf.placeholder(tf.float32, [None, self.n_features], name='s')
        self.q_target = tf.placeholder(tf.float32, [None, self.n_actions], name='Q_target')
        with tf.variable_scope('eval_net'):
            c_names, n_hidden, w_init, b_init = \\
                ['eval_params', tf.GraphKeys.GLOBAL_VARIABLES], 8, \\
                tf.random_normal_initializer(0., 0.3), tf.constant_initializer(0.1)
            with tf.variable_scope('hidden'):
                w1 = tf.get_variable('w1', [self.n_features, n_hidden], initializer=w_init, collections=c_names)
                b1 = tf.get_variable('b1', [1, n_hidden], initializer=b_init, collections=c_names)
                l1 = tf.nn.relu(tf.matmul(self.s, w1) + b1)
            with tf.variable_scope('out'):
                w2 = tf.get_variable('w2', [n_hidden, self.n_actions], initializer=w_init, collections=c_names)
                b2 = tf.get_variable('b2', [1, self.n_actions], initializer=b_init, collections=c_names)
                self.q_eval = tf.matmul(l1, w2) + b2
        with tf.variable_scope('loss'):
            self.loss = tf.reduce_mean(tf.squared_difference(self.q_target, self.q_eval))
        with tf.variable_scope('train'):
            self._train_op = tf.train.RMSPropOptimizer(self.lr).minimize(self.loss)

        self.s_ = tf.placeholder(tf.float32, [None, self.n_features], name='s_')
        with tf.variable_scope('target_net'):
            c_names = ['target_params', tf.GraphKeys.GLOBAL_VARIABLES]
            with tf.variable_scope('hidden'):
                w1 = tf.get_variable('w1', [self.n_features, n_hidden], initializer=w_init, collections=c_names)
                b1 = tf.get_variable('b1', [1, n_hidden], initializer=b_init, collections=c_names)
                l1 = tf.nn.relu(tf.matmul(self.s_, w1) + b1)
            with tf.variable_scope('out'):
                w2 = tf.get_variable('w2', [n_hidden, self.n_actions], initializer=w_init, collections=c_names)
                b2 = tf.get_variable('b2', [1, self.n_actions], initializer=b_init, collections=c_names)
                self.q_next = tf.matmul(l1, w2) + b2

    def store_transition(self, s, a, r, s_):
        transition = np.hstack((s, [a, r], s_))
        self.memory[self.memory_counter % self.memory_size, :] = transition
        self.memory_counter += 1

    def choose_action(self, observation):
        observation = observation[np.newaxis, :]
        if np.random.uniform() < 0.8:
            actions_value = self.sess.run(self.q_eval, feed_dict={self.s: observation})
            return np.argmax(actions_value)
        return np.random.randint(0, self.n_actions)

    def learn(self):
        if self.learn_step_counter % self.replace_target_iter == 0:
            self.sess.run(self.replace_target_op)
        top = min(self.memory_counter, self.memory_size)
        batch_memory = self.memory[np.random.choice(top, size=self.batch_size), :]
        q_next, q_eval = self.sess.run(
            [self.q_next, self.q_eval],
            feed_dict={self.s_: batch_memory[:, -self.n_features:],
                       self.s: batch_memory[:, :self.n_features]})
        q_target = q_eval.copy()
        batch_index = np.arange(self.batch_size, dtype=np.int32)
        eval_act_index = batch_memory[:, self.n_features].astype(int)
        reward = batch_memory[:, self.n_features + 1]
        q_target[batch_index, eval_act_index] = reward + self.gamma * np.max(q_next, axis=1)
        _, self.cost = self.sess.run([self._train_op, self.loss],
                                     feed_dict={self.s: batch_memory[:, :self.n_features],
                                                self.q_target: q_target})
        self.cost_his.append(self.cost)
        self.learn_step_counter += 1


def main():
    agent = QAgent(3, 4, log_dir="logs")
    state = np.zeros(4)
    for step in range(40):
        action = agent.choose_action(state)
        nxt = np.roll(state, 1)
        nxt[action] += 0.5
        agent.store_transition(state, action, float(action == 1), nxt)
        state = nxt % 2.0
        if step >= 6:
            agent.learn()
    print("COSTS", " ".join("%.6g" % c for c in agent.cost_his[-8:]))


if __name__ == "__main__":
    main()
'''


def test_a_class_of_get_variable_nets_in_collections_keeps_its_variables_on_the_object(tmp_path, tf1_python):
    """Raw tf.get_variable weights bound to a build method's locals (the same names again
    for the target net, in other scopes), put in named collections the replacement op reads:
    native, the variables kept on the object by scope, the collections gone, equal to TF 1.15
    (RMSProp's slots by TF1's names, under the train scope). The session's graph written for
    TensorBoard is the train step's graph (tf.summary.graph)."""
    legacy, migrated = upgraded(tmp_path, "agent", GET_VARIABLE_AGENT)
    assert not set(TF1_LEFT.findall(code_only(migrated))) - {"compat.v1"}, migrated
    assert "GraphKeys" not in migrated and "c_names" not in migrated and "get_collection" not in migrated, migrated
    assert "import shims" not in migrated and "tf.random.set_seed(3)" in migrated, migrated  # (the module's seed)
    assert 'with tf.summary.create_file_writer(log_dir).as_default():\n' \
           '                tf.summary.graph(self.train_step.get_concrete_function().graph)' in migrated, migrated
    for line in ("self.eval_net_hidden_w1 = tf.Variable(w_init(shape=[self.n_features, n_hidden]), name='w1')",
                 "self.target_net_out_b2 = tf.Variable(b_init(shape=[1, self.n_actions]), name='b2')",
                 "l1 = tf.nn.relu(tf.matmul(s_, self.target_net_hidden_w1) + self.target_net_hidden_b1)",
                 "variables = [self.eval_net_hidden_w1, self.eval_net_hidden_b1, self.eval_net_out_w2, "
                 "self.eval_net_out_b2]"):
        assert line in migrated, migrated
    again = cli("upgrade", tmp_path / "out" / "agent.py", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr
    report = verified(legacy, tmp_path / "out" / "agent.py", tf1_python)
    names = {v["name"] for v in report["variables"]}
    assert {"target_net/out/b2", "eval_net/hidden/w1", "train/eval_net/hidden/w1/RMSProp"} <= names, names


@pytest.mark.parametrize("old, new, why", [
    ("                l1 = tf.nn.relu(tf.matmul(self.s, w1) + b1)\n",
     "                l1 = tf.nn.relu(tf.matmul(self.s, w1) + b1)\n                self.kinds = len(c_names)\n",
     "c_names"),
    ("['eval_params', tf.GraphKeys.GLOBAL_VARIABLES]", "['eval_params']",
     "is put in the collections c_names, not a list here with the global variables"),
])
def test_collections_the_native_form_cannot_drop_keep_the_graph_program_form(tmp_path, old, new, why):
    assert old in GET_VARIABLE_AGENT
    out = said(tmp_path, GET_VARIABLE_AGENT.replace(old, new, 1))
    assert "not written as native TF2 steps" in out and why in out, out


HANDED = '''"""A policy-gradient actor and a critic handed the script's one session (the actor-critic
tutorials' form): the actor ascends its objective (minimize(-exp_v)), its feed dict is bound
in the method, the critic's next value is fed through a private attribute (self._v_next)."""
import numpy as np
import tensorflow as tf


class Actor(object):
    def __init__(self, sess, n_features, n_actions, lr=0.02):
        self.sess = sess
        self.s = tf.placeholder(tf.float32, [1, n_features])
        self.a = tf.placeholder(tf.int32, None)
        self.td = tf.placeholder(tf.float32, None)
        with tf.variable_scope("Actor"):
            h = tf.layers.dense(self.s, 6, tf.nn.relu, name="h",
                                kernel_initializer=tf.random_normal_initializer(0., .3, seed=1))
            self.probs = tf.nn.softmax(tf.layers.dense(h, n_actions, name="probs",
                                                       kernel_initializer=tf.random_normal_initializer(0., .3, seed=2)))
        self.exp_v = tf.reduce_mean(tf.log(self.probs[0, self.a]) * self.td)
        self.train_op = tf.train.AdamOptimizer(lr).minimize(-self.exp_v)

    def learn(self, s, a, td):
        feed = {self.s: s[np.newaxis, :], self.a: a, self.td: td}
        _, exp_v = self.sess.run([self.train_op, self.exp_v], feed)
        return exp_v

    def act(self, s):
        return int(np.argmax(self.sess.run(self.probs, {self.s: s[np.newaxis, :]})))


class Critic(object):
    def __init__(self, sess, n_features, lr=0.05):
        self.sess = sess
        self.s = tf.placeholder(tf.float32, [1, n_features])
        self._v_next = tf.placeholder(tf.float32, [1, 1])
        self.r = tf.placeholder(tf.float32, None)
        with tf.variable_scope("Critic"):
            self.v = tf.layers.dense(self.s, 1, name="v",
                                     kernel_initializer=tf.random_normal_initializer(0., .3, seed=3))
        self.td = self.r + 0.9 * self._v_next - self.v
        self.loss = tf.reduce_mean(tf.square(self.td))
        self.optimizer = tf.train.GradientDescentOptimizer(lr).minimize(self.loss)

    def learn(self, s, r, s_):
        v_next = self.sess.run(self.v, {self.s: s_[np.newaxis, :]})
        td, _ = self.sess.run([self.td, self.optimizer], {self.s: s[np.newaxis, :], self._v_next: v_next, self.r: r})
        return td


sess = tf.Session()
actor = Actor(sess, 3, 2)
critic = Critic(sess, 3)
sess.run(tf.global_variables_initializer())
rng = np.random.RandomState(4)
for episode in range(3):
    total = 0.0
    s = rng.rand(3)
    for t in range(12):
        a = actor.act(s)
        s_, r = rng.rand(3), float(a == int(s[0] > 0.5))
        td = critic.learn(s, r, s_)
        total += actor.learn(s, a, td)
        s = s_
    print("EPISODE", episode, total)
sess.close()
'''


def test_classes_handed_the_scripts_session_are_native_and_equal_tf_1_15(tmp_path, tf1_python):
    """#58: the classes take no session (their constructors and the script's calls drop it),
    the script's session, initializer run and close() go; minimize(-exp_v) is the gradient of
    -exp_v under the tape."""
    legacy, migrated = upgraded(tmp_path, "handed", HANDED)
    assert not set(TF1_LEFT.findall(code_only(migrated))) and "shims" not in migrated, migrated
    for line in ("    def __init__(self, n_features, n_actions, lr=0.02):\n",
                 "    def __init__(self, n_features, lr=0.05):\n",
                 "actor = Actor(3, 2)\ncritic = Critic(3)\n",
                 "            loss_1 = -exp_v\n",  # (the file's own names keep theirs: Critic's loss)
                 "        gradients = tape.gradient(loss_1, variables)\n",
                 '        feed = {"s": s[np.newaxis, :], "a": a, "td": td}\n',
                 "    def train_step(self, s, v_next, r):\n"):
        assert line in migrated, migrated
    assert "sess" not in code_only(migrated), migrated
    again = cli("upgrade", tmp_path / "out" / "handed.py", "--no-cache")
    assert again.returncode == 0 and "0 would change" in again.stderr, again.stdout + again.stderr
    report = verified(legacy, tmp_path / "out" / "handed.py", tf1_python)
    names = {v["name"] for v in report["variables"]}
    assert {"Actor/h/kernel", "Critic/v/bias", "Actor/h/kernel/Adam_1", "beta1_power"} <= names, names


def test_the_handed_native_edits_use_the_files_own_tensorflow_name(tmp_path):
    """Written natively under ``import tensorflow as T``: the graph writes (given by keyword)
    and the module's seed are ``T.summary`` / ``T.random.set_seed``, not a ``tf`` the file
    never bound."""
    source = HANDED.replace("import tensorflow as tf\n", "import tensorflow as T\n").replace("tf.", "T.")
    source = source.replace("import numpy as np\n", "import numpy as np\n", 1).replace(
        "\n\nclass Actor", "\nT.set_random_seed(2)\n\n\nclass Actor", 1).replace(
        "sess.run(T.global_variables_initializer())\n",
        "sess.run(T.global_variables_initializer())\nT.summary.FileWriter(logdir='logs', graph=sess.graph)\n")
    out = said(tmp_path, source)
    assert "the Session handed to Actor, Critic goes" in out, out
    done = cli("upgrade", tmp_path / "agent.py", "--diff", "--no-cache").stdout
    for text in ("+T.random.set_seed(2)", "+with T.summary.create_file_writer('logs').as_default():",
                 "+    T.summary.graph(actor.train_step.get_concrete_function().graph)"):
        assert text in done, done
    assert "+tf." not in done and "import tensorflow as tf" not in done, done


@pytest.mark.parametrize("line, said_, written", [
    # the session's graph written for TensorBoard: each object's training step's graph
    ("tf.summary.FileWriter('logs', sess.graph).close()\n", "the Session handed to Actor, Critic goes",
     "with tf.summary.create_file_writer('logs').as_default():\n"
     "    tf.summary.graph(actor.train_step.get_concrete_function().graph)\n"
     "    tf.summary.graph(critic.train_step.get_concrete_function().graph)\n"),
    # read for more: the shared graph stays, and the classes say why they are not native
    ("print(len(sess.graph.get_operations()))\n",
     "not written as native TF2 steps: the script that hands it the session reads the session's graph", ""),
])
def test_the_handed_sessions_graph_written_or_read(line, said_, written, tmp_path):
    source = HANDED.replace("sess.run(tf.global_variables_initializer())\n",
                            "sess.run(tf.global_variables_initializer())\n" + line)
    out = said(tmp_path, source)
    assert said_ in out, out
    done = cli("upgrade", tmp_path / "agent.py", "--diff", "--no-cache").stdout
    assert all(f"+{text}" in done for text in written.splitlines()), done
