"""tf.contrib.layers on TF2: the same functions, variable names (``Conv/weights``,
``BatchNorm/moving_mean``, ``LayerNorm/gamma``, ``fully_connected/biases``), collections,
defaults and math, working in TF1 graph mode and under ``shims.legacy_layer`` eagerly.

They are tf-slim's, which is tf.contrib.layers' code kept as a package (tf-slim 1.1.0);
``shims.contrib._slim`` makes its batch_norm work on TF 2.16+. Every function here is
decorated for ``arg_scope`` (``shims.contrib.framework.arg_scope`` is tf-slim's, so
``slim.arg_scope([shims.contrib.conv2d], ...)`` applies too).

``__all__`` is a literal list on purpose: tf-migrate reads it (without importing
TensorFlow) to know which ``tf.contrib.layers`` names it may rewrite to this module.
"""
from __future__ import annotations

from shims.contrib._slim import load as _load

__all__ = [
    # layers
    "avg_pool2d", "avg_pool3d", "batch_norm", "bias_add", "conv1d", "conv2d", "conv3d",
    "conv2d_in_plane", "conv2d_transpose", "conv3d_transpose", "convolution", "convolution1d",
    "convolution2d", "convolution2d_in_plane", "convolution2d_transpose", "convolution3d",
    "convolution3d_transpose", "dense_to_sparse", "dropout", "elu", "flatten", "fully_connected",
    "GDN", "gdn", "images_to_sequence", "layer_norm", "linear", "pool", "max_pool2d",
    "max_pool3d", "one_hot_encoding", "relu", "relu6", "repeat", "scale_gradient",
    "separable_conv2d", "separable_convolution2d", "sequence_to_images", "softmax",
    "spatial_softmax", "stack", "unit_norm", "legacy_fully_connected", "legacy_linear",
    "legacy_relu", "maxout",
    # normalization
    "group_norm", "instance_norm",
    # initializers
    "xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer",
    # regularizers
    "l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer",
    "apply_regularization",
    # optimizers and summaries
    "optimize_loss", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES", "summarize_tensor", "summarize_activation", "summarize_tensors",
    "summarize_collection", "summarize_variables", "summarize_weights", "summarize_biases",
    "summarize_activations",
]

_slim = _load()
globals().update({name: getattr(_slim, name) for name in __all__})
