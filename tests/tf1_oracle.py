"""The real TensorFlow 1.15 the behavioural tests compare against.

``interpreter()`` gives a Python that imports TensorFlow 1.15: ``$TF1_PYTHON`` when set,
else a virtual environment built once under ``~/.cache/tf-migrate`` (or
``$TF_MIGRATE_TF1_HOME``) from a Python 3.7 (``python3.7`` on PATH or pyenv's) with
``tensorflow==1.15.5``, ``protobuf<3.21`` and ``numpy<1.19`` from PyPI. The build is
made in a temp folder and renamed into place when it imports, under a lock, so a killed
build never leaves a half-made one. If no TF1 can be had, RuntimeError with one line
saying why: tests that need it fail with that line, they never skip.

``run()`` runs TF1 code in that interpreter, with results cached by the code's hash.
"""
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys

PINS = ["tensorflow==1.15.5", "protobuf<3.21", "numpy<1.19"]
HOME = os.environ.get("TF_MIGRATE_TF1_HOME") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tf-migrate")
VENV = os.path.join(HOME, "tf1-venv-" + hashlib.sha256(" ".join(PINS).encode()).hexdigest()[:12])
RESULTS = os.path.join(HOME, "tf1-results")
CHECK = "import tensorflow as tf, sys; sys.stdout.write(tf.__version__)"


