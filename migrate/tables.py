"""The generated TF1 -> TF2 tables (``migrate/data/tf_upgrade_v2.json``), loaded once."""
from __future__ import annotations

import functools
import json
import os

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "tf_upgrade_v2.json")


@functools.lru_cache(maxsize=None)
def upgrade_tables() -> dict:
    with open(PATH, encoding="utf-8") as handle:
        data = json.load(handle)
    data["tf2_symbols_set"] = frozenset(data.get("tf2_symbols", ()))
    return data


def owned_by_rules(v1: str) -> bool:
    """Symbols our own rules handle; the generic table passes leave them alone."""
    return v1.startswith(tuple(upgrade_tables()["owned_by_rules"]))
