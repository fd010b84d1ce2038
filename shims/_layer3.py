"""legacy_layer / LegacyModule / track_tf1_style_variables on Keras 3, without tf_keras.

The Keras 3 target's runtime (``tf-migrate upgrade --keras 3``). Keras 3 has no
``track_tf1_style_variables`` and tracks only its own variables, so a ``tf.Variable``
that ``get_variable`` makes is wrapped in a ``keras.Variable`` sharing its storage
(``layer.variables``, the optimizer and ``fit`` see it; the TF1 code keeps the
``tf.Variable`` with its TF1 name), and a Keras layer made through
``get_or_create_layer`` becomes a sublayer. Keras 3 locks a layer's state once built;
TF1 code creates its variables on the first call, so the store adds them with the lock
lifted for that moment. A checkpoint keeps the same ``_tf1_style_var_store`` paths as
the Keras 2 runtime, so ``load_tf1_checkpoint`` and ``tf-migrate ckpt`` read both.
"""
from __future__ import annotations

import contextlib
import importlib
import weakref
from typing import Callable, Optional

import keras
import tensorflow as tf
from keras.src.backend.common import global_state
from keras.src.backend.common.stateless_scope import in_stateless_scope
from keras.src.backend.common.symbolic_scope import in_symbolic_scope

from shims._checkpoint import _escape
from shims._runner import _Runner, _snake
from shims._store import VariableStore, accepts, plain


@contextlib.contextmanager
def _unlocked(layer):
    """Keras 3 refuses new state on a built layer; TF1 code makes it on the first call."""
    tracker = getattr(layer, "_tracker", None)
    locked = tracker is not None and tracker.locked
    if locked:
        tracker.unlock()
    try:
        yield
    finally:
        if locked:
            layer._lock_state()


@contextlib.contextmanager
def _stateful():
    """Keras 3 builds a model by calling it on symbolic inputs in a stateless scope, where
    a variable of its own is deferred and one from an existing value refused; a TF1
    variable is made once, for real, wherever the function first runs."""
    scope = global_state.get_global_attribute("stateless_scope")
    global_state.set_global_attribute("stateless_scope", None)
    try:
        yield
    finally:
        global_state.set_global_attribute("stateless_scope", scope)


def _penalty(regularizer):
    """A TF1 regularizer as Keras 3 calls it: on the ``tf.Variable`` behind a Keras
    variable (TF1 penalties read ``weights.dtype.base_dtype``), and 0 where TF1's returned
    None (a zero scale)."""
    def penalty(value):
        loss = regularizer(value.value if isinstance(value, keras.Variable) else value)
        return tf.constant(0.0) if loss is None else loss
    return penalty


class _LayerStore(VariableStore):
    """A Keras 3 layer's store: its variables and layers become the layer's own."""

    def __init__(self, owner) -> None:
        super().__init__()
        self._owner = weakref.ref(owner)

    def keep(self, name: str, variable: tf.Variable, regularizer=None):
        owner = self._owner()
        with _stateful():
            kept = keras.Variable(variable, name=name.rsplit("/", 1)[-1], trainable=variable.trainable)
        if regularizer is not None:
            self.keep_regularizer(name, kept, regularizer)
        if owner is not None:
            with _unlocked(owner):
                owner._track_variable(kept)
        return kept

    def keep_regularizer(self, name: str, kept, regularizer) -> None:
        kept.regularizer = _penalty(regularizer)  # Keras 3 adds it to the layer's (and model's) losses

    def keep_layer(self, name: str, layer) -> None:
        owner = self._owner()
        if owner is not None and isinstance(layer, keras.layers.Layer):
            with _unlocked(owner):
                owner._tracker.add_to_store("layers", layer)


