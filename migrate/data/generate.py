"""Regenerate ``tf_upgrade_v2.json`` from TensorFlow's own upgrade tables.

    python -m migrate.data.generate          # rewrite the data file
    python -m migrate.data.generate --check  # exit 1 if the file is stale

Reads the installed ``tensorflow/tools/compatibility`` (renames_v2,
all_renames_v2, reorders_v2 and TFAPIChangeSpec of tf_upgrade_v2), the signatures of the
installed TensorFlow 2 and those of real TensorFlow 1.15 ($TF1_PYTHON, or the interpreter
the test suite builds). Nothing in
the data file is typed by hand; our deliberate overrides live in the rules
(see ``OWNED_BY_RULES``) and are recorded here only as a list.

Imports inside functions: tensorflow, only when the tables are regenerated.
"""
from __future__ import annotations

import ast
import functools
import glob
import importlib
import inspect
import json
import os
import subprocess
import sys
import types
from typing import Dict, List

from migrate.data.numpy_tables import numpy_removed

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "tf_upgrade_v2.json")
# handled by our own rules, never by the generic rename pass. "tf.keras.": the tables target
# TF 2.0-era Keras and are wrong under Keras 3 (tf.keras.optimizers.Adam ->
# optimizers.legacy.Adam, initializers -> compat.v1, track_tf1_style_variables -> compat.v1).
OWNED_BY_RULES = ("tf.layers.", "tf.contrib.", "tf.enable_eager_execution", "tf.summary.", "tf.keras.",
                  "tf.estimator.", "tf.train.SessionRunHook", "tf.train.LoggingTensorHook",
                  "tf.train.StopAtStepHook", "tf.train.SessionRunArgs", "tf.train.SessionRunContext",
                  "tf.train.SessionRunValues", "tf.train.CheckpointSaverHook", "tf.train.NanTensorHook",
                  "tf.train.NanLossDuringTrainingError", "tf.train.Server")


def _tf2_object(tf, name):
    """The TF2 object a TF1 name still resolves to, else None."""
    if not name.startswith("tf."):
        return None
    obj = tf
    for part in name.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except Exception:
            return None
    return obj


def _tf2_keywords(tf, name, keywords):
    """Which of these keywords the TF2 function of that name still accepts."""

    obj = _tf2_object(tf, name)
    try:
        params = inspect.signature(obj).parameters if obj is not None else {}
    except (TypeError, ValueError):
        return sorted(keywords)  # unknown: treat as ambiguous
    return sorted(k for k in keywords if k in params)


def _module_renames(tf):
    found = {}
    for name in dir(tf.compat.v1):
        if name.startswith("_") or hasattr(tf, name) or name in ("keras", "estimator", "contrib"):
            continue
        if isinstance(getattr(tf.compat.v1, name, None), types.ModuleType):
            found[f"tf.{name}"] = f"tf.compat.v1.{name}"
    return dict(sorted(found.items()))


def _v2_name(name):
    return "tf." + name[len("tf.compat.v2."):] if name.startswith("tf.compat.v2.") else name


def _transform(value):
    if not isinstance(value, functools.partial):
        return {"function": value.__name__}
    keywords = dict(value.keywords)
    constant = keywords.pop("arg_value_ast", None)  # _add_argument_transformer's value
    if isinstance(constant, ast.Constant):
        keywords["arg_value"] = constant.value
    elif constant is not None:
        return None
    if not all(isinstance(v, (str, bool, int, type(None))) for v in keywords.values()):
        return None
    return {"function": value.func.__name__, **keywords}


def _text(value):
    return value[1] if isinstance(value, tuple) else str(value)


def _serious(value):  # INFO-level notes are not findings
    return not (isinstance(value, tuple) and value[0] == "INFO")


