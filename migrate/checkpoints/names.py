"""Variable names across TF1 checkpoints, TF2 object paths and Keras: the tool's access
to ``shims/_names.py``.

The naming logic lives with the runtime (``shims.load_tf1_checkpoint`` uses it, and the
runtime must not depend on the tool). It is pure Python, but ``import shims._names``
would run ``shims/__init__.py`` first, which imports TensorFlow and sets its
environment (TF_USE_LEGACY_KERAS, TF_ENABLE_ONEDNN_OPTS): the codemod never imports
TensorFlow, and ``ckpt`` subprocesses must inherit the user's environment untouched.
So the file is loaded by path and registered as ``shims._names``: a later
``import shims`` in the same process uses this very module (one ``NameMap`` class).
"""
from __future__ import annotations

import importlib.util
import os
import sys


def _load():
    module = sys.modules.get("shims._names")
    if module is None:
        package = importlib.util.find_spec("shims")  # found, not imported
        path = os.path.join(package.submodule_search_locations[0], "_names.py")
        spec = importlib.util.spec_from_file_location("shims._names", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["shims._names"] = module
        spec.loader.exec_module(module)
    return module


_names = _load()
FORMAT = _names.FORMAT
ATTR = _names.ATTR
SLOT = _names.SLOT
NameMap = _names.NameMap
canonical = _names.canonical
drop_root = _names.drop_root
is_bookkeeping = _names.is_bookkeeping
is_global_step = _names.is_global_step
is_slot = _names.is_slot
is_tf1_slot = _names.is_tf1_slot
keras3_only = _names.keras3_only
match_names = _names.match_names
merge = _names.merge
object_path = _names.object_path
tf1_name = _names.tf1_name
unescape = _names.unescape
