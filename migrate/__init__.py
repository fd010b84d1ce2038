"""tf-migrate: move TensorFlow 1 code to TensorFlow 2 for real.

The codemod path (this package minus ``migrate.ckpt``/``migrate.verify``) never
imports tensorflow.
"""
__version__ = "0.1.0"
