"""Migrated programs against real TensorFlow 1.15: per-step time, start-up and memory.

    python benchmarks/tf1_step.py [--repeats 3] [--tf1-python PATH] [--no-suite]
                                  [--suite-only NAME ...]

For every program in ``benchmarks/programs/`` (a text CNN, a character LSTM, an Estimator
trainer; the first two are Session loops TFM501 converts to GraphProgram) and in the
real-TF1-oracle program suite ``tests/programs/`` (ten Session programs in the forms real
projects use, each converted to eager TF2; shims default only): migrate it with
``tf-migrate upgrade --outtree``, then ``tf-migrate verify --program`` runs the original on
TF 1.15 and the migrated program on TF 2.21 and times every ``Session.run`` /
``GraphProgram.run`` / Estimator step (median), and reports each run's peak resident
memory (``ru_maxrss`` of the program's process). Each program is measured as the migrated
code runs by default (``import shims`` keeps TF 1.15's CPU kernels) and with TensorFlow's
own default (``TF_ENABLE_ONEDNN_OPTS=1``), so the README shows both. Start-up: the median
wall time and peak RSS of ``import tensorflow`` (TF 1.15 and TF 2.21) and ``import shims``
(TF 2.21), each in a fresh process. Nothing here is a test: results go into the README.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS = os.path.join(HERE, "programs")
SUITE = os.path.join(ROOT, "tests", "programs")
ARGS = {"estimator_mlp.py": ["--program-arg", "{out}"]}
SUITE_ARGS = ["--program-arg", "{out}"]
IMPORT = ("import resource, time; t = time.time(); import {module}; "
          "print(time.time() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")


def tf1_python(given):
    if given:
        return given
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import tf1_oracle

    return tf1_oracle.interpreter()


def env(**extra):
    out = {k: v for k, v in os.environ.items() if k not in ("TF_ENABLE_ONEDNN_OPTS", "TF2_BEHAVIOR")}
    out.update(TF_CPP_MIN_LOG_LEVEL="3", **extra)
    return out


def startup(python, module, repeats, environ):
    times, rss = [], []
    for _ in range(repeats):
        done = subprocess.run([python, "-c", IMPORT.format(module=module)], capture_output=True,
                              text=True, env=environ, check=True)
        seconds, kb = done.stdout.split()[-2:]
        times.append(float(seconds))
        rss.append(int(kb) / 1024)
    return statistics.median(times), max(rss)


def verify(tf1, program, migrated, onednn, repeats, args=None):
    ratios, tf1_ms, new_ms, tf1_mb, new_mb = [], [], [], [], []
    for _ in range(repeats):
        extra = {"TF_ENABLE_ONEDNN_OPTS": "1"} if onednn else {}
        done = subprocess.run([sys.executable, "-m", "migrate", "verify", "--program", program, migrated,
                               "--tf1-python", tf1, "--format", "json", "--rtol", "1e-4", "--atol", "1e-4",
                               *(ARGS.get(os.path.basename(program), []) if args is None else args)],
                              capture_output=True, text=True, env=env(**extra), cwd=ROOT)
        report = json.loads(done.stdout)
        timing = report["timing"]
        tf1_ms.append(timing["tf1"][0]["median_ms"])
        new_ms.append(timing["migrated"]["median_ms"])
        ratios.append(timing["ratio"])
        tf1_mb.append(timing["tf1"][0].get("peak_mb") or 0)
        new_mb.append(timing["migrated"].get("peak_mb") or 0)
    return {"tf1_ms": statistics.median(tf1_ms), "migrated_ms": statistics.median(new_ms),
            "ratio": statistics.median(ratios), "equivalent": report["ok"],
            "tf1_mb": max(tf1_mb), "migrated_mb": max(new_mb)}


def suite(tf1, work, repeats, only=None):
    """The oracle suite's programs (or the ones named): step time and peak memory, shims default."""
    out = os.path.join(work, "suite")
    subprocess.run([sys.executable, "-m", "migrate", "upgrade", SUITE, "--outtree", out],
                   capture_output=True, text=True, cwd=ROOT)
    print("| suite program | TF 1.15 step | migrated step | ratio | equal | TF 1.15 peak RSS | migrated peak RSS |")
    print("|---|---:|---:|---:|---|---:|---:|")
    ratios = []
    for name in sorted(os.listdir(SUITE)):
        if not name.endswith(".py") or (only and name not in only):
            continue
        row = verify(tf1, os.path.join(SUITE, name), os.path.join(out, name), False, repeats, SUITE_ARGS)
        ratios.append(row["ratio"])
        print(f"| {name} | {row['tf1_ms']:.3g} ms | {row['migrated_ms']:.3g} ms | {row['ratio']:.2f}x "
              f"| {'yes' if row['equivalent'] else 'no'} | {row['tf1_mb']:.0f} MB | {row['migrated_mb']:.0f} MB |",
              flush=True)
    print(f"suite: worst step ratio {max(ratios):.2f}x, median {statistics.median(ratios):.2f}x")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tf1-python")
    parser.add_argument("--no-suite", action="store_true", help="only benchmarks/programs")
    parser.add_argument("--suite-only", nargs="+", metavar="NAME",
                        help="only these programs of the suite (file names), nothing else")
    args = parser.parse_args(argv)
    tf1 = tf1_python(args.tf1_python)
    work = tempfile.mkdtemp(prefix="tfm-bench-")
    if args.suite_only:
        names = {os.path.basename(n) for n in args.suite_only}  # a path names its file
        unknown = sorted(names - set(os.listdir(SUITE)))
        if unknown:
            print(f"tf1_step: not a program of {SUITE}: {', '.join(unknown)}", file=sys.stderr)
            return 2
        suite(tf1, work, args.repeats, names)
        return 0
    out = os.path.join(work, "migrated")
    subprocess.run([sys.executable, "-m", "migrate", "upgrade", PROGRAMS, "--outtree", out],
                   capture_output=True, text=True, cwd=ROOT)
    rows = []
    for name in sorted(os.listdir(PROGRAMS)):
        if not name.endswith(".py"):
            continue
        program, migrated = os.path.join(PROGRAMS, name), os.path.join(out, name)
        shims_default = verify(tf1, program, migrated, False, args.repeats)
        tf_default = verify(tf1, program, migrated, True, args.repeats)
        rows.append((name, shims_default, tf_default))
        print(f"| {name} | {shims_default['tf1_ms']:.3g} ms | {shims_default['migrated_ms']:.3g} ms "
              f"| {shims_default['ratio']:.2f}x | {'yes' if shims_default['equivalent'] else 'no'} "
              f"| {tf_default['migrated_ms']:.3g} ms ({tf_default['ratio']:.2f}x) "
              f"| {'yes' if tf_default['equivalent'] else 'no'} |", flush=True)
    if not args.no_suite:
        suite(tf1, work, args.repeats)
    tf1_import = startup(tf1, "tensorflow", args.repeats, env())
    tf2_import = startup(sys.executable, "tensorflow", args.repeats, env())
    shims_import = startup(sys.executable, "shims", args.repeats, env())
    print(f"| import tensorflow (TF 1.15) | {tf1_import[0]:.2f} s | {tf1_import[1]:.0f} MB |")
    print(f"| import tensorflow (TF 2.21) | {tf2_import[0]:.2f} s | {tf2_import[1]:.0f} MB |")
    print(f"| import shims (TF 2.21) | {shims_import[0]:.2f} s | {shims_import[1]:.0f} MB |")
    print(f"shims over tensorflow: {shims_import[0] - tf2_import[0]:+.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