def _python37():
    """pyenv's Python 3.7 itself (its shim refuses to run while 3.7 is not selected), else
    a python3.7 on PATH that runs."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for path in sorted(glob.glob(os.path.join(root, "versions", "3.7*", "bin", "python3.7")), reverse=True):
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("python3.7")
    if found and subprocess.run([found, "-c", "pass"], capture_output=True, timeout=60).returncode == 0:
        return found
    return None


def _version(python):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF2_BEHAVIOR", None)
    proc = subprocess.run([python, "-c", CHECK], capture_output=True, text=True, timeout=300, env=env)
    return proc.stdout.strip() if proc.returncode == 0 else None


def _build():
    import fcntl

    os.makedirs(HOME, exist_ok=True)
    with open(os.path.join(HOME, "tf1-venv.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python = os.path.join(VENV, "bin", "python")
        if os.path.isfile(os.path.join(VENV, ".ready")):
            return python
        base = _python37()
        if base is None:
            raise RuntimeError("real TF 1.15 is needed and no Python 3.7 was found (python3.7 on PATH "
                               "or ~/.pyenv/versions/3.7*); install one, or set TF1_PYTHON")
        tmp = VENV + ".building"
        shutil.rmtree(tmp, ignore_errors=True)
        sys.stderr.write(f"tf1_oracle: building a TF 1.15 environment in {VENV} (once)\n")
        steps = [[base, "-m", "venv", tmp],
                 [os.path.join(tmp, "bin", "python"), "-m", "pip", "install", "-q",
                  "--disable-pip-version-check", *PINS]]
        for step in steps:
            proc = subprocess.run(step, capture_output=True, text=True, timeout=1800)
            if proc.returncode:
                tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
                raise RuntimeError(f"real TF 1.15 is needed and building it failed: {' '.join(step[:4])}: "
                                   f"{tail}")
        # the venv's scripts name the temp folder: rebuild paths by renaming and re-creating
        os.replace(tmp, VENV)
        subprocess.run([base, "-m", "venv", "--upgrade", VENV], capture_output=True, timeout=300)
        version = _version(python)
        if not (version or "").startswith("1.15"):
            shutil.rmtree(VENV, ignore_errors=True)
            raise RuntimeError(f"real TF 1.15 is needed and the environment built in {VENV} does not "
                               "import it")
        open(os.path.join(VENV, ".ready"), "w").close()
        return python


_cached = {}


def interpreter():
    """The TF 1.15 Python (built on first use); RuntimeError with one line if none."""
    if "python" in _cached:
        return _cached["python"]
    given = os.environ.get("TF1_PYTHON")
    if given:
        version = _version(given)
        if not (version or "").startswith("1."):
            raise RuntimeError(f"TF1_PYTHON={given} does not import TensorFlow 1.x")
        _cached["python"] = given
    else:
        _cached["python"] = _build()
    return _cached["python"]


def run(code, *args, cwd=None, timeout=900):
    """stdout of TF1 ``code`` (a script; ``args`` are its sys.argv[1:]) on real TF 1.15,
    cached by the code, its arguments and the contents of the files they name (not when
    an argument is a folder: the run may write there). A failure raises
    AssertionError with the run's stderr tail."""
    python = interpreter()
    parts, cacheable = [code, python], True
    for arg in map(str, args):
        if os.path.isdir(arg):
            cacheable = False  # it may write there, and a later step may read what it wrote
        elif os.path.isfile(arg):
            with open(arg, "rb") as handle:
                parts.append(hashlib.sha256(handle.read()).hexdigest())
        else:
            parts.append(arg)
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    path = os.path.join(RESULTS, "code-" + key + ".txt")
    if cacheable and os.path.isfile(path):
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    env.pop("TF_USE_LEGACY_KERAS", None)
    env.pop("TF2_BEHAVIOR", None)  # set by importing TF 2; TF 1.15 would run eagerly
    proc = subprocess.run([python, "-c", code, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)
    assert proc.returncode == 0, "the real TF 1.15 run failed:\n" + proc.stderr[-3000:]
    os.makedirs(RESULTS, exist_ok=True)
    with open(path + f".{os.getpid()}.tmp", "w", encoding="utf-8") as handle:
        handle.write(proc.stdout)
    os.replace(path + f".{os.getpid()}.tmp", path)
    return proc.stdout


AS_SCRIPT = "import runpy, sys\nsys.argv = sys.argv[1:]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"


def run_script(source, *args, **kwargs):
    """stdout of ``python SOURCE ARGS...`` on real TF 1.15 (cached as ``run`` caches)."""
    return run(AS_SCRIPT, source, *args, **kwargs)


def saved(code, *args):
    """A folder holding what TF1 ``code`` wrote into its working directory, made once on
    real TF 1.15 and cached by the code and its arguments. Relative paths keep a Saver's
    ``checkpoint`` file valid wherever the folder is copied. Read it or copy it (``copy``);
    never change it."""
    python = interpreter()
    key = hashlib.sha256(json.dumps([code, python, *map(str, args)]).encode()).hexdigest()
    folder = os.path.join(RESULTS, "files-" + key)
    if os.path.isfile(os.path.join(folder, ".made")):
        return folder
    work = f"{folder}.{os.getpid()}.tmp"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    env.pop("TF_USE_LEGACY_KERAS", None)
    env.pop("TF2_BEHAVIOR", None)
    proc = subprocess.run([python, "-c", code, *map(str, args)], capture_output=True, text=True,
                          timeout=900, cwd=work, env=env)
    if proc.returncode:
        shutil.rmtree(work, ignore_errors=True)
        raise AssertionError("the real TF 1.15 run failed:\n" + proc.stderr[-3000:])
    open(os.path.join(work, ".made"), "w").close()
    try:
        os.rename(work, folder)
    except OSError:  # another test process made it first
        shutil.rmtree(work, ignore_errors=True)
    return folder


def copy(code, destination, *args):
    """``saved(code, *args)`` copied to ``destination`` (a new folder); returns it."""
    shutil.copytree(saved(code, *args), destination, ignore=shutil.ignore_patterns(".made"))
    return str(destination)


SAVE_VARIABLES = """
import numpy as np
import tensorflow as tf
v1 = tf.compat.v1
variables = [v1.Variable(value, name=name) for name, value in {variables}]
saver = v1.train.Saver(variables)
with v1.Session() as session:
    session.run(v1.global_variables_initializer())
    saver.save(session, "model", write_meta_graph=False)
"""


def save_variables(directory, variables):
    """A Saver checkpoint written by real TF 1.15 into ``directory``: ``variables`` is a
    Python expression (numpy as np) for (name, value) pairs. Returns its prefix."""
    return os.path.join(copy(SAVE_VARIABLES.format(variables=variables), directory), "model")
