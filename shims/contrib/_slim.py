"""Import the tf-slim package, which is tf.contrib.layers / slim / framework maintained as
a package, so that all of it works on TF 2.16+.

tf-slim 1.1.0 imports on TF 2.21, but parts of it reach for TensorFlow internals that
TF 2.16-2.21 moved, and fail when called:

- ``batch_norm`` (non-fused) and everything built on ``tensorflow.python.layers.
  normalization``: ``No module named 'tf_keras.legacy_tf_layers'`` (TensorFlow's
  forwarding module lazily loads that name; tf-keras ships it as
  ``tf_keras.src.legacy_tf_layers``; the alias imports tf_keras on first use, so a
  Keras 3 process running other tf-slim layers has none);
- ``flatten`` and the graph-mode type checks: ``ops.Tensor`` (now
  ``framework.tensor.Tensor``), ``ops.IndexedSlices``;
- ``batch_norm``/``dropout`` with a tensor ``is_training`` (``utils.smart_cond``):
  ``control_flow_ops.cond``, and ``case``/``while_loop``/``Assert``/``array_ops.stack``
  elsewhere (now in ``ops.cond``, ``ops.while_loop``, ...).

The old names are given back, pointing at the very same objects, only where they are
missing; nothing else changes. In a Keras 3 process tf-slim's batch_norm layer is
``shims.contrib._slim_bn``'s (TF 1.15's arithmetic without tf_keras), imported when first
asked for.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types

import shims

# (module, old attribute, module that has it now, its name there)
_MOVED = [
    ("tensorflow.python.framework.ops", "Tensor", "tensorflow.python.framework.tensor", "Tensor"),
    ("tensorflow.python.framework.ops", "IndexedSlices", "tensorflow.python.framework.indexed_slices",
     "IndexedSlices"),
    ("tensorflow.python.ops.control_flow_ops", "cond", "tensorflow.python.ops.cond", "cond"),
    ("tensorflow.python.ops.control_flow_ops", "case", "tensorflow.python.ops.control_flow_case", "case"),
    ("tensorflow.python.ops.control_flow_ops", "while_loop", "tensorflow.python.ops.while_loop",
     "while_loop"),
    ("tensorflow.python.ops.control_flow_ops", "Assert", "tensorflow.python.ops.control_flow_assert",
     "Assert"),
    ("tensorflow.python.ops.array_ops", "stack", "tensorflow.python.ops.array_ops_stack", "stack"),
    ("tensorflow.python.ops.array_ops", "unstack", "tensorflow.python.ops.array_ops_stack", "unstack"),
]


class _OnFirstUse(types.ModuleType):
    """A module that imports ``target`` when an attribute is first read, then is it."""

    def __init__(self, name: str, target: str) -> None:
        super().__init__(name)
        self.__target = target

    def __getattr__(self, attr):
        if attr.startswith("__"):  # autograph and inspect scan sys.modules for __file__
            raise AttributeError(attr)
        module = importlib.import_module(self.__target)
        self.__dict__.update(module.__dict__)
        return getattr(module, attr)


def _restore_moved_names() -> None:
    for module, name, home, new_name in _MOVED:
        old = importlib.import_module(module)
        if not hasattr(old, name):
            setattr(old, name, getattr(importlib.import_module(home), new_name))
    _slim_batch_norm()
    if importlib.util.find_spec("tf_keras") is None:
        return
    # on first use only: tf_keras is not imported into a Keras 3 process that never runs
    # tf-slim's non-fused batch_norm (its only tf_keras layer)
    for public, src in (("tf_keras.legacy_tf_layers", "tf_keras.src.legacy_tf_layers"),
                        ("tf_keras.legacy_tf_layers.normalization",
                         "tf_keras.src.legacy_tf_layers.normalization")):
        if public not in sys.modules:
            sys.modules[public] = _OnFirstUse(public, src)


def _slim_batch_norm() -> None:
    """tf-slim's non-fused batch_norm layer: tf_keras's in a Keras 2 process (as it is
    proven), TF 1.15's arithmetic on TensorFlow's own legacy base in a Keras 3 one."""
    normalization = importlib.import_module("tensorflow.python.layers.normalization")
    forward = vars(normalization).get("_tf_keras_getattr") or normalization.__getattr__

    def chosen(name):
        if name in ("BatchNormalization", "BatchNorm") and shims.keras_generation() == 3:
            return importlib.import_module("shims.contrib._slim_bn").BatchNormalization
        return forward(name)

    normalization._tf_keras_getattr = forward
    normalization.__getattr__ = chosen


def load():
    """The ``tf_slim`` module, working on this TensorFlow."""
    _restore_moved_names()
    try:
        return importlib.import_module("tf_slim")
    except ImportError as exc:
        raise ImportError(f"shims.contrib needs the tf-slim package ({exc.name} is missing): "
                          "pip install 'tf-migrate[tf]' (or pip install tf-slim)") from None
