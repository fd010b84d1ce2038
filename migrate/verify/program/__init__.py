"""tf-migrate verify --program: a whole TF1 program against its migration.

The stages, one module each:

1. ``harness``: the code that runs a program inside an interpreter, as ``python FILE
   ARGS...`` would, and records its initial and final variables and step times. The
   legacy side runs in the user's TF 1.x interpreter (``--tf1-python``), or else in TF
   2's ``compat.v1`` graph mode (which is not TF1, and the report says so); the migrated
   side runs on this TF 2 with the default Keras. The first TF1 run saves its initial
   values; the others (``--repeat``, the migrated run) start from them.
2. ``lines``: what both printed, as numbers (timing and paths taken out), aligned line by
   line; TensorFlow's step log lines keyed by step.
3. here: the verdict, with the first difference explained; final variables by TF1 name.
4. ``plot``: the trajectories as a picture.

Both programs are executed: run this only on code you trust.

Imports inside functions: numpy for the variable comparison and the plot module only when --plot is given.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

import migrate.verify.limits as limits
from migrate.verify.limits import Limits
from migrate.verify.models import VerifyError, announce, check_outcome
from migrate.verify.program import lines as lines_lib
from migrate.verify.program.harness import HARNESS

OUT = "{out}"  # in --program-arg: a folder of each run's own


def _locations(legacy: str, migrated: str, cwd: Optional[str],
               migrated_cwd: Optional[str]) -> Tuple[str, str]:
    """The working directories: the legacy program's is ``cwd`` (default: this one when
    the program lies below it, else the program's folder); the migrated program's is
    ``migrated_cwd``, else the same place in the migrated tree (the migrated file's path
    with the legacy file's path below the legacy cwd taken off), else its folder."""
    legacy, migrated = os.path.abspath(legacy), os.path.abspath(migrated)
    if cwd is None:
        here = os.getcwd()
        cwd = here if legacy.startswith(here + os.sep) else os.path.dirname(legacy)
    cwd = os.path.abspath(cwd)
    if migrated_cwd is None:
        rel = os.path.relpath(legacy, cwd)
        if not rel.startswith(".."):
            tail = os.sep + rel
            if migrated.endswith(tail):
                migrated_cwd = migrated[: -len(tail)] or os.sep
        if migrated_cwd is None:
            migrated_cwd = os.path.dirname(migrated)
    for label, folder in (("--cwd", cwd), ("--migrated-cwd", migrated_cwd)):
        if not os.path.isdir(folder):
            raise VerifyError(f"{label} {folder!r}: no such folder")
    return cwd, os.path.abspath(migrated_cwd)


def _pythonpath(env: Dict[str, str], own: str, other: str) -> None:
    """Entries of PYTHONPATH inside the other program's tree point into this one's: the
    legacy and migrated trees never see each other."""
    if not env.get("PYTHONPATH") or own == other:
        return
    parts = []
    for part in env["PYTHONPATH"].split(os.pathsep):
        full = os.path.abspath(part) if part else part
        if full == other or full.startswith(other + os.sep):
            part = own + full[len(other):]
        parts.append(part)
    env["PYTHONPATH"] = os.pathsep.join(parts)


def _interpreter_id(python: str) -> str:
    proc = subprocess.run([python, "-c", "import sys; print(sys.version)"], capture_output=True,
                          text=True, timeout=60)
    return os.path.realpath(python) + " " + proc.stdout.strip()


def _cache_key(python: str, source: str, args: List[str], cwd: str, repeat: int) -> str:
    digest = hashlib.sha256()
    with open(source, "rb") as handle:
        digest.update(handle.read())
    for part in (HARNESS, _interpreter_id(python), json.dumps(args), cwd, str(repeat)):
        digest.update(b"\0" + part.encode())
    return digest.hexdigest()


class _Side:
    """One run: its files under the work folder and its outcome."""

    def __init__(self, work: str, name: str):
        self.name, self.folder = name, os.path.join(work, name)
        os.makedirs(os.path.join(self.folder, "out"), exist_ok=True)
        self.meta: dict = {}

    @property
    def stdout(self) -> str:
        """Where the run's stdout is (a file, read line by line when compared)."""
        return os.path.join(self.folder, "stdout.txt")

    @property
    def stderr(self) -> str:
        return os.path.join(self.folder, "stderr.txt")

    @property
    def final(self) -> str:
        return os.path.join(self.folder, "final.npz")

    def load(self) -> None:
        with open(os.path.join(self.folder, "meta.json")) as handle:
            self.meta = json.load(handle)


_FILES = ("stdout.txt", "stderr.txt", "meta.json", "final.npz")


def _run(side: _Side, python: str, mode: str, source: str, args: List[str], cwd: str,
         env: Dict[str, str], init: str, action: Optional[str], limit: Limits, what: str,
         cache: Optional[str] = None, index: int = 0, nudge: bool = False) -> None:
    cfg = {"mode": mode, "source": source, "init": init, "init_action": action, "nudge": nudge,
           "args": [a.replace(OUT, os.path.join(side.folder, "out")) for a in args],
           "final": side.final, "meta": os.path.join(side.folder, "meta.json")}
    entry = os.path.join(cache, _cache_key(python, source, args, cwd, index)) \
        if cache else None
    if entry and all(os.path.isfile(os.path.join(entry, f)) for f in _FILES) and (
            action != "save" or os.path.isfile(os.path.join(entry, "init.npz"))):
        for name in _FILES:
            shutil.copyfile(os.path.join(entry, name), os.path.join(side.folder, name))
        if action == "save":
            shutil.copyfile(os.path.join(entry, "init.npz"), init)
        side.load()
        side.meta["cached"] = True
        return
    announce(what)
    env = dict(env, TFM_VERIFY_PROGRAM=json.dumps(cfg))
    proc = limits.run([python, "-c", HARNESS], env, cwd, limit.left(), limit.memory, side.folder)
    check_outcome(proc, what, limit.timeout, limit.memory, produces=[cfg["meta"]])
    side.load()
    if entry:
        tmp = entry + f".{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp, mode=0o700)
        for name in _FILES:
            shutil.copyfile(os.path.join(side.folder, name), os.path.join(tmp, name))
        if action == "save" and os.path.isfile(init):
            shutil.copyfile(init, os.path.join(tmp, "init.npz"))
        shutil.rmtree(entry, ignore_errors=True)
        os.replace(tmp, entry)


def _environment(legacy_keras: bool, tf1: bool) -> Dict[str, str]:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL=os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"),
               PYTHONWARNINGS="ignore", PYTHONIOENCODING="utf-8")
    if legacy_keras:
        env["TF_USE_LEGACY_KERAS"] = "1"
    else:
        env.pop("TF_USE_LEGACY_KERAS", None)
    if tf1:  # importing TF 2 sets TF2_BEHAVIOR=1, and TF 1.15 started with it runs eagerly
        env.pop("TF2_BEHAVIOR", None)
    return env


