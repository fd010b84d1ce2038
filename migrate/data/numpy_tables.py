"""The numpy tables of TFM122: names and keywords TF 1.15's numpy (1.18) had that the
installed numpy has not, read from both (``numpy_tf1.py`` runs on TF 1.15's interpreter)."""
from __future__ import annotations

import inspect
import json
import os
import re
import subprocess

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))


def numpy_removed(tf1_python: str) -> dict:
    """numpy names TF1-era code used that the numpy TF 2.21 runs on no longer has: the
    public names of TF 1.15's numpy (its interpreter's, 1.18) missing from the installed
    one. The replacement is the one numpy's own tables of removed names give in their
    messages: the aliases of builtins removed in 1.24 (``__former_attrs__``, "use `int` by
    itself") and the names NumPy 2.0 expired (``_expired_attrs_2_0``, "Use `np.float64`
    instead."); or the builtin the old name was (`np.unicode` was `str`); else None (the
    rule reports the message, or that the name is gone)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF2_BEHAVIOR", "TF_USE_LEGACY_KERAS")}
    proc = subprocess.run([tf1_python, os.path.join(HERE, "numpy_tf1.py")], capture_output=True,
                          text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise SystemExit("generate: the TF 1.15 run failed: " + proc.stderr.strip().splitlines()[-1])
    old = json.loads(proc.stdout)
    messages = {}
    for name, message in getattr(numpy, "__former_attrs__", {}).items():
        lines = message.splitlines()
        match = re.search(r"use `(\w+)` by itself", message)
        messages[name] = (match.group(1) if match else None,
                          (lines[1] if len(lines) > 1 else lines[0]).split(". ")[0] + ".")
    try:
        from numpy import _expired_attrs_2_0 as expired  # the names 2.0 expired: numpy >= 2 only
    except ImportError:  # numpy < 2
        expired = None
    for name, message in getattr(expired, "__expired_attributes__", {}).items():
        text = " ".join(message.split())
        match = re.fullmatch(r"Use `(-?np\.\w+|-?\d+\.\d+)` instead\.", text)
        messages[name] = (match.group(1) if match else None, text)
    found = {}
    for name, builtin in sorted(old["names"].items()):
        if _in_numpy(numpy, name):
            continue
        alias = next((a for a in old["aliases"].get(name, ()) if _in_numpy(numpy, a)
                      and a not in messages), None)
        replacement, message = messages.get(name, (builtin or (f"np.{alias}" if alias else None), None))
        found[name] = {"replacement": replacement,
                       "message": message or (f"np.{name} was the builtin `{builtin}`." if builtin else
                                              f"np.{name} was np.{alias}." if alias else
                                              old["deprecated"].get(name) or
                                              f"numpy {numpy.__version__} names no replacement.")}
    return {"numpy_removed": found, "numpy_removed_keywords": _numpy_removed_keywords(numpy, old),
            "numpy_generated_from": f"numpy {old['version']} (TF 1.15's) against numpy {numpy.__version__}"}


def _numpy_removed_keywords(numpy, old: dict) -> dict:
    """Keywords of numpy functions that TF 1.15's numpy took and the installed one does not
    (``np.reshape(a, newshape=...)``): {function: {keyword: {"replacement", "message"}}}.
    The replacement is the parameter now in the same place of the signature when it is a
    new name of the same kind (``newshape`` -> ``shape``, ``interpolation`` -> ``method``);
    "" (drop it) when numpy 1.18's docstring said it "Has no effect"; else None. The
    message is what numpy 1.18's docstring said of the keyword."""

    found: dict = {}
    for name, parameters in sorted(old["signatures"].items()):
        function = getattr(numpy, name, None)
        try:
            now = list(inspect.signature(function).parameters.values()) if callable(function) else None
        except (TypeError, ValueError):
            now = None
        if now is None:
            continue
        old_names, now_names = [p[0] for p in parameters], [p.name for p in now]
        for index, (keyword, kind, said) in enumerate(parameters):
            if kind not in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY") or keyword in now_names:
                continue
            same_place = now[index] if index < len(now) else None
            replacement = same_place.name if (
                same_place is not None and same_place.kind.name == kind
                and same_place.name not in old_names) else None
            said = re.sub(r"\.\. (deprecated|versionchanged|versionadded):: ([\d.]+)", r"(\1 in numpy \2)",
                          " ".join(said.split()))
            if replacement is None and said.startswith("Has no effect"):
                replacement = ""  # dropped: numpy 1.18 itself said it did nothing
            message = (f"numpy {numpy.__version__} calls it {replacement}" if replacement else
                       f"numpy 1.18's documentation: {said or 'no note'}")
            found.setdefault(name, {})[keyword] = {"replacement": replacement, "message": message}
    return found


def _in_numpy(numpy, name: str) -> bool:
    try:
        getattr(numpy, name)
    except AttributeError:
        return False
    return True
