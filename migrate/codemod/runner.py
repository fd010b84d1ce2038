"""Runs the engine over many files: prefilter, content-hash cache, processes.

Workers get (path, bytes) and return plain dicts; only the parent prints and
writes.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import multiprocessing
import pickle
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from multiprocessing.connection import Connection, wait
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from migrate.codemod.cache import Cache
from migrate.codemod.errors import EngineError
from migrate.codemod.files import content_digest, decode, migrate_notebook, migrate_python, notebook_lines
from migrate.codemod.report import Reported
from migrate.codemod.stars import key_material
from migrate.codemod.target import DEFAULT, Target
from migrate.safeio import describe, read_regular

# files mentioning none are never parsed (a star import may bring TensorFlow: TFM113; a
# numpy module may use names numpy removed: TFM122)
PREFILTER = (b"tensorflow", b"keras", b"import *", b"import*", b"numpy")


class FileReport:
    """One file's result, kept until the run's end (for the report and the writes). Its
    bulky parts (findings, name map, migrated content) wait in the run's spool, a temp file,
    not in memory: a run over 100,000 files keeps a few hundred bytes per file. The content
    read is kept as its SHA-256 (a file is replaced only if it still has that content)."""

    __slots__ = ("path", "error", "digest", "changed", "_at")

    def __init__(self, path: str, new: Optional[bytes] = None, findings: Optional[List[Reported]] = None,
                 names: Optional[Dict[str, str]] = None, error: Optional[str] = None,
                 raw: Optional[bytes] = None) -> None:
        self.path = path
        self.error = error
        self.digest = None if raw is None else content_digest(raw)  # of what was read
        self.changed = new is not None
        self._at = _SPOOL.put((findings or [], names or {}, new)) if (findings or names or new is not None) \
            else None

    def _parts(self) -> tuple:
        return _SPOOL.get(self._at) if self._at is not None else ([], {}, None)

    @property
    def findings(self) -> List[Reported]:
        return self._parts()[0]

    @property
    def names(self) -> Dict[str, str]:
        return self._parts()[1]

    @property
    def new(self) -> Optional[bytes]:
        """The migrated content, None when the file does not change."""
        return self._parts()[2]


class _Spool:
    """The run's reports, pickled and zlib-compressed into an anonymous temp file (gone when
    the process ends, whatever ends it); in memory when no temp file can be made or the temp
    folder fills up (what is already in the file stays readable there)."""

    def __init__(self) -> None:
        self._fd: Optional[int] = None
        self._end = 0
        self._memory: Optional[List[bytes]] = None

    def put(self, parts: tuple) -> Tuple[int, int]:
        data = zlib.compress(pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL), 1)
        if self._fd is None and self._memory is None:
            try:
                self._file = tempfile.TemporaryFile(prefix=".tf-migrate-spool-")
                self._fd = self._file.fileno()
            except OSError:
                self._memory = []
        if self._memory is None:
            try:
                return self._append(data)
            except OSError as exc:  # a full temp folder, a file size limit: the rest in memory
                self._memory = []
                print(f"tf-migrate: warning: cannot write to the temp folder "
                      f"({tempfile.gettempdir()}: {describe(exc)}); this run keeps its results in "
                      "memory", file=sys.stderr)
        self._memory.append(data)
        return (-1, len(self._memory) - 1)

    def _append(self, data: bytes) -> Tuple[int, int]:
        at = self._end
        view = memoryview(data)
        while view:
            view = view[os.pwrite(self._fd, view, at + len(data) - len(view)):]
        self._end += len(data)
        return (at, len(data))

    def get(self, at: Tuple[int, int]) -> tuple:
        offset, size = at
        data = self._memory[size] if offset < 0 else os.pread(self._fd, size, offset)
        return pickle.loads(zlib.decompress(data))


_SPOOL = _Spool()


def process(path: str, raw: bytes, codes: Sequence[str], fix: bool, target: Target = DEFAULT) -> dict:
    """Migrate one file's bytes. Pure: no I/O, returns plain data."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16/32: no Python source encoding
        return {"new": None, "findings": [], "names": {},
                "error": "UTF-16/UTF-32 text: Python sources are UTF-8 or a PEP 263 8-bit "
                         "encoding; convert the file to migrate it"}
    if not any(word in raw for word in PREFILTER):
        return {"new": None, "findings": [], "names": {}, "error": None}
    # libcst: only when a file must be parsed
    from migrate.codemod.engine import transform
    from migrate.codemod.rule import all_rules  # (libcst too)

    registry = all_rules()
    rules = [registry[c] for c in codes]

    def convert(text: str):
        outcome = transform(text, rules, fix=fix, path=path, target=target)
        return outcome.new_source, outcome

    try:
        if path.endswith(".ipynb"):
            new, reports = migrate_notebook(raw, convert)
            findings, names = [], {}
            lines = notebook_lines(raw)
            for cell, outcome in reports:
                for f in outcome.findings:
                    at = lines.get(cell, [])
                    # and where the line sits in the .ipynb file itself (SARIF)
                    findings.append(dataclasses.replace(
                        f, cell=cell + 1, file_line=at[min(f.line, len(at)) - 1] if at else None))
                names.update(outcome.names)
        else:
            new, outcome = migrate_python(raw, convert)
            findings, names = outcome.findings, outcome.names
    except EngineError as exc:
        return {"new": None, "findings": [], "names": {}, "error": str(exc)}
    except Exception as exc:  # a bug of ours: report, never lose the file
        return {"new": None, "findings": [], "names": {},
                "error": f"internal error ({type(exc).__name__}: {exc}); file left untouched"}
    return {"new": new, "findings": findings, "names": names, "error": None}


