"""tf-migrate verify --program: the training trajectory of a TF1 program against its migration.

1. LEGACY runs as TF 1.x would (a subprocess in graph mode, ``tensorflow`` is
   ``tf.compat.v1``, legacy Keras; ``--prelude`` first, e.g. a stand-in for a piece TF 2
   no longer ships) as ``python LEGACY MODEL_DIR ARGS...``. When the program first runs
   its variable initializer, the initial values are saved (``init`` checkpoint, TF1
   names); when its session closes, the final values are (``tf1/final``).
2. MIGRATED runs on TF 2 with the default Keras the same way. Every
   ``shims.GraphProgram`` takes its initial values from the ``init`` checkpoint as soon
   as its variables exist, so both runs start from the same values even when the
   program draws them at random; at exit the last program's variables are saved
   (``tf2/final``, TF1 names).
3. Every output line ``KEY number number ...`` of the TF1 run (losses per step,
   metrics) must come out of the migrated run with equal numbers, and the final
   variables must be equal, within rtol/atol.

Both programs are executed: run this only on code you trust.
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from typing import Dict, List, Optional

from migrate.verify import VerifyError, run_side

LEGACY = r'''
import atexit, json, os, runpy, sys
import tensorflow.compat.v1 as v1
v1.disable_v2_behavior()
sys.modules["tensorflow"] = v1
from tensorflow.python.client import session as session_lib
cfg = json.loads(os.environ["TFM_VERIFY_PROGRAM"])
state = {"init": False, "final": None}
run, close = session_lib.BaseSession.run, session_lib.BaseSession.close


def initializes(session, fetches):
    ops = [f for f in v1.nest.flatten(fetches) if isinstance(f, v1.Operation)]
    with session.graph.as_default():
        wanted = {v.initializer for v in v1.global_variables()}
    return bool(wanted) and any(wanted <= set(op.control_inputs) for op in ops)


def save(session, path):
    with session.graph.as_default():
        variables = v1.global_variables()
        if variables:
            v1.train.Saver(variables).save(session, path, write_meta_graph=False)


def patched_run(self, fetches, *args, **kwargs):
    out = run(self, fetches, *args, **kwargs)
    if not state["init"] and initializes(self, fetches):
        state["init"] = True
        save(self, cfg["init"])
    state["final"] = self
    return out


def patched_close(self):
    if state["final"] is self and not getattr(self, "_closed", False):
        save(self, cfg["final"])
        state["final"] = None
    return close(self)


session_lib.BaseSession.run, session_lib.BaseSession.close = patched_run, patched_close
atexit.register(lambda: state["final"] is not None and save(state["final"], cfg["final"]))
if cfg.get("prelude"):  # sees v1 (tensorflow.compat.v1) and its own __file__
    exec(compile(open(cfg["prelude"]).read(), cfg["prelude"], "exec"),
         {"v1": v1, "__file__": cfg["prelude"], "__name__": "__prelude__"})
sys.path.insert(0, os.path.dirname(os.path.abspath(cfg["source"])))
sys.argv = [cfg["source"], cfg["model_dir"], *cfg["args"]]
runpy.run_path(cfg["source"], run_name="__main__")
'''

MIGRATED = r'''
import atexit, json, os, runpy, sys
import shims
import tensorflow as tf
from shims import program as program_lib
cfg = json.loads(os.environ["TFM_VERIFY_PROGRAM"])
last = {}


def start_from_init(program):
    last["program"] = program
    if not os.path.exists(cfg["init"] + ".index"):
        return
    present = dict(tf.train.list_variables(cfg["init"]))
    for variable in program.global_variables():
        name = program.name_of(variable)
        if name in present:
            variable.assign(tf.train.load_variable(cfg["init"], name))


def save_final():
    program = last.get("program")
    if program is not None and program.global_variables():
        program.save(cfg["final"])


program_lib.add_build_hook(start_from_init)
atexit.register(save_final)
sys.path.insert(0, os.path.dirname(os.path.abspath(cfg["source"])))
sys.argv = [cfg["source"], cfg["model_dir"], *cfg["args"]]
runpy.run_path(cfg["source"], run_name="__main__")
'''

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def numbers(text: str) -> Dict[str, List[float]]:
    """The ``KEY number number ...`` lines of a program's output."""
    rows: Dict[str, List[float]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2 or not _KEY.match(parts[0]):
            continue
        try:
            rows[parts[0]] = [float(v) for v in parts[1:]]
        except ValueError:
            continue
    return rows


def _run(script: str, cfg: dict, legacy: bool, what: str) -> str:
    return run_side(script, "TFM_VERIFY_PROGRAM", cfg, legacy, what, cfg["timeout"],
                    cwd=os.path.dirname(cfg["init"]))


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    return abs(a - b) <= atol + rtol * abs(a)


def _variables(prefix: str) -> Dict[str, object]:
    from migrate.checkpoints.bundle import Bundle

    if not os.path.exists(prefix + ".index"):
        return {}
    bundle = Bundle(prefix)
    return {name: bundle.read(name) for name in bundle.entries}


def verify_program(legacy: str, migrated: str, args: List[str], rtol: float = 1e-5,
                   atol: float = 1e-5, prelude: Optional[str] = None,
                   workdir: Optional[str] = None, timeout: int = 1800) -> dict:
    for path, label in ((legacy, "LEGACY"), (migrated, "MIGRATED")):
        if not os.path.isfile(path):
            raise VerifyError(f"{label} {path!r}: no such file")
    if prelude and not os.path.isfile(prelude):
        raise VerifyError(f"--prelude {prelude!r}: no such file")
    if workdir and os.path.exists(workdir) and not os.path.isdir(workdir):
        raise VerifyError(f"--workdir {workdir!r} exists and is not a directory")
    work = os.path.abspath(workdir) if workdir else tempfile.mkdtemp(prefix="tf-migrate-verify-")
    try:
        os.makedirs(work, exist_ok=True)
        init = os.path.join(work, "init", "model")
        base = {"init": init, "args": list(args), "timeout": timeout,
                "prelude": os.path.abspath(prelude) if prelude else None}
        for side in ("init", "tf1", "tf2"):
            os.makedirs(os.path.join(work, side), exist_ok=True)
        want = numbers(_run(LEGACY, dict(base, source=os.path.abspath(legacy),
                                         model_dir=os.path.join(work, "tf1", "model_dir"),
                                         final=os.path.join(work, "tf1", "final")), True,
                            "legacy (TF1 graph mode)"))
        got = numbers(_run(MIGRATED, dict(base, source=os.path.abspath(migrated),
                                          model_dir=os.path.join(work, "tf2", "model_dir"),
                                          final=os.path.join(work, "tf2", "final")), False,
                           "migrated (TF2)"))
        return _report(want, got, _variables(os.path.join(work, "tf1", "final")),
                       _variables(os.path.join(work, "tf2", "final")), rtol, atol,
                       os.path.exists(init + ".index"))
    finally:
        if not workdir:
            shutil.rmtree(work, ignore_errors=True)


def _report(want, got, old, new, rtol, atol, shared_init) -> dict:
    import numpy as np

    lines = []
    for key, values in want.items():
        other = got.get(key)
        worst = None
        if other is not None and len(other) == len(values):
            worst = max((abs(a - b) for a, b in zip(values, other)), default=0.0)
        ok = other is not None and len(other) == len(values) and all(
            _close(a, b, rtol, atol) for a, b in zip(values, other))
        lines.append({"key": key, "ok": ok, "values": len(values), "max_abs": worst,
                      "missing": other is None,
                      "length": None if other is None else len(other)})
    variables = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            variables.append({"name": name, "ok": False, "missing": "tf1" if a is None else "tf2"})
            continue
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            variables.append({"name": name, "ok": False, "shape": [list(a.shape), list(b.shape)]})
            continue
        if a.dtype.kind in "fc":
            diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
            ok = bool(np.allclose(b, a, rtol=rtol, atol=atol))
        else:
            diff, ok = None, bool(np.array_equal(a, b))
        variables.append({"name": name, "ok": ok, "max_abs": diff})
    ok = bool(lines) and all(l["ok"] for l in lines) and all(v["ok"] for v in variables)
    return {"ok": ok, "lines": lines, "variables": variables, "shared_init": shared_init,
            "rtol": rtol, "atol": atol}
