"""TF1's ``get_variable`` store for eager TF2, on TensorFlow alone (no Keras generation).

TF 2.21 keeps ``variable_scope``/``get_variable`` in core TensorFlow, but their eager
store lives in tf_keras (``track_tf1_style_variables``), which the Keras 3 target must not
import. :class:`VariableStore` is that store: every variable is made once, outside any
function graph (``tf.init_scope``), under its TF1 name, and handed back on every later
``get_variable`` of that name (TF1's ``reuse`` becomes ``AUTO_REUSE``: a function run
again is the graph TF1 built once); Keras layers made through ``get_or_create_layer``
are kept by their TF1 scope. ``_vars`` and ``_layers`` are tracked dicts, so a
``tf.train.Checkpoint`` saves ``_tf1_style_var_store/_vars/<TF1 name>``, the path the
name tools read.

An owner may keep another object per variable (a Keras 3 variable wrapping it, so the
layer tracks it): :meth:`VariableStore.keep` says what; lookups hand back the
``tf.Variable`` either way.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import threading

import tensorflow as tf
from tensorflow.python.ops import variable_scope as vs
from tensorflow.python.ops import variables as tf_variables


_BUILDING = threading.local()


def building_layer():
    """The TF1 name of the layer whose variables are being made (a Keras 3 layer made by
    ``get_or_create_layer`` names its variables after its own, globally numbered, name:
    ``dense_1/kernel`` where TF1 said ``tower/dense/kernel``), else None."""
    return getattr(_BUILDING, "key", None)


def named_build(layer, key: str) -> None:
    """Run the layer's ``build`` with ``key`` as the name its variables are made under
    (once per layer: the first key given is its TF1 name)."""
    if getattr(layer, "_tfm_named", None) is not None:
        return
    layer._tfm_named = key
    build = layer.build

    @functools.wraps(build)  # Keras reads build's signature to pass it the input shapes
    def named(*args, **kwargs):
        outer = building_layer()
        _BUILDING.key = key
        try:
            return build(*args, **kwargs)
        finally:
            _BUILDING.key = outer

    layer.build = named


def plain(kept):
    """The ``tf.Variable`` behind what a store keeps (itself, or a Keras 3 variable's value)."""
    return kept if kept is None or isinstance(kept, tf.Variable) else kept.value


class VariableStore(tf.Module):
    """``get_variable``'s store for one legacy layer, module or program (see the module doc)."""

    def __init__(self):
        super().__init__()
        self._vars = {}
        self._layers = {}
        self._regularizers = {}
        self._store_eager_variables = True  # what TF's variable_scope checks for eager reuse

    @contextlib.contextmanager
    def scope(self):
        with vs.with_variable_store(self):
            yield

    # -- what an owner overrides ----------------------------------------------
    def keep(self, name: str, variable: tf.Variable, regularizer=None):
        """The object to keep (and checkpoint) for a new variable (``regularizer``: its
        ``get_variable`` penalty, which the store also lists in ``_regularizers``)."""
        return variable

    def keep_layer(self, name: str, layer) -> None:
        """A new layer made through ``get_or_create_layer``."""

    def keep_regularizer(self, name: str, kept, regularizer) -> None:
        """A penalty reported for a kept variable after it was made (``add_regularizer``)."""

    # -- TF1's get_variable ----------------------------------------------------
    def get_variable(self, name, shape=None, dtype=tf.float32, initializer=None, regularizer=None,
                     reuse=None, trainable=None, collections=None, caching_device=None,
                     partitioner=None, validate_shape=True, use_resource=None, custom_getter=None,
                     constraint=None, synchronization=tf.VariableSynchronization.AUTO,
                     aggregation=tf.VariableAggregation.NONE):
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        reuse = reuse or tf.compat.v1.AUTO_REUSE
        dtype = getattr(dtype, "base_dtype", dtype)
        synchronization, aggregation, trainable = \
            tf_variables.validate_synchronization_aggregation_trainable(
                synchronization, aggregation, trainable, name)

        def true_getter(name, shape=None, dtype=tf.float32, initializer=None, regularizer=None,
                        reuse=None, trainable=None, collections=None, caching_device=None,
                        partitioner=None, validate_shape=True, use_resource=None, constraint=None,
                        synchronization=tf.VariableSynchronization.AUTO,
                        aggregation=tf.VariableAggregation.NONE):
            if partitioner is not None:
                raise ValueError(f"get_variable({name!r}, partitioner=...): partitioned variables "
                                 "are not supported in eager TF2; drop the partitioner (one "
                                 "variable holds the same values)")
            return self._single(name, shape, dtype, initializer, regularizer, reuse, trainable,
                                caching_device, validate_shape, constraint, synchronization,
                                aggregation)

        arguments = dict(name=name, shape=shape, dtype=dtype, initializer=initializer,
                         regularizer=regularizer, reuse=reuse, trainable=trainable,
                         collections=collections, caching_device=caching_device,
                         partitioner=partitioner, validate_shape=validate_shape,
                         use_resource=use_resource, synchronization=synchronization,
                         aggregation=aggregation)
        if custom_getter is None:
            return true_getter(constraint=constraint, **arguments)
        if accepts(custom_getter, "constraint"):
            arguments["constraint"] = constraint
        return custom_getter(getter=true_getter, **arguments)

    def _single(self, name, shape, dtype, initializer, regularizer, reuse, trainable,
                caching_device, validate_shape, constraint, synchronization, aggregation):
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = tf.as_dtype(dtype)
        shape = tf.TensorShape(shape)
        if name in self._vars:
            found = plain(self._vars[name])
            if not shape.is_compatible_with(found.shape):
                raise ValueError(f"Trying to share variable {name}, but specified shape {shape} "
                                 f"and found shape {found.shape}.")
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(f"Trying to share variable {name}, but specified dtype "
                                 f"{dtype.name} and found dtype {found.dtype.name}.")
            return found
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with "
                             "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope?")
        if initializer is None:
            initializer, from_value = vs._VariableStore._get_default_initializer(
                self, name=name, shape=shape, dtype=dtype)
        variable_dtype = None
        if from_value:
            initial = initializer
        else:
            if inspect.isclass(initializer):
                initializer = initializer()
            if shape.is_fully_defined():
                extra = {"partition_info": None} if _names_parameter(initializer, "partition_info") else {}
                initial = functools.partial(initializer, shape.as_list(), dtype=dtype, **extra)
                variable_dtype = dtype.base_dtype
            else:
                initial = initializer
        # made outside any function graph, under its TF1 name and no enclosing name scope
        with tf.init_scope(), tf.compat.v1.name_scope(None):
            variable = tf.Variable(initial_value=initial, name=name, trainable=trainable,
                                   caching_device=caching_device, dtype=variable_dtype,
                                   validate_shape=validate_shape, constraint=constraint,
                                   synchronization=synchronization, aggregation=aggregation)
        self._vars[name] = self.keep(name, variable, regularizer)
        if regularizer:
            self._regularizers[name] = functools.partial(regularizer, variable)
        return variable

    def add_regularizer(self, variable, regularizer) -> None:
        """A layer's weight penalty, as TF's and tf_keras's legacy ``tf.layers`` (tf-slim's
        layers are those) report it to the store in eager mode: kept by the variable's TF1
        name, like a ``get_variable`` regularizer."""
        for name, kept in self._vars.items():
            if plain(kept) is variable:
                self._regularizers[name] = functools.partial(regularizer, variable)
                self.keep_regularizer(name, kept, regularizer)
                return

    def get_or_create_layer(self, name, create_layer_method):
        if name not in self._layers:
            layer = create_layer_method()
            keras3 = _keras3_layer(layer)
            if keras3 and callable(getattr(layer, "build", None)):
                named_build(layer, name)  # Keras 3 (tf_keras names its variables by scope)
            self._layers[name] = layer
            self.keep_layer(name, layer)
            # a Keras 3 layer's weight penalties are its owner's losses already (a sublayer's
            # trainable weights are the owner's), and its call losses belong to one call
            if hasattr(layer, "losses") and not keras3:
                self._regularizers[name] = lambda: tf.math.reduce_sum(layer.losses)
        return self._layers[name]


def _keras3_layer(layer) -> bool:
    """A Keras 3 layer (of Keras' own classes or a subclass, shims.keras3's included)?"""
    return any(c.__module__.startswith("keras.") for c in type(layer).__mro__)


def accepts(fn, keyword: str) -> bool:
    """Can ``fn`` be given ``keyword`` (named, or through ``**kwargs``)?"""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return keyword in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _names_parameter(fn, name: str) -> bool:
    """Does ``fn`` name the parameter itself (TF1 initializers take ``partition_info``;
    Keras ones take ``**kwargs`` and refuse it)?"""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
