"""load_tf1_checkpoint: a TF1 name-based checkpoint into a TF2 object."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Tuple, Union

import tensorflow as tf

from shims._names import NameMap, canonical, is_bookkeeping, is_slot, is_tf1_slot, match_names


@dataclass
class LoadReport:
    """What ``load_tf1_checkpoint`` did. ``matched`` holds (tf1 name, object path, how)."""

    matched: List[Tuple[str, str, str]] = field(default_factory=list)
    missing: List[str] = field(default_factory=list)  # object paths with no TF1 value
    unexpected: List[str] = field(default_factory=list)  # TF1 names nothing took
    mismatched: List[str] = field(default_factory=list)  # shape or dtype differences
    ignored: List[str] = field(default_factory=list)  # optimizer slots, counters

    @property
    def ok(self) -> bool:
        return not (self.missing or self.unexpected or self.mismatched)

    def problems(self) -> str:
        parts = []
        for label, items in (("no value in the checkpoint for", self.missing),
                             ("shape/dtype mismatch", self.mismatched),
                             ("checkpoint variables nothing took", self.unexpected)):
            if items:
                shown = ", ".join(items[:8]) + (f" (+{len(items) - 8} more)" if len(items) > 8 else "")
                parts.append(f"{label}: {shown}")
        return "; ".join(parts)


def _escape(name: str) -> str:
    return name.replace(".", "..").replace("/", ".S")


def _is_variable(obj) -> bool:
    return isinstance(obj, tf.Variable) or (
        hasattr(obj, "assign") and hasattr(obj, "shape") and hasattr(obj, "dtype")
        and not isinstance(obj, tf.Module) and hasattr(obj, "_trackable_children"))


def tracked_variables(root) -> List[Tuple[str, object]]:
    """(object path, variable) for every variable a ``tf.train.Checkpoint`` of ``root`` saves.

    Paths are the checkpoint keys relative to ``root`` (escaped like TF does),
    found breadth-first, so each variable gets its shortest path, as in a checkpoint.
    """
    seen = {id(root)}
    queue = [(root, "")]
    out: List[Tuple[str, object]] = []
    while queue:
        obj, path = queue.pop(0)
        try:
            children = obj._trackable_children(save_type="checkpoint")
        except (AttributeError, TypeError):
            continue
        for name, child in children.items():
            if id(child) in seen:
                continue
            seen.add(id(child))
            child_path = f"{path}/{_escape(name)}" if path else _escape(name)
            if _is_variable(child):
                out.append((child_path, child))
            else:
                queue.append((child, child_path))
    return out


def _shown_name(variable) -> str:
    """A variable's own name as its layers give it (Keras 3's ``path``, TF's ``name``
    without ``:0``): what a user recognises, unlike the object path of a checkpoint."""
    path = getattr(variable, "path", None)
    name = path if isinstance(path, str) and path else str(getattr(variable, "name", ""))
    return name[:-2] if name.endswith(":0") else name


def _name_what_is_left(report: "LoadReport", old: dict, new: dict, variables: dict) -> None:
    """Say what was left unmatched in the user's names: a model variable named like a TF1
    variable left over (``dense/kernel``, or the one left with its last name part) is a
    shape or dtype mismatch with both shapes; the others carry their own name beside the
    object path."""
    left_old = list(report.unexpected)
    still_missing = []
    for nkey in report.missing:
        shown = _shown_name(variables[nkey])
        same = [o for o in left_old if o == shown] or [
            o for o in left_old if o.rsplit("/", 1)[-1] == shown.rsplit("/", 1)[-1]]
        if len(same) == 1:
            okey = same[0]
            left_old.remove(okey)
            report.mismatched.append(
                f"{okey} {_shape(old[okey])} in the checkpoint, {shown} {_shape(new[nkey])} in the model")
        else:
            still_missing.append(f"{shown} ({nkey})" if shown and shown != nkey else nkey)
    report.missing, report.unexpected = still_missing, left_old


def _shape(spec: tuple) -> str:
    shape, dtype = spec
    return f"{dtype}[{', '.join(str(d) for d in shape)}]"


def load_tf1_checkpoint(obj, path: str, name_map: Union[None, str, NameMap] = None,
                        strict: bool = True) -> LoadReport:
    """Assign every variable of ``obj`` from a TF1 name-based checkpoint at ``path``.

    ``obj`` is a legacy layer, a Keras layer/model or a tf.Module whose variables
    exist (call it once first). Names are matched after removing shim-store and
    Keras-3 decorations, through ``name_map`` (a ``tf-migrate-names.json`` path
    or a NameMap), then by unique suffix, then by unique shape and dtype.
    Returns a :class:`LoadReport`; with ``strict=True`` any variable left without
    a value, any shape/dtype mismatch or any unused model variable in the
    checkpoint raises ``ValueError`` listing them, and nothing is assigned.
    """
    if isinstance(name_map, str) or name_map is None:
        name_map = NameMap.load(name_map)
    if tf.io.gfile.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"no checkpoint found in {path}")
        path = latest
    try:
        reader = tf.train.load_checkpoint(path)
    except (tf.errors.NotFoundError, tf.errors.DataLossError, ValueError) as exc:
        raise ValueError(f"cannot read checkpoint {path}: {str(exc).splitlines()[0]}") from None
    shapes = reader.get_variable_to_shape_map()
    dtypes = reader.get_variable_to_dtype_map()
    report = LoadReport()
    variables = dict(tracked_variables(obj))
    # a global step is bookkeeping unless the model owns one (TF1 code's raw tf.Variable)
    owned = {canonical(p, True) for p in variables}
    old = {}
    for key in shapes:
        if (is_bookkeeping(key) and key not in owned) or is_tf1_slot(key) or is_slot(key):
            report.ignored.append(key)
        else:
            old[key] = (tuple(shapes[key]), dtypes[key].name)
    new = {p: (tuple(v.shape.as_list()), tf.as_dtype(v.dtype).name) for p, v in variables.items()}
    # checkpoint entries nothing took are "unexpected"; variables left without a value "missing"
    pairs, report.unexpected, report.missing = match_names(old, new, True, name_map)
    assignments = []
    for okey, nkey, how in pairs:
        if old[okey] != new[nkey]:
            report.mismatched.append(f"{okey} {old[okey]} -> {nkey} {new[nkey]}")
        else:
            report.matched.append((okey, nkey, how))
            assignments.append((variables[nkey], okey))
    if not report.ok:
        _name_what_is_left(report, old, new, variables)
    if strict and not report.ok:
        raise ValueError(f"load_tf1_checkpoint({path}): {report.problems()}")
    for variable, okey in assignments:
        variable.assign(reader.get_tensor(okey))
    return report

