"""An actor and a critic handed one Session, as the reinforcement-learning tutorials wrote
them: each class keeps ``self.sess = sess``, builds its net under its own variable scope,
trains with Adam under ``tf.variable_scope('train')`` (the critic's reopens it: TF1 named
its name scope ``train_1``, and with it the critic's Adam beta powers, which a checkpoint
holds), and names a local like an attribute (``logits`` and ``self.logits``). The script
makes the session, both objects, runs the initializer, hands ``sess.graph`` to a
FileWriter for TensorBoard, and plays episodes of a small deterministic environment, the
critic's TD error teaching the actor."""
import os
import sys

import numpy as np
import tensorflow as tf

GAMMA = 0.9
N_F, N_A = 4, 2


class Actor(object):
    def __init__(self, sess, n_features, n_actions, lr=0.01):
        self.sess = sess
        self.s = tf.placeholder(tf.float32, [1, n_features], "state")
        self.a = tf.placeholder(tf.int32, None, "act")
        self.td_error = tf.placeholder(tf.float32, None, "td_error")
        with tf.variable_scope("Actor"):
            l1 = tf.layers.dense(self.s, 8, tf.nn.relu, name="l1",
                                 kernel_initializer=tf.random_normal_initializer(0., .3, seed=1))
            logits = tf.layers.dense(l1, n_actions, name="logits",
                                     kernel_initializer=tf.random_normal_initializer(0., .3, seed=2))
            self.logits = logits * 1.0
            self.acts_prob = tf.nn.softmax(self.logits)
        with tf.variable_scope("exp_v"):
            log_prob = tf.log(self.acts_prob[0, self.a])
            self.exp_v = tf.reduce_mean(log_prob * self.td_error)
        with tf.variable_scope("train"):
            self.train_op = tf.train.AdamOptimizer(lr).minimize(-self.exp_v)

    def learn(self, s, a, td):
        feed_dict = {self.s: s[np.newaxis, :], self.a: a, self.td_error: td}
        _, exp_v = self.sess.run([self.train_op, self.exp_v], feed_dict)
        return exp_v

    def choose_action(self, s, rng):
        probs = self.sess.run(self.acts_prob, {self.s: s[np.newaxis, :]})
        return rng.choice(np.arange(probs.shape[1]), p=probs.ravel())


class Critic(object):
    def __init__(self, sess, n_features, lr=0.05):
        self.sess = sess
        self.s = tf.placeholder(tf.float32, [1, n_features], "state")
        self.v_ = tf.placeholder(tf.float32, [1, 1], "v_next")
        self.r = tf.placeholder(tf.float32, None, "r")
        with tf.variable_scope("Critic"):
            l1 = tf.layers.dense(self.s, 8, tf.nn.relu, name="l1",
                                 kernel_initializer=tf.random_normal_initializer(0., .3, seed=3))
            self.v = tf.layers.dense(l1, 1, name="V",
                                     kernel_initializer=tf.random_normal_initializer(0., .3, seed=4))
        with tf.variable_scope("squared_TD_error"):
            self.td_error = self.r + GAMMA * self.v_ - self.v
            self.loss = tf.square(self.td_error)
        with tf.variable_scope("train"):
            self.train_op = tf.train.AdamOptimizer(lr).minimize(self.loss)

    def learn(self, s, r, s_):
        s, s_ = s[np.newaxis, :], s_[np.newaxis, :]
        v_ = self.sess.run(self.v, {self.s: s_})
        td_error, _ = self.sess.run([self.td_error, self.train_op],
                                    {self.s: s, self.v_: v_, self.r: r})
        return td_error


class Corridor(object):
    """Four features, two actions; the reward is for the action the first feature asks for."""

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.t = 0
        return self.rng.rand(N_F)

    def step(self, a, s):
        self.t += 1
        return self.rng.rand(N_F), float(a == int(s[0] > 0.5)), self.t >= 15


logdir = sys.argv[1] if len(sys.argv) > 1 else "logs"
sess = tf.Session()
actor = Actor(sess, n_features=N_F, n_actions=N_A)
critic = Critic(sess, n_features=N_F)
sess.run(tf.global_variables_initializer())
tf.summary.FileWriter(os.path.join(logdir, "graph"), sess.graph).close()

env, choices = Corridor(1), np.random.RandomState(2)
for episode in range(6):
    s, total, td_sum = env.reset(), 0.0, 0.0
    while True:
        a = actor.choose_action(s, choices)
        s_, r, done = env.step(a, s)
        td_error = critic.learn(s, r, s_)
        actor.learn(s, a, td_error)
        total, td_sum, s = total + r, td_sum + float(np.squeeze(td_error)), s_
        if done:
            break
    print("EPISODE", episode, total, td_sum)
