"""TF1-compatible replacements for the tf.contrib pieces TF1 models used most.

They create the variables tf.contrib created, under the same names
(``LayerNorm/beta``, ``LayerNorm/gamma``, ``fully_connected/weights``,
``fully_connected/biases``), with ``tf.compat.v1.get_variable``, so they work
in TF1 graph mode and under ``shims.legacy_layer`` alike, and old checkpoints load.
"""
from __future__ import annotations

import json
import math
import re

import tensorflow as tf

v1 = tf.compat.v1


class _ContribVarianceScaling:
    """tf.contrib.layers.variance_scaling_initializer's exact formula."""

    def __init__(self, factor=2.0, mode="FAN_IN", uniform=False, seed=None, dtype=tf.float32):
        if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
            raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
        self.factor, self.mode, self.uniform, self.seed = float(factor), mode, uniform, seed
        self.dtype = tf.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = tf.as_dtype(dtype or self.dtype)
        shape = [int(d) for d in shape]
        if shape:
            fan_in = float(shape[-2]) if len(shape) > 1 else float(shape[-1])
            fan_out = float(shape[-1])
        else:
            fan_in = fan_out = 1.0
        for dim in shape[:-2]:
            fan_in *= dim
            fan_out *= dim
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[self.mode]
        if self.uniform:
            limit = math.sqrt(3.0 * self.factor / n)
            return tf.random.uniform(shape, -limit, limit, dtype, seed=self.seed)
        stddev = math.sqrt(1.3 * self.factor / n)
        return tf.random.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)

    def get_config(self):
        return {"factor": self.factor, "mode": self.mode, "uniform": self.uniform,
                "seed": self.seed, "dtype": self.dtype.name}


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=tf.float32):
    """tf.contrib.layers.variance_scaling_initializer."""
    return _ContribVarianceScaling(factor, mode, uniform, seed, dtype)


def xavier_initializer(uniform=True, seed=None, dtype=tf.float32):
    """tf.contrib.layers.xavier_initializer (Glorot): variance scaling, factor 1, FAN_AVG."""
    return _ContribVarianceScaling(1.0, "FAN_AVG", uniform, seed, dtype)


def l2_regularizer(scale, scope=None):
    """tf.contrib.layers.l2_regularizer: ``scale * sum(w ** 2) / 2``."""
    if isinstance(scale, (int, float)):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale}")
        if scale == 0.0:
            return lambda _: None

    def l2(weights):
        with tf.name_scope(scope or "l2_regularizer"):
            return tf.multiply(tf.cast(scale, weights.dtype), tf.nn.l2_loss(weights), name="value")

    return l2


def flatten(inputs, outputs_collections=None, scope=None):
    """tf.contrib.layers.flatten: keep the batch dimension, flatten the rest."""
    with tf.name_scope(scope or "Flatten"):
        inputs = tf.convert_to_tensor(inputs)
        static = inputs.shape[1:]
        if static.is_fully_defined():
            return tf.reshape(inputs, [-1, int(static.num_elements())])
        return tf.reshape(inputs, [tf.shape(inputs)[0], -1])


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """tf.contrib.layers.layer_norm: variables ``LayerNorm/beta`` and ``LayerNorm/gamma``."""
    with v1.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse):
        inputs = tf.convert_to_tensor(inputs)
        rank = inputs.shape.rank
        if rank is None:
            raise ValueError(f"Inputs {inputs} have undefined rank.")
        if begin_norm_axis < 0:
            begin_norm_axis = rank + begin_norm_axis
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis "
                             f"({begin_norm_axis}) must be < rank(inputs) ({rank})")
        params_shape = inputs.shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name if not tf.executing_eagerly() else ''} has "
                             f"undefined channels dimension {params_shape}.")
        dtype = inputs.dtype.base_dtype
        beta = gamma = None
        if center:
            beta = v1.get_variable("beta", shape=params_shape, dtype=dtype,
                                   initializer=v1.zeros_initializer(), trainable=trainable)
        if scale:
            gamma = v1.get_variable("gamma", shape=params_shape, dtype=dtype,
                                    initializer=v1.ones_initializer(), trainable=trainable)
        axes = list(range(begin_norm_axis, rank))
        mean, variance = tf.nn.moments(inputs, axes, keepdims=True)
        epsilon = 1e-12 if dtype != tf.float16 else 1e-3
        outputs = tf.nn.batch_normalization(inputs, mean, variance, offset=beta, scale=gamma,
                                            variance_epsilon=epsilon)
        return activation_fn(outputs) if activation_fn is not None else outputs


