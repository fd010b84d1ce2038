"""A TF1 RL loop: a REINFORCE agent class owning its graph and Session (placeholders as
attributes, act() and learn() calling self.sess.run), trained on a deterministic corridor
by feeding observations, the actions taken and discounted rewards."""
import numpy as np
import tensorflow as tf


class PolicyGradient(object):
    def __init__(self, n_features, n_actions, learning_rate=0.05, gamma=0.9):
        self.gamma = gamma
        self.policy_fc1_layer = tf.keras.layers.Dense(12, activation=tf.nn.tanh, kernel_initializer=tf.random_normal_initializer(stddev=0.3, seed=5), name="fc1")
        self.policy_fc2_layer = tf.keras.layers.Dense(n_actions, kernel_initializer=tf.random_normal_initializer(stddev=0.3, seed=6), name="fc2")
        self.optimizer = tf.keras.optimizers.Adam(learning_rate=learning_rate, epsilon=1e-08)
        self.compute_probs = tf.function(self.compute_probs, input_signature=[tf.TensorSpec([None, n_features], tf.float32)])
        self.train_step = tf.function(self.train_step, input_signature=[tf.TensorSpec([None, n_features], tf.float32), tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.float32)])

    def forward(self, obs):
        with tf.name_scope("policy"):
            hidden = self.policy_fc1_layer(obs)
            logits = self.policy_fc2_layer(hidden)
        return logits

    def compute_probs(self, obs):
        logits = self.forward(obs)
        probs = tf.nn.softmax(logits)
        return probs

    def train_step(self, obs, acts, vt):
        with tf.GradientTape() as tape:
            logits = self.forward(obs)
            neg_log_prob = tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=acts)
            loss = tf.reduce_mean(neg_log_prob * vt)
        variables = [*self.policy_fc1_layer.trainable_variables, *self.policy_fc2_layer.trainable_variables]
        gradients = tape.gradient(loss, variables)
        self.optimizer.apply_gradients(zip(gradients, variables))
        return loss

    def act(self, observation, rng):
        probs = self.compute_probs(observation[np.newaxis, :]).numpy()[0]
        return int(rng.choice(len(probs), p=probs / probs.sum()))

    def learn(self, observations, actions, rewards):
        values, running = np.zeros(len(rewards), "float32"), 0.0
        for t in reversed(range(len(rewards))):
            running = running * self.gamma + rewards[t]
            values[t] = running
        values = (values - values.mean()) / (values.std() + 1e-6)
        loss = self.train_step(np.vstack(observations), np.array(actions), values).numpy()
        return loss

    def policy(self, observations):
        return self.compute_probs(observations).numpy()


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
