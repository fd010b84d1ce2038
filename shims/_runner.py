"""What a legacy layer does on every call, whichever Keras generation owns it.

A TF1 graph-building function runs under a variable store (``shims._store`` or tf_keras's),
optionally inside a ``tf.function`` of its own so it sees a graph as TF1 code did; raw
``tf.Variable(...)`` calls in it are made once and kept in the store under their TF1 names.
Shared by the Keras 2 layer (``shims._layer``) and the Keras 3 layer (``shims._layer3``);
it imports no Keras.
"""
from __future__ import annotations

import re
import sys
import weakref
from typing import Callable, Optional

import tensorflow as tf
from tensorflow.python.framework import ops
from tensorflow.python.ops import variable_scope as vs

from shims._store import named_build, plain


def _snake(name: str) -> str:
    name = re.sub(r"[^0-9a-zA-Z_]", "_", name)
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().strip("_") or "legacy"


# modules whose variables are not the user's raw tf.Variable calls: they keep their own
# stores (get_variable's, a Keras layer's weights) and are passed through
# graph -> {variable scope/layer name: Keras layer}: get_or_create_layer in TF1 graph mode
_GRAPH_LAYERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_LIBRARIES = ("tensorflow", "tf_keras", "keras", "tf_slim", "shims", "tensorflow_probability")


def _called_by_user_code() -> bool:
    """Was the variable being created asked for by the user's code itself (a
    ``tf.Variable(...)`` in the function), not by a library on its behalf?"""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not (module.startswith("tensorflow.") or module == __name__):
            return not any(module == lib or module.startswith(lib + ".") for lib in _LIBRARIES)
        frame = frame.f_back
    return False


class _RawVariables:
    """Raw ``tf.Variable(...)`` calls in the function (a TF1 global step, a scale),
    created once with their TF1 names, as ``get_variable`` ones are by the store.

    In TF1 graph code ``tf.Variable(0, name="global_step")`` ran once, when the graph was
    built; run again on every call (or under tf.function, which refuses to create a
    variable twice) it would make a new variable each time. Here each one is keyed by
    its TF1 name (the name scope plus ``name``, ``Variable`` when unnamed, with TF1's
    ``_1`` suffix when a run takes a name twice), made on the first run outside any
    function graph, tracked by the layer, and handed back on later runs. Variables the
    store creates for ``get_variable`` pass through untouched.
    """

    def __init__(self, owner) -> None:
        self.owner = owner
        self.taken: set = set()
        self.root = ops.get_name_scope()  # the scope the function was called in

    def creator(self, next_creator, **kwargs):
        if not _called_by_user_code():
            return next_creator(**kwargs)  # the store (get_variable), a Keras layer, tf-slim
        scope = ops.get_name_scope()
        if scope == self.root or scope.startswith(self.root + "/"):
            scope = scope[len(self.root):].lstrip("/")  # the layer's own call scope is not TF1's
        base = kwargs.get("name") or "Variable"
        key = f"{scope}/{base}" if scope else base
        if key in self.taken:
            stem, n = key, 1
            while f"{stem}_{n}" in self.taken:
                n += 1
            key = f"{stem}_{n}"
        self.taken.add(key)
        store = self.owner._tf1_style_var_store  # tracked and checkpointed with the rest
        if key in store._vars:
            return plain(store._vars[key])
        initial = kwargs.get("initial_value")
        if callable(initial):
            initial = initial()
        if tf.is_tensor(initial) and not tf.executing_eagerly() and \
                not isinstance(initial, tf.Variable):
            value = tf.get_static_value(initial)
            if value is None:
                raise ValueError(
                    f"tf.Variable {key!r}: its initial value is computed from the function's "
                    "inputs, so it cannot be created once outside the call; create it with "
                    "tf.compat.v1.get_variable(..., initializer=...) instead")
            initial = value
        with tf.init_scope(), ops.name_scope(None, skip_on_eager=False):
            variable = next_creator(**dict(kwargs, initial_value=initial, name=key))
        keep = getattr(store, "keep", None)
        store._vars[key] = keep(key, variable) if keep is not None else variable
        return variable


