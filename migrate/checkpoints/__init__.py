"""Checkpoints across TF1 names, TF2 object paths and Keras: the bundle reader (no
TensorFlow needed), name matching and maps, compare and convert."""
