"""tf.contrib's pieces TF1 projects used, on TF 2.16+, with TF1's variable names, defaults
and math, in graph mode and eagerly under ``shims.legacy_layer``:

- ``shims.contrib.layers`` (also flat: ``shims.contrib.batch_norm``, ``conv2d``, ...):
  tf.contrib.layers, from tf-slim (its maintained copy), batch_norm included;
- ``shims.contrib.framework``: ``arg_scope`` and the variable helpers;
- ``shims.contrib.rnn``: the TF1 RNN cells and wrappers (``LSTMCell``, ``MultiRNNCell``,
  ``DropoutWrapper``, ``ResidualWrapper``, ``DeviceWrapper``, ...), which
  ``tf.compat.v1.nn.rnn_cell`` no longer provides under Keras 3;
- ``shims.contrib.eager`` (``tfe``): ``defun`` (tf.function), ``Variable``, the gradient
  helpers TF2 dropped (``implicit_gradients``, ``gradients_function``, ...);
- ``shims.contrib.training.HParams`` (also ``shims.contrib.HParams``);
- ``shims.contrib.factorization.KMeans``: TF 1.15's k-means graph builder;
- ``shims.contrib.learn.preprocessing``: ``VocabularyProcessor`` (text CNNs), reading and
  writing TF 1.15's vocabulary pickles;
- ``shims.contrib.seq2seq.sequence_loss``: TF 1.15's weighted sequence cross-entropy.

``rnn`` (tf_keras's cells: a Keras 3 process must not import it unasked), ``eager``,
``factorization``, ``learn`` and ``seq2seq`` are imported on first use.
"""
from __future__ import annotations

import importlib

from shims.contrib import framework, layers, training
from shims.contrib.layers import *  # noqa: F401,F403 - the flat contrib.layers namespace
from shims.contrib.layers import __all__ as _layer_names
from shims.contrib.training import HParams

_ON_FIRST_USE = ("eager", "factorization", "learn", "rnn", "seq2seq")

__all__ = ["eager", "factorization", "framework", "layers", "learn", "rnn", "seq2seq", "training", "HParams",
           *_layer_names]


def __getattr__(name):
    if name in _ON_FIRST_USE:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
