"""Deterministic random ops for equivalence tests (TF1 graph vs TF2 eager), on TensorFlow alone.

The same contract as tf_keras's ``DeterministicRandomTestTool`` (which a Keras 3 process must
not import): inside ``scope()`` every stateful random op takes its seed from the tool, not
from how many other ops the graph holds, so TF1 graph code and its TF2 migration draw the
same numbers. ``constant`` gives every op the same operation seed; ``num_random_ops`` gives
the n-th random op seed n (an op seed used twice is an error).
"""
from __future__ import annotations

import sys
from unittest import mock

import tensorflow as tf

MODES = ("constant", "num_random_ops")


class DeterministicRandom:
    """See the module doc. ``operation_seed`` is the next op seed (settable)."""

    def __init__(self, seed: int = 42, mode: str = "constant"):
        if mode not in MODES:
            raise ValueError(f"mode must be 'constant' or 'num_random_ops', not {mode!r}")
        self._seed = seed
        self._mode = mode
        self.operation_seed = 0
        self._used = set()

    @property
    def seed(self) -> int:
        return self._seed

    @seed.setter
    def seed(self, value: int) -> None:
        self._seed = value

    def _get_seed(self, _op_seed):
        op_seed = self.operation_seed
        if self._mode == "constant":
            tf.random.set_seed(op_seed)
        else:
            if op_seed in self._used:
                raise ValueError(f"operation seed {op_seed} would be used twice: random numbers "
                                 "could not match between TF1 graph and TF2 eager code")
            self._used.add(op_seed)
            self.operation_seed += 1
        return self._seed, op_seed

    def scope(self):
        """A context manager: random ops made inside take the tool's seeds."""
        tf.random.set_seed(self._seed)
        module = sys.modules[tf.compat.v1.get_seed.__module__]
        return mock.patch.object(module, "get_seed", wraps=self._get_seed)


def deterministic_random(mode: str = "constant", seed: int = 42) -> DeterministicRandom:
    """A :class:`DeterministicRandom` (tf_keras's DeterministicRandomTestTool, without tf_keras).

    ``mode="constant"`` gives every random op the same seed, so TF1 graph code and its TF2
    migration draw the same numbers; ``"num_random_ops"`` seeds by op count, for code whose
    random ops run in the same order. Use ``with tool.scope():`` around both runs.
    """
    return DeterministicRandom(seed=seed, mode=mode)
