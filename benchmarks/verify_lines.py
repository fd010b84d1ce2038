"""How verify --program's comparison of printed lines scales (no TensorFlow run).

    python benchmarks/verify_lines.py [--lines 100000 1000000] [--repeats 3]

For each size, writes what two runs of a training loop would print (``step N loss X``, a
line per step) to files, then times reading both (``lines.read_lines`` +
``stdout_records``) and comparing them (``lines.compare``), median of the repeats, in two
cases: equal outputs, and a migrated run that printed a block of 1% extra lines in the
middle (the alignment's slow path). Peak RSS is this process's after the largest size.
"""
import argparse
import os
import resource
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from migrate.verify.program import lines as lines_lib  # noqa: E402


def write(path: str, count: int, extra: int = 0) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for step in range(count):
            if extra and step == count // 2:
                handle.writelines(f"evaluation {k} accuracy {k / extra:.4f}\n" for k in range(extra))
            handle.write(f"step {step} loss {1.0 / (step + 1):.8f}\n")


def once(want: str, got: str):
    start = time.perf_counter()
    a = lines_lib.stdout_records(lines_lib.read_lines(want))
    b = lines_lib.stdout_records(lines_lib.read_lines(got))
    read = time.perf_counter() - start
    stream = lines_lib.compare("printed", a, b, 1e-5, 1e-5)
    return read, time.perf_counter() - start - read, stream


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, nargs="+", default=[100000, 1000000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print("| printed lines | case | read both | compare | total | compared | extra |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for count in args.lines:
            want = os.path.join(folder, "tf1.txt")
            write(want, count)
            for case, extra in (("equal", 0), ("1% extra lines in the middle", count // 100)):
                got = os.path.join(folder, "migrated.txt")
                write(got, count, extra)
                runs = [once(want, got) for _ in range(args.repeats)]
                read = statistics.median(r[0] for r in runs)
                compare = statistics.median(r[1] for r in runs)
                stream = runs[-1][2]
                print(f"| {count:,} | {case} | {read:.2f} s | {compare:.2f} s | {read + compare:.2f} s "
                      f"| {stream.compared:,} | {stream.extra_count:,} |")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
