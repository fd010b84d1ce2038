"""TF 1.15's ``tf.nn.rnn_cell`` cells on TensorFlow alone, for the Keras 3 target.

TF 2.21 keeps ``dynamic_rnn``/``static_rnn`` in core TensorFlow, but the TF1 cells live in
tf_keras, which a Keras 3 program must not import (``shims.contrib.rnn`` is those cells, for
the default target). These are the same cells written with ``tf.compat.v1.get_variable``:
each cell takes its TF1 scope on its first call (``rnn/basic_lstm_cell``, then
``basic_lstm_cell_1`` for another cell), its variables keep TF 1.15's names (``kernel``,
``bias``; ``gates/*`` and ``candidate/*`` for GRU; ``cell_<i>/`` inside
``multi_rnn_cell``), initializers (Glorot uniform kernels; zero biases, GRU's gate bias 1.0)
and arithmetic (gates in i, j, f, o order, ``forget_bias`` added to f). Under
``shims.legacy_layer`` or a ``GraphProgram`` the variable store makes them once. The
wrappers (``DropoutWrapper``, ``ResidualWrapper``, ``DeviceWrapper``) are TF 1.15's too: no
scope of their own (the wrapped cell's variables keep their names), dropout only where a
keep probability is a tensor or below 1, TF 1.15's per-tensor seeds, an LSTM state's ``c``
never dropped; ``OutputProjectionWrapper`` has a scope of its own, as in TF1.

``__all__`` is literal: tf-migrate reads it without importing TensorFlow.
"""
from __future__ import annotations

import collections
import hashlib

import tensorflow as tf
from tensorflow.python.util import nest  # map_structure_up_to: TF1's traversal, not in tf.nest

__all__ = ["RNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell", "MultiRNNCell",
           "LSTMStateTuple", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper",
           "OutputProjectionWrapper"]

v1 = tf.compat.v1


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """(c, h): an LSTM cell's state, as TF1's ``LSTMStateTuple``."""

    __slots__ = ()

    @property
    def dtype(self):
        if self.c.dtype != self.h.dtype:
            raise TypeError(f"Inconsistent internal state: {self.c.dtype} vs {self.h.dtype}")
        return self.c.dtype


class RNNCell:
    """TF1's cell protocol: ``cell(inputs, state) -> (output, new_state)`` under the cell's scope."""

    default_name = "rnn_cell"

    def __init__(self, name=None, dtype=None, reuse=None, **unused):
        """``dtype`` and ``reuse`` are TF1's and change nothing here: variables take the
        inputs' dtype, and the store hands every variable back on later calls."""
        if unused:
            raise ValueError(f"{type(self).__name__}: {', '.join(sorted(unused))} "
                             "is not supported by shims.rnn3 (the Keras 3 target)")
        self._base_name = name or self.default_name
        self._scope = None

    @property
    def state_size(self):
        raise NotImplementedError

    @property
    def output_size(self):
        raise NotImplementedError

    def __call__(self, inputs, state, scope=None):
        if self._scope is None:
            with v1.variable_scope(scope, default_name=self._base_name) as captured:
                self._scope = captured
                return self.call(inputs, state)
        with v1.variable_scope(self._scope, reuse=True, auxiliary_name_scope=False):
            return self.call(inputs, state)

    def call(self, inputs, state):
        raise NotImplementedError

    def zero_state(self, batch_size, dtype):
        def zeros(size):
            return tf.zeros(tf.concat([[batch_size], tf.TensorShape(size).as_list()], 0), dtype)
        return tf.nest.map_structure(zeros, self.state_size)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        if inputs is not None:
            batch_size = tf.shape(inputs)[0]
            dtype = inputs.dtype
        return self.zero_state(batch_size, dtype)


def _linear(inputs, units, kernel_initializer=None, bias_initializer=None, prefix=""):
    """matmul(inputs, kernel) + bias with TF1's variables ``[prefix]kernel`` and ``[prefix]bias``."""
    depth = inputs.shape[-1]
    kernel = v1.get_variable(f"{prefix}kernel", [depth, units], dtype=inputs.dtype,
                             initializer=kernel_initializer)
    bias = v1.get_variable(f"{prefix}bias", [units], dtype=inputs.dtype,
                           initializer=bias_initializer or v1.zeros_initializer(inputs.dtype))
    return tf.nn.bias_add(tf.matmul(inputs, kernel), bias)


