"""Run legacy TF1 model code in TF2, eagerly, with tracked variables.

``import shims`` before tensorflow selects legacy Keras (tf_keras) for the
process unless the environment or a migrated module says otherwise, and TF 1.15's
CPU kernels (TF_ENABLE_ONEDNN_OPTS=0 unless you set it: oneDNN changes results and made a
migrated text CNN 17x slower).

The Keras generation: ``tf.keras`` is fixed the first time it is touched, from
``TF_USE_LEGACY_KERAS``. Code migrated with ``tf-migrate upgrade --keras 3`` says
``shims.require_keras(3)`` after ``import shims``: the process then stays on Keras 3
(nothing here imports tf_keras, and the variable shims set is removed), and the layers
below are Keras 3 layers. A module migrated for one generation in a process already on
the other is one ImportError naming both. ``shims.legacy_layer``, ``LegacyLayer``,
``LegacyModule`` and ``track_tf1_style_variables`` are those of the generation in use.

    import shims
    layer = shims.legacy_layer(build_fn)          # a Keras layer running build_fn
    layer(inputs)                                 # variables created once, tracked
    shims.load_tf1_checkpoint(layer, "tf1/model") # TF1 Saver checkpoint -> layer

Imports inside functions: the runtime of one Keras generation (``shims._layer``, which
imports tf_keras, or ``shims._layer3``), loaded when the process's generation is known;
``shims.cluster``, ``contrib``, ``queues``, ``summary`` and ``deterministic_random`` on first use
(``shims.contrib`` is tf-slim, which needs tf_keras, also in a Keras 3 process).
"""
from __future__ import annotations

import os
import sys
import warnings
import importlib
import importlib.util

# TF_ENABLE_ONEDNN_OPTS is read once, when tensorflow is imported: TF 2's oneDNN CPU kernels
# change results ("slightly different numerical results", TensorFlow says) and, measured on a
# TF1 text CNN, made a step 17x slower than TF 1.15's; without them the migrated program
# matched TF 1.15 within 1e-6 at 1.0x its step time. A migrated program imports shims first,
# so it runs as TF 1.15 did; TF_ENABLE_ONEDNN_OPTS=1 in the environment keeps oneDNN.
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

# The Keras generation is chosen after tensorflow is imported: TF_USE_LEGACY_KERAS is read
# again when tf.keras is first touched, and importing tensorflow with it set would import
# tf_keras, which a Keras 3 program must not have (see _select_legacy).
_LEGACY_SET_HERE = "TF_USE_LEGACY_KERAS" not in os.environ

try:
    import tensorflow as tf
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(f"shims needs TensorFlow ({exc.name} is missing): "
                      "pip install 'tf-migrate[tf]'") from None

from shims import _names  # noqa: F401  (bound here even when the tool loaded it first)
from shims._runner import get_or_create_layer
from shims._checkpoint import LoadReport, load_tf1_checkpoint, tracked_variables
from shims.program import Default, GraphProgram, SharedGraph, evaluated, op_name, tf1_graph, towers
from shims.monitored import (MonitoredSession, MonitoredTrainingSession, SingularMonitoredSession,
                             Supervisor)
from shims.ops import dropout
from shims import estimator

__all__ = [
    "Default", "GraphProgram", "SharedGraph", "LegacyLayer", "LegacyModule", "LoadReport", "MonitoredSession", "MonitoredTrainingSession",
    "SingularMonitoredSession", "Supervisor",
    "cluster", "contrib", "estimator", "queues",
    "deterministic_random", "dropout", "evaluated", "op_name",
    "get_or_create_layer", "keras_generation", "keras_is_legacy", "legacy_layer", "load_tf1_checkpoint",
    "require_keras", "tf1_graph", "towers", "track_tf1_style_variables", "tracked_variables",
]

_BY_GENERATION = ("LegacyLayer", "LegacyModule", "legacy_layer", "track_tf1_style_variables")
_TRUE = ("1", "true", "True")


def __getattr__(name: str):
    """The layer runtime of the process's Keras generation; ``shims.contrib`` (it loads
    tf-slim), ``shims.cluster``, ``shims.queues`` and ``shims.summary`` are imported on first use."""
    if name in _BY_GENERATION:
        runtime = "shims._layer" if keras_generation() == 2 else "shims._layer3"
        return getattr(importlib.import_module(runtime), name)
    if name == "deterministic_random":
        return importlib.import_module("shims._random").deterministic_random
    if name in ("cluster", "contrib", "queues", "summary"):
        return importlib.import_module(f"shims.{name}")
    raise AttributeError(f"module 'shims' has no attribute {name!r}")


