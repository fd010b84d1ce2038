"""``tensorflow.examples.tutorials.mnist`` on TF 2: ``input_data.read_data_sets``."""