class BasicRNNCell(RNNCell):
    default_name = "basic_rnn_cell"

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = activation or tf.tanh

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def call(self, inputs, state):
        output = self._activation(_linear(tf.concat([inputs, state], 1), self._num_units))
        return output, output


class BasicLSTMCell(RNNCell):
    default_name = "basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, reuse=reuse, **kwargs)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or tf.tanh
        self._initializer = None
        self._cell_clip = None

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = tf.split(state, 2, axis=1)
        gates = _linear(tf.concat([inputs, h], 1), 4 * self._num_units, self._initializer)
        i, j, f, o = tf.split(gates, 4, axis=1)
        forget = tf.cast(self._forget_bias, f.dtype)
        new_c = c * tf.sigmoid(f + forget) + tf.sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            new_c = tf.clip_by_value(new_c, -self._cell_clip, self._cell_clip)
        new_h = self._activation(new_c) * tf.sigmoid(o)
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else tf.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(BasicLSTMCell):
    """TF1's ``LSTMCell`` without peepholes or projections (those stay with the Keras 2 target)."""

    default_name = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        unsupported = [k for k, v in (("use_peepholes", use_peepholes), ("num_proj", num_proj),
                                      ("proj_clip", proj_clip), ("num_unit_shards", num_unit_shards),
                                      ("num_proj_shards", num_proj_shards)) if v]
        if unsupported:
            raise ValueError(f"LSTMCell: {', '.join(unsupported)} is not supported by shims.rnn3 "
                             "(the Keras 3 target); migrate this code for Keras 2")
        super().__init__(num_units, forget_bias=forget_bias, state_is_tuple=state_is_tuple,
                         activation=activation, reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._initializer = initializer
        self._cell_clip = cell_clip


class GRUCell(RNNCell):
    default_name = "gru_cell"

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, reuse=reuse, **kwargs)
        self._num_units = num_units
        self._activation = activation or tf.tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def call(self, inputs, state):
        gate_bias = self._bias_initializer or v1.constant_initializer(1.0, dtype=inputs.dtype)
        gates = tf.sigmoid(_linear(tf.concat([inputs, state], 1), 2 * self._num_units,
                                   self._kernel_initializer, gate_bias, prefix="gates/"))
        r, u = tf.split(gates, 2, axis=1)
        candidate = self._activation(_linear(tf.concat([inputs, r * state], 1), self._num_units,
                                             self._kernel_initializer, self._bias_initializer,
                                             prefix="candidate/"))
        new_h = u * state + (1 - u) * candidate
        return new_h, new_h


class MultiRNNCell(RNNCell):
    default_name = "multi_rnn_cell"

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        sizes = tuple(cell.state_size for cell in self._cells)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def call(self, inputs, state):
        current, new_states, at = inputs, [], 0
        for i, cell in enumerate(self._cells):
            with v1.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    cell_state = state[i]
                else:
                    size = cell.state_size
                    cell_state = state[:, at:at + size]
                    at += size
                current, new = cell(current, cell_state)
                new_states.append(new)
        return current, tuple(new_states) if self._state_is_tuple else tf.concat(new_states, 1)


class OutputProjectionWrapper(RNNCell):
    """tf.contrib.rnn.OutputProjectionWrapper: a cell of its own scope
    (``output_projection_wrapper``) running the wrapped cell in it, then TF 1.x's
    ``_Linear`` projection of its output to ``output_size`` (``kernel``, ``bias`` starting
    at zero), then ``activation`` if given. The state is the cell's."""
    default_name = "output_projection_wrapper"

    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(reuse=reuse)
        if output_size < 1:
            raise ValueError("Parameter output_size must be > 0: %d." % output_size)
        self._cell, self._output_size, self._activation = cell, output_size, activation

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._output_size)

    def zero_state(self, batch_size, dtype):
        with tf.name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        projected = _linear(output, self._output_size)
        return (self._activation(projected) if self._activation else projected), new_state