class _Runner:
    """Runs a TF1-style function under a variable store, TF1 style.

    With ``trace=True`` the function runs inside a ``tf.function`` of its own, so
    it sees a graph as in TF1: ``tensor.name``, ``.op``, ``.graph`` and static
    shape logic work, and every trace starts with fresh variable-scope counters,
    so ``default_name`` scopes and unnamed layers get the same names on every
    call. Variables are created in the store, under ``tf.init_scope``, once.
    """

    def __init__(self, owner, fn: Callable, trace: bool,
                 after: Optional[Callable[[set], None]] = None) -> None:
        self.owner = owner
        self.after = after  # given the regularizer keys that existed before the call
        self.fn = fn
        self.trace = trace
        self.traced = tf.function(self._run, autograph=False) if trace else None

    def _run(self, *args, **kwargs):
        # A fresh variable-scope store (root scope, zero name counters) per run, as a
        # new TF1 graph had: FuncGraphs share this collection with the eager context
        # by reference, so without it `default_name` scopes and unnamed layers would
        # get new names (bert_1, dense_2) on every trace and call.
        scopes = ops.get_collection_ref(vs._VARSCOPESTORE_KEY)
        saved = list(scopes)
        scopes[:] = [vs._VariableScopeStore()]
        raw = _RawVariables(self.owner)
        try:
            with self.owner._tf1_style_var_store.scope(), tf.variable_creator_scope(raw.creator):
                return self.fn(*args, **kwargs)
        finally:
            scopes[:] = saved

    def __call__(self, *args, untraced: bool = False, **kwargs):
        """``untraced``: run the function as it is, not through the layer's own
        ``tf.function`` (whose trace would keep what it captured)."""
        before = set(self.owner._tf1_style_var_store._regularizers) if self.after else None
        if self.traced is not None and not untraced:
            out = self.traced(*args, **kwargs)
        else:
            out = self._run(*args, **kwargs)
        if self.after is not None:
            self.after(before)
        return out


def get_or_create_layer(name: Optional[str], factory: Callable[[], object],
                        default_name: Optional[str] = None, reuse: bool = False):
    """Create a Keras layer once per variable scope inside a shim scope.

    ``name`` is the TF1 layer name; the layer is keyed by the current variable
    scope plus that name, so a function run again (or a scope reused) gets the
    same layer back. With ``name=None`` the TF1 auto-name is used: the first
    unnamed ``dense`` in a scope is ``dense``, the next ``dense_1`` (or always
    ``dense`` when the TF1 call passed ``reuse=True``), exactly as
    ``tf.layers`` named them, so TF1 checkpoints still line up.

    Outside a shim scope, in TF1 graph mode (a library module another module's graph-mode
    program calls), the layer is kept per graph by the same key: a scope reopened with
    ``reuse=True`` or ``scope.reuse_variables()`` (the GAN discriminator called on real,
    then on generated images) gets the layer, and so the weights, TF1's ``tf.layers``
    reused there.
    """
    store = vs._get_default_variable_store()
    graph_mode = not hasattr(store, "get_or_create_layer")  # TF's own graph store: no shim scope
    if graph_mode and tf.compat.v1.executing_eagerly_outside_functions():
        raise ValueError(
            "shims.get_or_create_layer() was called outside a shim scope: run this code "
            "through shims.legacy_layer(fn) (or a method decorated with "
            "shims.track_tf1_style_variables) so the layer is created once and tracked")
    if name is None:
        if not default_name:
            raise ValueError("get_or_create_layer needs a name or a default_name")
        if reuse:
            scope = tf.compat.v1.get_variable_scope().name
            key = f"{scope}/{default_name}" if scope else default_name
        else:  # (a scope entered again by name numbers its unnamed layers from dense again;
            # in graph mode no name scope is taken, so the layer's own is TF1's name)
            with tf.compat.v1.variable_scope(None, default_name=default_name,
                                             auxiliary_name_scope=not graph_mode) as captured:
                key = captured.name
        made = factory

        def factory():  # an unnamed layer's variables are named by TF1's auto-name, not
            layer = made()  # Keras' own (dense_3 for the fourth Dense of the process)
            if graph_mode and hasattr(layer, "_name"):  # tf_keras names them by its name scope
                layer._name = key.rsplit("/", 1)[-1]
            elif callable(getattr(layer, "build", None)):
                named_build(layer, key)
            return layer
    else:
        scope = tf.compat.v1.get_variable_scope().name
        key = f"{scope}/{name}" if scope else name
    if graph_mode:
        layers = _GRAPH_LAYERS.setdefault(ops.get_default_graph(), {})
        if key not in layers:
            layers[key] = factory()
        return layers[key]
    return store.get_or_create_layer(key, factory)

