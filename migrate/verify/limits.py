"""One side of a verify run as a child process with a time and a memory limit.

Each side (the legacy and the migrated code) runs in its own Python. It may loop
forever, allocate more memory than the machine has, exit early (``sys.exit(3)``,
``os._exit(0)``) or be killed; each of these is reported as what it is, naming the
side, never blamed on the other side.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
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
    """What one side may take: seconds of wall time, bytes of resident memory."""
    timeout: float = 1800.0
    memory: Optional[int] = None


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    peak_memory: int = 0
    over_memory: bool = False
    timed_out: bool = False

    def why(self, timeout: float, memory: Optional[int]) -> Optional[str]:
        """What ended the run, when it was not a clean exit 0 or a traceback."""
        if self.timed_out:
            return f"took longer than {timeout:g} s (--timeout); stopped"
        if self.over_memory:
            return (f"used more than {human(memory or 0)} of memory (--memory); stopped")
        if self.returncode < 0:
            try:
                name = signal.Signals(-self.returncode).name
            except ValueError:
                name = f"signal {-self.returncode}"
            return f"was killed by {name}" + (" (out of memory?)" if name == "SIGKILL" else "")
        return None


def run(command: List[str], env: Dict[str, str], cwd: Optional[str], timeout: float,
        memory: Optional[int]) -> Outcome:
    """Run ``command`` to its end, its time limited to ``timeout`` seconds and its
    resident memory (with its children's) to ``memory`` bytes: past either it is killed
    (its whole process group) and the outcome says which limit."""
    proc = subprocess.Popen(command, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            encoding="utf-8", errors="replace", start_new_session=True)
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
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
        stdout, stderr = proc.communicate()
    except BaseException:
        _kill(proc)
        proc.wait()
        raise
    finally:
        done.set()
        watcher.join()
    return Outcome(proc.returncode, stdout or "", stderr or "", state["peak"], state["over"],
                   timed_out)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        try:
            proc.kill()
        except OSError:
            pass
