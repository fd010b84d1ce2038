"""A DDPG-style actor-critic: unnamed tf.layers.dense layers (TF1 auto-names
dense, dense_1, ...) and networks rebuilt with `reuse=True` to evaluate the
critic on the actor's action."""
import shims.keras2
import tensorflow as tf

ACTIONS = 2


def actor(state, reuse=False):
    with tf.compat.v1.variable_scope("actor", reuse=reuse):
        h = shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(32, activation=tf.nn.relu), default_name="dense")(state)
        h = shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(32, activation=tf.nn.relu), default_name="dense")(h)
        return shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(ACTIONS, activation=tf.tanh), default_name="dense")(h)


def critic(state, action, reuse=False):
    with tf.compat.v1.variable_scope("critic", reuse=reuse):
        h = shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(32, activation=tf.nn.relu), default_name="dense")(tf.concat([state, action], axis=-1))
        h = shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(32, activation=tf.nn.relu), default_name="dense")(h)
        return shims.get_or_create_layer(None, lambda: tf.keras.layers.Dense(1), default_name="dense")(h)


def build(state, action):
    policy = actor(state)
    q_taken = critic(state, action)
    q_policy = critic(state, actor(state, reuse=True), reuse=True)
    return policy, q_taken, q_policy
