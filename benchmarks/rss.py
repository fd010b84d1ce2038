"""Peak resident memory of a process tree, sampled from /proc (Linux)."""
import os
import subprocess
import threading
import time


def _children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as handle:
                out += [int(c) for c in handle.read().split()]
    except OSError:
        pass
    return out


def _rss(pid):
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class TreeSampler:
    """Sum of VmRSS over a process and all its descendants; keeps the peak."""

    def __init__(self, pid, interval=0.02):
        self.pid, self.interval = pid, interval
        self.peak = 0
        self.stop = False

    def sample(self):
        total, todo, seen = 0, [self.pid], set()
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            total += _rss(pid)
            todo += _children(pid)
        self.peak = max(self.peak, total)

    def run(self):
        while not self.stop:
            self.sample()
            time.sleep(self.interval)


def run_sampled(command, env=None):
    """Run ``command``; return (seconds, peak tree RSS in bytes, exit code, stdout, stderr)."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    sampler = TreeSampler(proc.pid)
    thread = threading.Thread(target=sampler.run, daemon=True)
    thread.start()
    out, err = proc.communicate()
    sampler.stop = True
    thread.join()
    return (time.perf_counter() - start, sampler.peak, proc.returncode,
            out.decode(errors="replace"), err.decode(errors="replace"))