def _work(item: Tuple[str, bytes, Tuple[str, ...], bool, Target]) -> Tuple[str, dict]:
    path, raw, codes, fix, target = item
    return path, process(path, raw, codes, fix, target)


# -- validation: nothing is written that was not checked, fresh or cached ----------
def validate(path: str, raw: bytes, result) -> Optional[str]:
    """Why ``result`` (a worker's answer or a cache entry for ``raw``) cannot be trusted,
    or None. The new content must decode and parse (CPython's parser), and a notebook
    must keep its cells; findings and names must have their shapes."""

    if not isinstance(result, dict) or not {"new", "findings", "names", "error"} <= set(result):
        return "malformed result"
    new, findings, names, error = result["new"], result["findings"], result["names"], result["error"]
    if error is not None and not isinstance(error, str):
        return "malformed error"
    if not isinstance(findings, list) or not all(isinstance(f, Reported) for f in findings):
        return "malformed findings"
    if not isinstance(names, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in names.items()):
        return "malformed name map"
    if new is None:
        return None
    if not isinstance(new, bytes) or (raw.strip() and not new.strip()):
        return "empty or non-bytes content"
    if result.get("validated") is True:
        return None  # a cache entry whose checksum matches: parsed when it was made
    try:
        if path.endswith(".ipynb"):
            old_cells = json.loads(raw.decode("utf-8"))["cells"]
            new_cells = json.loads(new.decode("utf-8"))["cells"]
            if not isinstance(new_cells, list) or len(new_cells) != len(old_cells):
                return "the notebook lost or gained cells"
        else:
            text = decode(new).text
            ast.parse(text, filename=path)
    except Exception as exc:  # SyntaxError, ValueError, EngineError, RecursionError, ...
        return f"the new content does not parse ({type(exc).__name__})"
    return None


# -- isolated workers: a crash, a hang or a time limit costs one file, not the run --
def _serve(connection) -> None:  # pragma: no cover - runs in the worker process

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    while True:
        try:
            item = connection.recv()
        except EOFError:
            return
        if item is None:
            return
        connection.send(_work(item))