def build() -> dict:
    """Reads the tables of the installed TensorFlow, configured as users get it by default
    (Keras 3 behind tf.keras): which TF1 names are still valid TF2 depends on that."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if "tensorflow" not in sys.modules:
        os.environ.pop("TF_USE_LEGACY_KERAS", None)
    elif os.environ.get("TF_USE_LEGACY_KERAS"):
        raise RuntimeError("run the generator in a fresh process without TF_USE_LEGACY_KERAS")
    import tensorflow as tf
    from tensorflow.tools.compatibility import tf_upgrade_v2

    spec = tf_upgrade_v2.TFAPIChangeSpec()
    namespace: dict = {}
    exec(SIGNATURE_LINE, namespace)  # the same code TF1_SCRIPT runs on TF 1.15

    def tf2_object(name):
        return _tf2_object(tf, name)

    def signature(name):
        return namespace["signature_line"](tf2_object(name))

    def tf2_keywords(name, keywords):
        return _tf2_keywords(tf, name, keywords)

    tf1_names = sorted({k for k in (*spec.symbol_renames, *spec.function_reorders,
                                    *spec.function_keyword_renames, *spec.function_transformers,
                                    *spec.function_warnings)
                        if k.startswith("tf.") and not k.startswith("tf.compat.")})
    tf2_names = sorted({_v2_name(spec.symbol_renames.get(k, k)) for k in tf1_names})
    tf1 = tf1_signatures(tf1_names)
    return {
        # how each TF1 name binds its arguments (its tf.compat.v1 function in TF 2.21, which
        # keeps TF 1.15's signature) and how each rewrite target binds them: every rewritten
        # call is checked against the target's real signature
        "tf1_signatures": tf1,
        # functions tf_upgrade_v2 rewrites with a custom transform (tf.nn.erosion2d,
        # tf.image.extract_glimpse, ...) whose tf.compat.v1 function in TF 2.21 has TF 1.15's
        # signature: TF1 code calling them keeps TF1's arguments and ops there
        "compat_v1_keeps": sorted(
            k for k in spec.function_transformers
            if k.startswith("tf.") and k not in spec.symbol_renames and not k.startswith(OWNED_BY_RULES)
            and k in tf1 and signature("tf.compat.v1." + k[len("tf."):]) == tf1[k]),
        "tf2_signatures": {k: sig for k in tf2_names if (sig := signature(k)) is not None},
        # TF 2.21's own function of a TF1 name that is valid TF2 too (tf.zeros_initializer is
        # TF2's Zeros, which takes no dtype): a call binding only TF1's way is TF1 code
        "tf2_same_name_signatures": {k: sig for k in sorted(spec.symbol_renames)
                                     if k.startswith("tf.") and tf2_object(k) is not None
                                     and (sig := signature(k)) is not None},
        **_keras_initializers(tf2_object, signature),
        # tf_upgrade_v2's custom transforms that are data (a transform function and its
        # constant arguments), recorded by name: the rules that carry them out cite them
        "transforms": {k: _transform(v) for k, v in sorted(spec.function_transformers.items())
                       if k.startswith("tf.") and _transform(v) is not None},
        "generated_from": f"tensorflow {tf.__version__} tools/compatibility",
        "owned_by_rules": list(OWNED_BY_RULES),
        "symbol_renames": dict(sorted(spec.symbol_renames.items())),
        # TF1 modules gone from TF2's top level but still in tf.compat.v1 (tf.flags,
        # tf.logging, tf.app, tf.gfile, ...): read from TensorFlow itself, never typed
        "module_renames": _module_renames(tf),
        "keyword_renames": {k: dict(sorted(v.items())) for k, v in sorted(spec.function_keyword_renames.items())},
        "reorders": dict(sorted((k, list(v)) for k, v in spec.function_reorders.items())),
        "function_warnings": {k: _text(v) for k, v in sorted(spec.function_warnings.items())
                              if k.startswith("tf.") and _serious(v)},
        "arg_warnings": {k: {a: _text(m) for (a, _pos), m in sorted(v.items(), key=lambda i: str(i[0]))
                             if _serious(m)}
                         for k, v in sorted(spec.function_arg_warnings.items()) if k.startswith("tf.")},
        "transformed": sorted(k for k in spec.function_transformers if k.startswith("tf.")),
        # TF1 names that are valid TF2 too (same spelling, possibly another meaning): the rules
        # change them only in files that use TF1-only APIs
        "tf2_symbols": sorted(k for k in spec.symbol_renames if tf2_object(k) is not None),
        # public names of the TF2 modules contrib parts moved into (tf.contrib.eager.X -> tf.X,
        # tf.contrib.distribute.X -> tf.distribute.X, ...): a move is made only to a name listed
        "tf2_modules": {m: sorted(n for n in dir(tf if m == "tf" else tf2_object(m))
                                  if not n.startswith("_"))
                        for m in ("tf", "tf.distribute", "tf.random", "tf.keras")},
        "tf2_keywords": {k: tf2_keywords(k, v) for k, v in sorted(spec.function_keyword_renames.items())
                         if tf2_keywords(k, v)},
        **_private(tf, tf2_object), **numpy_removed(tf1_python()),
        "missing_in_tf2": _missing_in_tf2(tf, set(spec.symbol_renames.values())),
    }


# runs on real TF 1.15 (Python 3.7): each name's signature as TF1 binds it, in the format of
# build()'s signature(). TF 2.21's tf.compat.v1 is not TF1 here: its keras is Keras 3, and
# ops gained parameters since (gather_nd's bad_indices_policy, ...).
# a callable's parameters as TensorFlow binds them, as one line: "x" (required), "x=" (has a
# default), "*" before keyword-only ones, "*args", "**kwargs"; raw ops (TensorFlow's
# ``kwarg_only`` wrapper) take keywords only, whatever their signature shows; None when it
# is not an inspectable callable. Python 3.7 too: it runs on TF 1.15 and on TF 2.21.
SIGNATURE_LINE = r"""
def signature_line(obj):
    import inspect
    if obj is None or not callable(obj):
        return None
    try:
        params = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return None
    decorator = getattr(obj, "_tf_decorator", None)
    keyword_only = getattr(decorator, "decorator_name", None) == "kwarg_only"
    out, star = [], False
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            out.append("*" + p.name)
            star = True
            continue
        if p.kind is p.VAR_KEYWORD:
            out.append("**" + p.name)
            continue
        if (p.kind is p.KEYWORD_ONLY or keyword_only) and not star:
            out.append("*")
            star = True
        out.append(p.name + ("=" if p.default is not p.empty else ""))
    return ", ".join(out)