def _arrays(path: str) -> Dict[str, object]:
    import numpy as np

    if not os.path.isfile(path):
        return {}
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


# a native program's optimizer state by TF1's names, but for the variable scope its minimize()
# ran in: beta1_power, and the slots (``eval_net/e1/kernel/Adam``, a kept TF1 optimizer's
# ``eval_net/w1/RMSProp``)
_OPTIMIZER_STATE = re.compile(r"beta[12]_power(_\d+)?|.+/(Adam|Adam_1|Momentum|Adagrad|ProximalAdagrad|RMSProp|RMSProp_1"
                              r"|Adadelta|Adadelta_1|Ftrl|Ftrl_1)")


def _scoped_powers(old: dict, new: dict) -> dict:
    """``new`` with a native program's ``beta1_power`` (Adam's step) and optimizer slots,
    which it has no scope for, named as TF1 named them under the variable scope of its
    ``minimize`` (``train/beta1_power``, ``train/eval_net/e1/kernel/Adam``), where TF1's run
    has exactly one such name for each."""
    renamed = dict(new)
    for power in ("beta1_power", "beta2_power"):  # several Adams, each under its own scope: in order of making
        pattern = re.compile(re.escape(power) + r"(_(\d+))?")
        made = sorted((n for n in new if pattern.fullmatch(n) and n not in old),
                      key=lambda n: int(pattern.fullmatch(n).group(2) or 0))
        scoped = [o for o in old if "/" in o and pattern.fullmatch(o.rsplit("/", 1)[1]) and o not in new]
        if len(made) > 1 and len(made) == len(scoped):
            for name, tf1_name in zip(made, scoped):
                renamed[tf1_name] = renamed.pop(name)
    for name in [n for n in renamed if _OPTIMIZER_STATE.fullmatch(n) and n not in old]:
        scoped = [o for o in old if o.endswith("/" + name) and o not in renamed]
        if len(scoped) == 1:
            renamed[scoped[0]] = renamed.pop(name)
    return renamed


