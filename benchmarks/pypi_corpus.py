"""Migrate real TF1 code from PyPI and import every module, before and after, on TF 2.21.

    python benchmarks/pypi_corpus.py [--packages trfl==1.2.0 ...] [--work DIR] [--deps DIR] [--jobs N]

--deps names a folder of third-party dependencies the packages import (installed there with
`pip install --target DIR --no-deps dm-tree tensorflow-probability tf-slim ...`), put on the
import path of both runs so that missing non-TF dependencies do not hide the TF failures.

For each package: `pip download --no-deps` (read as a corpus, never installed), unpack
its Python files, `tf-migrate upgrade --outtree`, then import every module of the original
and of the migrated tree in a fresh process each (TensorFlow 2.21, default Keras). A
failure counts as TensorFlow-caused when its message names tensorflow/keras or a TF1 API
(`module 'tensorflow' has no attribute ...`, `tensorflow.contrib`, `placeholder() is not
compatible with eager execution`, ...); a missing third-party dependency is counted
apart. Prints a Markdown table and every remaining TensorFlow-caused failure.
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

DEFAULT = ["trfl==1.2.0", "tflearn==0.5.0", "stable-baselines==2.10.2", "dm-sonnet==1.36",
           "tensor2tensor==1.15.7", "magenta==1.3.1"]
TF_CAUSED = re.compile(r"tensorflow|keras|tf\.|placeholder|Session|contrib|estimator|"
                       r"compat\.v1|eager execution|Dimension|'int' object has no attribute 'value'")

IMPORT_ALL = r'''
import importlib, json, sys, traceback
sys.path.insert(0, sys.argv[1])
results = {}
for name in json.loads(sys.argv[2]):
    try:
        importlib.import_module(name)
        results[name] = None
    except BaseException as exc:  # SystemExit from absl flags too
        results[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
print("RESULTS " + json.dumps(results))
'''


def fetch(spec: str, into: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-d", into, spec],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode:
        raise RuntimeError(f"pip download {spec} failed: {proc.stderr.strip().splitlines()[-1]}")
    files = sorted(glob.glob(os.path.join(into, "*")), key=os.path.getmtime)
    return files[-1]


def unpack(archive: str, into: str) -> str:
    os.makedirs(into, exist_ok=True)
    if archive.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as handle:
            for member in handle.namelist():
                if member.endswith(".py") and ".." not in member and not member.startswith("/"):
                    handle.extract(member, into)
    else:
        with tarfile.open(archive) as handle:
            members = [m for m in handle.getmembers() if m.isfile() and m.name.endswith(".py")
                       and ".." not in m.name and not m.name.startswith("/")]
            handle.extractall(into, members=members)
        roots = [os.path.join(into, d) for d in os.listdir(into)]
        if len(roots) == 1 and os.path.isdir(roots[0]):  # sdist: name-version/
            return roots[0]
    return into


def modules(root: str) -> list:
    found = []
    for path in glob.glob(os.path.join(root, "**", "*.py"), recursive=True):
        rel = os.path.relpath(path, root)
        parts = rel[:-3].split(os.sep)
        if parts[0] in ("setup", "tests", "test", "docs", "examples") or "test" in parts[-1]:
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts and all(p.isidentifier() for p in parts):
            found.append(".".join(parts))
    return sorted(set(found))


def import_all(root: str, names: list, deps=None, jobs: int = 1) -> dict:
    # generated *_pb2 modules older than protobuf 4 ("Descriptors cannot be created
    # directly") need the pure-Python protobuf: an environment matter, not TensorFlow's
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore",
               PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION="python")
    if deps:
        env["PYTHONPATH"] = os.path.abspath(deps)
    env.pop("TF_USE_LEGACY_KERAS", None)

    def one(name):  # a fresh process each: one module's side effects cannot hide another's
        proc = subprocess.run([sys.executable, "-c", IMPORT_ALL, root, json.dumps([name])],
                              env=env, capture_output=True, text=True, timeout=600, cwd=root)
        line = [l for l in proc.stdout.splitlines() if l.startswith("RESULTS ")]
        return name, (json.loads(line[-1][8:])[name] if line else
                      f"crashed: {(proc.stderr.strip().splitlines() or ['?'])[-1][:300]}")

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        return dict(pool.map(one, names))


def classify(error) -> str:
    if error is None:
        return "ok"
    if error.startswith("ModuleNotFoundError") and not TF_CAUSED.search(error):
        return "dependency"
    return "tensorflow" if TF_CAUSED.search(error) else "other"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", nargs="*", default=DEFAULT)
    parser.add_argument("--work", default=None)
    parser.add_argument("--deps", default=None, help="folder of third-party dependencies")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="import processes at a time")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="tf-migrate-corpus-")
    exe = shutil.which("tf-migrate") or os.path.join(os.path.dirname(sys.executable), "tf-migrate")
    rows, remaining = [], {}
    for spec in args.packages:
        name = re.split(r"[=<>]", spec)[0]
        base = os.path.join(work, name)
        shutil.rmtree(base, ignore_errors=True)
        try:
            archive = fetch(spec, os.path.join(base, "download"))
        except RuntimeError as exc:
            print(f"skipped {spec}: {exc}")
            continue
        source = unpack(archive, os.path.join(base, "src"))
        migrated = os.path.join(base, "migrated")
        proc = subprocess.run([exe, "upgrade", source, "--outtree", migrated, "--exit-zero",
                               "--format", "json", "--no-cache"], capture_output=True, text=True,
                              timeout=3600)
        summary = json.loads(proc.stdout)["summary"] if proc.stdout.startswith("{") else {}
        names = modules(source)
        before = import_all(source, names, args.deps, args.jobs)
        after = import_all(migrated, names, args.deps, args.jobs)
        counts = collections.Counter(classify(e) for e in after.values())
        rows.append((spec, len(names), sum(e is None for e in before.values()),
                     sum(e is None for e in after.values()), counts["tensorflow"],
                     counts["dependency"], counts["other"], summary.get("errors", "?")))
        remaining[spec] = {n: e for n, e in after.items() if classify(e) == "tensorflow"}
    print("| package | modules | import before | import after | TF-caused failures left | "
          "missing dependencies | other | files tf-migrate refused |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(str(v) for v in row) + " |")
    for spec, failures in remaining.items():
        if failures:
            print(f"\n{spec}: TensorFlow-caused failures after migration")
            for module, error in sorted(failures.items()):
                print(f"- {module}: {error}")
    print(f"\nwork folder: {work}")


if __name__ == "__main__":
    main()
