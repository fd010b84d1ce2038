"""TF1 ops whose TF2 replacement would change what a program computes."""
from __future__ import annotations

import tensorflow as tf


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """``tf.layers.dropout`` exactly as TF 1.x ran it: ``training`` may be a tensor (a former
    placeholder), and the draw comes from one random op with the given ``seed``, so a
    seeded TF1 program's dropout masks come out the same. (A Keras ``Dropout(seed=s)``
    advances its seed on every trace and draws other masks.)"""
    with tf.name_scope(name or "dropout"):
        inputs = tf.convert_to_tensor(inputs)

        def drop():
            shape = noise_shape
            if shape is not None:  # TF1's None entries take the input's size
                dynamic = tf.shape(inputs)
                shape = [dynamic[i] if d is None else d for i, d in enumerate(shape)]
            return tf.nn.dropout(inputs, rate=rate, noise_shape=shape, seed=seed)

        if isinstance(training, bool):
            return drop() if training else tf.identity(inputs)
        return tf.cond(tf.cast(training, tf.bool), drop, lambda: tf.identity(inputs))