class _Wrapper(RNNCell):
    """TF 1.15's cell wrappers: the wrapped cell's scope, sizes and zero state."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    @property
    def state_size(self):
        return self.cell.state_size

    @property
    def output_size(self):
        return self.cell.output_size

    def zero_state(self, batch_size, dtype):
        return self.cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        return self._wrapped(inputs, state, scope)  # no scope of its own, as TF1's wrappers

    def _wrapped(self, inputs, state, scope):
        raise NotImplementedError


def _keep_value(prob, what):
    """A keep probability as TF1 held it: a Python float where its value is known."""
    value = tf.get_static_value(tf.convert_to_tensor(prob))
    if value is None:
        return prob
    if value < 0 or value > 1:
        raise ValueError(f"Parameter {what} must be between 0 and 1: {float(value)}")
    return float(value)


def _dropped(keep) -> bool:
    return not isinstance(keep, float) or keep < 1


class DropoutWrapper(_Wrapper):
    """``tf.nn.rnn_cell.DropoutWrapper`` of TF 1.15 (no variational recurrence)."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        if variational_recurrent:
            raise ValueError("shims.rnn3.DropoutWrapper: variational_recurrent=True is not "
                             "supported (the Keras 3 target); migrate for Keras 2")
        super().__init__(cell)
        self._input_keep_prob = _keep_value(input_keep_prob, "input_keep_prob")
        self._output_keep_prob = _keep_value(output_keep_prob, "output_keep_prob")
        self._state_keep_prob = _keep_value(state_keep_prob, "state_keep_prob")
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor or _default_state_filter

    def _gen_seed(self, salt_prefix, index):
        if self._seed is None:
            return None
        digest = hashlib.md5((str(self._seed) + f"{salt_prefix}_{index}").encode("utf-8")).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _dropout(self, values, salt_prefix, keep, which=None):
        """Each tensor of ``values`` (those ``which`` says, in TF1's flattened order) through
        ``tf.nn.dropout`` with TF1's seed for its index."""
        which = values if which is None else which
        index = [0]

        def drop(do, value):
            seed = self._gen_seed(salt_prefix, index[0])
            index[0] += 1
            if isinstance(do, bool) and not do:
                return value
            return tf.nn.dropout(value, rate=1.0 - keep, seed=seed)

        return nest.map_structure_up_to(which, drop, which, values)

    def _wrapped(self, inputs, state, scope):
        if _dropped(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._input_keep_prob)
        output, new_state = self.cell(inputs, state, scope=scope)
        if _dropped(self._state_keep_prob):
            which = _shallow_filter(self._state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._state_keep_prob, which)
        if _dropped(self._output_keep_prob):
            output = self._dropout(output, "output", self._output_keep_prob)
        return output, new_state


def _default_state_filter(substate):
    """TF 1.15's: an LSTM state's ``c`` is never dropped, its ``h`` is; other tensors are."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return not isinstance(substate, tf.TensorArray)


def _shallow_filter(visitor, state):
    """TF1's ``nest.get_traverse_shallow_structure``: the visitor's answer per substructure,
    a bool for a whole one or a structure of bools to go into."""
    answer = visitor(state)
    if isinstance(answer, bool):
        return answer
    if isinstance(state, (list, tuple)) and not isinstance(answer, (list, tuple)):
        raise TypeError("dropout_state_filter_visitor must return a bool or a structure")
    if isinstance(answer, (list, tuple)):
        parts = [a if isinstance(a, bool) else _shallow_filter(visitor, s) for a, s in zip(answer, state)]
        return type(answer)(*parts) if hasattr(answer, "_fields") else type(answer)(parts)
    return answer


class ResidualWrapper(_Wrapper):
    """``tf.nn.rnn_cell.ResidualWrapper`` of TF 1.15: the cell's output plus its input."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def _wrapped(self, inputs, state, scope):
        outputs, new_state = self.cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, outputs), new_state
        tf.nest.assert_same_structure(inputs, outputs)
        return tf.nest.map_structure(lambda i, o: i + o, inputs, outputs), new_state


class DeviceWrapper(_Wrapper):
    """``tf.nn.rnn_cell.DeviceWrapper`` of TF 1.15: the cell runs on ``device``."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def _wrapped(self, inputs, state, scope):
        with tf.device(self._device):
            return self.cell(inputs, state, scope=scope)
