"""The harness ``verify --program`` runs in each interpreter: ``child.py``, a script of its
own (its docstring says what it does), whose text each side runs as ``python -c``."""
import os

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
with open(PATH, encoding="utf-8") as _handle:
    HARNESS = _handle.read()