def _not_kept(old: dict, names: List[str]) -> set:
    """TF1's names of optimizer state the migrated optimizer does not keep because no later
    update reads it (RMSProp's momentum slot at momentum 0): named as the harness named them,
    or under the variable scope of TF1's ``minimize``."""
    out = set()
    for name in names:
        out.update(o for o in old if o == name or o.endswith("/" + name) and _OPTIMIZER_STATE.fullmatch(o))
    return out


# a migration equal but for rounding differs from TF1 about as TF1 differs from itself one
# ulp apart: the amplification varies from sample to sample, so a line passes within ten
# times what one nudged run moved
NUDGE_FACTOR = 10.0


def _final_spread(first: dict, others: List[Tuple[dict, float]]) -> dict:
    """Per variable, how far the other TF1 runs' final values strayed from the first's,
    element by element, each run's times its factor (a repeat's 1: TF1's own
    non-determinism; the nudged run's NUDGE_FACTOR: what it carried one ulp to)."""
    import numpy as np

    out = {}
    for name, a in first.items():
        if a.dtype.kind not in "fc":
            continue
        for other, factor in others:
            b = other.get(name)
            if b is not None and b.shape == a.shape:
                with np.errstate(invalid="ignore"):
                    gap = np.nan_to_num(np.abs(a.astype(np.float64) - b.astype(np.float64)), nan=0.0)
                out[name] = np.maximum(out.get(name, 0.0), factor * gap)
    return {name: gap for name, gap in out.items() if np.any(gap)}


def _variables(old: dict, new: dict, rtol: float, atol: float, spread: Optional[dict] = None) -> List[dict]:
    import numpy as np

    new = _scoped_powers(old, new)
    out = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            out.append({"name": name, "ok": False, "missing": "tf1" if a is None else "migrated"})
            continue
        if a.shape != b.shape:
            out.append({"name": name, "ok": False, "shape": [list(a.shape), list(b.shape)]})
            continue
        if a.dtype.kind in "fc" and a.size:
            x, y = a.astype(np.float64), b.astype(np.float64)
            with np.errstate(invalid="ignore"):
                # NaN where TF1 had NaN (a run that diverged on both sides), the same infinity:
                # equal, as printed numbers are
                same = (x == y) | (np.isnan(x) & np.isnan(y))
                diff = np.where(same, 0.0, np.abs(x - y))
                diff = np.where(np.isnan(diff), np.inf, diff)  # NaN on one side only
                slack = (spread or {}).get(name, 0.0)
                passes = same | (diff <= atol + rtol * np.abs(x) + slack)
                rel = np.where(same, 0.0, diff / np.maximum(np.abs(np.nan_to_num(x)), 1e-12))
            worst = int(np.argmax(np.where(passes, -1.0, diff)))
            ok = bool(passes.all())
            out.append({"name": name, "ok": ok, "max_abs": float(diff.max()), "max_rel": float(rel.max()),
                        "tf1_spread": float(np.max(slack)) if np.any(slack) else 0.0,
                        "worst": None if ok else {"index": int(worst), "tf1": float(x.flat[worst]),
                                                  "migrated": float(y.flat[worst])}})
        else:
            out.append({"name": name, "ok": bool(np.array_equal(a, b)), "max_abs": None})
    return out


