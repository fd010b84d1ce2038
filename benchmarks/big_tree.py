"""Peak memory and time of `tf-migrate upgrade` over a very large tree.

    python benchmarks/big_tree.py CORPUS... [--files 100000] [--jobs 2] [--write]

Builds a tree of --files Python files by hard-linking the corpus folders' .py files again
and again into numbered copies (no disk cost; each copy is a distinct path), then runs
`tf-migrate upgrade TREE --no-cache --no-diff` (text report to /dev/null), and with
--write `--outtree`, sampling the whole process tree's resident memory (the parent and
its workers) every 20 ms. Prints files, wall time and peak RSS. Nothing here is a test:
results go into docs/benchmarks.md.
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rss import run_sampled  # noqa: E402  (this folder's sampler)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sources(folders):
    found = []
    for folder in folders:
        for base, dirs, files in os.walk(folder):
            dirs.sort()
            found += [os.path.join(base, f) for f in sorted(files) if f.endswith(".py")]
    if not found:
        raise SystemExit("big_tree: no .py files in the corpus folders")
    return found


def build(tree, files, count):
    made, copy = 0, 0
    while made < count:
        for path in files:
            if made == count:
                break
            dst = os.path.join(tree, f"copy{copy:04d}", f"{made:06d}_{os.path.basename(path)}")
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            os.link(path, dst)
            made += 1
        copy += 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="+")
    parser.add_argument("--files", type=int, default=100000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--write", action="store_true", help="also --outtree (writes every file)")
    args = parser.parse_args(argv)
    work = tempfile.mkdtemp(prefix="tfm-big-", dir=os.path.dirname(os.path.abspath(args.corpus[0])))
    try:
        tree = os.path.join(work, "tree")
        build(tree, sources(args.corpus), args.files)
        env = dict(os.environ, PYTHONPATH=ROOT)
        base = [sys.executable, "-m", "migrate", "upgrade", tree, "--no-cache", "--jobs", str(args.jobs)]
        runs = [("upgrade --no-diff", base + ["--no-diff"])]
        if args.write:
            runs.append(("upgrade --outtree", base + ["--outtree", os.path.join(work, "out")]))
        print("| run | files | wall | peak RSS (process tree) |\n|---|---:|---:|---:|")
        for label, command in runs:
            seconds, peak, code, _, err = run_sampled(command, env)
            if code not in (0, 1):
                raise SystemExit(f"big_tree: {label} exited {code}: {err.strip().splitlines()[-1:]}")
            print(f"| {label} | {args.files:,} | {seconds:.0f} s | {peak / 2**20:.0f} MB |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
