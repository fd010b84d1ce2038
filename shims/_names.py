"""Variable names across TF1 name-based checkpoints, TF2 object paths and Keras.

Pure string logic (no tensorflow import, nothing of ``migrate``), shared by
``shims.load_tf1_checkpoint`` and ``tf-migrate ckpt``/``upgrade``. It lives with the
runtime, which must not depend on the tool; the tool loads it through
``migrate.checkpoints.names``.

The name map ``tf-migrate-names.json`` written by ``tf-migrate upgrade``::

    {"format": "tf-migrate-names/1",
     "files": {"model.py": {"layer_0/attention/query": "_tf1_style_var_store/_layers/layer_0/attention/query"}}}

Each entry maps a TF1 variable prefix (what a TF1 ``Saver`` wrote) to the new
object path prefix of the layer that now owns those variables. ``--map`` also
accepts ``{"rules": [{"pattern": REGEX, "replace": TEMPLATE}]}`` applied to new
(normalized) names.
"""
from __future__ import annotations

import json
import re
from typing import Dict, List, Optional, Tuple

FORMAT = "tf-migrate-names/1"
ATTR = "/.ATTRIBUTES/VARIABLE_VALUE"
SLOT = "/.OPTIMIZER_SLOT/"
STORE_MARKERS = ("_tf1_style_var_store/_vars/", "_tf1_style_var_store/_layers/")
GLOBAL_STEP = re.compile(r"(^|/)global_step(/\.ATTRIBUTES/VARIABLE_VALUE)?$")
BOOKKEEPING = re.compile(r"(^|/)(save_counter|global_step|_CHECKPOINTABLE_OBJECT_GRAPH)(/|$)")


def unescape(component: str) -> str:
    """Object-graph key component: ``.S`` is ``/``, ``..`` is ``.``."""
    if "." not in component:
        return component
    out = []
    i = 0
    while i < len(component):
        if component[i] == "." and i + 1 < len(component):
            nxt = component[i + 1]
            if nxt == "S":
                out.append("/")
                i += 2
                continue
            if nxt == ".":
                out.append(".")
                i += 2
                continue
        out.append(component[i])
        i += 1
    return "".join(out)


def is_slot(key: str) -> bool:
    return SLOT in key or "/.OPTIMIZER_SLOT" in key


# optimizer slots and counters a TF1 Saver writes next to the model's variables
TF1_SLOT = re.compile(r"/(Adam|Adam_\d+|Momentum|RMSProp|RMSProp_\d+|Adagrad|Adadelta|Adadelta_\d+|"
                      r"Ftrl|Ftrl_\d+|ExponentialMovingAverage)$|(^|/)beta[12]_power$")


def keras3_only(target: str) -> bool:
    """A name map target in Keras 3's optimizer layout (positional ``_variables``, the step
    as ``_iterations``): not the layout of a module that runs on tf_keras."""
    path = target.partition("#")[0]
    return "/_variables/" in path or path.endswith("/_iterations")


def is_tf1_slot(key: str) -> bool:
    return TF1_SLOT.search(key) is not None


def is_global_step(key: str) -> bool:
    return GLOBAL_STEP.search(key) is not None


def is_bookkeeping(key: str) -> bool:
    return bool(BOOKKEEPING.search(key)) or key.startswith("optimizer/")


def object_path(key: str) -> str:
    """A TF2 checkpoint key (or tracked path) as a plain slash path, escapes undone."""
    if key.endswith(ATTR):
        key = key[: -len(ATTR)]
    parts = [unescape(p) for p in key.split("/")]
    return "/".join(parts)


def canonical(key: str, object_based: bool) -> str:
    """The TF1-style name a key stands for (store prefixes, root and Keras-3 privates removed)."""
    key = re.sub(r":\d+$", "", key)
    if not object_based:
        return key
    path = object_path(key)
    for marker in STORE_MARKERS:
        at = path.find(marker)
        if at >= 0:
            return _public(path[at + len(marker):])
    return _public(path)


def _public(path: str) -> str:
    head, _, last = path.rpartition("/")
    if last.startswith("_") and not last.startswith("__"):
        last = last[1:]  # Keras 3 keeps weights as _kernel etc.
    return f"{head}/{last}" if head else last


def drop_root(name: str) -> str:
    """``model/dense/kernel`` -> ``dense/kernel`` (the checkpoint's root attribute)."""
    return name.split("/", 1)[1] if "/" in name else name


def tf1_name(key: str) -> str:
    """The TF1 name a TF2 checkpoint key most likely stood for: the shim store's own
    name when there is one, else the object path below the checkpoint's root."""
    path = object_path(re.sub(r":\d+$", "", key))
    if any(marker in path for marker in STORE_MARKERS):
        return canonical(key, True)
    return _public(drop_root(path))


# -- name maps -------------------------------------------------------------------
def merge(existing: Optional[dict], files: Dict[str, Dict[str, str]]) -> dict:
    data = existing if isinstance(existing, dict) and existing.get("format") == FORMAT else {}
    merged = dict(data.get("files", {}))
    merged.update(files)
    return {"format": FORMAT, "files": merged}