def _pair_json(pair: lines_lib.Pair) -> dict:
    item = {"line": pair.want.line, "text": pair.want.text, "template": pair.want.template, "ok": pair.ok,
            "tf1": pair.want.numbers, "migrated": pair.got.numbers if pair.got else None,
            "migrated_line": pair.got.line if pair.got else None,
            "max_abs": pair.max_abs, "max_rel": pair.max_rel}
    if pair.want.step is not None:
        item["step"] = pair.want.step
    if pair.problem:
        item["problem"] = pair.problem
    if pair.unstable:
        item["tf1_not_deterministic"] = True
    if pair.first is not None:
        item["first_difference"] = {"position": pair.first.index + 1, "tf1": pair.first.want,
                                    "migrated": pair.first.got, "abs": pair.first.abs,
                                    "rel": pair.first.rel}
    return item


def _kind_json(kind: lines_lib.Kind) -> dict:
    return {"template": kind.template, "lines": kind.lines, "numbers": kind.numbers,
            "different": kind.different, "max_abs": kind.max_abs, "max_rel": kind.max_rel,
            "tf1_not_deterministic": kind.unstable,
            "first_difference": _pair_json(kind.first_different) if kind.first_different else None}


def _timings(tf1_runs, new) -> dict:
    tf1, migrated = [_timing(s.meta) for s in tf1_runs], _timing(new.meta)
    ratio = (migrated["median_ms"] / tf1[0]["median_ms"]
             if tf1[0]["median_ms"] and migrated["median_ms"] is not None else None)
    # the setting the migrated program ran with (`import shims` sets it unless it was set)
    environ = {"TF_ENABLE_ONEDNN_OPTS": new.meta["onednn"]} if new.meta.get("onednn") is not None else None
    return {"tf1": tf1, "migrated": migrated, "ratio": ratio,
            "hint": speed_hint(tf1[0]["median_ms"], migrated["median_ms"], environ)}


SLOWER = 1.10  # past this ratio of step times the report says why and what to try


def speed_hint(tf1_ms: Optional[float], migrated_ms: Optional[float],
               environ: Optional[dict] = None) -> Optional[str]:
    """What to do when the migrated program's median step is more than 10% slower than
    TF 1.15's, else None. TF 2.x's oneDNN kernels (on by default on x86 CPUs) are the
    cause measured here (a text CNN: 40x slower; 2.2x without them); the switch must be
    set before TensorFlow is imported, so it is the user's to set, not the shims'."""
    if not tf1_ms or not migrated_ms or migrated_ms <= SLOWER * tf1_ms:
        return None
    ratio = migrated_ms / tf1_ms
    environ = os.environ if environ is None else environ
    if environ.get("TF_ENABLE_ONEDNN_OPTS") != "0":
        return (f"the migrated program is {ratio:.2g}x slower per step than on TF 1.15; TF 2's "
                "oneDNN CPU kernels are a known cause (convolutions and embeddings): run it with "
                "TF_ENABLE_ONEDNN_OPTS=0 in the environment (read when TensorFlow is imported) "
                "and verify again")
    return (f"the migrated program is {ratio:.2g}x slower per step than on TF 1.15 with oneDNN "
            "off too: look for retracing (TensorFlow warns about it), Python work per step, "
            "or profile a step with tf.profiler.experimental")


def _timing(meta: dict) -> dict:
    runs = meta.get("runs") or []
    return {"calls": len(runs), "median_ms": 1000 * statistics.median(runs) if runs else None,
            "total_s": sum(runs), "startup_s": meta.get("first_run"), "wall_s": meta.get("wall"),
            "peak_mb": meta.get("peak_mb"), "cached": bool(meta.get("cached"))}


