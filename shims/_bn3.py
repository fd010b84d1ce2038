"""``tf.layers.batch_normalization`` as TF 1.15 computed it, as a Keras 3 layer.

Keras 3's BatchNormalization is not TF1's: it takes only a Python ``training`` (TF1 programs
feed a boolean placeholder), updates the moving variance with the batch's biased variance
(TF 1.15's fused kernel, used for every 4-D input, gives the Bessel-corrected one), and runs
its updates inline, where TF1 put them in ``UPDATE_OPS`` for the program to run (or forget).
This layer keeps TF 1.15's arithmetic (``shims._bn_tf1``).
"""
from __future__ import annotations

import keras

from shims._bn_tf1 import TF1BatchNorm


class BatchNormalization(TF1BatchNorm, keras.layers.Layer):
    """TF 1.15's ``tf.layers.BatchNormalization`` (no renorm, virtual batches or adjustment)."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, fused=None, **kwargs):
        super().__init__(**kwargs)
        self._configure(axis, momentum, epsilon, center, scale,
                        (beta_initializer, gamma_initializer, moving_mean_initializer,
                         moving_variance_initializer),
                        (beta_regularizer, gamma_regularizer), (beta_constraint, gamma_constraint),
                        fused)

    def _moving_options(self) -> dict:
        """Keras 3 weights take no ``synchronization``: mirrored, averaged on every update
        across a strategy's replicas. The moving average is linear in the batch statistics,
        so its value is the mean of what TF 1.15's replicas each kept (what it saved)."""
        return {"aggregation": "mean"}
