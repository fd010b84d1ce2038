"""Runs the engine over many files: prefilter, content-hash cache, processes.

Workers get (path, bytes) and return plain dicts; only the parent prints and
writes.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from migrate.cache import Cache
from migrate.errors import EngineError
from migrate.files import migrate_notebook, migrate_python

PREFILTER = (b"tensorflow", b"keras")  # files mentioning neither are never parsed


@dataclass
class FileReport:
    path: str
    new: Optional[bytes] = None  # migrated content, None when unchanged
    findings: List[dict] = field(default_factory=list)
    names: Dict[str, str] = field(default_factory=dict)
    error: Optional[str] = None


def process(path: str, raw: bytes, codes: Sequence[str], fix: bool) -> dict:
    """Migrate one file's bytes. Pure: no I/O, returns plain data."""
    if not any(word in raw for word in PREFILTER):
        return {"new": None, "findings": [], "names": {}, "error": None}
    from migrate.engine import transform  # libcst: only when a file must be parsed
    from migrate.rule import all_rules

    registry = all_rules()
    rules = [registry[c] for c in codes]

    def convert(text: str):
        outcome = transform(text, rules, fix=fix, path=path)
        return outcome.new_source, outcome

    try:
        if path.endswith(".ipynb"):
            new, reports = migrate_notebook(raw, convert)
            findings, names = [], {}
            for cell, outcome in reports:
                for f in outcome.findings:
                    findings.append(dict(f, cell=cell + 1))
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


def _work(item: Tuple[str, bytes, Tuple[str, ...], bool]) -> Tuple[str, dict]:
    path, raw, codes, fix = item
    return path, process(path, raw, codes, fix)


# -- driver --------------------------------------------------------------------
def run(files: Sequence[str], codes: Sequence[str], fix: bool, jobs: int = 0,
        use_cache: bool = True, progress: bool = False) -> List[FileReport]:
    """Process ``files``; reports come back in the order of ``files``."""
    cache = Cache(use_cache)
    codes = tuple(codes)
    reports: Dict[str, FileReport] = {}
    todo: List[Tuple[str, bytes, Tuple[str, ...], bool]] = []
    keys: Dict[str, str] = {}
    for path in files:
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            reports[path] = FileReport(path, error=f"cannot read: {exc.strerror or exc}")
            continue
        key = cache.key(raw, path, codes, fix)
        hit = cache.get(key)
        if hit is not None:
            reports[path] = FileReport(path, hit.get("new"), hit["findings"], hit.get("names", {}),
                                       hit.get("error"))
            continue
        keys[path] = key
        todo.append((path, raw, codes, fix))

    jobs = jobs or os.cpu_count() or 1
    bar = _Progress(len(todo)) if progress else None
    if jobs > 1 and len(todo) >= 8:
        context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        with context.Pool(min(jobs, len(todo))) as pool:
            results: Iterable = pool.imap_unordered(_work, todo, chunksize=4)
            for path, result in results:
                _collect(reports, cache, keys, path, result, bar)
    else:
        for item in todo:
            path, result = _work(item)
            _collect(reports, cache, keys, path, result, bar)
    if bar:
        bar.close()
    return [reports[p] for p in files]


def _collect(reports, cache, keys, path, result, bar) -> None:
    reports[path] = FileReport(path, result["new"], result["findings"], result["names"],
                               result["error"])
    cache.put(keys[path], result)
    if bar:
        bar.advance()


class _Progress:
    """A rich progress bar on a terminal, shown only once a run passes a second."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.start = time.monotonic()
        self.bar = None
        self.task = None
        self.done = 0

    def advance(self) -> None:
        self.done += 1
        if self.bar is None and time.monotonic() - self.start > 1.0 and self.done < self.total:
            from rich.progress import Progress

            from rich.console import Console

            self.bar = Progress(transient=True, console=Console(stderr=True))
            self.bar.start()
            self.task = self.bar.add_task("migrating", total=self.total, completed=self.done)
        elif self.bar is not None:
            self.bar.update(self.task, completed=self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
