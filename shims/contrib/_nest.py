"""tf.contrib.framework.nest (TF 1.15's ``tensorflow.python.util.nest``) on TF2: the same
functions, with the TF1 names TF2 renamed (``is_sequence`` is ``tf.nest.is_nested`` now,
``is_sequence_or_composite`` is ``is_nested_or_composite``). A module that aliased
contrib's nest (``nest = tf.contrib.framework.nest``) keeps working whatever it calls.

``__all__`` is literal: tf-migrate reads it without importing TensorFlow.
"""
from __future__ import annotations

from tensorflow.python.util import nest as _nest

__all__ = [
    "assert_same_structure", "assert_shallow_structure", "flatten", "flatten_dict_items",
    "flatten_up_to", "flatten_with_joined_string_paths", "flatten_with_tuple_paths",
    "flatten_with_tuple_paths_up_to", "get_traverse_shallow_structure", "is_nested",
    "is_sequence", "is_sequence_or_composite", "map_structure", "map_structure_up_to",
    "map_structure_with_paths", "map_structure_with_tuple_paths",
    "map_structure_with_tuple_paths_up_to", "pack_sequence_as", "yield_flat_paths",
]

# TF1's names for what TF2 calls is_nested / is_nested_or_composite
_RENAMED = {"is_sequence": "is_nested", "is_sequence_or_composite": "is_nested_or_composite"}
globals().update({name: getattr(_nest, _RENAMED.get(name, name)) for name in __all__})
