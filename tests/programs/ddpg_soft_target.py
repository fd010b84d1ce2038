"""A DDPG agent as the RL tutorials wrote it: one class makes its own Session, builds an
actor and a critic twice each (evaluation and target nets of tf.layers in nested variable
scopes, the target nets not trainable), collects each net's variables by scope, and makes a
soft target update, a list of tf.assign(t, (1 - tau) * t + tau * e) over joined collections.
The actor ascends the critic's value of its own action (minimize(-q) over the actor's
variables); the critic learns the TD target with the batch's actions fed in place of the
actor's output (sess.run(ctrain, {S: bs, a: ba, R: br, S_: bs_}): TF1 let a fed value
replace what a tensor computes). The script plays a small deterministic task from a replay
memory sampled with a seeded numpy RandomState."""
import numpy as np
import tensorflow as tf

tf.set_random_seed(7)  # one draw of initial values: the same check in every run

GAMMA = 0.9
TAU = 0.05
MEMORY = 32
BATCH = 8


class DDPG(object):
    def __init__(self, a_dim, s_dim, a_bound, lr_a=0.001, lr_c=0.002):
        self.memory = np.zeros((MEMORY, s_dim * 2 + a_dim + 1), dtype=np.float32)
        self.pointer = 0
        self.sess = tf.Session()
        self.a_dim, self.s_dim, self.a_bound = a_dim, s_dim, a_bound
        self.S = tf.placeholder(tf.float32, [None, s_dim], "s")
        self.S_ = tf.placeholder(tf.float32, [None, s_dim], "s_")
        self.R = tf.placeholder(tf.float32, [None, 1], "r")

        with tf.variable_scope("Actor"):
            with tf.variable_scope("eval"):
                net = tf.layers.dense(self.S, 16, activation=tf.nn.relu, name="l1")
                a = tf.layers.dense(net, a_dim, activation=tf.nn.tanh, name="a")
                self.a = tf.multiply(a, self.a_bound, name="scaled_a")
            with tf.variable_scope("target"):
                net_ = tf.layers.dense(self.S_, 16, activation=tf.nn.relu, name="l1", trainable=False)
                a_ = tf.layers.dense(net_, a_dim, activation=tf.nn.tanh, name="a", trainable=False)
                a_ = tf.multiply(a_, self.a_bound, name="scaled_a")
        with tf.variable_scope("Critic"):
            # fed the batch's actions when the critic learns, the actor's own when it acts
            with tf.variable_scope("eval"):
                h = tf.layers.dense(tf.concat([self.S, self.a], 1), 16, activation=tf.nn.relu, name="l1")
                q = tf.layers.dense(h, 1, name="q")
            with tf.variable_scope("target"):
                h_ = tf.layers.dense(tf.concat([self.S_, a_], 1), 16, activation=tf.nn.relu, name="l1",
                                     trainable=False)
                q_ = tf.layers.dense(h_, 1, name="q", trainable=False)

        self.ae_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="Actor/eval")
        self.at_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="Actor/target")
        self.ce_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="Critic/eval")
        self.ct_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="Critic/target")
        self.soft_replace = [tf.assign(t, (1 - TAU) * t + TAU * e)
                             for t, e in zip(self.at_params + self.ct_params, self.ae_params + self.ce_params)]

        q_target = self.R + GAMMA * q_
        self.td_error = tf.reduce_mean(tf.squared_difference(q_target, q))
        self.ctrain = tf.train.AdamOptimizer(lr_c).minimize(self.td_error, var_list=self.ce_params)
        a_loss = -tf.reduce_mean(q)
        self.atrain = tf.train.AdamOptimizer(lr_a).minimize(a_loss, var_list=self.ae_params)

        self.sess.run(tf.global_variables_initializer())

    def choose_action(self, s):
        return self.sess.run(self.a, {self.S: s[np.newaxis, :]})[0]

    def learn(self, rng):
        self.sess.run(self.soft_replace)
        bt = self.memory[rng.choice(MEMORY, size=BATCH), :]
        bs = bt[:, :self.s_dim]
        ba = bt[:, self.s_dim: self.s_dim + self.a_dim]
        br = bt[:, -self.s_dim - 1: -self.s_dim]
        bs_ = bt[:, -self.s_dim:]
        self.sess.run(self.atrain, {self.S: bs})
        _, td = self.sess.run([self.ctrain, self.td_error], {self.S: bs, self.a: ba, self.R: br, self.S_: bs_})
        return td

    def store_transition(self, s, a, r, s_):
        self.memory[self.pointer % MEMORY, :] = np.hstack((s, a, [r], s_))
        self.pointer += 1


rng = np.random.RandomState(7)
agent = DDPG(a_dim=1, s_dim=3, a_bound=2.0)
s = rng.rand(3).astype(np.float32)
for episode in range(3):
    total, errors = 0.0, []
    for t in range(20):
        a = np.clip(agent.choose_action(s) + rng.normal(0.0, 0.3), -2.0, 2.0)
        s_ = np.clip(s + 0.1 * np.concatenate([a, -a, a]) + 0.05 * rng.rand(3), -1.0, 1.0).astype(np.float32)
        r = float(-0.1 * np.sum(np.square(s_)))
        agent.store_transition(s, a, r, s_)
        if agent.pointer >= BATCH:
            errors.append(agent.learn(rng))
        total += r
        s = s_
    print("EPISODE", episode, total)
    print("TD", " ".join("%.6f" % e for e in errors[-4:]))
print("ACTION", " ".join("%.6f" % v for v in agent.choose_action(np.array([0.1, -0.2, 0.3], np.float32))))
