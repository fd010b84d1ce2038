"""Migrated cluster programs on Ray Train's TensorflowTrainer, against one process (#27).

    python benchmarks/ray_train.py [--workers N] [--keep DIR]

Needs Ray Train (``pip install "ray[train]"``: not a dependency of tf-migrate, and not
installed by the test command). For each TF1 cluster program of ``tests/cluster`` (an
Estimator with ``train_distribute=MultiWorkerMirroredStrategy()``, and a synchronous
``SyncReplicasOptimizer`` script with TF 1.x's cluster flags):

1. ``tf-migrate upgrade`` migrates it;
2. the migrated program runs in one process on the global batch (the reference);
3. a ``TensorflowTrainer`` with N workers runs it: Ray sets ``TF_CONFIG`` (workers only)
   in each worker, and the training function runs the migrated script as its
   ``__main__`` with the arguments a container command would give it (its own
   checkpoint directory per worker);
4. the runs are compared: the workers' losses against the reference's (each worker
   trains on its share of every global batch, so their mean is the reference's loss), the
   chief's last checkpoint against the reference's (every variable), and no other worker
   wrote one.

Ray's workers import TensorFlow before the training function runs, so tf.keras there is
Keras 3 unless the run starts them with ``TF_USE_LEGACY_KERAS=1`` (``runtime_env``), which
a program migrated for Keras 2 (the default) needs; one migrated with ``--keras 3`` does
not. Prints a Markdown table.
"""
import argparse
import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = os.path.join(ROOT, "tests", "cluster")
STEPS = 40  # the Estimator's max_steps
TOLERANCE = 1e-5


def _port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


# what each program is given: in one process (the reference), and by a Ray worker of rank r
PROGRAMS = {
    "estimator_multiworker.py": dict(
        reference=lambda out: [os.path.join(out, "reference"), str(STEPS)],
        worker=lambda out, rank: [os.path.join(out, "dir%d" % rank), str(STEPS)]),
    "sync_replicas.py": dict(
        reference=lambda out: ["--train_dir=" + os.path.join(out, "reference"),
                               "--worker_hosts=localhost:%d" % _port(), "--ps_hosts=localhost:%d" % _port(),
                               "--job_name=worker", "--task_index=0"],
        worker=lambda out, rank: ["--train_dir=" + os.path.join(out, "dir%d" % rank)]),
}


def _env():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    for key in ("TF_CONFIG", "TF_USE_LEGACY_KERAS"):
        env.pop(key, None)
    return env


def migrate(name: str, work: str) -> str:
    out = os.path.join(work, "migrated")
    done = subprocess.run([sys.executable, "-m", "migrate", "upgrade", os.path.join(CLUSTER, name),
                           "--outtree", out, "--no-cache", "--no-diff"],
                          capture_output=True, text=True, env=_env(), timeout=300)
    if done.returncode != 0:
        sys.exit(f"tf-migrate upgrade {name} failed:\n{done.stdout}{done.stderr}")
    return os.path.join(out, name)


def train_func(config):  # pragma: no cover - runs in Ray's worker processes
    """Runs the migrated script as ``__main__`` with this worker's arguments; its output
    (descriptors 1 and 2, TensorFlow's C++ logs too) goes to ``worker<rank>.log``."""
    import runpy

    import ray.train

    rank = ray.train.get_context().get_world_rank()
    argv = PROGRAMS[os.path.basename(config["program"])]["worker"](config["out"], rank)
    with open(os.path.join(config["out"], "worker%d.log" % rank), "w") as log:
        sys.stdout.flush(), sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
        os.dup2(log.fileno(), 1), os.dup2(log.fileno(), 2)
        try:
            sys.argv = [config["program"], *argv]
            runpy.run_path(config["program"], run_name="__main__")
        except SystemExit as stop:  # tf.app.run / absl end with sys.exit
            if stop.code not in (0, None):
                raise RuntimeError(f"worker {rank} exited with {stop.code}") from None
        finally:
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)