def _resolved():
    """2 or 3 when ``tf.keras`` has been resolved in this process, else None."""
    keras_attr = vars(tf).get("keras")
    if keras_attr is None:
        return None
    if type(keras_attr).__name__ == "KerasLazyLoader":
        if not vars(keras_attr).get("_tfll_initialized"):
            return None
        return 2 if vars(keras_attr).get("_tfll_keras_version") == "tf_keras" else 3
    # loaded: tf_keras's API module (also when imported as ``tensorflow.keras``) or Keras 3's
    where = getattr(keras_attr, "__file__", "") or ""
    legacy = getattr(keras_attr, "__name__", "").startswith("tf_keras") or \
        f"{os.sep}tf_keras{os.sep}" in where
    return 2 if legacy else 3


def keras_generation() -> int:
    """The Keras of this process: 2 (tf_keras) or 3, what ``tf.keras`` is or will be."""
    resolved = _resolved()
    if resolved is not None:
        return resolved
    return 2 if os.environ.get("TF_USE_LEGACY_KERAS") in _TRUE else 3


def keras_is_legacy() -> bool:
    """True when ``tf.keras`` is tf_keras (Keras 2) in this process."""
    return keras_generation() == 2


def require_keras(generation: int) -> None:
    """Declare the Keras generation a migrated module was written for (``upgrade --keras``).

    Before ``tf.keras`` is first touched this selects it (for 3, the variable ``import shims``
    set is removed again); after, a different generation is one ImportError."""
    if generation not in (2, 3):
        raise ValueError(f"require_keras: the Keras generation is 2 or 3, not {generation!r}")
    if _resolved() is None:
        if generation == 3 and _LEGACY_SET_HERE:
            os.environ.pop("TF_USE_LEGACY_KERAS", None)
            _legacy_paths(add=False)
        elif generation == 2 and "TF_USE_LEGACY_KERAS" not in os.environ:
            _select_legacy()
    actual = keras_generation()
    if actual != generation:
        why = ("TF_USE_LEGACY_KERAS=1 is set" if os.environ.get("TF_USE_LEGACY_KERAS") in _TRUE
               else "tf.keras was already loaded")
        remedy = ("run it in a process of its own" if actual == 2 else
                  # a launcher that imported TensorFlow first (Ray Train's workers do) can
                  # start its processes with Keras 2 selected instead
                  "run it in a process of its own, or set TF_USE_LEGACY_KERAS=1 where the "
                  "process starts (Ray: runtime_env={'env_vars': {'TF_USE_LEGACY_KERAS': '1'}})")
        raise ImportError(
            f"this module was migrated for Keras {generation} but tf.keras in this process is "
            f"{'tf_keras (Keras 2)' if actual == 2 else 'Keras 3'} ({why}); migrate it again with "
            f"`tf-migrate upgrade --keras {actual}`, or {remedy}")


def _legacy_paths(add: bool) -> None:
    """``import tensorflow.keras...`` goes by tensorflow's ``__path__``, which TensorFlow
    points at tf_keras or Keras 3 while it is imported; follow the generation chosen
    later. tf_keras is found, not imported (a Keras 3 process must not hold it)."""
    spec = importlib.util.find_spec("tf_keras")
    if spec is None or not spec.submodule_search_locations:
        return
    root = os.path.join(list(spec.submodule_search_locations)[0], "api")
    for module, folder in ((tf, "_v2"), (sys.modules.get("tensorflow.compat.v1"), "_v1")):
        path = getattr(module, "__path__", None)
        if path is None:
            continue
        entry = os.path.join(root, folder)
        if add and entry not in path:
            path.insert(0, entry)
        elif not add and entry in path:
            path.remove(entry)


def _select_legacy() -> None:
    """Keras 2 for this process, as TF 1.15's tf.keras was, unless it is decided already."""
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    _legacy_paths(add=True)


if _LEGACY_SET_HERE and _resolved() is None:
    _select_legacy()  # the default; require_keras(3) (``import shims.keras3``) takes it back
elif _resolved() == 3 and _LEGACY_SET_HERE:
    warnings.warn(
        "shims: tf.keras was loaded as Keras 3 before shims was imported, so legacy layers here "
        "are Keras 3 layers, and tf.compat.v1.layers in your code is unavailable. Code migrated "
        "for Keras 2 wants `import shims` before `import tensorflow` (or TF_USE_LEGACY_KERAS=1); "
        "code migrated with --keras 3 runs as it is.",
        RuntimeWarning, stacklevel=2)
