"""The generated TF1 -> TF2 tables (``migrate/data/tf_upgrade_v2.json``), loaded once."""
from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                    "tf_upgrade_v2.json")


@functools.lru_cache(maxsize=None)
def upgrade_tables() -> dict:
    with open(PATH, encoding="utf-8") as handle:
        data = json.load(handle)
    data["tf2_symbols_set"] = frozenset(data.get("tf2_symbols", ()))
    data["missing_in_tf2_set"] = frozenset(data.get("missing_in_tf2", ()))
    return data


def owned_by_rules(v1: str) -> bool:
    """Symbols our own rules handle; the generic table passes leave them alone."""
    return v1.startswith(tuple(upgrade_tables()["owned_by_rules"]))


@functools.lru_cache(maxsize=None)
def shim_exports(module: str) -> frozenset:
    """The literal ``__all__`` of ``shims.<module>`` (``"contrib.layers"``), read with
    ``ast`` so the codemod never imports TensorFlow: what the shims provide is the one
    list of which names a rule may rewrite to them."""

    spec = importlib.util.find_spec("shims")  # top-level package: found, not imported
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    path = os.path.join(list(spec.submodule_search_locations)[0], *module.split(".")) + ".py"
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__"
                                                for t in node.targets):
            return frozenset(ast.literal_eval(node.value))
    raise RuntimeError(f"{path} has no literal __all__")


def no_tf2_home(old: str, new: str) -> str:
    """The error finding for a rename whose target TF 2.21 does not have (under either
    Keras): said, never written."""
    return (f"error: {old} has no home in TF 2.21: TensorFlow's upgrade tables send it to "
            f"{new}, which TF 2.21 does not have (under Keras 3 or tf_keras); rewrite this use "
            "by hand or drop it")
