# `tf-migrate verify --prelude` for the TF1 run of the sample programs: tf.estimator and
# tf.contrib are gone from TF 2.21, so tests/tf1_estimator.py (TF 1.15's Estimator semantics
# in graph mode) and samples/contrib_reference_prelude.py (tf-slim, contrib.layers' code)
# stand in for them. Runs where `v1` is tensorflow.compat.v1 and __file__ is this file.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tf1_estimator  # noqa: E402

v1.estimator = tf1_estimator  # noqa: F821 (given by the verify harness)

_contrib = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples",
                        "contrib_reference_prelude.py")
exec(compile(open(_contrib).read(), _contrib, "exec"), {"__file__": _contrib, "__name__": "__prelude__"})
