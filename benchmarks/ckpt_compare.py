"""tf-migrate ckpt compare on a generated ~1 GB checkpoint pair.

    python benchmarks/ckpt_compare.py [--total-mb 1024] [--tensor-mb 64] [--dir DIR]
    python benchmarks/ckpt_compare.py --small 10000

--small N writes N small variables (16 floats each) instead, and compares
`ckpt compare` with TensorFlow's own reader loading every tensor of both.

Writes a TF1 name-based checkpoint (tf.compat.v1 Saver) and a TF2 object-based one
(tf.train.Checkpoint of shim-style paths) holding the same values, then measures:
reading both checkpoints' files raw (page-cached, 16 MB reads), and
`tf-migrate ckpt compare OLD NEW` (wall time, peak RSS of the process tree).
Both are medians of three runs. Targets: compare within 2x of the raw read; peak RSS <= 2x the largest tensor + 300 MB.
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

MAKE = r"""
import os, sys
import numpy as np
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
v1 = tf.compat.v1
out, total_mb, tensor_mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
small = int(sys.argv[4])
rng = np.random.default_rng(0)
if small:
    values = {f"encoder/layer_{i}/dense/kernel": rng.standard_normal((4, 4), dtype=np.float32)
              for i in range(small)}
else:
    count = max(1, total_mb // tensor_mb)
    rows = tensor_mb * 2**20 // 4 // 1024
    values = {f"encoder/layer_{i}/dense/kernel": rng.standard_normal((rows, 1024), dtype=np.float32)
              for i in range(count)}
with tf.Graph().as_default():
    variables = {k: v1.Variable(v, name=k.replace("/", "_")) for k, v in values.items()}
    saver = v1.train.Saver(var_list=variables)
    with v1.Session() as s:
        s.run(v1.global_variables_initializer())
        saver.save(s, os.path.join(out, "tf1", "model"), write_meta_graph=False)
class Store(tf.Module):
    pass
store = Store()
store._vars = {k: tf.Variable(v) for k, v in values.items()}
holder = tf.Module()
holder._tf1_style_var_store = store
tf.train.Checkpoint(model=holder).write(os.path.join(out, "tf2", "model"))
"""


def raw_read(folder):
    total = 0
    start = time.perf_counter()
    for root, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(root, name), "rb") as handle:
                while True:
                    chunk = handle.read(16 << 20)
                    if not chunk:
                        break
                    total += len(chunk)
    return time.perf_counter() - start, total


TF_READ = r"""
import os, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
start = time.perf_counter()
for side in ("tf1", "tf2"):
    reader = tf.train.load_checkpoint(os.path.join(sys.argv[1], side, "model"))
    for key in reader.get_variable_to_shape_map():
        reader.get_tensor(key)
print(time.perf_counter() - start)
"""


def _tf_read_all(work, env):
    """Seconds TensorFlow's reader takes to load every tensor of both checkpoints
    (TensorFlow's import not included)."""
    done = subprocess.run([sys.executable, "-c", TF_READ, work], env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stderr[-2000:])
    return float(done.stdout.split()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--total-mb", type=int, default=1024)
    parser.add_argument("--tensor-mb", type=int, default=64)
    parser.add_argument("--dir")
    parser.add_argument("--small", type=int, default=0, help="N small variables instead")
    args = parser.parse_args()
    work = args.dir or tempfile.mkdtemp(prefix="tfm-ckpt-bench-")
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    made = subprocess.run([sys.executable, "-c", MAKE, work, str(args.total_mb), str(args.tensor_mb),
                           str(args.small)],
                          env=env, capture_output=True, text=True)
    if made.returncode:
        sys.exit(made.stderr[-2000:])
    raw_read(work)  # warm the page cache, as the compare will find it
    reads = [raw_read(work) for _ in range(3)]
    raw_seconds, raw_bytes = sorted(reads)[1]
    exe = shutil.which("tf-migrate") or os.path.join(os.path.dirname(sys.executable), "tf-migrate")
    runs = [run_sampled([exe, "ckpt", "compare", os.path.join(work, "tf1", "model"),
                         os.path.join(work, "tf2", "model"), "--format", "json"], env) for _ in range(3)]
    seconds, peak, rc, out, err = sorted(runs, key=lambda r: r[0])[1]  # the median run
    start = sorted(run_sampled([exe, "--version"], env)[0] for _ in range(3))[1]
    if args.small:
        tf_seconds = sorted(_tf_read_all(work, env) for _ in range(3))[1]
        print(f"checkpoint pair: {args.small} variables of 16 floats each\n")
        print("| measure | value |")
        print("|---|---:|")
        print(f"| TensorFlow's reader: open both, get every tensor | {tf_seconds:.2f} s |")
        print(f"| `ckpt compare` (exit {rc}), median of 3, CRC32C of every tensor | {seconds:.2f} s |")
        print(f"| of which process start-up | {start:.2f} s |")
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
        return
    tensor = args.tensor_mb * 2**20
    print(f"checkpoint pair: {raw_bytes / 2**30:.2f} GiB on disk, largest tensor {args.tensor_mb} MB\n")
    print("| measure | value | target |")
    print("|---|---:|---|")
    print(f"| raw read of both checkpoints | {raw_seconds:.2f} s | |")
    print(f"| `ckpt compare` (exit {rc}), median of 3 | {seconds:.2f} s ({seconds / raw_seconds:.2f}x raw) | <= 2x raw |")
    print(f"| of which process start-up | {start:.2f} s | |")
    print(f"| `ckpt compare` peak RSS | {peak / 2**20:.0f} MB | <= {(2 * tensor + 300 * 2**20) / 2**20:.0f} MB |")
    if rc != 0:
        print(err[-2000:])
    if not args.dir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
