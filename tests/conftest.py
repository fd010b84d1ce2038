"""Shared test setup: TF logs quiet, legacy Keras selected before anything imports TF
(shims does the same; Keras 3 paths are tested in subprocesses)."""
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ["TF_USE_LEGACY_KERAS"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
