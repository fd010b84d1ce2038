"""What the codemod produces for a corpus, as one JSON digest: for every file, the hash
of the migrated text (or null) and its findings. Two digests made before and after an
engine change must be equal: speed work changes no result.

    python benchmarks/results_digest.py OUT.json PATH... [-j N]
    python benchmarks/results_digest.py --compare A.json B.json

PATH: folders or files (.py, .ipynb); tests/fixtures, samples/ and the PyPI corpora
(see pypi_corpus.py) are the ones the README reports on. Runs in-process workers with
every rule, no cache.
"""
import argparse
import hashlib
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def one(path: str):
    from migrate.codemod.registry import select_codes
    from migrate.codemod.runner import process

    with open(path, "rb") as handle:
        raw = handle.read()
    result = process(path, raw, tuple(select_codes()), True)
    new = result["new"]
    return path, {"new": hashlib.sha256(new).hexdigest() if new is not None else None,
                  "findings": [[f.line, f.column, f.code, f.message] for f in result["findings"]],
                  "names": result["names"], "error": result["error"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", nargs="?")
    parser.add_argument("paths", nargs="*")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--compare", nargs=2)
    args = parser.parse_args()
    if args.compare:
        a, b = (json.load(open(p)) for p in args.compare)
        differ = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        for key in differ[:20]:
            print(f"DIFFERENT {key}\n  {a.get(key)}\n  {b.get(key)}")
        print(f"{len(a)} files, {len(differ)} different")
        sys.exit(1 if differ else 0)
    from migrate.codemod.files import discover

    files, _ = discover(args.paths)
    with ProcessPoolExecutor(args.jobs) as pool:
        digest = dict(pool.map(one, files, chunksize=8))
    with open(args.out, "w") as handle:
        json.dump(digest, handle, indent=0, sort_keys=True)
    print(f"{len(digest)} files, {sum(v['new'] is not None for v in digest.values())} changed, "
          f"{sum(len(v['findings']) for v in digest.values())} findings")


if __name__ == "__main__":
    main()
