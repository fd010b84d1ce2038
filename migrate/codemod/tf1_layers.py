"""TF1's functional layers (``tf.layers.dense`` ...) and the Keras layer classes that take
their place: TF1's parameters after ``inputs``, in order, as TF 1.15's ``tf.layers``
functions declare them (``tests/test_tf1_surface.py`` checks them against TF 1.15), and how
many of them the Keras class takes positionally. Shared by TFM201 (layers made once in
model code) and TFM501's native form (layers of a Session program's graph)."""
from __future__ import annotations

from typing import Dict, List, Tuple

_COMMON = ["activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
           "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint",
           "trainable", "name", "reuse"]
_CONV = ["filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate", *_COMMON]
_CONVT = ["filters", "kernel_size", "strides", "padding", "data_format", *_COMMON]
_SEP = ["filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
        "depth_multiplier", "activation", "use_bias", "depthwise_initializer",
        "pointwise_initializer", "bias_initializer", "depthwise_regularizer",
        "pointwise_regularizer", "bias_regularizer", "activity_regularizer",
        "depthwise_constraint", "pointwise_constraint", "bias_constraint", "trainable", "name",
        "reuse"]
_BN = ["axis", "momentum", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
       "moving_mean_initializer", "moving_variance_initializer", "beta_regularizer",
       "gamma_regularizer", "beta_constraint", "gamma_constraint", "training", "trainable", "name",
       "reuse", "renorm", "renorm_clipping", "renorm_momentum", "fused", "virtual_batch_size",
       "adjustment"]
_POOL = ["pool_size", "strides", "padding", "data_format", "name"]

# function -> (Keras class, TF1 parameters after `inputs`, leading positional Keras args)
LAYERS: Dict[str, Tuple[str, List[str], int]] = {
    "dense": ("Dense", ["units", *_COMMON], 1),
    "dropout": ("Dropout", ["rate", "noise_shape", "seed", "training", "name"], 1),
    "flatten": ("Flatten", ["name", "data_format"], 0),
    "conv1d": ("Conv1D", _CONV, 2),
    "conv2d": ("Conv2D", _CONV, 2),
    "conv3d": ("Conv3D", _CONV, 2),
    "conv2d_transpose": ("Conv2DTranspose", _CONVT, 2),
    "conv3d_transpose": ("Conv3DTranspose", _CONVT, 2),
    "separable_conv1d": ("SeparableConv1D", _SEP, 2),
    "separable_conv2d": ("SeparableConv2D", _SEP, 2),
    "batch_normalization": ("BatchNormalization", _BN, 0),
    **{f"{kind}_pooling{d}d": (f"{kind.title()}Pooling{d}D", _POOL, 1)
       for kind in ("max", "average") for d in (1, 2, 3)},
}
WEIGHTLESS = {"dropout", "flatten", *(f"{k}_pooling{d}d" for k in ("max", "average") for d in (1, 2, 3))}
