"""TF1 checkpoint -> the ``tf.train.Checkpoint`` of a native migrated program.

``tf-migrate upgrade`` writes, for a Session program whose ``tf.train.Saver`` became a
``tf.train.Checkpoint(W1=W1, ..., optimizer=optimizer)``, the TF1 name of every variable it
saves against the object path the checkpoint keeps it at (``"layer1/W1": "W1"``), the
optimizer's slots included (Keras 3 keeps them by position: ``"layer1/W1/Adam":
"optimizer/_variables/2"``). A target may end with a conversion: ``#scale=S`` (the value
times S: Keras' momentum is -lr times TF1's accumulator) or ``#power=B`` (TF1's
``beta1_power``, B to the power of the step count plus one, as the step count). A target
``#not-kept`` (no path) is TF1 state the program's optimizer does not keep because no later
update reads it (RMSProp's momentum slot at momentum 0): it is left out, as it should be.

The checkpoint written here has exactly those object paths, so the program's own
``checkpoint.restore(path)`` takes the weights, the optimizer's state and the step, and
training continues where the TF1 program stopped.

Imports inside functions: tensorflow and numpy, by the conversion only.
"""
from __future__ import annotations

import json
import math
import os
import re
import tempfile
from typing import Dict, List, Tuple

from migrate.safeio import describe, read_regular, temp_prefix

from .ckpt import OBJECT_GRAPH, CkptError, Side, _tf, _write

NOT_KEPT = "not-kept"


def program_entries(map_path: str, program: str) -> Dict[str, str]:
    """The map's entries for ``program`` (its file name, as the map lists it)."""
    try:
        data = json.loads(read_regular(map_path).decode("utf-8"))
    except OSError as exc:
        raise CkptError(f"--map {map_path}: cannot read ({describe(exc)})") from None
    except ValueError as exc:
        raise CkptError(f"--map {map_path}: not a name map ({exc})") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        raise CkptError(f"--map {map_path}: not a name map written by tf-migrate upgrade")
    key = os.path.basename(program)
    entries = files.get(program, files.get(key))
    if not isinstance(entries, dict) or not entries:
        listed = ", ".join(sorted(files)[:6]) or "none"
        raise CkptError(f"--program {program}: the map has no entries for it (files: {listed})")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items()):
        raise CkptError(f"--map {map_path}: the entries of {program} are not TF1 name -> path strings")
    return entries


def convert_program(old: Side, out: str, entries: Dict[str, str]) -> List[str]:
    """Writes ``old`` at the object paths ``entries`` give (converted as they say); returns
    the stored tensors the program's checkpoint has no place for."""
    tf = _tf()
    tree: Dict[str, object] = {}
    left_out: List[str] = []
    for key in old.everything:
        if key == OBJECT_GRAPH:
            continue
        paths, conversion = _targets(key, entries)
        if not paths:
            if conversion != NOT_KEPT:
                left_out.append(key)
            continue
        value = _converted(old.read(key), conversion, key)
        for path in paths:
            _place(tree, path, tf.Variable(value), key)
    if not tree:
        raise CkptError("no variable of the checkpoint is named in the map's entries for the program")
    if any("#power=" in target for target in entries.values()):  # Adam's step, read from beta1_power
        left_out = [k for k in left_out if not re.search(r"(^|/)beta2_power(_\d+)?$", k)]
    _write(tf.train.Checkpoint(**{k: _trackable(v) for k, v in tree.items()}), out)
    return left_out


def _targets(key: str, entries: Dict[str, str]) -> Tuple[List[str], str]:
    """Where ``key`` goes, and its conversion: its own entry, else below a layer's
    (``"hidden": "hidden_layer"``: ``hidden/kernel`` is the layer's kernel, which Keras 3 keeps
    as ``_kernel`` and tf_keras as ``kernel``: both are written, the layer takes its own)."""
    target = entries.get(key)
    if target is not None:
        path, _, conversion = target.partition("#")
        return ([path] if path or conversion != NOT_KEPT else []), conversion
    prefixes = [p for p in entries if key.startswith(p + "/") and "#" not in entries[p]]
    if not prefixes:
        return [], ""
    prefix = max(prefixes, key=len)
    head, _, last = (entries[prefix] + key[len(prefix):]).rpartition("/")
    return [f"{head}/{last}", *([f"{head}/_{last}"] if last in ("kernel", "depthwise_kernel",
                                                              "pointwise_kernel") else [])], ""


def _place(tree: dict, path: str, variable, key: str) -> None:
    node = tree
    parts = [p for p in path.split("/") if p]
    if not parts:
        raise CkptError(f"the map's path for {key} is empty")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise CkptError(f"the map places {key} below a variable ({path})")
    if parts[-1] in node:
        raise CkptError(f"the map places two values at {path}")
    node[parts[-1]] = variable


def _converted(value, conversion: str, key: str):
    import numpy as np  # (with the conversion only)

    if not conversion:
        return value
    kind, _, argument = conversion.partition("=")
    try:
        number = float(argument)
    except ValueError:
        raise CkptError(f"the map's conversion for {key} is not understood: #{conversion}") from None
    if kind == "scale":
        return (np.asarray(value) * number).astype(np.asarray(value).dtype)
    if kind == "power" and 0 < number < 1 and float(np.asarray(value)) > 0:
        steps = round(math.log(float(np.asarray(value))) / math.log(number)) - 1
        return np.int64(max(steps, 0))
    raise CkptError(f"the map's conversion for {key} is not understood: #{conversion}")


def _trackable(node):
    """A dict of the tree -> an object whose attributes are its children (the checkpoint
    matches objects by these names, whatever their class)."""
    if not isinstance(node, dict):
        return node
    tf = _tf()
    made = tf.Module()
    for name, child in node.items():
        setattr(made, name, _trackable(child))
    return made


def record_state(out: str) -> Tuple[str, bool]:
    """``tf.train.latest_checkpoint(folder)`` finds the written checkpoint: the folder's
    ``checkpoint`` state file is written when it has none (one it has is left as it is).
    Returns (its path, whether it was written)."""
    folder, base = os.path.split(os.path.abspath(out))
    state = os.path.join(folder, "checkpoint")
    if os.path.lexists(state):
        return state, False
    text = f'model_checkpoint_path: "{base}"\nall_model_checkpoint_paths: "{base}"\n'
    handle, staged = tempfile.mkstemp(prefix=temp_prefix("state"), suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(text.encode("utf-8"))
            stream.flush()
            os.fsync(stream.fileno())
        os.link(staged, state)  # complete, and never over a state file another run wrote
    except FileExistsError:
        return state, False
    finally:
        os.unlink(staged)
    return state, True
