"""tf.contrib.rnn / tf.nn.rnn_cell cells and wrappers on TF2.

``tf.compat.v1.nn.rnn_cell`` fails under Keras 3 (TF 2.21: "No module named
'keras._tf_keras.keras.__internal__'"); the TF1 cells live on in tf-keras. These are
those classes: the same variable names (``rnn/lstm_cell/kernel``, ``.../bias``), with
``tf.compat.v1.nn.dynamic_rnn`` / ``static_rnn`` in graph mode and eagerly under
``shims.legacy_layer``.

``__all__`` is literal: tf-migrate reads it without importing TensorFlow.
"""
from __future__ import annotations

from tf_keras.src.layers.rnn import legacy_cell_wrappers as _wrappers
from tf_keras.src.layers.rnn import legacy_cells as _cells

__all__ = [
    "RNNCell", "LayerRNNCell", "BasicRNNCell", "BasicLSTMCell", "LSTMCell", "GRUCell",
    "MultiRNNCell", "LSTMStateTuple", "DropoutWrapper", "ResidualWrapper", "DeviceWrapper",
    "LSTMBlockCell",
]

globals().update({name: getattr(_cells, name, None) or getattr(_wrappers, name)
                  for name in __all__ if name != "LSTMBlockCell"})


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
