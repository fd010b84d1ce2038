"""``tensorflow.examples.tutorials.mnist`` on TF 2: ``input_data.read_data_sets``.

As TF 1.x's package did, importing the package imports ``input_data`` (cheap: no
TensorFlow), so ``import ...tutorials.mnist`` then ``mnist.input_data.read_data_sets(...)``
works as it did."""
from shims.tutorials.mnist import input_data

__all__ = ["input_data"]
