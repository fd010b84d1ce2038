"""Deterministic random ops for equivalence tests (TF1 graph vs TF2 eager)."""
from __future__ import annotations

from tf_keras.src.legacy_tf_layers.migration_utils import DeterministicRandomTestTool


def deterministic_random(mode: str = "constant") -> DeterministicRandomTestTool:
    """tf_keras's DeterministicRandomTestTool.

    ``mode="constant"`` gives every random op the same seed, so TF1 graph code
    and its TF2 migration draw the same numbers; ``"num_random_ops"`` seeds by
    op count, for code whose random ops run in the same order. Use
    ``with tool.scope():`` around both runs.
    """
    if mode not in ("constant", "num_random_ops"):
        raise ValueError(f"mode must be 'constant' or 'num_random_ops', not {mode!r}")
    return DeterministicRandomTestTool(mode=mode)