@keras.saving.register_keras_serializable(package="shims")
class LegacyLayer(keras.layers.Layer):
    """A Keras 3 layer whose ``call`` runs a TF1-style function (see ``shims._layer.LegacyLayer``).

    It saves whole with its model (``model.save("m.keras")``): the config names the function
    by module and qualified name, imported again by ``keras.models.load_model``, and the
    build config keeps the first call's input shapes and dtypes, so loading runs the function
    once on zeros to make its variables before their values are read."""

    def __init__(self, fn: Callable, name: Optional[str] = None, trace: bool = True, **kwargs):
        if isinstance(fn, str):
            fn = _function(fn)
        super().__init__(name=name or _snake(getattr(fn, "__name__", "legacy")), **kwargs)
        self._tf1_inputs = None  # [(shape, dtype)] of the first call's tensor arguments
        self._trace = trace
        self._tf1_style_var_store = _LayerStore(self)
        self._fn = fn
        self._takes_training = accepts(fn, "training")
        # regularization losses: each kept variable carries its get_variable regularizer,
        # which Keras 3 evaluates for the layer's (and its model's) losses, as TF1's
        # REGULARIZATION_LOSSES collection held them; a Keras sublayer's are its own
        self._runner = _Runner(self, fn, trace)

    def build(self, input_shape=None):
        """Nothing to make ahead: the TF1 function makes its variables on its first run
        (Keras 3 would otherwise run it once more, on symbolic inputs, to build it)."""
        self.built = True

    def call(self, *args, training=None, **kwargs):
        if training is not None and self._takes_training:
            kwargs["training"] = training
        if self._tf1_inputs is None:
            self._tf1_inputs = [(list(a.shape), tf.as_dtype(a.dtype).name) for a in args
                                if hasattr(a, "shape") and hasattr(a, "dtype")]
        # Keras 3 builds a model by a symbolic run in a stateless scope, where its layers'
        # variables are values: a trace made there would keep those values for good
        return self._runner(*args, untraced=in_stateless_scope() or in_symbolic_scope(), **kwargs)

    def get_config(self):
        config = super().get_config()
        config["fn"] = f"{getattr(self._fn, '__module__', '?')}:{getattr(self._fn, '__qualname__', '?')}"
        config["trace"] = self._trace
        return config

    def get_build_config(self):
        if self._tf1_inputs:
            return {"tf1_inputs": self._tf1_inputs}
        return super().get_build_config()

    def build_from_config(self, config):
        """Loading: run the function once on zeros shaped as its first inputs (None is 1)."""
        if config and "tf1_inputs" in config:
            zeros = [tf.zeros([1 if d is None else d for d in shape], dtype) for shape, dtype in
                     config["tf1_inputs"]]
            with _stateful():
                self(*zeros)
            return
        super().build_from_config(config)

    # -- saving ------------------------------------------------------------------------
    def _tf1_weights(self):
        """(TF1 name, variable) of everything the TF1 function made, in the order made."""
        store = self._tf1_style_var_store
        out = list(store._vars.items())
        for key, layer in store._layers.items():
            out.extend((f"{key}/{v.name}", v) for v in getattr(layer, "weights", ()))
        return out

    def save_own_variables(self, store):
        """``.weights.h5``: every variable, the Keras layers' the function made included
        (Keras 3 saves a layer's own variables only), keyed by its TF1 name."""
        for name, variable in self._tf1_weights():
            store[_escape(name)] = variable

    def load_own_variables(self, store):
        names = self._tf1_weights()
        missing = [name for name, _ in names if _escape(name) not in store.keys()]
        if missing or len(store.keys()) != len(names):
            raise ValueError(f"{self.name}: the saved weights are not this TF1 function's "
                             f"({len(store.keys())} saved, {len(names)} here; missing: {missing[:5]}); "
                             "call the layer once before loading")
        for name, variable in names:
            variable.assign(store[_escape(name)])

    def _trackable_children(self, save_type="checkpoint", **kwargs):
        """A checkpoint keys the store's variables and layers directly under the layer, by
        ``_tf1_style_var_store/_vars/<TF1 name>`` as one name: a compiled Keras 3 model's
        optimizer lists every trainable variable three levels down, and a checkpoint keeps
        each variable under its shortest path, so the store's deeper ones would be saved
        as the optimizer's (and lost to a model restored without one)."""
        children = super()._trackable_children(save_type, **kwargs)
        if save_type != "checkpoint":
            return children
        store = children.pop("_tf1_style_var_store", None) or self._tf1_style_var_store
        for kind, items in (("_vars", store._vars), ("_layers", store._layers)):
            for key, value in items.items():
                children[f"_tf1_style_var_store/{kind}/{key}"] = value
        return children


def _function(path: str) -> Callable:
    """``module:qualname`` (what ``get_config`` wrote) -> the function, imported again."""
    module, _, qualname = path.partition(":")
    if "<" in qualname or not qualname:
        raise ValueError(f"shims.legacy_layer: {path} is not importable (a local function or a "
                         "lambda); make it a module-level function to save the model whole")
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


class LegacyModule(tf.Module):
    """The ``tf.Module`` flavour of :class:`LegacyLayer` (no Keras model around it)."""

    def __init__(self, fn: Callable, name: Optional[str] = None, trace: bool = True):
        super().__init__(name=name or _snake(getattr(fn, "__name__", "legacy")))
        self._tf1_style_var_store = VariableStore()
        self._fn = fn
        self._runner = _Runner(self, fn, trace)

    def __call__(self, *args, **kwargs):
        return self._runner(*args, **kwargs)

    @property
    def variables(self):
        """The store's variables and those of the Keras 3 layers it made (as tf.Variables)."""
        store = self._tf1_style_var_store
        out = [plain(v) for v in store._vars.values()]
        for layer in store._layers.values():
            out.extend(plain(v) for v in getattr(layer, "variables", ()))
        return tuple(out)

    @property
    def trainable_variables(self):
        return tuple(v for v in self.variables if v.trainable)

    @property
    def losses(self):
        """Regularization losses of the variables and Keras 3 layers made so far."""
        store = self._tf1_style_var_store
        out = [r() for r in store._regularizers.values()]
        for layer in store._layers.values():
            out.extend(getattr(layer, "_get_regularization_losses", list)())
        return out


def legacy_layer(fn: Callable, name: Optional[str] = None, trace: bool = True) -> LegacyLayer:
    """Wrap a TF1 graph-building function as a Keras 3 layer (see :class:`LegacyLayer`)."""
    return LegacyLayer(fn, name=name, trace=trace)


def track_tf1_style_variables(method):
    """Keras 3's missing ``tf.compat.v1.keras.utils.track_tf1_style_variables``: a method
    of a Keras 3 layer or a ``tf.Module`` whose ``get_variable``/``get_or_create_layer``
    calls make their variables once, tracked by the object."""

    def wrapper(self, *args, **kwargs):
        store = getattr(self, "_tf1_style_var_store", None)
        if store is None:
            if isinstance(self, keras.layers.Layer):
                store = _LayerStore(self)
            elif isinstance(self, tf.Module):
                store = VariableStore()
            else:
                raise ValueError(
                    "@shims.track_tf1_style_variables belongs on a method of a Keras layer or "
                    f"a tf.Module that takes self first, not of {type(self).__name__}")
            self._tf1_style_var_store = store
        with store.scope():
            return method(self, *args, **kwargs)

    return tf.__internal__.decorator.make_decorator(target=method, decorator_func=wrapper)
