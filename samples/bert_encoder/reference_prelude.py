"""tf.contrib.layers.layer_norm as TF 1.15 shipped it, for the TF1 reference run
of `tf-migrate verify` (TF 2 has no tf.contrib). Transcribed from
tensorflow/contrib/layers/python/layers/layers.py, not from shims. In the
reference run `import tensorflow` gives tf.compat.v1, as the legacy code sees it."""
import types

import tensorflow as v1


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    with v1.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse):
        inputs = v1.convert_to_tensor(inputs)
        inputs_shape = inputs.shape
        inputs_rank = inputs_shape.ndims
        if begin_norm_axis < 0:
            begin_norm_axis = inputs_rank + begin_norm_axis
        params_shape = inputs_shape[begin_params_axis:]
        beta = gamma = None
        if center:
            beta = v1.get_variable("beta", shape=params_shape, dtype=inputs.dtype.base_dtype,
                                   initializer=v1.zeros_initializer(), trainable=trainable)
        if scale:
            gamma = v1.get_variable("gamma", shape=params_shape, dtype=inputs.dtype.base_dtype,
                                    initializer=v1.ones_initializer(), trainable=trainable)
        norm_axes = list(range(begin_norm_axis, inputs_rank))
        mean, variance = v1.nn.moments(inputs, norm_axes, keep_dims=True)
        variance_epsilon = 1e-12
        outputs = v1.nn.batch_normalization(inputs, mean, variance, offset=beta, scale=gamma,
                                            variance_epsilon=variance_epsilon)
        outputs.set_shape(inputs_shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return outputs


v1.contrib = types.SimpleNamespace(layers=types.SimpleNamespace(layer_norm=layer_norm))
