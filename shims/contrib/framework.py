"""tf.contrib.framework on TF2: ``arg_scope`` and the variable helpers (``get_variables``,
``model_variable``, ``get_or_create_global_step``, ``assign_from_checkpoint_fn``, ...)
and ``smart_cond`` (TensorFlow's own, which TF2 no longer exports),
from tf-slim, where contrib.framework's code lives on. ``sort`` and the other pieces that
moved into TensorFlow are renamed by tf-migrate instead; ``nest`` members TF2 has become
``tf.nest.*``, and ``nest`` itself (an alias of the module, ``is_sequence``) is TF1's here.

``__all__`` is literal: tf-migrate reads it without importing TensorFlow.
"""
from __future__ import annotations

from tensorflow.python.framework import smart_cond as _smart_cond

from shims.contrib import _nest as nest
from shims.contrib._slim import load as _load

__all__ = [
    # arg_scope
    "arg_scope", "add_arg_scope", "current_arg_scope", "has_arg_scope", "arg_scoped_arguments",
    "arg_scope_func_key",
    # variables
    "add_model_variable", "assert_global_step", "assert_or_get_global_step",
    "assign_from_checkpoint", "assign_from_checkpoint_fn", "assign_from_values",
    "assign_from_values_fn", "create_global_step", "filter_variables", "get_global_step",
    "get_or_create_global_step", "get_local_variables", "get_model_variables",
    "get_trainable_variables", "get_unique_variable", "get_variables_by_name",
    "get_variables_by_suffix", "get_variable_full_name", "get_variables_to_restore",
    "get_variables", "global_variable", "local_variable", "model_variable", "variable",
    "VariableDeviceChooser",
    # control flow
    "smart_cond",
    # TF1's nest, with is_sequence (tf.nest has the rest under the same names)
    "nest",
]

_slim = _load()
_sources = (_slim.arg_scope_lib, _slim, _smart_cond)
globals().update({name: next(getattr(m, name) for m in _sources if hasattr(m, name))
                  for name in __all__ if name != "nest"})