def verify_program(legacy: str, migrated: str, args: List[str], rtol: float = 1e-5,
                   atol: float = 1e-5, workdir: Optional[str] = None, timeout: float = 1800,
                   tf1_python: Optional[str] = None, cwd: Optional[str] = None,
                   migrated_cwd: Optional[str] = None, repeat: int = 1,
                   tf1_cache: Optional[str] = None, plot: Optional[str] = None,
                   memory: Optional[int] = None, nudge: bool = False) -> dict:
    for path, label in ((legacy, "LEGACY"), (migrated, "MIGRATED")):
        if not os.path.isfile(path):
            raise VerifyError(f"{label} {path!r}: no such file")
    if tf1_python and not (os.path.isfile(tf1_python) and os.access(tf1_python, os.X_OK)):
        raise VerifyError(f"--tf1-python {tf1_python!r}: not an executable file")
    if repeat < 1:
        raise VerifyError("--repeat must be 1 or more")
    if workdir and os.path.exists(workdir) and not os.path.isdir(workdir):
        raise VerifyError(f"--workdir {workdir!r} exists and is not a directory")
    if plot and os.path.splitext(plot)[1].lower() not in (".svg", ".html", ".htm", ".png"):
        raise VerifyError(f"--plot {plot!r}: the picture is .svg, .html or .png")
    if plot and not os.path.isdir(os.path.dirname(os.path.abspath(plot))):
        raise VerifyError(f"--plot {plot!r}: no such folder")
    legacy, migrated = os.path.abspath(legacy), os.path.abspath(migrated)
    legacy_cwd, new_cwd = _locations(legacy, migrated, cwd, migrated_cwd)
    work = os.path.abspath(workdir) if workdir else tempfile.mkdtemp(prefix="tf-migrate-verify-")
    try:
        os.makedirs(work, exist_ok=True)
        return _verify_in(work, legacy, migrated, args, rtol, atol, Limits(timeout, memory).started(), tf1_python,
                          legacy_cwd, new_cwd, repeat, tf1_cache, plot, nudge)
    finally:
        if not workdir:
            shutil.rmtree(work, ignore_errors=True)


def _verify_in(work, legacy, migrated, args, rtol, atol, limit: Limits, tf1_python, legacy_cwd,
               new_cwd, repeat, tf1_cache, plot, nudge=False) -> dict:
    init = os.path.join(work, "init.npz")
    python1 = tf1_python or sys.executable
    mode1 = "tf1" if tf1_python else "compat"
    env1 = _environment(legacy_keras=not tf1_python, tf1=True)
    _pythonpath(env1, legacy_cwd, new_cwd)
    tf1_runs = []
    for k in range(repeat):
        side = _Side(work, "tf1" if k == 0 else f"tf1-repeat{k}")
        label = "legacy (TF1)" if tf1_python else "legacy (TF2 compat.v1 graph mode)"
        _run(side, python1, mode1, legacy, args, legacy_cwd, env1, init, "save" if k == 0 else "load",
             limit, label + (f" repeat {k}" if k else ""), tf1_cache if tf1_python else None, k)
        tf1_runs.append(side)
    nudged = None
    if nudge:  # how far TF1 itself moves from initial values one ulp apart: its conditioning
        nudged = _Side(work, "tf1-nudged")
        _run(nudged, python1, mode1, legacy, args, legacy_cwd, env1, init, "load", limit,
             label + " from initial values one ulp apart", nudge=True)
    env2 = _environment(legacy_keras=False, tf1=False)
    # TF 2's oneDNN CPU kernels change results (and TF 1.15 has none): off unless the
    # environment asks for them; the report says which it was
    env2.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    _pythonpath(env2, new_cwd, legacy_cwd)
    new = _Side(work, "migrated")
    _run(new, sys.executable, "tf2", migrated, args, new_cwd, env2, init, "load", limit,
         "migrated (TF2)")
    return _report(tf1_runs, new, rtol, atol, bool(tf1_python), plot, legacy, migrated,
                   legacy_cwd, new_cwd, nudged)