class _Interpreter:
    """A worker started as a fresh interpreter, for a parent that has threads (see
    ``_start``); it has the interface of the ``multiprocessing.Process`` it replaces.
    Unlike multiprocessing's spawn and fork server, it never re-runs the caller's main
    script, which may have no ``if __name__ == "__main__":`` guard."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
        code = f"from migrate.codemod.runner import _serve_socket; _serve_socket({theirs.fileno()})"
        self._popen = subprocess.Popen([sys.executable, "-c", code], pass_fds=(theirs.fileno(),),
                                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        theirs.close()
        self.connection = Connection(ours.detach())
        self.sentinel = self.connection  # its death closes the socket

    @property
    def exitcode(self) -> Optional[int]:
        return self._popen.poll()

    def is_alive(self) -> bool:
        return self._popen.poll() is None

    def kill(self) -> None:
        self._popen.kill()

    def join(self, timeout: Optional[float] = None) -> None:
        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass


def _serve_socket(fd: int) -> None:  # pragma: no cover - runs in the worker process
    _serve(Connection(fd))


def _threads() -> int:
    """How many threads this process has (Linux: one per entry of /proc/self/task)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0  # unknown: treated as threaded


def _start():
    """Start a worker: (process, connection). Forking is fastest, and safe only while this
    process has one thread: a caller that loaded TensorFlow (or a test runner after TF
    tests) has native threads whose locks a forked child inherits held, and the child can
    crash (signal 11) or hang. Such a process starts a fresh interpreter instead, as does
    any platform without fork (Windows: multiprocessing's spawn)."""

    if sys.platform == "win32":
        context = multiprocessing.get_context("spawn")
    elif sys.platform == "linux" and _threads() == 1:
        context = multiprocessing.get_context("fork")
    else:
        try:
            process = _Interpreter()
            return process, process.connection
        except OSError:  # no interpreter to start (an embedded Python): fork as before
            context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_serve, args=(child,), daemon=True)
    process.start()
    child.close()
    return process, parent


class _Worker:
    def __init__(self) -> None:
        self.process, self.connection = _start()
        self.item = None
        self.deadline = 0.0

    def give(self, item, timeout: float) -> None:
        """Start ``item`` (a file) on this worker, due within ``timeout`` seconds."""
        self.item, self.deadline = item, time.monotonic() + timeout
        self.connection.send(item)

    def stop(self, kill: bool = False) -> None:
        try:
            if kill:
                self.process.kill()
            else:
                self.connection.send(None)
        except (OSError, ValueError):
            pass
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.connection.close()


def _isolated(todo: Iterable, jobs: int, timeout: float, on_result) -> None:
    """Run every item of ``todo`` (an iterable, consumed as workers free up: files are read
    while the others are being migrated) in a worker process, at most ``jobs`` at a time.
    A worker that dies (a native crash) or passes ``timeout`` seconds on one file is
    replaced, and that file gets an error; the others go on."""

    items = iter(todo)
    workers: List[_Worker] = []
    try:
        while True:
            for worker in workers:  # an item for every idle worker
                if worker.item is None:
                    item = next(items, None)
                    if item is None:
                        break
                    worker.give(item, timeout)
            while len(workers) < jobs and all(w.item is not None for w in workers):
                item = next(items, None)  # one more worker while work waits
                if item is None:
                    break
                workers.append(_Worker())
                workers[-1].give(item, timeout)
            busy = [w for w in workers if w.item is not None]
            if not busy:
                return
            left = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            ready = wait({w.connection for w in busy} | {w.process.sentinel for w in busy},
                         timeout=left)
            for worker in busy:
                path = worker.item[0]
                if worker.connection in ready:
                    try:
                        _, result = worker.connection.recv()
                    except (EOFError, OSError):
                        result = None
                    if result is not None:
                        worker.item = None
                        on_result(path, result)
                        continue
                crashed = worker.process.sentinel in ready or worker.connection in ready
                if crashed or time.monotonic() >= worker.deadline:
                    if crashed:
                        worker.process.join(5)  # reaped: its exit code is known
                    code = worker.process.exitcode
                    worker.stop(kill=True)
                    workers.remove(worker)
                    if crashed:
                        why = (f"the parser crashed (signal {-code})" if code and code < 0
                               else f"the worker died (exit {code})")
                    else:
                        why = f"took longer than {timeout:g} s (--timeout)"
                    on_result(path, {"new": None, "findings": [], "names": {},
                                     "error": f"{why}; file left untouched", "transient": True})
    finally:
        for worker in workers:
            worker.stop(kill=worker.item is not None)


