"""A DDPG-style actor-critic: unnamed tf.layers.dense layers (TF1 auto-names
dense, dense_1, ...) and networks rebuilt with `reuse=True` to evaluate the
critic on the actor's action."""
import tensorflow as tf

ACTIONS = 2


def actor(state, reuse=False):
    with tf.variable_scope("actor", reuse=reuse):
        h = tf.layers.dense(state, 32, activation=tf.nn.relu)
        h = tf.layers.dense(h, 32, activation=tf.nn.relu)
        return tf.layers.dense(h, ACTIONS, activation=tf.tanh)


def critic(state, action, reuse=False):
    with tf.variable_scope("critic", reuse=reuse):
        h = tf.layers.dense(tf.concat([state, action], axis=-1), 32, activation=tf.nn.relu)
        h = tf.layers.dense(h, 32, activation=tf.nn.relu)
        return tf.layers.dense(h, 1)


def build(state, action):
    policy = actor(state)
    q_taken = critic(state, action)
    q_policy = critic(state, actor(state, reuse=True), reuse=True)
    return policy, q_taken, q_policy
