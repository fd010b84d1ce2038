"""A Q-learning agent class owning its Session, as RL tutorials wrote it: the placeholders
are attributes, the network is tf.layers made in __init__, the session is made there and
initialised, choose_action() and learn() call self.sess.run with feeds keyed by the
attributes, trained with momentum; the script plays a small deterministic corridor with
an epsilon-greedy policy drawn from its own NumPy generator."""
import numpy as np
import tensorflow as tf

N_STATES, N_ACTIONS = 5, 2


class QAgent(object):
    def __init__(self, n_features, n_actions, lr=0.05, gamma=0.9):
        self.gamma = gamma
        self.s = tf.placeholder(tf.float32, [None, n_features], name="s")
        self.q_target = tf.placeholder(tf.float32, [None, n_actions], name="q_target")
        hidden = tf.layers.dense(self.s, 10, tf.nn.relu, name="l1",
                                 kernel_initializer=tf.random_normal_initializer(0., 0.3, seed=1))
        self.q_eval = tf.layers.dense(hidden, n_actions, name="q",
                                      kernel_initializer=tf.random_normal_initializer(0., 0.3, seed=2))
        self.loss = tf.reduce_mean(tf.squared_difference(self.q_target, self.q_eval))
        self.train_op = tf.train.MomentumOptimizer(lr, 0.9).minimize(self.loss)
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())

    def choose_action(self, observation, rng, epsilon):
        if rng.uniform() < epsilon:
            values = self.sess.run(self.q_eval, feed_dict={self.s: observation[np.newaxis, :]})
            return int(np.argmax(values))
        return int(rng.randint(0, N_ACTIONS))

    def learn(self, s, a, r, s_):
        q_next = self.sess.run(self.q_eval, feed_dict={self.s: s_[np.newaxis, :]})
        q_target = self.sess.run(self.q_eval, feed_dict={self.s: s[np.newaxis, :]})
        q_target[0, a] = r + self.gamma * np.max(q_next)
        _, cost = self.sess.run([self.train_op, self.loss],
                                feed_dict={self.s: s[np.newaxis, :], self.q_target: q_target})
        return cost

    def q_values(self, states):
        return self.sess.run(self.q_eval, {self.s: states})


def one_hot(position):
    state = np.zeros(N_STATES, "float32")
    state[position] = 1.0
    return state


def main():
    rng = np.random.RandomState(3)
    agent = QAgent(N_STATES, N_ACTIONS)
    costs = []
    for episode in range(8):
        position = 0
        for _ in range(15):
            s = one_hot(position)
            action = agent.choose_action(s, rng, epsilon=0.8)
            position = max(0, min(N_STATES - 1, position + (1 if action == 1 else -1)))
            reward = 1.0 if position == N_STATES - 1 else 0.0
            costs.append(agent.learn(s, action, reward, one_hot(position)))
            if reward:
                break
    print("COSTS", " ".join("%.6g" % c for c in costs[-12:]))
    print("Q", " ".join("%.6f" % q for q in agent.q_values(np.eye(N_STATES, dtype="float32")).ravel()))


if __name__ == "__main__":
    main()