def fully_connected(inputs, num_outputs, activation_fn=tf.nn.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=None, weights_regularizer=None,
                    biases_initializer=v1.zeros_initializer(), biases_regularizer=None,
                    reuse=None, variables_collections=None, outputs_collections=None,
                    trainable=True, scope=None):
    """tf.contrib.layers.fully_connected: ``fully_connected/weights`` and ``/biases``."""
    if weights_initializer is None:
        weights_initializer = xavier_initializer()
    with v1.variable_scope(scope, "fully_connected", [inputs], reuse=reuse):
        inputs = tf.convert_to_tensor(inputs)
        dtype = inputs.dtype.base_dtype
        weights = v1.get_variable("weights", shape=[int(inputs.shape[-1]), num_outputs],
                                  dtype=dtype, initializer=weights_initializer,
                                  regularizer=weights_regularizer, trainable=trainable)
        if inputs.shape.rank > 2:
            outputs = tf.tensordot(inputs, weights, [[inputs.shape.rank - 1], [0]])
        else:
            outputs = tf.matmul(inputs, weights)
        if normalizer_fn is not None:
            outputs = normalizer_fn(outputs, **(normalizer_params or {}))
        elif biases_initializer is not None:
            biases = v1.get_variable("biases", shape=[num_outputs], dtype=dtype,
                                     initializer=biases_initializer,
                                     regularizer=biases_regularizer, trainable=trainable)
            outputs = tf.nn.bias_add(outputs, biases)
        return activation_fn(outputs) if activation_fn is not None else outputs


class HParams:
    """tf.contrib.training.HParams: named hyperparameters with typed overrides."""

    _TOKEN = re.compile(r"(?P<name>[a-zA-Z][\w\.]*)\s*=\s*"
                        r"((?P<val>[^,\[]*)|\[(?P<vals>[^\]]*)\])($|,\s*)")

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        self._hparam_types = {}
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        kind, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, kind, v) for v in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast(name, kind, value))

    def del_hparam(self, name):
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        for match_values in self._split(values):
            name, raw = match_values
            kind, is_list = self._hparam_types.get(name, (None, False))
            if kind is None:
                raise ValueError(f"Unknown hyperparameter type for {name}")
            if is_list:
                self.set_hparam(name, [_parse_scalar(name, kind, v) for v in raw])
            else:
                self.set_hparam(name, _parse_scalar(name, kind, raw))
        return self

    def _split(self, values):
        pos = 0
        out = []
        values = values or ""
        while pos < len(values):
            match = self._TOKEN.match(values, pos)
            if not match:
                raise ValueError(f"Malformed hyperparameter value: {values[pos:]}")
            pos = match.end()
            if match.group("vals") is not None:
                items = [v.strip() for v in match.group("vals").split(",") if v.strip()]
                out.append((match.group("name"), items))
            else:
                out.append((match.group("name"), match.group("val").strip()))
        return out

    def override_from_dict(self, values_dict):
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def values(self):
        return {n: getattr(self, n) for n in self._hparam_types}

    def get(self, key, default=None):
        return getattr(self, key) if key in self._hparam_types else default

    def to_json(self, indent=None, separators=None, sort_keys=False):
        return json.dumps(self.values(), indent=indent, separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json):
        return self.override_from_dict(json.loads(values_json))

    def __contains__(self, key):
        return key in self._hparam_types

    def __repr__(self):
        return f"HParams({sorted(self.values().items())!r})"


def _cast(name, kind, value):
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise ValueError(f"Could not cast {value!r} to bool for parameter {name}")
    if kind is int and isinstance(value, float):
        if value != int(value):
            raise ValueError(f"Could not cast {value!r} to int for parameter {name}")
        return int(value)
    if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, kind):
        return value
    raise ValueError(f"Could not cast {value!r} to {kind.__name__} for parameter {name}")


def _parse_scalar(name, kind, text):
    if kind is bool:
        lowered = text.lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
        raise ValueError(f"Could not parse {text!r} as bool for parameter {name}")
    if kind is str:
        return text.strip("'\"")
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"Could not parse {text!r} as {kind.__name__} for parameter {name}") from None


class training:  # noqa: N801 - mirrors tf.contrib.training
    HParams = HParams


class layers:  # noqa: N801 - mirrors tf.contrib.layers
    layer_norm = staticmethod(layer_norm)
    fully_connected = staticmethod(fully_connected)
    flatten = staticmethod(flatten)
    xavier_initializer = staticmethod(xavier_initializer)
    variance_scaling_initializer = staticmethod(variance_scaling_initializer)
    l2_regularizer = staticmethod(l2_regularizer)
