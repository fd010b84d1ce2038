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
]

globals().update({name: getattr(_cells, name, None) or getattr(_wrappers, name)
                  for name in __all__})
