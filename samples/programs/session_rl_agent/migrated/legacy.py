"""A TF1 RL loop: a REINFORCE agent class owning its graph and Session (placeholders as
attributes, act() and learn() calling self.sess.run), trained on a deterministic corridor
by feeding observations, the actions taken and discounted rewards."""
import shims.keras2
import numpy as np
import tensorflow as tf


class PolicyGradient(object):
    def __init__(self, n_features, n_actions, learning_rate=0.05, gamma=0.9):
        self.gamma = gamma
        def build_graph(obs, acts, vt):
            self.obs = obs
            self.acts = acts
            self.vt = vt
            with tf.compat.v1.variable_scope("policy"):
                hidden = shims.get_or_create_layer("fc1", lambda: tf.keras.layers.Dense(12, activation=tf.nn.tanh, kernel_initializer=tf.compat.v1.random_normal_initializer(stddev=0.3, seed=5), name="fc1"))(self.obs)
                self.logits = shims.get_or_create_layer("fc2", lambda: tf.keras.layers.Dense(n_actions, kernel_initializer=tf.compat.v1.random_normal_initializer(stddev=0.3, seed=6), name="fc2"))(hidden)
            self.probs = tf.nn.softmax(self.logits)
            neg_log_prob = tf.nn.sparse_softmax_cross_entropy_with_logits(logits=self.logits, labels=self.acts)
            self.loss = tf.reduce_mean(neg_log_prob * self.vt)
            self.train_op = tf.compat.v1.train.AdamOptimizer(learning_rate).minimize(self.loss)
            return {"probs": self.probs, "train_op": self.train_op, "loss": self.loss}
        self.program = shims.GraphProgram(build_graph, obs=tf.TensorSpec([None, n_features], tf.float32), acts=tf.TensorSpec([None], tf.int32), vt=tf.TensorSpec([None], tf.float32))

    def act(self, observation, rng):
        probs = self.program.run("probs", obs=observation[np.newaxis, :])[0]
        return int(rng.choice(len(probs), p=probs / probs.sum()))

    def learn(self, observations, actions, rewards):
        values, running = np.zeros(len(rewards), "float32"), 0.0
        for t in reversed(range(len(rewards))):
            running = running * self.gamma + rewards[t]
            values[t] = running
        values = (values - values.mean()) / (values.std() + 1e-6)
        _, loss = self.program.run(["train_op", "loss"], obs=np.vstack(observations), acts=np.array(actions), vt=values)
        return loss

    def policy(self, observations):
        return self.program.run("probs", obs=observations)


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
