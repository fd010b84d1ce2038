"""Shared test setup: TF logs quiet, legacy Keras selected before anything imports TF
(shims does the same; Keras 3 paths are tested in subprocesses)."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_USE_LEGACY_KERAS"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


import pytest  # noqa: E402

import tf1_oracle  # noqa: E402


@pytest.fixture(scope="session")
def tf1_python():
    """The real TF 1.15 interpreter (built once and cached); its absence fails the test
    with one line, it never skips it."""
    try:
        return tf1_oracle.interpreter()
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


def pytest_collection_modifyitems(config, items):
    """Tests on real TF 1.15 are slow (another interpreter, TensorFlow imported twice):
    marked so, wherever they are, with the modules that run whole programs. CI runs all;
    `pytest -m "not slow"` is the quick loop."""
    slow_modules = {"test_programs", "test_samples", "test_verify_program", "test_session_programs",
                    "test_tf1_surface"}
    for item in items:
        if "tf1_python" in getattr(item, "fixturenames", ()) or item.module.__name__ in slow_modules:
            item.add_marker(pytest.mark.slow)