def on_ray(program: str, out: str, workers: int) -> float:
    """Seconds the trainer took; raises what a worker raised."""
    from ray.train import RunConfig, ScalingConfig
    from ray.train.tensorflow import TensorflowTrainer

    trainer = TensorflowTrainer(
        train_func, train_loop_config={"program": program, "out": out},
        scaling_config=ScalingConfig(num_workers=workers, use_gpu=False, resources_per_worker={"CPU": 1}),
        run_config=RunConfig(storage_path=os.path.join(out, "ray"), name="run"))
    start = time.perf_counter()
    result = trainer.fit()
    if result.error:
        raise result.error
    return time.perf_counter() - start


def losses(text: str) -> np.ndarray:
    """The sync script's LOSSES line, or the Estimator's logged losses."""
    line = [l for l in text.splitlines() if l.startswith("LOSSES ")]
    if line:
        return np.array([float(v) for v in line[-1].split()[1:]])
    return np.array([float(v) for v in re.findall(r"loss = ([-0-9.e]+), step", text)])


def checkpoint(directory: str) -> dict:
    import tensorflow as tf

    if not os.path.isdir(directory) or tf.train.latest_checkpoint(directory) is None:
        return {}
    reader = tf.train.load_checkpoint(directory)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def compare(name: str, out: str, workers: int, reference_log: str) -> tuple:
    """(max loss difference, max checkpoint difference, workers with a checkpoint of their own)."""
    want = losses(reference_log)
    runs = [losses(open(os.path.join(out, "worker%d.log" % r)).read()) for r in range(workers)]
    if not len(want) or any(len(r) != len(want) for r in runs):
        sys.exit(f"{name}: the workers logged {[len(r) for r in runs]} losses, the reference {len(want)}")
    loss_gap = float(np.abs(np.mean(runs, axis=0) - want).max())
    reference, chief = checkpoint(os.path.join(out, "reference")), checkpoint(os.path.join(out, "dir0"))
    if not reference or sorted(chief) != sorted(reference):
        sys.exit(f"{name}: the chief's checkpoint holds {sorted(chief)}, the reference's {sorted(reference)}")
    gap = max(float(np.abs(chief[k] - reference[k]).max()) for k in reference)
    others = [r for r in range(1, workers) if checkpoint(os.path.join(out, "dir%d" % r))]
    return loss_gap, gap, others


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", help="a folder to keep the runs in (default: a temporary one)")
    args = parser.parse_args()
    try:
        import ray
    except ImportError:
        sys.exit('Ray Train is not installed: pip install "ray[train]"')
    work = args.keep or tempfile.mkdtemp(prefix="tfm-ray-")
    os.environ.pop("TF_CONFIG", None)
    # Ray's workers import TensorFlow first: a Keras 2 migration needs tf_keras chosen there
    ray.init(num_cpus=args.workers + 1, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
                                       "PYTHONPATH": os.pathsep.join(filter(None, [
                                           ROOT, os.environ.get("PYTHONPATH")]))}})
    rows = []
    try:
        for name, forms in PROGRAMS.items():
            out = os.path.join(work, name[:-3])
            os.makedirs(out, exist_ok=True)
            program = migrate(name, out)
            start = time.perf_counter()
            reference = subprocess.run([sys.executable, program, *forms["reference"](out)], env=_env(),
                                       capture_output=True, text=True, timeout=600)
            alone = time.perf_counter() - start
            if reference.returncode != 0:
                sys.exit(f"{name}: the one-process run failed:\n{reference.stderr[-3000:]}")
            seconds = on_ray(program, out, args.workers)
            loss_gap, gap, others = compare(name, out, args.workers, reference.stdout + reference.stderr)
            equal = loss_gap <= TOLERANCE and gap <= TOLERANCE and not others
            rows.append(f"| {name} | {args.workers} | {alone:.1f} s | {seconds:.1f} s | {loss_gap:.1e} | "
                        f"{gap:.1e} | {', '.join(map(str, others)) or 'none'} | {'yes' if equal else 'NO'} |")
    finally:
        ray.shutdown()
        if not args.keep:
            with contextlib.suppress(OSError):
                shutil.rmtree(work)
    print(f"Ray {ray.__version__}, TensorflowTrainer, {args.workers} workers on this machine\n")
    print("| program (tests/cluster) | workers | one process | Ray Train | loss gap (mean of workers) "
          "| chief checkpoint gap | other workers' checkpoints | equal |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
