# `tf-migrate verify --prelude` for the TF1 run of Estimator programs: tf.estimator is gone
# from TF 2.21, so tests/tf1_estimator.py (TF 1.15's Estimator semantics in graph mode)
# stands in for it. Runs where `v1` is tensorflow.compat.v1 and __file__ is this file.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tf1_estimator  # noqa: E402

v1.estimator = tf1_estimator  # noqa: F821 (given by the verify harness)
