"""What a run migrates to: the typed choice ``upgrade --keras``/``--programs`` and
``[tool.tf-migrate] keras``/``programs`` make.

Passed from the command line through the runner (and its cache key) to the engine and every
rule (``ctx.target``); pure data, no libcst.
"""
from __future__ import annotations

from dataclasses import dataclass

KERAS_GENERATIONS = (2, 3)
#: how TFM501 writes a Session program it converts: "native" (tf.function steps with
#: tf.GradientTape and an optimizer, variables made once; the default where that form is
#: proven) or "shims" (the graph in a build function run by shims.GraphProgram: the
#: smallest diff, every converted form)
PROGRAM_FORMS = ("native", "shims")


@dataclass(frozen=True)
class Target:
    """``keras``: 2 (tf_keras, TF 1.15's Keras; the default) or 3 (the Keras TensorFlow ships).

    For Keras 3 the migrated module starts with ``import shims.keras3`` (the process stays on
    Keras 3; shims' legacy layers are Keras 3 layers); for Keras 2 a module that uses Keras
    starts with ``import shims.keras2``. For Keras 3 what exists in tf_keras only
    (``tf.compat.v1.layers``, the TF1 RNN cells, TF1 optimizers in ``compile``) is an error
    finding instead of a rewrite onto it."""

    keras: int = 2
    programs: str = "native"

    def __post_init__(self) -> None:
        if self.keras not in KERAS_GENERATIONS:
            raise ValueError(f"the Keras target is 2 or 3, not {self.keras!r}")
        if self.programs not in PROGRAM_FORMS:
            raise ValueError(f"the program form is native or shims, not {self.programs!r}")

    @property
    def shims_import(self) -> str:
        """The statement that declares the Keras generation in migrated code."""
        return "import shims.keras3" if self.keras == 3 else "import shims.keras2"

    def key(self) -> str:
        """Part of the cache key: results for one target are not another's."""
        return f"keras{self.keras}-{self.programs}"


DEFAULT = Target()