"""
# runs on real TF 1.15 (Python 3.7): each TF1 name's signature. TF 2.21's tf.compat.v1 is not
# TF1 here: its keras is Keras 3, and ops gained parameters since (gather_nd's
# bad_indices_policy, ...).
TF1_SCRIPT = SIGNATURE_LINE + r"""
import json, sys
import tensorflow as tf
out = {}
for name in json.load(sys.stdin):
    obj = tf
    try:
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
    except AttributeError:
        continue
    line = signature_line(obj)
    if line is not None:
        out[name] = line
print(json.dumps(out, sort_keys=True))
"""


# runs on real TF 1.15: where each public TF1 object is defined (its private path, such as
# tensorflow_estimator.python.estimator.tpu.tpu_estimator.TPUEstimator) -> its shortest
# public name, and every module of TF 1.15's private trees (tensorflow.python.*,
# tensorflow_estimator.python.*), listed from the installed files without importing them.
TF1_PRIVATE_SCRIPT = r"""
import json, os, sys, types
import tensorflow as tf
import tensorflow_estimator

paths, seen = {}, set()


def walk(module, public, depth):
    if id(module) in seen or depth > 6:
        return
    seen.add(id(module))
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        try:
            obj = getattr(module, name)
        except Exception:
            continue
        here = public + "." + name
        if isinstance(obj, types.ModuleType):
            if not here.startswith(("tf.compat", "tf.contrib", "tf.keras")) and \
                    getattr(obj, "__name__", "").startswith("tensorflow"):
                walk(obj, here, depth + 1)
            continue
        where, own = getattr(obj, "__module__", None), getattr(obj, "__name__", None)
        if not isinstance(where, str) or not isinstance(own, str):
            continue
        where = where.replace("tensorflow_core.", "tensorflow.", 1)
        if where.startswith(("tensorflow.python.", "tensorflow_estimator.python.")):
            key = where + "." + own
            if key not in paths or (len(here), here) < (len(paths[key]), paths[key]):
                paths[key] = here


walk(tf, "tf", 0)
# the same objects where private modules re-export them (model_fn.ModeKeys is
# mode_keys.EstimatorModeKeys): every loaded private module's attributes
public = {}
for key, here in paths.items():
    where, _, own = key.rpartition(".")
    module = sys.modules.get(where) or sys.modules.get(where.replace("tensorflow.", "tensorflow_core.", 1))
    obj = getattr(module, own, None) if module is not None else None
    if obj is not None:
        public[id(obj)] = here
for name, module in sorted(sys.modules.items()):
    name = name.replace("tensorflow_core.", "tensorflow.", 1)
    if not name.startswith(("tensorflow.python.", "tensorflow_estimator.python.")) or module is None:
        continue
    for attr, obj in sorted(vars(module).items()):
        here = public.get(id(obj))
        key = name + "." + attr
        if here is not None and not attr.startswith("_") and key not in paths:
            paths[key] = here
modules = []
for package, root in (("tensorflow", os.path.dirname(tf.python.__file__)),
                      ("tensorflow_estimator", os.path.join(os.path.dirname(tensorflow_estimator.__file__), "python"))):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if os.path.exists(os.path.join(folder, d, "__init__.py")))
        rel = os.path.relpath(folder, os.path.dirname(root)).replace(os.sep, ".")
        modules.append(package + "." + rel)
        modules += [package + "." + rel + "." + f[:-3] for f in sorted(files)
                    if f.endswith(".py") and f != "__init__.py"]
