"""A DQN agent as the RL tutorials wrote it: __init__ keeps its settings on the object,
calls self._build_net() (placeholders as attributes, an evaluation net and a target net of
tf.layers in their own variable scopes, the TD loss, Adam), collects each net's
variables by scope with tf.get_collection, makes the target-replacement op as a list of
tf.assign, then makes its own Session and initialises it. learn() copies the evaluation
net into the target net every few steps and trains on a batch sampled from its replay
memory with numpy's global random state; the script plays a small corridor."""
import numpy as np
import tensorflow as tf


class DeepQNetwork(object):
    def __init__(self, n_actions, n_features, learning_rate=0.01, reward_decay=0.9,
                 replace_target_iter=5, memory_size=40, batch_size=8):
        self.n_actions = n_actions
        self.n_features = n_features
        self.lr = learning_rate
        self.gamma = reward_decay
        self.replace_target_iter = replace_target_iter
        self.memory_size = memory_size
        self.batch_size = batch_size
        self.learn_step_counter = 0
        self.memory_counter = 0
        self.memory = np.zeros((self.memory_size, n_features * 2 + 2), "float32")

        self._build_net()

        t_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="target_net")
        e_params = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="eval_net")
        with tf.variable_scope("hard_replacement"):
            self.target_replace_op = [tf.assign(t, e) for t, e in zip(t_params, e_params)]

        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())
        self.cost_his = []

    def _build_net(self):
        self.s = tf.placeholder(tf.float32, [None, self.n_features], name="s")
        self.s_ = tf.placeholder(tf.float32, [None, self.n_features], name="s_")
        self.r = tf.placeholder(tf.float32, [None, ], name="r")
        self.a = tf.placeholder(tf.int32, [None, ], name="a")

        w_initializer, b_initializer = tf.random_normal_initializer(0., 0.3, seed=1), tf.constant_initializer(0.1)

        with tf.variable_scope("eval_net"):
            e1 = tf.layers.dense(self.s, 12, tf.nn.relu, kernel_initializer=w_initializer,
                                 bias_initializer=b_initializer, name="e1")
            self.q_eval = tf.layers.dense(e1, self.n_actions, kernel_initializer=w_initializer,
                                          bias_initializer=b_initializer, name="q")

        with tf.variable_scope("target_net"):
            t1 = tf.layers.dense(self.s_, 12, tf.nn.relu, kernel_initializer=w_initializer,
                                 bias_initializer=b_initializer, name="t1")
            self.q_next = tf.layers.dense(t1, self.n_actions, kernel_initializer=w_initializer,
                                          bias_initializer=b_initializer, name="t2")

        with tf.variable_scope("q_target"):
            q_target = self.r + self.gamma * tf.reduce_max(self.q_next, axis=1, name="Qmax_s_")
            self.q_target = tf.stop_gradient(q_target)
        with tf.variable_scope("q_eval"):
            a_indices = tf.stack([tf.range(tf.shape(self.a)[0], dtype=tf.int32), self.a], axis=1)
            self.q_eval_wrt_a = tf.gather_nd(params=self.q_eval, indices=a_indices)
        with tf.variable_scope("loss"):
            self.loss = tf.reduce_mean(tf.squared_difference(self.q_target, self.q_eval_wrt_a, name="TD_error"))
        with tf.variable_scope("train"):
            self._train_op = tf.train.AdamOptimizer(self.lr).minimize(self.loss)

    def store_transition(self, s, a, r, s_):
        transition = np.hstack((s, [a, r], s_))
        self.memory[self.memory_counter % self.memory_size, :] = transition
        self.memory_counter += 1

    def choose_action(self, observation):
        observation = observation[np.newaxis, :]
        if np.random.uniform() < 0.7:
            actions_value = self.sess.run(self.q_eval, feed_dict={self.s: observation})
            return int(np.argmax(actions_value))
        return np.random.randint(0, self.n_actions)

    def learn(self):
        if self.learn_step_counter % self.replace_target_iter == 0:
            self.sess.run(self.target_replace_op)
        if self.memory_counter > self.memory_size:
            sample_index = np.random.choice(self.memory_size, size=self.batch_size)
        else:
            sample_index = np.random.choice(self.memory_counter, size=self.batch_size)
        batch_memory = self.memory[sample_index, :]
        _, cost = self.sess.run(
            [self._train_op, self.loss],
            feed_dict={
                self.s: batch_memory[:, :self.n_features],
                self.a: batch_memory[:, self.n_features],
                self.r: batch_memory[:, self.n_features + 1],
                self.s_: batch_memory[:, -self.n_features:],
            })
        self.cost_his.append(cost)
        self.learn_step_counter += 1


def one_hot(position, size):
    state = np.zeros(size, "float32")
    state[position] = 1.0
    return state


def main():
    np.random.seed(2)
    n_states = 5
    dqn = DeepQNetwork(2, n_states)
    step = 0
    for episode in range(6):
        position = 0
        for _ in range(20):
            s = one_hot(position, n_states)
            action = dqn.choose_action(s)
            position = max(0, min(n_states - 1, position + (1 if action == 1 else -1)))
            reward = 1.0 if position == n_states - 1 else 0.0
            dqn.store_transition(s, action, reward, one_hot(position, n_states))
            if step > 10:
                dqn.learn()
            step += 1
            if reward:
                break
    print("COSTS", " ".join("%.6g" % c for c in dqn.cost_his[-15:]))


if __name__ == "__main__":
    main()