class NameMap:
    """Rewrites new-side names into old-side (TF1) names."""

    def __init__(self, prefixes: List[Tuple[str, str]], rules: List[Tuple[re.Pattern, str]]):
        # longest new prefix first, so nested layers win over their parents
        self.prefixes = sorted(prefixes, key=lambda p: -len(p[1]))
        self.rules = rules

    @classmethod
    def empty(cls) -> "NameMap":
        return cls([], [])

    @classmethod
    def load(cls, path: Optional[str], read=None) -> "NameMap":
        """The map in the file at ``path``; ``read(path) -> bytes`` reads it (the tool passes
        its own reader, which refuses FIFOs and devices without blocking)."""
        if not path:
            return cls.empty()
        if read is None:
            with open(path, "rb") as handle:
                raw = handle.read()
        else:
            raw = read(path)
        data = json.loads(raw.decode("utf-8"))  # ValueError: callers report it
        prefixes: List[Tuple[str, str]] = []
        rules: List[Tuple[re.Pattern, str]] = []
        if not isinstance(data, dict):
            raise ValueError("a name map must be a JSON object")

        def pairs(value, where: str) -> Dict[str, str]:
            if not isinstance(value, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                raise ValueError(f"{where} must be an object of TF1 name -> new name strings")
            return value

        files = data.get("files", {})
        if not isinstance(files, dict):
            raise ValueError('"files" must be an object of file -> names')
        for file, entries in files.items():
            for tf1, tf2 in pairs(entries, f'"files"/{file!r}').items():
                # (a target's ``#scale=``/``#power=`` converts the value: ckpt convert --program)
                prefixes.append((tf1.strip("/"), canonical(tf2.partition("#")[0], True).strip("/")))
        for tf1, tf2 in pairs(data.get("names", {}), '"names"').items():
            prefixes.append((tf1.strip("/"), canonical(tf2, True).strip("/")))
        listed = data.get("rules", [])
        if not isinstance(listed, list):
            raise ValueError('"rules" must be a list of {"pattern": ..., "replace": ...}')
        for rule in listed:
            if not isinstance(rule, dict) or not isinstance(rule.get("pattern"), str):
                raise ValueError('each rule must be {"pattern": REGEX, "replace": TEXT}')
            try:
                pattern = re.compile(rule["pattern"])
            except re.error as exc:
                raise ValueError(f"rule pattern {rule['pattern']!r}: {exc}") from None
            if not isinstance(rule.get("replace"), str):
                raise ValueError(f"rule {rule['pattern']!r}: replace must be a string")
            rules.append((pattern, rule["replace"]))
        return cls(prefixes, rules)

    def to_old(self, name: str) -> str:
        for tf1, tf2 in self.prefixes:
            if tf2 and (name == tf2 or name.startswith(tf2 + "/")):
                return tf1 + name[len(tf2):]
        for pattern, replace in self.rules:
            if pattern.search(name):
                return pattern.sub(replace, name)
        return name


def match_names(old: Dict[str, tuple], new: Dict[str, tuple], object_based: bool,
                name_map: NameMap) -> Tuple[List[Tuple[str, str, str]], List[str], List[str]]:
    """Pairs old keys with new keys.

    ``old``/``new`` map checkpoint keys to (shape, dtype). Returns
    ``(pairs, missing, unexpected)`` where a pair is ``(old_key, new_key, how)``
    and ``how`` is ``name``, ``suffix`` or ``shape``.
    """
    old_names = {canonical(k, False) if "/.ATTRIBUTES/" not in k else canonical(k, True): k
                 for k in old}
    candidates: Dict[str, List[str]] = {}
    for key in new:
        full = name_map.to_old(canonical(key, object_based))
        forms = [full]
        if object_based:
            below_root = name_map.to_old(tf1_name(key))
            if below_root != full:
                forms.append(below_root)
        candidates[key] = forms

    pairs: List[Tuple[str, str, str]] = []
    used_new = set()
    remaining_old = dict(old_names)
    # 1. exact names, most specific form first
    for form_index in range(2):
        index = {}
        for key, forms in candidates.items():
            if key not in used_new and form_index < len(forms):
                index.setdefault(forms[form_index], []).append(key)
        for name, okey in list(remaining_old.items()):
            hits = index.get(name, [])
            if len(hits) == 1 and hits[0] not in used_new:
                pairs.append((okey, hits[0], "name"))
                used_new.add(hits[0])
                del remaining_old[name]
    # 2. a unique suffix match (wrapper or root prefixes on either side)
    for name, okey in list(remaining_old.items()):
        hits = [k for k, forms in candidates.items() if k not in used_new and any(
            f.endswith("/" + name) or name.endswith("/" + f) for f in forms)]
        if len(hits) == 1:
            pairs.append((okey, hits[0], "suffix"))
            used_new.add(hits[0])
            del remaining_old[name]
    # 3. a unique shape + dtype match among what is left
    left_new = [k for k in new if k not in used_new]
    for name, okey in list(remaining_old.items()):
        hits = [k for k in left_new if k not in used_new and tuple(new[k]) == tuple(old[okey])]
        same_old = [o for o in remaining_old.values() if tuple(old[o]) == tuple(old[okey])]
        if len(hits) == 1 and len(same_old) == 1:
            pairs.append((okey, hits[0], "shape"))
            used_new.add(hits[0])
            del remaining_old[name]
    missing = sorted(remaining_old.values())
    unexpected = sorted(k for k in new if k not in used_new)
    return pairs, missing, unexpected
