"""The one way the tests run tf-migrate's command line: as a user runs it, in a subprocess --
the ``tf-migrate`` entry point installed beside this interpreter (``python -m migrate``
where there is none), output captured as text.

The environment is this process's (conftest.py sets ``TF_USE_LEGACY_KERAS=1`` for the tests'
own TensorFlow) with ``env`` on top, a value of None removing a variable; ``default_keras``
removes ``TF_USE_LEGACY_KERAS`` first, so the command runs with TF 2.21's default Keras, as
in a user's shell.
"""
import os
import subprocess
import sys
from typing import Dict, Optional

EXE = os.path.join(os.path.dirname(sys.executable), "tf-migrate")
COMMAND = [EXE] if os.path.exists(EXE) else [sys.executable, "-m", "migrate"]


def environment(env: Optional[Dict[str, Optional[str]]] = None, default_keras: bool = True) -> Dict[str, str]:
    out = dict(os.environ)
    if default_keras:
        out.pop("TF_USE_LEGACY_KERAS", None)
    for key, value in (env or {}).items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def run(*args, cwd=None, env: Optional[Dict[str, Optional[str]]] = None, default_keras: bool = True,
        timeout: float = 900) -> subprocess.CompletedProcess:
    """``tf-migrate ARGS...``, waited for."""
    return subprocess.run([*COMMAND, *map(str, args)], cwd=cwd, env=environment(env, default_keras),
                          capture_output=True, text=True, timeout=timeout)


def start(*args, cwd=None, env: Optional[Dict[str, Optional[str]]] = None,
          default_keras: bool = True) -> subprocess.Popen:
    """``tf-migrate ARGS...`` started, not waited for (runs that overlap); read it with
    ``communicate()``."""
    return subprocess.Popen([*COMMAND, *map(str, args)], cwd=cwd, env=environment(env, default_keras),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
