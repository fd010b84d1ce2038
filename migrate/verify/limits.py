"""One side of a verify run as a child process with a time and a memory limit.

Each side (the legacy and the migrated code) runs in its own Python. It may loop
forever, allocate more memory than the machine has, exit early (``sys.exit(3)``,
``os._exit(0)``) or be killed; each of these is reported as what it is, naming the
side, never blamed on the other side.
"""
from __future__ import annotations

import dataclasses
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Dict, List, Optional

DEFAULT_MEMORY_SHARE = 0.75  # of the machine's memory, per side, unless --memory says


class LimitError(Exception):
    """Raised by :func:`parse_memory` for a malformed size."""


def parse_memory(text: str) -> int:
    """``8G``, ``512M``, ``1.5GB``, ``2000000000`` -> bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text or "", re.I)
    if not match:
        raise LimitError(f"--memory {text!r}: give a size such as 8G or 512M")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[match.group(2).upper()]
    value = int(float(match.group(1)) * scale)
    if value < 64 << 20:
        raise LimitError(f"--memory {text!r}: at least 64M (TensorFlow alone needs more)")
    return value


def default_memory() -> Optional[int]:
    """Three quarters of the machine's memory (None where it cannot be read)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(int(line.split()[1]) * 1024 * DEFAULT_MEMORY_SHARE)
    except (OSError, ValueError, IndexError):
        pass
    return None


def human(size: int) -> str:
    for unit, scale in (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}B"
    return f"{size} B"


def _rss(pid: int) -> int:
    """Resident memory of ``pid`` and its children, in bytes (Linux /proc)."""
    total = 0
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
            pids += [int(p) for p in handle.read().split()]
    except (OSError, ValueError):
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/statm", encoding="ascii") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    return total


@dataclass(frozen=True)
class Limits:
    """What one verify may take: seconds of wall time for all its runs together (from
    :meth:`started` on), bytes of resident memory per run."""
    timeout: float = 1800.0
    memory: Optional[int] = None
    deadline: Optional[float] = None  # time.monotonic() at which the whole verify stops

    def started(self) -> "Limits":
        return dataclasses.replace(self, deadline=time.monotonic() + self.timeout)

    def left(self) -> float:
        """Seconds the next run may take."""
        if self.deadline is None:
            return self.timeout
        return max(0.0, self.deadline - time.monotonic())


@dataclass
class Outcome:
    """How a run ended. What it printed is in files (``stdout_path``, ``stderr_path``),
    read when asked for: a program printing a million lines is never held in a pipe."""
    returncode: int
    stdout_path: str
    stderr_path: str
    peak_memory: int = 0
    over_memory: bool = False
    timed_out: bool = False

    @property
    def stdout(self) -> str:
        return _read(self.stdout_path)

    @property
    def stderr(self) -> str:
        return _read(self.stderr_path)

    def why(self, timeout: float, memory: Optional[int]) -> Optional[str]:
        """What ended the run, when it was not a clean exit 0 or a traceback."""
        if self.timed_out:
            return f"took longer than {timeout:g} s (--timeout); stopped (the limit bounds the whole verify)"
        if self.over_memory:
            return (f"used more than {human(memory or 0)} of memory (--memory); stopped")
        if self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = f"signal {-self.returncode}"
            return f"was killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
        return None


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        return handle.read()


def run(command: List[str], env: Dict[str, str], cwd: Optional[str], timeout: float,
        memory: Optional[int], folder: str) -> Outcome:
    """Run ``command`` to its end, its time limited to ``timeout`` seconds and its
    resident memory (with its children's) to ``memory`` bytes: past either it is killed
    and the outcome says which limit. What it prints goes to ``folder``/stdout.txt and
    stderr.txt as it is printed. The run ends when the command's process ends: its whole
    process group (a data loader, a TensorBoard it started) is killed then, so children
    that outlive it neither extend the run nor hold anything open."""
    out_path, err_path = os.path.join(folder, "stdout.txt"), os.path.join(folder, "stderr.txt")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err, start_new_session=True)
    state = {"peak": 0, "over": False}
    done = threading.Event()

    def watch() -> None:
        while not done.wait(0.2):
            used = _rss(proc.pid)
            state["peak"] = max(state["peak"], used)
            if memory and used > memory:
                state["over"] = True
                _kill(proc)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        done.set()
        _kill(proc)  # the command, if still running, and whatever it left behind
        proc.wait()
        _gone(proc.pid)
        watcher.join()
    return Outcome(proc.returncode, out_path, err_path, state["peak"], state["over"], timed_out)


def _gone(group: int, within: float = 5.0) -> None:
    """Wait (at most ``within`` seconds) until no process of ``group`` is left."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.killpg(group, 0)
        except OSError:
            return
        time.sleep(0.05)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        try:
            proc.kill()
        except OSError:
            pass
