"""TF 1.15's batch normalization arithmetic (``tf.layers.BatchNormalization``), for any
layer class: the Keras 3 layer of ``shims._bn3`` and tf-slim's layer of
``shims.contrib._slim_bn`` (TF's own legacy ``tf.layers`` base, no tf_keras) share it.

The fused kernel for 4-D inputs on axis 1 or 3, moments otherwise; ``training`` a bool or
a tensor (``smart_cond``); updates ``moving -= (moving - value) * (1 - momentum)`` put in
``UPDATE_OPS`` in graph code (a converted Session program runs them when its train op
depends on them, as TF1 did) and run at once in eager code. Its weights are ``gamma``,
``beta``, ``moving_mean`` and ``moving_variance``, TF1's names. TensorFlow only.
"""
from __future__ import annotations

import tensorflow as tf
from tensorflow.python.framework import smart_cond as _smart_cond


def _static(training):
    if isinstance(training, bool) or training is None:
        return bool(training)
    return tf.get_static_value(training)


def _variable(weight):
    """The ``tf.Variable`` of a weight (a Keras 3 variable keeps one as ``.value``)."""
    return weight if isinstance(weight, tf.Variable) else weight.value


class TF1BatchNorm:
    """TF 1.15's ``tf.layers.BatchNormalization`` (no renorm, virtual batches or adjustment),
    mixed into a layer class that has ``add_weight(name=, shape=, initializer=, ...)``."""

    def _configure(self, axis, momentum, epsilon, center, scale, initializers, regularizers,
                   constraints, fused) -> None:
        self.fused = fused  # TF 1.15: None or True is the fused kernel where it applies
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise ValueError(f"TF 1.15's batch normalization here normalizes one axis, not {axis}")
            axis = axis[0]
        self.axis, self.momentum, self.epsilon = axis, momentum, epsilon
        self.center, self.scale = center, scale
        self._initializers = initializers  # beta, gamma, moving mean, moving variance
        self._regularizers = regularizers  # beta, gamma
        self._constraints = constraints  # beta, gamma

    def build(self, input_shape):
        input_shape = tf.TensorShape(input_shape)
        ndims = input_shape.rank
        self._axis = self.axis % ndims
        shape = (input_shape[self._axis],)
        beta_init, gamma_init, mean_init, variance_init = self._initializers
        self.gamma = self.add_weight(name="gamma", shape=shape, initializer=gamma_init,
                                     regularizer=self._regularizers[1],
                                     constraint=self._constraints[1]) if self.scale else None
        self.beta = self.add_weight(name="beta", shape=shape, initializer=beta_init,
                                    regularizer=self._regularizers[0],
                                    constraint=self._constraints[0]) if self.center else None
        self.moving_mean = self.add_weight(name="moving_mean", shape=shape, initializer=mean_init,
                                           trainable=False, **self._moving_options())
        self.moving_variance = self.add_weight(name="moving_variance", shape=shape,
                                               initializer=variance_init, trainable=False,
                                               **self._moving_options())
        # TF 1.15 (tf.layers, V1 behaviour): the fused kernel for 4-D inputs normalized on axis 1 or 3
        self._fused = self.fused is not False and ndims == 4 and self._axis in (1, 3)
        self._ndims = ndims
        self.built = True

    def _moving_options(self) -> dict:
        """How the moving statistics combine across a tf.distribute strategy's replicas
        (TF 1.15: each replica's own, read and saved as their mean). The layer base says
        it its way; the default is TensorFlow's."""
        return {"synchronization": tf.VariableSynchronization.ON_READ,
                "aggregation": tf.VariableAggregation.MEAN}

    def _params(self, inputs):
        size = inputs.shape[self._axis]
        gamma = _variable(self.gamma) if self.scale else tf.ones([size], inputs.dtype)
        beta = _variable(self.beta) if self.center else tf.zeros([size], inputs.dtype)
        return gamma, beta

    def call(self, inputs, training=None):
        inputs = tf.convert_to_tensor(inputs)
        training = False if training is None else training
        value = _static(training)
        moving_mean, moving_variance = _variable(self.moving_mean), _variable(self.moving_variance)
        gamma, beta = self._params(inputs)
        if self._fused:
            fmt = "NCHW" if self._axis == 1 else "NHWC"

            def fused_training():
                return tf.compat.v1.nn.fused_batch_norm(inputs, gamma, beta, epsilon=self.epsilon,
                                                        data_format=fmt)

            def fused_inference():
                return tf.compat.v1.nn.fused_batch_norm(
                    inputs, gamma, beta, mean=moving_mean, variance=moving_variance,
                    epsilon=self.epsilon, is_training=False, data_format=fmt)

            output, mean, variance = _smart_cond.smart_cond(training, fused_training, fused_inference)
        else:
            axes = [i for i in range(self._ndims) if i != self._axis]
            shape = [1] * self._ndims
            shape[self._axis] = inputs.shape[self._axis]
            if value is False:
                mean, variance = moving_mean, moving_variance
            else:
                batch_mean, batch_variance = tf.nn.moments(inputs, axes)
                mean = _smart_cond.smart_cond(training, lambda: batch_mean,
                                              lambda: tf.convert_to_tensor(moving_mean))
                variance = _smart_cond.smart_cond(training, lambda: batch_variance,
                                                  lambda: tf.convert_to_tensor(moving_variance))

            def broadcast(v):
                return v if axes == list(range(self._ndims - 1)) else tf.reshape(v, shape)

            output = tf.nn.batch_normalization(inputs, broadcast(mean), broadcast(variance),
                                               broadcast(beta), broadcast(gamma), self.epsilon)
        if value is not False:
            self._update(training, value, (moving_mean, mean), (moving_variance, variance))
        return output

    def _update(self, training, value, *pairs) -> None:
        """TF1's moving averages; a tensor ``training`` of False leaves them as they are."""
        for variable, batch in pairs:
            def assign(variable=variable, batch=batch):
                decay = tf.cast(1.0 - self.momentum, variable.dtype)
                # read after the assign; in graph code its .op is the assign itself
                return variable.assign_sub((variable - tf.cast(batch, variable.dtype)) * decay)

            if value is None:
                update = _smart_cond.smart_cond(training, assign, lambda v=variable: tf.identity(v))
            else:
                update = assign()
            if not tf.executing_eagerly():  # graph code: the program decides when it runs
                op = update if isinstance(update, tf.Operation) else getattr(update, "op", None)
                if op is not None:
                    tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.UPDATE_OPS, op)
