"""legacy_layer / LegacyModule on Keras 2 (tf_keras): the default target's runtime."""
from __future__ import annotations

from typing import Callable, Optional

import tensorflow as tf
import tf_keras
from tf_keras.src.legacy_tf_layers import variable_scope_shim as _shim

from shims._runner import _Runner, _snake
from shims._store import accepts

track_tf1_style_variables = _shim.track_tf1_style_variables
_EagerVariableStore = _shim._EagerVariableStore


class LegacyLayer(tf_keras.layers.Layer):
    """A Keras layer whose ``call`` runs a TF1-style function.

    Variables created by ``tf.compat.v1.get_variable``, ``tf.compat.v1.layers``
    and :func:`get_or_create_layer` inside ``fn`` are created once, tracked
    (``layer.variables``, ``tf.train.Checkpoint``) and reused on later calls;
    regularization losses land in ``layer.losses``.
    """

    def __init__(self, fn: Callable, name: Optional[str] = None, trace: bool = True, **kwargs):
        super().__init__(name=name or _snake(getattr(fn, "__name__", "legacy")), **kwargs)
        self._tf1_style_var_store = _EagerVariableStore()
        self._fn = fn
        self._takes_training = accepts(fn, "training")
        self._runner = _Runner(self, fn, trace, after=self._add_new_losses)

    def _add_new_losses(self, before: set) -> None:
        for name, regularizer in self._tf1_style_var_store._regularizers.items():
            if name not in before:
                self.add_loss(regularizer)

    def call(self, *args, training=None, **kwargs):
        if training is not None and self._takes_training:
            kwargs["training"] = training
        return self._runner(*args, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["fn"] = f"{getattr(self._fn, '__module__', '?')}.{getattr(self._fn, '__qualname__', '?')}"
        return config


class LegacyModule(tf.Module):
    """The ``tf.Module`` flavour of :class:`LegacyLayer` (no Keras needed)."""

    def __init__(self, fn: Callable, name: Optional[str] = None, trace: bool = True):
        super().__init__(name=name or _snake(getattr(fn, "__name__", "legacy")))
        self._tf1_style_var_store = _EagerVariableStore()
        self._fn = fn
        self._runner = _Runner(self, fn, trace)

    def __call__(self, *args, **kwargs):
        return self._runner(*args, **kwargs)

    @property
    def losses(self):
        """Regularization losses of the variables created so far."""
        return [r() for r in self._tf1_style_var_store._regularizers.values()]


def legacy_layer(fn: Callable, name: Optional[str] = None, trace: bool = True) -> LegacyLayer:
    """Wrap a TF1 graph-building function as a Keras layer (see :class:`LegacyLayer`)."""
    return LegacyLayer(fn, name=name, trace=trace)
