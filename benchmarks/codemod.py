"""tf-migrate upgrade vs tf_upgrade_v2 on one corpus: files/s, lines/s, peak RSS.

    python benchmarks/codemod.py [CORPUS] [--jobs N]
    python benchmarks/codemod.py --pypi tensor2tensor==1.15.7 stable-baselines==2.10.2 [--jobs N]

CORPUS defaults to the Python sources of the installed tf_keras package; --pypi builds
the corpus from packages' own files (`pip download --no-deps`, unpacked side by side,
never installed; see pypi_corpus.py): the TF1 corpus of the README. Runs, in
one process tree each: tf-migrate cold (--no-cache), tf-migrate warm (cache
filled by a previous run), and tf_upgrade_v2's own upgrader over every file
(`tf_upgrade_v2 --intree` stops at the first file it crashes on, so
tf_upgrade_v2_loop.py calls it file by file and counts the crashes; its
TensorFlow import is not timed, ours start-up is); also times `tf-migrate --version`. Peak RSS is the sum over the whole process tree (workers
included), sampled every 20 ms. Prints a Markdown table for the README.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rss import run_sampled  # noqa: E402


def default_corpus() -> str:
    import importlib.util

    spec = importlib.util.find_spec("tf_keras")
    if spec is None:
        sys.exit("tf_keras is not installed: pass a corpus folder")
    return os.path.dirname(spec.origin)


def pypi_corpus(specs) -> str:
    """A folder holding each package's Python files (``pip download --no-deps``)."""
    from pypi_corpus import fetch, unpack

    root = tempfile.mkdtemp(prefix="tfm-corpus-")
    for spec in specs:
        name = spec.split("=")[0].strip()
        archive = fetch(spec, os.path.join(root, ".download", name))
        unpack(archive, os.path.join(root, name))
    shutil.rmtree(os.path.join(root, ".download"))
    return root


def count(corpus):
    files = lines = 0
    for folder, _, names in os.walk(corpus):
        for name in names:
            if name.endswith(".py"):
                files += 1
                with open(os.path.join(folder, name), "rb") as handle:
                    lines += handle.read().count(b"\n")
    return files, lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", nargs="?")
    parser.add_argument("--jobs", type=int, default=0)
    parser.add_argument("--pypi", nargs="+", metavar="SPEC", help="pip specs to download as the corpus")
    args = parser.parse_args()
    corpus = args.corpus or (pypi_corpus(args.pypi) if args.pypi else default_corpus())
    files, lines = count(corpus)
    bindir = os.path.dirname(sys.executable)
    tfm = shutil.which("tf-migrate") or os.path.join(bindir, "tf-migrate")
    upgrade_v2 = shutil.which("tf_upgrade_v2") or os.path.join(bindir, "tf_upgrade_v2")
    work = tempfile.mkdtemp(prefix="tfm-bench-")
    cache = os.path.join(work, "cache")
    env = dict(os.environ, TF_MIGRATE_CACHE_DIR=cache, TF_CPP_MIN_LOG_LEVEL="3")
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    rows = []

    def out(name):
        path = os.path.join(work, name)
        shutil.rmtree(path, ignore_errors=True)
        return path

    t, rss, rc, _, _ = run_sampled([tfm, "upgrade", corpus, "--outtree", out("cold"), "--no-cache", *jobs], env)
    rows.append(("tf-migrate upgrade (cold)", t, rss, rc))
    run_sampled([tfm, "upgrade", corpus, "--outtree", out("fill"), *jobs], env)  # fill the cache
    t, rss, rc, _, _ = run_sampled([tfm, "upgrade", corpus, "--outtree", out("warm"), *jobs], env)
    rows.append(("tf-migrate upgrade (warm cache)", t, rss, rc))
    if os.path.exists(upgrade_v2):
        # `tf_upgrade_v2 --intree` stops at the first file it crashes on, so drive its own
        # upgrader file by file in one process (its TensorFlow import is not timed)
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_upgrade_v2_loop.py")
        result = os.path.join(work, "v2.json")
        t, rss, rc, _, err = run_sampled([sys.executable, script, corpus, out("v2"), result], env)
        import json

        stats = json.load(open(result))
        rows.append((f"tf_upgrade_v2, file by file ({stats['crashed']} files crashed)",
                     stats["seconds"], rss, rc))
    versions = []
    for _ in range(10):
        start = time.perf_counter()
        subprocess.run([tfm, "--version"], capture_output=True, env=env)
        versions.append(time.perf_counter() - start)

    label = " + ".join(args.pypi) if args.pypi and not args.corpus else corpus
    print(f"corpus: {label} ({files} files, {lines:,} lines), {os.cpu_count()} cores\n")
    print("| run | seconds | files/s | lines/s | peak RSS (MB) | exit |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, t, rss, rc in rows:
        print(f"| {name} | {t:.2f} | {files / t:.0f} | {lines / t:,.0f} | {rss / 2**20:.0f} | {rc} |")
    base = next((t for n, t, _, _ in rows if n.startswith("tf_upgrade_v2")), None)
    print(f"\n{os.cpu_count()} cores; tf-migrate uses all of them, tf_upgrade_v2 one")
    if base:
        cold = rows[0][1]
        warm = rows[1][1]
        print(f"\nspeed-up over tf_upgrade_v2: cold {base / cold:.1f}x, warm {base / warm:.1f}x")
    print(f"`tf-migrate --version`: median {sorted(versions)[len(versions) // 2]:.3f} s")
    shutil.rmtree(work, ignore_errors=True)
    if args.pypi and not args.corpus:
        shutil.rmtree(corpus, ignore_errors=True)


if __name__ == "__main__":
    main()
