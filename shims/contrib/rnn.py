"""tf.contrib.rnn / tf.nn.rnn_cell cells and wrappers on TF2.

``tf.compat.v1.nn.rnn_cell`` fails under Keras 3 (TF 2.21: "No module named
'keras._tf_keras.keras.__internal__'"); the TF1 cells live on in tf-keras. These are
those classes: the same variable names (``rnn/lstm_cell/kernel``, ``.../bias``), with
``tf.compat.v1.nn.dynamic_rnn`` / ``static_rnn`` in graph mode and eagerly under
``shims.legacy_layer``.

``__all__`` is literal: tf-migrate reads it without importing TensorFlow.
"""
from __future__ import annotations

import tensorflow as tf
from tf_keras.src.layers.rnn import legacy_cell_wrappers as _wrappers
from tf_keras.src.layers.rnn import legacy_cells as _cells

__all__ = [
    "RNNCell", "LayerRNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell",
    "MultiRNNCell", "LSTMStateTuple", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper",
    "LSTMBlockCell", "OutputProjectionWrapper",
]

globals().update({name: getattr(_cells, name, None) or getattr(_wrappers, name)
                  for name in __all__ if name not in ("LSTMBlockCell", "OutputProjectionWrapper")})


class LSTMBlockCell(_cells.LSTMCell):
    """tf.contrib.rnn.LSTMBlockCell: TF 1.x's fused LSTM kernel computed the same cell as
    ``LSTMCell`` with the same variables (``lstm_cell/kernel``, ``lstm_cell/bias``, gates in
    i, j, f, o order; TF's docs: "the weight and bias matrices should be compatible"), so
    it is that cell with LSTMBlockCell's arguments and default name."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 dtype=None, reuse=None, name="lstm_cell"):
        super().__init__(num_units, use_peepholes=use_peephole,
                         cell_clip=None if cell_clip is None or cell_clip < 0 else cell_clip,
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)


class OutputProjectionWrapper(_cells.RNNCell):
    """tf.contrib.rnn.OutputProjectionWrapper (TF 1.x's ``core_rnn_cell``): the cell, then a
    projection of its output to ``output_size`` with TF 1.x's ``_Linear`` (``kernel`` and
    ``bias`` in the wrapper's scope, ``rnn/output_projection_wrapper/kernel``, the bias
    starting at zero), then ``activation`` if given. The state is the cell's."""

    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(_reuse=reuse)
        if output_size < 1:
            raise ValueError("Parameter output_size must be > 0: %d." % output_size)
        self._cell = cell
        self._output_size = output_size
        self._activation = activation
        self._kernel = self._bias = None

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._output_size

    def zero_state(self, batch_size, dtype):
        with tf.name_scope(type(self).__name__ + "ZeroState"):
            return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs, state):
        output, res_state = self._cell(inputs, state)
        if self._kernel is None:
            self._kernel = tf.compat.v1.get_variable("kernel", [output.shape[-1], self._output_size],
                                                     dtype=output.dtype)
            self._bias = tf.compat.v1.get_variable("bias", [self._output_size], dtype=output.dtype,
                                                   initializer=tf.compat.v1.constant_initializer(0.0))
        projected = tf.nn.bias_add(tf.matmul(output, self._kernel), self._bias)
        if self._activation:
            projected = self._activation(projected)
        return projected, res_state
