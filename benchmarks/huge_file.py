"""A 50,000-line TF1 file: wall time and peak memory of `upgrade`, with and without
its diff (issue #30: the diff used to cost more than the rewrite).

    python benchmarks/huge_file.py [--lines 50000] [--repeat 3]

Each run is cold (--no-cache); the source is generated here: 10,000 functions, each
with a tf.layers call and a placeholder, so every fifth line changes.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rss import run_sampled  # noqa: E402


def source(lines: int) -> str:
    out = ["import tensorflow as tf", ""]
    for i in range(max(1, lines // 5)):
        out += [f"def f{i}(x):", f"    y = tf.layers.dense(x, {i % 7 + 1}, name='d{i}')",
                f"    z = tf.placeholder(tf.float32, [None, {i % 5 + 1}])",
                "    return y + tf.reduce_sum(z)", ""]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=50000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    exe = shutil.which("tf-migrate") or sys.exit("tf-migrate is not installed")
    folder = tempfile.mkdtemp()
    try:
        path = os.path.join(folder, "big.py")
        with open(path, "w") as handle:
            handle.write(source(args.lines))
        for label, extra in (("upgrade --no-diff", ["--no-diff"]), ("upgrade (with diff)", [])):
            times, peaks = [], []
            for _ in range(args.repeat):
                seconds, peak, *_ = run_sampled([exe, "upgrade", path, "--no-cache", *extra])
                times.append(seconds)
                peaks.append(peak)
            print(f"{label:22s} {args.lines} lines: median {statistics.median(times):6.1f} s "
                  f"(min {min(times):.1f}, max {max(times):.1f}), peak RSS {max(peaks) / 2**30:.2f} GiB")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