print(json.dumps({"paths": paths, "modules": sorted(modules)}, sort_keys=True))
"""
# runs on real TF 1.15: each tf.keras.initializers name whose object is (or subclasses) a
# class of init_ops -> that class's public core names (zeros_initializer first, then
# initializers.zeros) and the keyword defaults the Keras object changes (repr, as code)
TF1_KERAS_INITIALIZERS_SCRIPT = r"""
import inspect, json
import tensorflow as tf
from tensorflow.python.ops import init_ops
from tensorflow.python.util import tf_export


def defaults(obj):
    params = inspect.signature(obj).parameters.values()
    return {p.name: p.default for p in params if p.default is not p.empty}


def code(value):
    if isinstance(value, tf.DType):
        return "tf." + value.name
    return repr(value)


out = {}
for name in sorted(dir(tf.keras.initializers)):
    obj = getattr(tf.keras.initializers, name)
    if name.startswith("_") or not inspect.isclass(obj):
        continue
    base = next((b for b in obj.__mro__ if b.__module__ == init_ops.__name__), None)
    if base is None or base is init_ops.Initializer:
        continue
    core = [n for n in tf_export.get_v1_names(base) if not n.startswith("keras.")]
    core.sort(key=lambda n: (n.startswith("initializers."), n))
    mine, theirs = defaults(obj), defaults(base)
    changed = {k: code(v) for k, v in sorted(mine.items()) if k not in theirs or theirs[k] != v}
    out["tf.keras.initializers." + name] = {"core": core, "defaults": changed}
print(json.dumps(out, sort_keys=True))
"""
# private TF1 modules whose members TF 2.21 renamed -> the shims module holding them under
# their TF1 names, as code spells it and as the file that lists them (its literal __all__);
# which members move is read from both sides, never listed
PRIVATE_SHIMS = {"tensorflow.python.util.nest": ["contrib.framework.nest", "contrib._nest"]}


def tf1_python() -> str:
    """A Python with TensorFlow 1.15: $TF1_PYTHON, else the one the test suite builds
    (tests/tf1_oracle.py, cached under ~/.cache/tf-migrate)."""
    given = os.environ.get("TF1_PYTHON")
    if given:
        return given

    cache = os.environ.get("TF_MIGRATE_TF1_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tf-migrate")
    found = sorted(glob.glob(os.path.join(cache, "tf1-venv-*", "bin", "python")))
    if not found:
        raise SystemExit("generate: needs TensorFlow 1.15 for the TF1 signatures: set TF1_PYTHON, "
                         "or run the test suite once (it builds one)")
    return found[-1]


def tf1_signatures(names) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("TF2_BEHAVIOR", "TF_USE_LEGACY_KERAS")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    proc = subprocess.run([tf1_python(), "-c", TF1_SCRIPT], input=json.dumps(list(names)),
                          capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise SystemExit("generate: the TF 1.15 run failed: " + proc.stderr.strip().splitlines()[-1])
    return json.loads(proc.stdout)


def tf1_private() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("TF2_BEHAVIOR", "TF_USE_LEGACY_KERAS")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    proc = subprocess.run([tf1_python(), "-c", TF1_PRIVATE_SCRIPT], capture_output=True, text=True,
                          env=env, timeout=600)
    if proc.returncode != 0:
        raise SystemExit("generate: the TF 1.15 run failed: " + proc.stderr.strip().splitlines()[-1])
    return json.loads(proc.stdout)


def _tf2_has_module(tf, module: str) -> bool:
    """Is ``module`` (tensorflow.python.x.y) a module of the installed TensorFlow? Read
    from its files: importing every private module would run their side effects."""
    if not module.startswith("tensorflow."):
        return False  # tensorflow_estimator: gone with TF 2.16
    base = os.path.join(os.path.dirname(tf.__file__), *module.split(".")[1:])
    return os.path.isdir(base) or os.path.exists(base + ".py") or bool(glob.glob(base + ".*.so"))


def _tf2_has(tf, path: str) -> bool:
    """Does ``module.member`` still resolve in the installed TensorFlow?"""
    module, _, member = path.rpartition(".")
    if not _tf2_has_module(tf, module):
        return False
    try:
        return hasattr(importlib.import_module(module), member)
    except Exception:
        return False


def _private(tf, tf2_object) -> dict:
    """TF1's private paths that fail on TF 2.21, with where their object lives now."""
    found = tf1_private()
    names = {}
    for path, public in sorted(found["paths"].items()):
        if _tf2_has(tf, path):
            continue
        if public.startswith("tf.estimator."):
            names[path] = public  # TFM110 moves it to shims.estimator
        elif tf2_object(public) is not None:
            names[path] = public
        elif tf2_object("tf.compat.v1." + public[3:]) is not None:
            names[path] = "tf.compat.v1." + public[3:]
    public_of: Dict[str, Dict[str, str]] = {}
    for path, public in sorted(found["paths"].items()):
        if path.startswith("tensorflow.python.") and public.startswith("tf.") \
                and not public.startswith(("tf.estimator.", "tf.keras.", "tf.contrib.", "tf.compat.")):
            module, _, member = path.rpartition(".")
            public_of.setdefault(module, {})[member] = public
    return {
        # a private TF1 path (where a public object was defined) that TF 2.21 lacks -> its
        # public TF2 spelling (or its tf.estimator name, for TFM110)
        "private_names": names,
        # every TF1 object's private path (module -> member -> its public TF1 name): what
        # ``from tensorflow.python.framework import ops; ops.reset_default_graph()`` calls
        "private_public": public_of,
        # modules of TF 1.15's private trees that TF 2.21 has not: importing them fails
        "private_modules_gone": [m for m in found["modules"] if not _tf2_has_module(tf, m)],
        # the members TF 2.21 still has in the private modules shims keeps TF1's names of
        "private_members": {m: sorted(n for n in dir(importlib.import_module(m)) if not n.startswith("_"))
                            for m in sorted(PRIVATE_SHIMS)},
        "private_shims": PRIVATE_SHIMS,
    }


