"""Import the tf-slim package, which is tf.contrib.layers / slim / framework maintained as
a package, so that all of it works on TF 2.16+.

tf-slim 1.1.0 imports on TF 2.21, but parts of it reach for TensorFlow internals that
TF 2.16-2.21 moved, and fail when called:

- ``batch_norm`` (non-fused) and everything built on ``tensorflow.python.layers.
  normalization``: ``No module named 'tf_keras.legacy_tf_layers'`` (TensorFlow's
  forwarding module lazily loads that name; tf-keras ships it as
  ``tf_keras.src.legacy_tf_layers``);
- ``flatten`` and the graph-mode type checks: ``ops.Tensor`` (now
  ``framework.tensor.Tensor``), ``ops.IndexedSlices``;
- ``batch_norm``/``dropout`` with a tensor ``is_training`` (``utils.smart_cond``):
  ``control_flow_ops.cond``, and ``case``/``while_loop``/``Assert``/``array_ops.stack``
  elsewhere (now in ``ops.cond``, ``ops.while_loop``, ...).

The old names are given back, pointing at the very same objects, only where they are
missing; nothing else changes. This file imports nothing from ``shims`` (the reference
runs of the contrib samples load it by path).
"""
from __future__ import annotations

import importlib
import sys

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


def _restore_moved_names() -> None:
    for module, name, home, new_name in _MOVED:
        old = importlib.import_module(module)
        if not hasattr(old, name):
            setattr(old, name, getattr(importlib.import_module(home), new_name))
    try:
        legacy = importlib.import_module("tf_keras.src.legacy_tf_layers")
        normalization = importlib.import_module("tf_keras.src.legacy_tf_layers.normalization")
    except ImportError:  # an older tf-keras that still has the public name
        return
    sys.modules.setdefault("tf_keras.legacy_tf_layers", legacy)
    sys.modules.setdefault("tf_keras.legacy_tf_layers.normalization", normalization)


def load():
    """The ``tf_slim`` module, working on this TensorFlow."""
    _restore_moved_names()
    try:
        return importlib.import_module("tf_slim")
    except ImportError as exc:
        raise ImportError(f"shims.contrib needs the tf-slim package ({exc.name} is missing): "
                          "pip install 'tf-migrate[tf]' (or pip install tf-slim)") from None
