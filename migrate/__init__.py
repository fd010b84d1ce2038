"""tf-migrate: move TensorFlow 1 code to TensorFlow 2 for real.

Three faces, one package:

- ``migrate.codemod``: the engine (parse, one walk with every rule, one fix pass, imports,
  validation, safe writes, cache); the rules live in ``migrate.rules``, one per file, and
  their tables in ``migrate.data``. It never imports TensorFlow.
- ``migrate.checkpoints``: TF1/TF2/Keras checkpoints (the bundle reader needs no TensorFlow;
  converting does, in a process of its own).
- ``migrate.verify``: proof of equivalence for model functions and whole programs.

``migrate.cli`` is the ``tf-migrate`` command over all three.
"""
__version__ = "0.1.0"
