"""tf-slim's ``batch_norm`` layer for a Keras 3 process: TF 1.15's arithmetic
(``shims._bn_tf1``) on TensorFlow's own legacy ``tf.layers`` base, the base of every other
layer tf-slim makes, so no tf_keras is imported.

tf-slim builds its non-fused ``batch_norm`` (a 2-D input, ``fused=False``, or a fused
call on an input the kernel can't take) from ``tensorflow.python.layers.normalization``,
which TF 2.16+ forwards to tf_keras; this class stands in for it there when the process is
on Keras 3 (``shims.contrib._slim``). TF 1.15's arguments, its variable scope (``_scope``,
``_reuse``), ``apply`` and ``UPDATE_OPS``; what TF 1.15's layer did beyond that (renorm,
virtual batches, adjustment) is one clear error.
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.python.keras.legacy_tf_layers import base

from shims._bn_tf1 import TF1BatchNorm


class BatchNormalization(TF1BatchNorm, base.Layer):
    """``tf.compat.v1.layers.BatchNormalization`` of TF 1.15, as tf-slim constructs it."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer=None, gamma_initializer=None, moving_mean_initializer=None,
                 moving_variance_initializer=None, beta_regularizer=None, gamma_regularizer=None,
                 beta_constraint=None, gamma_constraint=None, renorm=False, renorm_clipping=None,
                 renorm_momentum=0.99, fused=None, trainable=True, virtual_batch_size=None,
                 adjustment=None, name=None, **kwargs):
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise ValueError("tf-slim's batch_norm with renorm, virtual_batch_size or adjustment "
                             "needs tf_keras's layer, which a Keras 3 process can't import; "
                             "migrate this module for Keras 2 (the default target)")
        super().__init__(name=name, trainable=trainable, **kwargs)
        self._configure(axis, momentum, epsilon, center, scale,
                        (beta_initializer or tf.zeros_initializer(),
                         gamma_initializer or tf.ones_initializer(),
                         moving_mean_initializer or tf.zeros_initializer(),
                         moving_variance_initializer or tf.ones_initializer()),
                        (beta_regularizer, gamma_regularizer), (beta_constraint, gamma_constraint),
                        fused)
