"""``import shims.keras3``: the first line of code migrated with ``tf-migrate upgrade --keras 3``.

It binds ``shims`` as ``import shims`` does and declares that the module runs on Keras 3,
the Keras TensorFlow ships: ``tf.keras`` stays Keras 3 (tf_keras is never imported), and
``shims.legacy_layer`` and the other legacy layers are Keras 3 layers. In a process whose
``tf.keras`` is already tf_keras the import fails with one line saying so.

``shims.keras3.BatchNormalization`` is ``tf.layers.batch_normalization`` with TF 1.15's
arithmetic (see ``shims._bn3``); ``upgrade --keras 3`` rewrites the TF1 layer to it.
"""
import shims

shims.require_keras(3)

from shims._bn3 import BatchNormalization  # noqa: E402  (after the generation is settled)

__all__ = ["BatchNormalization"]
