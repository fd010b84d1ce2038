"""TFM202: TF1 layer classes (tf.layers.Dense, tf.layers.Layer, ...) -> tf.keras.layers."""
from migrate.codemod import needles
from migrate.codemod.rule import SymbolRule

# tf.layers class -> its tf.keras.layers name (the TF1 classes subclass these)
CLASSES = {
    "Layer": "Layer", "InputSpec": "InputSpec", "Dense": "Dense", "Dropout": "Dropout",
    "Flatten": "Flatten", "BatchNormalization": "BatchNormalization",
    "Conv1D": "Conv1D", "Conv2D": "Conv2D", "Conv3D": "Conv3D",
    "Convolution1D": "Conv1D", "Convolution2D": "Conv2D", "Convolution3D": "Conv3D",
    "Conv2DTranspose": "Conv2DTranspose", "Conv3DTranspose": "Conv3DTranspose",
    "Convolution2DTranspose": "Conv2DTranspose", "Convolution3DTranspose": "Conv3DTranspose",
    "SeparableConv1D": "SeparableConv1D", "SeparableConv2D": "SeparableConv2D",
    "SeparableConvolution1D": "SeparableConv1D", "SeparableConvolution2D": "SeparableConv2D",
    "MaxPooling1D": "MaxPooling1D", "MaxPooling2D": "MaxPooling2D", "MaxPooling3D": "MaxPooling3D",
    "MaxPool1D": "MaxPooling1D", "MaxPool2D": "MaxPooling2D", "MaxPool3D": "MaxPooling3D",
    "AveragePooling1D": "AveragePooling1D", "AveragePooling2D": "AveragePooling2D",
    "AveragePooling3D": "AveragePooling3D", "AvgPool1D": "AveragePooling1D",
    "AvgPool2D": "AveragePooling2D", "AvgPool3D": "AveragePooling3D",
}


class LayerClasses(SymbolRule):
    code = "TFM202"
    needle = needles.TF_LAYER_CLASSES
    summary = "TF1 layer class: tf.layers is gone in TF2"
    fixable = True
    explanation = """
`tf.layers.Dense`, `tf.layers.Conv2D`, `tf.layers.Layer` and the other TF1 layer classes
are subclasses of the Keras ones with TF1 variable-scope handling; `tf.layers` does not
exist in TF2. Object-style code already creates each layer once, so the class becomes its
`tf.keras.layers` counterpart, with the same constructor arguments (aliases like
`Convolution2D` and `MaxPool2D` map to the canonical names). Functional calls
(`tf.layers.dense(...)`) are TFM201's.
"""
    before = """
import tensorflow as tf

class Block(tf.layers.Layer):
    def __init__(self):
        super().__init__()
        self.fc = tf.layers.Dense(10)
"""
    after = """
import tensorflow as tf

class Block(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.fc = tf.keras.layers.Dense(10)
"""

    def check(self, node) -> None:
        name = self.ctx.v1(node)
        if not name or not name.startswith("tf.layers."):
            return
        target = CLASSES.get(name[len("tf.layers."):])
        if target is None:
            return
        finding = self.report(node, f"{name} is gone in TF2: tf.keras.layers.{target} (the "
                                    "class it extended)")
        finding.replace(node, self.ctx.tf(finding, f"keras.layers.{target}"))
