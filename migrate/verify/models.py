"""tf-migrate verify: the TF migration guide's "validate correctness" steps as a command.

1. LEGACY (``file.py:function``) is built in TF1 graph mode (a subprocess: graph
   mode is process-global), initialized, moved off its initial values (so a
   variable that fails to load shows up as a difference) and saved with a TF1
   ``Saver``; its outputs, regularization losses and, with ``grads``, the
   gradients of ``sum(outputs)`` are recorded.
2. MIGRATED is built in TF2 eager mode (another subprocess): a function runs
   through ``shims.legacy_layer``, a zero-argument factory is called and its
   Keras model/layer used as is. The TF1 checkpoint is loaded with
   ``shims.load_tf1_checkpoint`` (through ``tf-migrate-names.json`` beside the
   migrated file, if any), the same inputs are fed under deterministic random
   ops, eagerly and under tf.function.
3. Variables (count, names, shapes), outputs, regularization losses and
   gradients are compared within rtol/atol. With ``--workdir`` both checkpoints
   stay there (``tf1/model``, ``tf2/model``) for ``tf-migrate ckpt compare``;
   without it the temp folder is removed.

Random ops: both runs use tf_keras's DeterministicRandomTestTool ("constant"),
which seeds every random op alike. A seeded stateful op inside the traced legacy
layer still advances on each execution, and the migrated side must run once to
create its variables before the checkpoint loads, so random draws in training
mode (Dropout with training=True) are not compared: compare inference paths
(the default).

Imports inside functions: numpy only in the functions that compare arrays, so planning a run and its errors need none.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from typing import Dict, List, Optional, Sequence

import migrate.verify.limits as limits

COMMON = r'''
import importlib, importlib.util, json, os, sys
import numpy as np

cfg = json.loads(os.environ["TFM_VERIFY"])


def load(target, name):
    path, _, attr = target.rpartition(":")
    if path.endswith(".py"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        sys.path.append(os.getcwd())  # after the standard library: a json.py here shadows nothing
        module = importlib.import_module(path)
    return getattr(module, attr)


def flat(out):
    if isinstance(out, dict):
        return [out[k] for k in sorted(out)]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in flat(o)]
    return [out]


data = np.load(cfg["inputs"])
inputs = [data[n] for n in cfg["names"]]
kwargs = cfg["kwargs"]
'''

REFERENCE = COMMON + r'''
import contextlib
if cfg.get("tf1"):  # the user's own TF 1.x interpreter: the real thing, tf.contrib included
    import tensorflow as v1

    class DeterministicRandomTestTool(object):  # TF 1.x has none: the graph seed decides
        def __init__(self, seed, mode):
            pass

        def scope(self):
            return contextlib.suppress()
else:
    import tensorflow.compat.v1 as v1
    from tf_keras.src.legacy_tf_layers.migration_utils import DeterministicRandomTestTool

    v1.disable_v2_behavior()
    sys.modules["tensorflow"] = v1  # the legacy code was written against TF 1.x names
if cfg.get("prelude"):  # stand-ins for TF1 pieces TF 2 no longer ships (tf.contrib)
    exec(compile(open(cfg["prelude"]).read(), cfg["prelude"], "exec"),
         {"__name__": "tfm_prelude", "__file__": cfg["prelude"]})
fn = load(cfg["legacy"], "tfm_legacy")
with v1.Graph().as_default():
    v1.set_random_seed(cfg["seed"])
    holders = [v1.placeholder(a.dtype, a.shape, name=n) for n, a in zip(cfg["names"], inputs)]
    tool = DeterministicRandomTestTool(seed=cfg["seed"], mode="constant")
    with tool.scope():
        outs = flat(fn(*holders, **kwargs))
    reg = v1.losses.get_regularization_losses()
    trainable = v1.trainable_variables()
    grads = []
    if cfg["grads"]:
        loss = v1.add_n([v1.reduce_sum(v1.cast(o, v1.float32)) for o in outs if o.dtype.is_floating])
        grads = [v1.convert_to_tensor(g) if isinstance(g, v1.IndexedSlices) else g
                 for g in v1.gradients(loss, trainable)]  # embedding tables get IndexedSlices
    saver = v1.train.Saver()
    with v1.Session() as session:
        session.run(v1.global_variables_initializer())
        for v in v1.global_variables():
            n = int(np.prod(v.shape.as_list()))
            step = 0.01 * np.arange(n, dtype=v.dtype.as_numpy_dtype).reshape(v.shape.as_list()) / max(1, n)
            session.run(v.assign(v + step) if v.dtype.is_floating else v.assign(v))
        feed = dict(zip(holders, inputs))
        values = session.run(outs, feed)
        reg_value = float(session.run(v1.add_n(reg))) if reg else 0.0
        grad_values = session.run([g for g in grads if g is not None], feed) if grads else []
        saver.save(session, os.path.join(cfg["work"], "tf1", "model"))
    result = {f"out{i}": np.asarray(v) for i, v in enumerate(values)}
    names = [v.op.name for v, g in zip(trainable, grads) if g is not None]
    result.update({f"grad:{n}": np.asarray(g) for n, g in zip(names, grad_values)})
    np.savez(os.path.join(cfg["work"], "reference.npz"), **result)
    meta = {"variables": [{"name": v.op.name, "shape": v.shape.as_list(), "dtype": v.dtype.base_dtype.name}
                          for v in v1.global_variables()], "regularization": reg_value, "outputs": len(values)}
    json.dump(meta, open(os.path.join(cfg["work"], "reference.json"), "w"))
'''

MIGRATED = COMMON + r'''
import inspect
import shims
import tensorflow as tf

fn = load(cfg["migrated"], "tfm_migrated")
required = [p for p in inspect.signature(fn).parameters.values()
            if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
model = fn() if not required else None
if not isinstance(model, tf.Module):
    model = shims.legacy_layer(fn)
tensors = [tf.constant(a) for a in inputs]
model(*tensors, **kwargs)
names_file = os.path.join(os.path.dirname(os.path.abspath(cfg["migrated"].rpartition(":")[0])),
                          "tf-migrate-names.json")
report = shims.load_tf1_checkpoint(model, os.path.join(cfg["work"], "tf1", "model"),
                                   name_map=names_file if os.path.exists(names_file) else None,
                                   strict=False)
tool = shims.deterministic_random("constant", seed=cfg["seed"])  # the reference's tool's seed
with tool.scope():
    eager = flat(model(*tensors, **kwargs))
traced_fn = tf.function(lambda *a: model(*a, **kwargs))
with tool.scope():
    traced = flat(traced_fn(*tensors))
result = {f"eager{i}": np.asarray(t) for i, t in enumerate(eager)}
result.update({f"traced{i}": np.asarray(t) for i, t in enumerate(traced)})
reg = float(tf.add_n([tf.reduce_sum(l) for l in model.losses])) if model.losses else 0.0
paths = {id(v): p for p, v in shims.tracked_variables(model)}
tf1_of = {new: old for old, new, how in report.matched}
if cfg["grads"]:
    with tf.GradientTape() as tape:
        with tool.scope():
            outs = flat(model(*tensors, **kwargs))
        loss = tf.add_n([tf.reduce_sum(tf.cast(o, tf.float32)) for o in outs if o.dtype.is_floating])
    variables = model.trainable_variables
    for v, g in zip(variables, tape.gradient(loss, variables)):
        if g is not None:
            name = tf1_of.get(paths.get(id(v)), paths.get(id(v), v.name))
            result[f"grad:{name}"] = np.asarray(tf.convert_to_tensor(g))
np.savez(os.path.join(cfg["work"], "migrated.npz"), **result)
tf.train.Checkpoint(model=model).write(os.path.join(cfg["work"], "tf2", "model"))
meta = {"variables": [{"name": tf1_of.get(p, p), "shape": v.shape.as_list(), "dtype": tf.as_dtype(v.dtype).name}
                      for p, v in shims.tracked_variables(model)],
        "trainable": len(model.trainable_variables),
        "regularization": reg,
        "load": {"matched": report.matched, "missing": report.missing,
                 "unexpected": report.unexpected, "mismatched": report.mismatched}}
json.dump(meta, open(os.path.join(cfg["work"], "migrated.json"), "w"))
'''


class VerifyError(Exception):
    """Bad arguments or a run that failed: one line for the user."""


def parse_input(text: str) -> dict:
    """``NAME:SHAPE:DTYPE`` with SHAPE like ``2x7`` or ``2,7``; optional ``:LOW:HIGH`` for ints."""
    parts = text.split(":")
    if len(parts) not in (3, 5) or not re.fullmatch(r"[A-Za-z_]\w*", parts[0]):
        raise VerifyError(f"--input {text!r}: expected NAME:SHAPE:DTYPE (e.g. ids:2x7:int32)")
    try:
        shape = [int(d) for d in re.split(r"[x,]", parts[1]) if d] if parts[1] else []
    except ValueError:
        raise VerifyError(f"--input {text!r}: the shape must be integers like 2x7") from None
    if any(d < 0 for d in shape):
        raise VerifyError(f"--input {text!r}: dimensions cannot be negative")
    count = 1
    for d in shape:
        count *= d
    if count > MAX_ELEMENTS:
        raise VerifyError(f"--input {text!r}: {count:,} elements; verify makes random inputs of at "
                          f"most {MAX_ELEMENTS:,} (a small batch proves the same)")
    spec = {"name": parts[0], "shape": shape, "dtype": parts[2]}
    if len(parts) == 5:
        try:
            spec["low"], spec["high"] = int(parts[3]), int(parts[4])
        except ValueError:
            raise VerifyError(f"--input {text!r}: LOW and HIGH must be integers") from None
    return spec


MAX_ELEMENTS = 1 << 26  # 64 Mi elements: 512 MB as float64 while they are drawn


def make_inputs(specs: List[dict], seed: int):
    import numpy as np

    rng = np.random.RandomState(seed)
    arrays = {}
    for s in specs:
        try:
            dtype = np.dtype(s["dtype"])
        except TypeError:
            raise VerifyError(f"--input {s['name']}: unknown dtype {s['dtype']}") from None
        if dtype.kind in "iu":
            arrays[s["name"]] = rng.randint(s.get("low", 0), s.get("high", 10), size=s["shape"]).astype(dtype)
        elif dtype.kind == "b":
            arrays[s["name"]] = rng.randint(0, 2, size=s["shape"]).astype(dtype)
        else:
            arrays[s["name"]] = rng.standard_normal(s["shape"]).astype(dtype)
    return arrays


def _check_target(target: str, label: str) -> None:
    path, _, attr = target.rpartition(":")
    if not path or not attr:
        raise VerifyError(f"{label} {target!r}: expected path.py:function or module:function")
    if path.endswith(".py") and not os.path.isfile(path):
        raise VerifyError(f"{label} {target!r}: no such file {path}")


PROGRESS = None  # a callable the CLI sets: told which run starts ("the legacy (TF1 graph) run")


def announce(what: str) -> None:
    if PROGRESS is not None:
        PROGRESS(what)


def run_side(script: str, variable: str, cfg: dict, legacy_keras: bool, what: str,
             timeout: float, cwd: Optional[str] = None, python: Optional[str] = None,
             memory: Optional[int] = None, produces: Sequence[str] = ()) -> str:
    """One side of a comparison: ``script`` in a fresh Python with ``cfg`` in the
    environment variable ``variable``, tf_keras (the TF1 side) or the default Keras,
    limited to ``timeout`` seconds and ``memory`` bytes. Its stdout; a failure, a limit,
    a signal, or an early exit that left any of ``produces`` unwritten is one
    VerifyError line naming this side."""

    announce(what)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    env[variable] = json.dumps(cfg)
    if legacy_keras:
        env["TF_USE_LEGACY_KERAS"] = "1"
    else:
        env.pop("TF_USE_LEGACY_KERAS", None)
    if python:  # a TF 1.x interpreter: TF2_BEHAVIOR (set by importing TF 2) would make it eager
        env.pop("TF2_BEHAVIOR", None)
    folder = tempfile.mkdtemp(prefix="tf-migrate-side-")
    try:
        outcome = limits.run(python_c(script, python), env, cwd, timeout, memory, folder)
        check_outcome(outcome, what, timeout, memory, produces)
        return outcome.stdout
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def check_outcome(outcome, what: str, timeout: float, memory: Optional[int],
                  produces: Sequence[str] = ()) -> None:
    """VerifyError naming ``what`` ended the run, unless it ended cleanly having
    written each of ``produces``."""
    why = outcome.why(timeout, memory)
    if why:
        raise VerifyError(f"the {what} run {why}")
    if outcome.returncode:
        raise_failure(outcome, what)
    missing = [p for p in produces if not os.path.exists(p)]
    if missing:
        raise VerifyError(f"the {what} run ended (exit 0) without writing its results: the code "
                          "called os._exit() or sys.exit() before it finished")


def _run(script: str, cfg: dict, legacy_keras: bool, what: str, python: Optional[str] = None,
         produces: Sequence[str] = ()) -> None:
    run_side(script, "TFM_VERIFY", cfg, legacy_keras, what, cfg.get("timeout", 1800), python=python,
             memory=cfg.get("memory"), produces=produces)


def python_c(script: str, python: Optional[str] = None) -> List[str]:
    """``python -c SCRIPT`` without the current directory first on sys.path (where a
    json.py would be imported instead of the standard library's)."""
    safe = "import sys\nif sys.path and sys.path[0] in ('', '.'):\n    del sys.path[0]\n"
    return [python or sys.executable, "-c", safe + script]


def raise_failure(proc, what: str) -> None:
    """One error line naming a failed subprocess's real exception and where it was
    raised in the user's code."""
    if os.environ.get("TF_MIGRATE_DEBUG"):
        sys.stderr.write(proc.stderr)
    message, where = failure_of(proc.stderr)
    if "Traceback (most recent call last)" not in proc.stderr:  # sys.exit(3), exit("why")
        raise VerifyError(f"the {what} run exited with status {proc.returncode} (the code called "
                          f"sys.exit or exit)" + (f": {message}" if message else ""))
    raise VerifyError(f"the {what} run failed: {message or 'exit ' + str(proc.returncode)}"
                      + (f" (at {where})" if where else "")
                      + " (TF_MIGRATE_DEBUG=1 shows the whole traceback)")


_NOISE = re.compile(r"cuda|oneDNN|absl|cpu_feature|rebuild TensorFlow|^WARNING|^I0000|^E0000|^W0000")
_FRAME = re.compile(r'^\s+File "([^"]+)", line (\d+), in (.+)$')
_CARETS = re.compile(r"^\s*[\^~]+\s*$")  # Python 3.11's markers under a frame's line
_OURS = tuple(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep + part + os.sep
              for part in ("migrate", "shims"))  # tf-migrate itself, installed editable or not


def failure_of(stderr: str):
    """(the exception line, ``file:line in function`` of the deepest frame in the
    user's code) from a Python traceback on stderr; Keras' "Exception encountered when
    calling ..." wrappers give the message they wrap."""
    lines = stderr.rstrip().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    if not starts:
        rest = [line for line in lines if line.strip() and not _NOISE.search(line)]
        return (rest[-1].strip() if rest else None), None
    i, where = starts[-1] + 1, None
    while i < len(lines) and (lines[i].startswith(" ") or not lines[i].strip()
                              or _CARETS.match(lines[i])):
        frame = _FRAME.match(lines[i])
        if frame and _users(frame.group(1)):
            where = f"{frame.group(1)}:{frame.group(2)} in {frame.group(3)}"
        i += 1
    if i >= len(lines):
        return None, where
    message = lines[i].strip()
    if "Exception encountered when calling" in message:
        inner = [line.strip() for line in lines[i + 1:] if line.strip()]
        if inner:
            message = f"{message.split(':')[0]}: {inner[0]}"
    return message, where


def _users(path: str) -> bool:
    """A frame in the user's code: not the runner script, Python or an installed package."""
    if path.startswith("<") or os.sep + "site-packages" + os.sep in path or "dist-packages" in path:
        return False
    if path.startswith(_OURS):
        return False
    return not path.startswith(os.path.dirname(os.__file__))


def _diff(a, b) -> Dict[str, float]:
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return {"max_abs": float("inf"), "max_rel": float("inf"), "shape": [list(a.shape), list(b.shape)]}
    if not a.size:
        return {"max_abs": 0.0, "max_rel": 0.0}
    diff = np.abs(a - b)
    return {"max_abs": float(diff.max()),
            "max_rel": float((diff / np.maximum(np.abs(a), 1e-12)).max())}


def verify(legacy: str, migrated: str, inputs: List[dict], grads: bool = False,
           rtol: float = 1e-5, atol: float = 1e-5, seed: int = 0, kwargs: Optional[dict] = None,
           workdir: Optional[str] = None, prelude: Optional[str] = None,
           tf1_python: Optional[str] = None, timeout: float = 1800,
           memory: Optional[int] = None) -> dict:
    """Both runs in a work folder: ``workdir`` (kept, with its checkpoints and arrays),
    else a temp folder removed afterwards, whatever the outcome."""
    _check_target(legacy, "LEGACY")
    _check_target(migrated, "MIGRATED")
    if workdir and os.path.exists(workdir) and not os.path.isdir(workdir):
        raise VerifyError(f"--workdir {workdir!r} exists and is not a directory")
    work = workdir or tempfile.mkdtemp(prefix="tf-migrate-verify-")
    try:
        report = _verify_in(work, legacy, migrated, inputs, grads, rtol, atol, seed, kwargs, prelude,
                            tf1_python, timeout, memory)
    finally:
        if not workdir:

            shutil.rmtree(work, ignore_errors=True)
    if not workdir:
        report["workdir"] = None
        report.pop("checkpoints")
    return report


def _verify_in(work: str, legacy: str, migrated: str, inputs: List[dict], grads: bool, rtol: float,
               atol: float, seed: int, kwargs: Optional[dict], prelude: Optional[str],
               tf1_python: Optional[str] = None, timeout: float = 1800,
               memory: Optional[int] = None) -> dict:
    import numpy as np

    os.makedirs(work, exist_ok=True)
    arrays = make_inputs(inputs, seed)
    np.savez(os.path.join(work, "inputs.npz"), **arrays)
    cfg = {"legacy": os.path.abspath(legacy.rpartition(":")[0]) + ":" + legacy.rpartition(":")[2]
           if legacy.rpartition(":")[0].endswith(".py") else legacy,
           "migrated": os.path.abspath(migrated.rpartition(":")[0]) + ":" + migrated.rpartition(":")[2]
           if migrated.rpartition(":")[0].endswith(".py") else migrated,
           "inputs": os.path.join(work, "inputs.npz"), "names": [s["name"] for s in inputs],
           "work": work, "seed": seed, "grads": grads, "kwargs": kwargs or {},
           "prelude": os.path.abspath(prelude) if prelude else None, "tf1": bool(tf1_python),
           "timeout": timeout, "memory": memory}
    if tf1_python and not (os.path.isfile(tf1_python) and os.access(tf1_python, os.X_OK)):
        raise VerifyError(f"--tf1-python {tf1_python!r}: not an executable file")
    if prelude and not os.path.isfile(prelude):
        raise VerifyError(f"--prelude {prelude}: no such file")
    _run(REFERENCE, cfg, not tf1_python, "legacy (TF1)" if tf1_python else "legacy (TF2 compat.v1 graph)",
         tf1_python, produces=[os.path.join(work, "reference.npz"), os.path.join(work, "reference.json")])
    _run(MIGRATED, cfg, False, "migrated (TF2 eager)",
         produces=[os.path.join(work, "migrated.npz"), os.path.join(work, "migrated.json")])
    ref = np.load(os.path.join(work, "reference.npz"))
    new = np.load(os.path.join(work, "migrated.npz"))
    ref_meta = json.load(open(os.path.join(work, "reference.json")))
    new_meta = json.load(open(os.path.join(work, "migrated.json")))

    load = new_meta["load"]
    variables = {"legacy": len(ref_meta["variables"]), "migrated": len(new_meta["variables"]),
                 "matched": len(load["matched"]), "missing": load["missing"],
                 "unexpected": load["unexpected"], "mismatched": load["mismatched"]}
    variables["ok"] = (variables["legacy"] == variables["migrated"] == variables["matched"]
                       and not (load["missing"] or load["unexpected"] or load["mismatched"]))
    outputs = []
    for i in range(ref_meta["outputs"]):
        item = {"name": f"output{i}"}
        for mode in ("eager", "traced"):
            key = f"{mode}{i}"
            got = new[key] if key in new.files else None
            d = _diff(ref[f"out{i}"], got) if got is not None else {"max_abs": float("inf"), "max_rel": float("inf")}
            d["ok"] = _close(ref[f"out{i}"], got, rtol, atol)
            item[mode] = d
        outputs.append(item)
    reg = {"legacy": ref_meta["regularization"], "migrated": new_meta["regularization"]}
    reg["ok"] = abs(reg["legacy"] - reg["migrated"]) <= atol + rtol * abs(reg["legacy"])
    gradients = []
    if grads:
        ref_grads = {k[5:]: ref[k] for k in ref.files if k.startswith("grad:")}
        new_grads = {k[5:]: new[k] for k in new.files if k.startswith("grad:")}
        for name in sorted(set(ref_grads) | set(new_grads)):
            if name not in ref_grads or name not in new_grads:
                gradients.append({"name": name, "ok": False,
                                  "problem": "no gradient in " + ("migrated" if name in ref_grads else "legacy")})
                continue
            d = _diff(ref_grads[name], new_grads[name])
            d.update(name=name, ok=_close(ref_grads[name], new_grads[name], rtol, atol))
            gradients.append(d)
    ok = variables["ok"] and all(o["eager"]["ok"] and o["traced"]["ok"] for o in outputs) \
        and reg["ok"] and all(g["ok"] for g in gradients)
    return {"ok": ok, "legacy": legacy, "migrated": migrated, "tf1_real": bool(tf1_python),
            "variables": variables,
            "outputs": outputs, "regularization": reg, "gradients": gradients,
            "rtol": rtol, "atol": atol, "workdir": work,
            "checkpoints": {"tf1": os.path.join(work, "tf1", "model"), "tf2": os.path.join(work, "tf2", "model")}}


def _close(a, b, rtol, atol) -> bool:
    import numpy as np

    if b is None:
        return False
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.allclose(a.astype(np.float64), b.astype(np.float64),
                                                   rtol=rtol, atol=atol))
