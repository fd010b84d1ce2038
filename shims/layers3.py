"""tf.contrib.layers pieces on TensorFlow alone, for the Keras 3 target.

``shims.contrib`` is tf-slim, which is tf_keras code: a Keras 3 program that uses it imports
tf_keras. The pieces here are the same functions written with ``get_variable`` (TF 1.15's
variable names, initializers and arithmetic), so the commonest contrib layer in model code
(``layer_norm``: BERT and every Transformer) needs no tf_keras.

``__all__`` is literal: tf-migrate reads it without importing TensorFlow.
"""
from __future__ import annotations

import tensorflow as tf

__all__ = ["layer_norm"]

v1 = tf.compat.v1


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """``tf.contrib.layers.layer_norm`` as TF 1.15 computed it: moments over
    ``begin_norm_axis:``, ``LayerNorm/beta`` (zeros) and ``LayerNorm/gamma`` (ones) over
    ``begin_params_axis:``, variance epsilon 1e-12 (1e-3 for float16)."""
    with v1.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse):
        inputs = tf.convert_to_tensor(inputs)
        shape = inputs.shape
        rank = shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        dtype = inputs.dtype.base_dtype
        if begin_norm_axis < 0:
            begin_norm_axis = rank + begin_norm_axis
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis "
                             f"({begin_norm_axis}) must be < rank(inputs) ({rank})")
        params_shape = shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name}: shape(inputs)[{begin_params_axis}:] is not "
                             f"fully defined: {shape}")
        beta = _model_variable("beta", params_shape, dtype, v1.zeros_initializer(),
                               variables_collections, trainable) if center else None
        gamma = _model_variable("gamma", params_shape, dtype, v1.ones_initializer(),
                                variables_collections, trainable) if scale else None
        mean, variance = tf.nn.moments(inputs, list(range(begin_norm_axis, rank)), keepdims=True)
        epsilon = 1e-12 if dtype != tf.float16 else 1e-3
        outputs = tf.nn.batch_normalization(inputs, mean, variance, offset=beta, scale=gamma,
                                            variance_epsilon=epsilon)
        outputs.set_shape(shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        if outputs_collections:
            v1.add_to_collections(outputs_collections, outputs)
        return outputs


def _model_variable(name, shape, dtype, initializer, collections, trainable):
    """tf-slim's ``model_variable``: in GLOBAL and MODEL_VARIABLES (and the caller's)."""
    if isinstance(collections, dict):
        collections = collections.get(name)
    names = [v1.GraphKeys.GLOBAL_VARIABLES, v1.GraphKeys.MODEL_VARIABLES, *(collections or ())]
    return v1.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                           collections=names, trainable=trainable)
