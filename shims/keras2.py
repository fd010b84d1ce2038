"""``import shims.keras2``: declares that a module runs on Keras 2 (tf_keras), TF 1.15's Keras.

``import shims`` alone selects it too, unless the process already chose Keras 3; with this
import that case is one ImportError instead of Keras 3 layers under Keras 2 code.
"""
import shims

shims.require_keras(2)