def _keras_initializers(tf2_object, signature) -> dict:
    """TF 1.15's tf.keras.initializers are TF1's init_ops classes (or subclasses that only
    change defaults: RandomNormal's stddev 0.05): each with the tf.compat.v1 initializer that
    keeps its TF1 signature, dtype and random ops, and the defaults to pass explicitly."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF2_BEHAVIOR", "TF_USE_LEGACY_KERAS")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    proc = subprocess.run([tf1_python(), "-c", TF1_KERAS_INITIALIZERS_SCRIPT], capture_output=True,
                          text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise SystemExit("generate: the TF 1.15 run failed: " + proc.stderr.strip().splitlines()[-1])
    found = {}
    for name, entry in sorted(json.loads(proc.stdout).items()):
        core = next((c for c in entry["core"] if tf2_object("tf.compat.v1." + c) is not None), None)
        if core is None:
            continue
        found[name] = {"target": "tf.compat.v1." + core, "defaults": entry["defaults"],
                       "tf2": signature(name)}
    return {"keras_initializers": found}


def _missing_in_tf2(tf, targets) -> List[str]:
    """The ``tf.`` names among ``targets`` (rename targets) that resolve neither here
    (Keras 3) nor with tf_keras (``tf.compat.v1.keras...``, the TF1 RNN cells), asked of
    a fresh process with ``TF_USE_LEGACY_KERAS=1`` (:func:`resolvable`): tf_upgrade_v2's
    tables are older than TF 2.21 (tf.data.experimental.StatsAggregator, ...), and the
    rules never rewrite to these."""
    here = sorted(t for t in targets if t.startswith("tf.") and _tf2_object(tf, t) is None)
    env = dict(os.environ, TF_USE_LEGACY_KERAS="1", TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([sys.executable, "-m", "migrate.data.generate", "--resolvable"],
                          input=json.dumps(here), capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise SystemExit("generate: the tf_keras run failed: " + proc.stderr.strip().splitlines()[-1])
    legacy = set(json.loads(proc.stdout))
    return [t for t in here if t not in legacy]


def resolvable(names: List[str]) -> List[str]:
    """Which of ``names`` this process's TensorFlow resolves (run with tf_keras selected)."""
    import tensorflow as tf

    return [n for n in names if _tf2_object(tf, n) is not None]


def render(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--resolvable" in argv:  # names on stdin (JSON): those TensorFlow resolves, on stdout
        print(json.dumps(resolvable(json.load(sys.stdin))))
        return 0
    fresh = render(build())
    if "--check" in argv:
        with open(TARGET, encoding="utf-8") as handle:
            stale = handle.read() != fresh
        print("stale: run python -m migrate.data.generate" if stale else "up to date")
        return 1 if stale else 0
    with open(TARGET, "w", encoding="utf-8") as handle:
        handle.write(fresh)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