def _report(tf1_runs, new, rtol, atol, real_tf1, plot, legacy, migrated, legacy_cwd, new_cwd,
            nudged: Optional[_Side] = None) -> dict:
    first = tf1_runs[0]
    streams, nondeterministic, moved = [], 0, 0
    for name, parse, attr in (("printed", lines_lib.stdout_records, "stdout"),
                              ("logged", lines_lib.log_records, "stderr")):
        runs = [parse(lines_lib.read_lines(getattr(s, attr))) for s in tf1_runs]
        unstable = lines_lib.spreads(runs)
        carried = lines_lib.spreads([runs[0], parse(lines_lib.read_lines(getattr(nudged, attr)))]) \
            if nudged is not None else {}
        if name == "printed":
            nondeterministic, moved = len(unstable), len(carried)
        unstable = lines_lib.widened(unstable, carried, NUDGE_FACTOR)
        got = parse(lines_lib.read_lines(getattr(new, attr)))
        streams.append(lines_lib.compare(name, runs[0], got, rtol, atol, unstable))
        del runs, got  # a stream's records go once it is summed up
    old_final, new_final = _arrays(first.final), _arrays(new.final)
    not_kept = _not_kept(old_final, new.meta.get("not_kept") or [])
    old_final = {name: value for name, value in old_final.items() if name not in not_kept}
    others = [(_arrays(s.final), 1.0) for s in tf1_runs[1:]]
    if nudged is not None:
        others.append((_arrays(nudged.final), NUDGE_FACTOR))
    variables = _variables(old_final, new_final, rtol, atol, _final_spread(old_final, others))
    new_final = _scoped_powers(old_final, new_final)
    init_names = first.meta.get("init_names") or []
    loaded = set(new.meta.get("loaded") or [])
    # a native program's Keras optimizer starts its own state (zeros, TF1's start too) and
    # reports it by TF1's slot names: compared at the end, not loaded at the start (a name
    # of a file's later program is "name (graph 2)")
    bare = {name: re.sub(r" \(graph \d+\)$", "", name) for name in set(init_names) - loaded}
    own_state = {name for name, base in bare.items() if base in new_final and (
        "/" in base or base.startswith(("beta1_power", "beta2_power")))}
    init = {"shared": first.meta.get("init") == "saved" and bool(loaded),
            "tf1_saved": len(init_names), "migrated_loaded": len(loaded),
            "not_used_by_migrated": sorted(set(init_names) - loaded - own_state - not_kept),
            "optimizer_state_started_by_migrated": sorted(own_state),
            "optimizer_state_not_kept": sorted(not_kept),
            "migrated_not_in_tf1": sorted(set(new.meta.get("unloaded") or []))}
    compared = sum(s.compared for s in streams)
    ok = compared > 0 and all(s.ok for s in streams) and all(v["ok"] for v in variables)
    first_bad = next((p for s in streams for p in s.pairs if not p.ok), None)
    report = {
        "ok": ok, "legacy": legacy, "migrated": migrated, "rtol": rtol, "atol": atol,
        "tf1": {"real": real_tf1, "tensorflow": first.meta.get("tf_version"),
                "python": first.meta.get("python"), "cwd": legacy_cwd},
        "migrated_run": {"tensorflow": new.meta.get("tf_version"), "python": new.meta.get("python"),
                         "cwd": new_cwd, "onednn": new.meta.get("onednn") != "0"},
        "streams": {s.name: {"ok": s.ok, "compared": s.compared, "different": s.different,
                             "lines": [_pair_json(p) for p in s.pairs],
                             "lines_left_out": s.compared - len(s.pairs),
                             "kinds": [_kind_json(k) for k in s.kinds.values()],
                             "migrated_only": [{"line": r.line, "text": r.text} for r in s.extra],
                             "migrated_only_count": s.extra_count}
                    for s in streams},
        "variables": variables, "init": init,
        "repeat": {"runs": len(tf1_runs), "tf1_lines_that_differed": nondeterministic,
                   "nudged": nudged is not None, "tf1_lines_moved_by_one_ulp": moved},
        "timing": _timings(tf1_runs, new),
        "first_difference": _pair_json(first_bad) if first_bad else None,
        "compared": compared,
    }
    if plot:
        from migrate.verify.program import plot as plot_lib

        pairs = [(p.want, p.got) for s in streams for p in s.pairs]
        plot_lib.write(plot, plot_lib.series(pairs),
                       f"{os.path.basename(legacy)}: TF1 vs migrated")
        report["plot"] = plot
    return report
