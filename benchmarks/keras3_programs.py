"""Every TF1 program we test, migrated for Keras 3 (``upgrade --keras 3``), against real TF 1.15.

    python benchmarks/keras3_programs.py [--tf1-python PATH] [NAME ...]

Every model sample (``samples/*/sample.json``) through ``tf-migrate verify`` (outputs,
gradients, variables and regularization loss from TF 1.15's checkpoint); then for each
program of ``samples/programs/*/legacy.py`` and the program suite ``tests/programs/*.py``: ``tf-migrate upgrade --keras 3 --outtree``, then
``tf-migrate verify --program`` (original on TF 1.15, migrated on TF 2.21 from the same
initial values), and a plain run of the migrated program that reports whether tf_keras
was imported or ``TF_USE_LEGACY_KERAS`` set. Prints one row per program and a summary;
the README's Keras 3 table comes from here. Nothing here is a test.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = """
import atexit, os, runpy, sys
atexit.register(lambda: print("KERAS3_CHECK", "tf_keras" in sys.modules,
                              os.environ.get("TF_USE_LEGACY_KERAS")))  # tf.app.run exits
sys.path.insert(0, os.path.dirname(os.environ["SOURCE"]))
os.makedirs(os.environ["MODEL_DIR"], exist_ok=True)
sys.argv = [os.environ["SOURCE"], os.environ["MODEL_DIR"]]
runpy.run_path(os.environ["SOURCE"], run_name="__main__")
"""


def programs(names):
    found = []
    samples = os.path.join(ROOT, "samples", "programs")
    for name in sorted(os.listdir(samples)):
        if os.path.isfile(os.path.join(samples, name, "legacy.py")):
            found.append((name, os.path.join(samples, name, "legacy.py")))
    suite = os.path.join(ROOT, "tests", "programs")
    for name in sorted(os.listdir(suite)):
        if name.endswith(".py"):
            found.append((name[:-3], os.path.join(suite, name)))
    return [p for p in found if not names or p[0] in names]


def tool(*args):
    exe = os.path.join(os.path.dirname(sys.executable), "tf-migrate")
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=1800)


def one(name, legacy, tf1_python, work):
    out = os.path.join(work, name)
    up = tool("upgrade", legacy, "--outtree", out, "--keras", "3", "--no-cache")
    migrated = os.path.join(out, os.path.basename(legacy))
    if up.returncode not in (0, 1) or not os.path.exists(migrated):
        return {"name": name, "upgrade": up.returncode, "ok": False, "why": up.stderr.strip()[-300:]}
    errors = [l for l in up.stdout.splitlines() if "[*]" not in l and ": TFM" in l]
    proc = tool("verify", legacy, migrated, "--program", "--tf1-python", tf1_python,
                "--program-arg", "{out}", "--format", "json")
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        return {"name": name, "ok": False, "left": errors, "why": (proc.stderr or proc.stdout)[-400:]}
    env = dict(os.environ, SOURCE=migrated, MODEL_DIR=os.path.join(work, name + "_plain"),
               TF_CPP_MIN_LOG_LEVEL="3")
    env.pop("TF_USE_LEGACY_KERAS", None)
    plain = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True, text=True,
                           timeout=1800)
    line = [l for l in plain.stdout.splitlines() if l.startswith("KERAS3_CHECK")]
    clean = line == ["KERAS3_CHECK False None"]
    why = report.get("first_difference") or (plain.stderr[-300:] if not line else "")
    if not why and not clean:
        why = "equal to TF 1.15, but the process imported tf_keras" if "True" in line[0] \
            else "equal to TF 1.15, but TF_USE_LEGACY_KERAS was set"
    return {"name": name, "ok": bool(report.get("ok")) and clean, "verify": bool(report.get("ok")),
            "keras3_only": clean, "left": errors, "why": why}


def sample(name, folder, tf1_python, work):
    """A model sample (samples/<name>/sample.json): verify's outputs, gradients, variables and
    regularization loss from TF 1.15's checkpoint, migrated for Keras 3."""
    spec = json.load(open(os.path.join(folder, "sample.json")))
    out = os.path.join(work, "sample_" + name)
    tool("upgrade", os.path.join(folder, "legacy.py"), "--outtree", out, "--keras", "3", "--no-cache")
    args = ["verify", f"{folder}/legacy.py:{spec['entry']}", f"{out}/legacy.py:{spec['entry']}",
            "--grads", "--format", "json", "--workdir", os.path.join(work, "verify_" + name),
            "--tf1-python", tf1_python]
    for text in spec["inputs"]:
        args += ["--input", text]
    proc = tool(*args)
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        return {"name": name, "ok": False, "why": (proc.stderr or proc.stdout)[-300:]}
    bad = [f"{key}: {report[key]}" for key in ("variables", "outputs", "regularization", "gradients")
           if isinstance(report.get(key), dict) and report[key].get("ok") is False]
    return {"name": name, "ok": bool(report.get("ok")), "why": "" if report.get("ok") else "; ".join(bad)[:300]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tf1-python")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    tf1_python = args.tf1_python
    if not tf1_python:
        sys.path.insert(0, os.path.join(ROOT, "tests"))
        import tf1_oracle

        tf1_python = tf1_oracle.interpreter()
    rows, samples_rows = [], []
    with tempfile.TemporaryDirectory() as work:
        samples = os.path.join(ROOT, "samples")
        for name in sorted(os.listdir(samples)):
            folder = os.path.join(samples, name)
            if os.path.isfile(os.path.join(folder, "sample.json")) and (not args.names or name in args.names):
                row = sample(name, folder, tf1_python, work)
                samples_rows.append(row)
                print(f"{'ok  ' if row['ok'] else 'FAIL'} sample {name}"
                      + ("" if row["ok"] else f"  {row['why']}"), flush=True)
        for name, legacy in programs(args.names):
            row = one(name, legacy, tf1_python, work)
            rows.append(row)
            print(f"{'ok  ' if row['ok'] else 'FAIL'} {name}"
                  + ("" if row["ok"] else f"  {row.get('why')!s:.300}  left={row.get('left')}"), flush=True)
    print(f"{sum(r['ok'] for r in samples_rows)} of {len(samples_rows)} model samples and "
          f"{sum(r['ok'] for r in rows)} of {len(rows)} programs equal to TF 1.15 under Keras 3 "
          "(programs: with no tf_keras in the process)")


if __name__ == "__main__":
    main()
