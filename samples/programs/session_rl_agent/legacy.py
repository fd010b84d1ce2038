"""A TF1 RL loop: a REINFORCE agent class owning its graph and Session (placeholders as
attributes, act() and learn() calling self.sess.run), trained on a deterministic corridor
by feeding observations, the actions taken and discounted rewards."""
import numpy as np
import tensorflow as tf


class PolicyGradient(object):
    def __init__(self, n_features, n_actions, learning_rate=0.05, gamma=0.9):
        self.gamma = gamma
        self.sess = tf.Session()
        self.obs = tf.placeholder(tf.float32, [None, n_features], name="observations")
        self.acts = tf.placeholder(tf.int32, [None], name="actions")
        self.vt = tf.placeholder(tf.float32, [None], name="values")
        with tf.variable_scope("policy"):
            hidden = tf.layers.dense(self.obs, 12, tf.nn.tanh, name="fc1",
                                     kernel_initializer=tf.random_normal_initializer(stddev=0.3, seed=5))
            self.logits = tf.layers.dense(hidden, n_actions, name="fc2",
                                          kernel_initializer=tf.random_normal_initializer(stddev=0.3, seed=6))
        self.probs = tf.nn.softmax(self.logits)
        neg_log_prob = tf.nn.sparse_softmax_cross_entropy_with_logits(logits=self.logits, labels=self.acts)
        self.loss = tf.reduce_mean(neg_log_prob * self.vt)
        self.train_op = tf.train.AdamOptimizer(learning_rate).minimize(self.loss)
        self.sess.run(tf.global_variables_initializer())

    def act(self, observation, rng):
        probs = self.sess.run(self.probs, feed_dict={self.obs: observation[np.newaxis, :]})[0]
        return int(rng.choice(len(probs), p=probs / probs.sum()))

    def learn(self, observations, actions, rewards):
        values, running = np.zeros(len(rewards), "float32"), 0.0
        for t in reversed(range(len(rewards))):
            running = running * self.gamma + rewards[t]
            values[t] = running
        values = (values - values.mean()) / (values.std() + 1e-6)
        _, loss = self.sess.run([self.train_op, self.loss], feed_dict={
            self.obs: np.vstack(observations), self.acts: np.array(actions), self.vt: values})
        return loss

    def policy(self, observations):
        return self.sess.run(self.probs, feed_dict={self.obs: observations})


def corridor(position):
    state = np.zeros(6, "float32")
    state[position] = 1.0
    return state


def main():
    rng = np.random.RandomState(0)
    agent = PolicyGradient(n_features=6, n_actions=2)
    losses, lengths = [], []
    for episode in range(20):
        position, observations, actions, rewards = 2, [], [], []
        for _ in range(12):
            observation = corridor(position)
            action = agent.act(observation, rng)
            position = max(0, min(5, position + (1 if action == 1 else -1)))
            observations.append(observation)
            actions.append(action)
            rewards.append(1.0 if position == 5 else -0.1)
            if position == 5:
                break
        losses.append(agent.learn(observations, actions, rewards))
        lengths.append(len(actions))
    print("LOSSES", " ".join("%.6f" % v for v in losses))
    print("LENGTHS", " ".join(str(n) for n in lengths))
    print("PROBS", " ".join("%.6f" % p for p in agent.policy(np.eye(6, dtype="float32"))[:, 1]))


if __name__ == "__main__":
    main()