# -- driver --------------------------------------------------------------------
def run(files: Sequence[str], codes: Sequence[str], fix: bool, jobs: int = 0,
        use_cache: bool = True, progress: bool = False, timeout: float = 120.0,
        target: Target = DEFAULT) -> List[FileReport]:
    """Process ``files``; reports come back in the order of ``files``. Files are read one
    at a time as workers free up; cache hits and files that mention neither TensorFlow
    nor Keras are settled in this process."""
    cache = Cache(use_cache)
    codes = tuple(codes)
    reports: Dict[str, FileReport] = {}
    keys: Dict[str, str] = {}
    sources: Dict[str, bytes] = {}
    bar = _Progress(len(files), "migrating" if fix else "checking") if progress else None

    def settled(report: FileReport) -> None:
        reports[report.path] = report
        if bar:
            bar.advance()

    def todo() -> Iterator[Tuple[str, bytes, Tuple[str, ...], bool, Target]]:
        for path in files:
            try:
                raw = read_regular(path)  # a FIFO, socket or device: refused without blocking
            except OSError as exc:
                settled(FileReport(path, error=f"cannot read: {describe(exc)}"))
                continue
            key = cache.key(raw, path, codes, fix, f"{target.key()}|{key_material(path, raw)}")
            hit = cache.get(key)
            if hit is not None and validate(path, raw, hit) is None:
                settled(FileReport(path, hit.get("new"), hit["findings"], hit.get("names", {}),
                                   hit.get("error"), raw))
                continue
            keys[path] = key
            if not any(word in raw for word in PREFILTER):  # never parsed: no worker needed
                _collect(reports, cache, keys, path, raw, process(path, raw, codes, fix, target), bar)
                continue
            sources[path] = raw
            yield path, raw, codes, fix, target

    _isolated(todo(), max(1, jobs or os.cpu_count() or 1), timeout,
              lambda path, result: _collect(reports, cache, keys, path, sources.pop(path), result, bar))
    if bar:
        bar.close()
    return [reports[p] for p in files]


def _collect(reports, cache, keys, path, raw, result, bar) -> None:
    problem = validate(path, raw, result)
    if problem is not None:
        result = {"new": None, "findings": [], "names": {},
                  "error": f"internal error: {problem}; file left untouched"}
    reports[path] = FileReport(path, result["new"], result["findings"], result["names"],
                               result["error"], raw)
    if problem is None and not result.get("transient"):  # a crash or time-out is not cached
        cache.put(keys[path], result)
    if bar:
        bar.advance()


class _Progress:
    """A rich progress bar on a terminal, shown only once a run passes a second."""

    def __init__(self, total: int, label: str) -> None:
        self.total = total
        self.label = label
        self.start = time.monotonic()
        self.bar = None
        self.task = None
        self.done = 0

    def advance(self) -> None:
        self.done += 1
        if self.bar is None and time.monotonic() - self.start > 1.0 and self.done < self.total:
            # rich: only on a terminal, once a run takes more than a second
            from rich.console import Console
            from rich.progress import Progress  # (likewise)

            self.bar = Progress(transient=True, console=Console(stderr=True))
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total, completed=self.done)
        elif self.bar is not None:
            self.bar.update(self.task, completed=self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
