"""Run legacy TF1 model code in TF2, eagerly, with tracked variables.

``import shims`` before tensorflow selects legacy Keras (tf_keras) for the
process, so ``tf.compat.v1.layers`` and ``tf.compat.v1.keras.utils`` exist, and TF 1.15's
CPU kernels (TF_ENABLE_ONEDNN_OPTS=0 unless you set it: oneDNN changes results and made a
migrated text CNN 17x slower). If
tensorflow was imported first with Keras 3 active, everything here still works
through tf_keras directly, and a warning says what to change.

    import shims
    layer = shims.legacy_layer(build_fn)          # a Keras layer running build_fn
    layer(inputs)                                 # variables created once, tracked
    shims.load_tf1_checkpoint(layer, "tf1/model") # TF1 Saver checkpoint -> layer
"""
from __future__ import annotations

import os
import warnings
import importlib

# read by tensorflow when tf.keras is first touched
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
# read once, when tensorflow is imported: TF 2's oneDNN CPU kernels change results ("slightly
# different numerical results", TensorFlow says) and, measured on a TF1 text CNN, made a step
# 17x slower than TF 1.15's; without them the migrated program matched TF 1.15 within 1e-6 at
# 1.0x its step time. A migrated program imports shims first, so it runs as TF 1.15 did;
# TF_ENABLE_ONEDNN_OPTS=1 in the environment keeps oneDNN.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

try:
    import tensorflow as tf
    import tf_keras  # noqa: F401  (the shim lives there)
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(f"shims needs TensorFlow and tf-keras ({exc.name} is missing): "
                      "pip install 'tf-migrate[tf]'") from None

from shims import _names  # noqa: F401  (bound here even when the tool loaded it first)
from shims._layer import (LegacyLayer, LegacyModule, get_or_create_layer, legacy_layer,
                          track_tf1_style_variables)
from shims._checkpoint import LoadReport, load_tf1_checkpoint, tracked_variables
from shims._random import deterministic_random
from shims.program import Default, GraphProgram, op_name
from shims.monitored import (MonitoredSession, MonitoredTrainingSession, SingularMonitoredSession,
                             Supervisor)
from shims.ops import dropout
from shims import estimator

__all__ = [
    "Default", "GraphProgram", "LegacyLayer", "LegacyModule", "LoadReport", "MonitoredSession", "MonitoredTrainingSession",
    "SingularMonitoredSession", "Supervisor",
    "contrib", "estimator", "queues",
    "deterministic_random", "dropout", "op_name",
    "get_or_create_layer", "keras_is_legacy", "legacy_layer", "load_tf1_checkpoint",
    "track_tf1_style_variables", "tracked_variables",
]


def __getattr__(name: str):
    """``shims.contrib`` (it loads tf-slim), ``shims.queues`` and ``shims.summary`` are
    imported on first use."""
    if name in ("contrib", "queues", "summary"):

        return importlib.import_module(f"shims.{name}")
    raise AttributeError(f"module 'shims' has no attribute {name!r}")


def keras_is_legacy() -> bool:
    """True when ``tf.keras`` is tf_keras (Keras 2) in this process."""
    return getattr(tf.keras, "__name__", "").startswith("tf_keras") or \
        getattr(tf.keras, "__version__", "3").startswith("2.")


if not keras_is_legacy():
    warnings.warn(
        "shims: tensorflow was imported before shims, so tf.keras is Keras 3 in this process. "
        "shims works through tf_keras directly, but tf.keras.layers and tf.compat.v1.layers in your "
        "code are Keras 3 (tf.compat.v1.layers is unavailable there). Put `import shims` before "
        "`import tensorflow`, or set TF_USE_LEGACY_KERAS=1 before starting Python.",
        RuntimeWarning, stacklevel=2)
