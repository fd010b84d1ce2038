"""The write policy of ``upgrade --write`` / ``--outtree``: what may be written where.

Nothing is written outside the target: in place, a file is replaced only if it still holds
what was read (no lost updates: the check and the rename are one step under the folder's
lock) and never through a symbolic link. A file that changed since it was read (another
run wrote it, or the user) is migrated again from what it holds now and written then, so
both edits stay; only a file that keeps changing is left alone with an error. Into an output tree, no
path may go through a link, land on an input, or be claimed by two inputs. Special files
and the tool's own temp files are never copied. Every refusal is an error row
``(path, message)``; the caller prints them. The CLI only calls :func:`write_outputs`,
:func:`outtree_problem` and :func:`write_report`.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from migrate.codemod.files import Changed, atomic_write, current_digest, replace_file
from migrate.safeio import describe, folder_lock, read_regular, sweep_temps

NAMES_FILE = "tf-migrate-names.json"
ErrorRow = Tuple[str, str]
STALE = "changed since it was read; not written (run tf-migrate again)"


def outtree_problem(outtree: str, paths: Sequence[str]) -> Optional[str]:
    """Why ``--outtree`` cannot receive the migrated ``paths``, or None (checked before any work)."""
    if os.path.lexists(outtree) and not os.path.isdir(outtree):
        return f"--outtree {outtree} exists and is not a folder"
    if os.path.islink(outtree):
        return f"--outtree {outtree} is a symbolic link; give a real folder"
    out_real = os.path.realpath(outtree)
    for p in paths:
        real = os.path.realpath(p)
        if os.path.isdir(p) and (out_real == real or out_real.startswith(real + os.sep)):
            return f"--outtree {outtree} is inside the input tree {p}; choose a folder outside it"
        if os.path.isfile(p) and os.path.realpath(os.path.dirname(real)) == out_real:
            return (f"--outtree {outtree} is the folder of the input {p}: that would replace the "
                    "input; choose another folder")
    return None


Redo = Callable[[List[str]], list]  # paths -> their FileReports, migrated from what they hold now
REDO_ROUNDS = 3  # a file changed again after this many fresh migrations is left to the user


@dataclass
class Written:
    """What :func:`write_outputs` did: the error rows, and the reports of the run after the
    files found changed were migrated again (the same order as the reports given)."""
    errors: List[ErrorRow] = field(default_factory=list)
    reports: list = field(default_factory=list)


def write_outputs(paths: Sequence[str], reports, outtree: Optional[str],
                  redo: Optional[Redo] = None) -> Written:
    """Write changed files (in place, or into ``outtree`` with the rest of each input tree)
    and the name maps beside them. In place, a file that changed since it was read is
    handed to ``redo`` (migrated again from its new content) and written from that, up to
    :data:`REDO_ROUNDS` times; without ``redo``, or past that, it is an error row."""
    writer = _Writer(reports, outtree)
    plan = writer.plan(paths)
    if outtree is not None:
        writer.mirror(paths)
    written = [(report, dst) for report, dst in plan if writer.write(report, dst)]
    stale = [report.path for report, _ in plan if report.path in writer.stale]
    fresh: Dict[str, object] = {}
    for _ in range(REDO_ROUNDS if redo is not None else 0):
        if not stale:
            break
        writer.stale.clear()
        again = redo(stale)
        for report in again:
            fresh[report.path] = report
            if report.error:
                writer.errors.append((report.path, report.error))
            elif writer.write(report, report.path):
                written.append((report, report.path))
        stale = [report.path for report in again if report.path in writer.stale]
    writer.errors.extend((path, STALE) for path in stale)
    names_by_dir: Dict[str, dict] = {}
    for report, dst in written:
        if report.names and report.changed:
            names_by_dir.setdefault(os.path.dirname(os.path.abspath(dst)), {})[
                os.path.basename(dst)] = report.names
    for folder, files in names_by_dir.items():
        problem = write_names(folder, files)
        if problem:
            writer.errors.append(problem)
    return Written(writer.errors, [fresh.get(r.path, r) for r in reports])


class _Writer:
    def __init__(self, reports, outtree: Optional[str]) -> None:
        self.reports = reports
        self.outtree = outtree
        self.errors: List[ErrorRow] = []
        self.swept: set = set()
        self.made: set = set()
        self.clashes: set = set()
        self.stale: set = set()  # paths found changed since they were read
        self.by_path = {r.path: r for r in reports}
        self.out_real = os.path.realpath(outtree) if outtree else None
        self.inputs_real = {os.path.realpath(r.path) for r in reports}
        if outtree is None:
            for r in reports:
                self.sweep(os.path.dirname(os.path.abspath(r.path)))

    # -- where ---------------------------------------------------------------
    def sweep(self, folder: str) -> None:
        """Remove the temp files killed runs left where this run writes (once per folder)."""
        if folder not in self.swept:
            self.swept.add(folder)
            self.errors.extend(sweep_temps(folder))

    def folder_for(self, path: str) -> None:
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in self.made:
            os.makedirs(folder, exist_ok=True)
            self.made.add(folder)
            self.sweep(folder)

    def target_of(self, path: str, root: Optional[str]) -> str:
        if self.outtree is None:
            return path
        rel = os.path.relpath(path, root) if root else os.path.basename(path)
        return os.path.join(self.outtree, rel)

    def confined(self, dst: str) -> Optional[str]:
        """Why ``dst`` (inside the output tree) may not be written, or None."""
        rel = os.path.relpath(os.path.abspath(dst), os.path.abspath(self.outtree))
        current = os.path.abspath(self.outtree)
        for part in rel.split(os.sep):
            current = os.path.join(current, part)
            if os.path.islink(current):
                return f"{current} is a symbolic link in the output tree; not followed"
        real = os.path.realpath(dst)
        if real in self.inputs_real:
            return f"{dst} is an input file; not overwritten"
        if not (real == self.out_real or real.startswith(self.out_real + os.sep)):
            return f"{dst} is outside the output tree"
        return None

    def plan(self, paths: Sequence[str]) -> List[Tuple[object, str]]:
        """(report, destination) for every input under the given paths; destinations two
        inputs claim are refused for both."""
        plan = []
        for root in paths:
            if not os.path.exists(root):
                continue
            base = root if os.path.isdir(root) else None
            for r in self.reports:
                if (base is None and r.path != root) or (base is not None and not _under(r.path, base)):
                    continue
                plan.append((r, self.target_of(r.path, base)))
        claimed: Dict[str, List[str]] = {}
        for r, dst in plan:
            claimed.setdefault(os.path.abspath(dst), []).append(r.path)
        self.clashes = {dst for dst, owners in claimed.items() if len(set(owners)) > 1}
        for dst in sorted(self.clashes):
            owners = sorted(set(claimed[dst]))
            for owner in owners:
                self.errors.append((owner, f"{dst} is the output of {len(owners)} inputs; "
                                           "none written (migrate them into separate folders)"))
        return plan

    # -- what ----------------------------------------------------------------
    def mirror(self, paths: Sequence[str]) -> None:
        """Copy the input trees' other files (data, configs) into the output tree."""
        for root in paths:
            if not os.path.isdir(root):
                continue
            for folder, dirs, names in os.walk(root):
                dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")
                           and not os.path.islink(os.path.join(folder, d))]
                for name in names:
                    src = os.path.join(folder, name)
                    if src in self.by_path or os.path.islink(src) or (
                            name.startswith(".tf-migrate-") and name.endswith(".tmp")):
                        continue
                    self._copy(src, self.target_of(src, root))

    def _copy(self, src: str, dst: str) -> None:
        if not os.path.isfile(src):
            self.errors.append((src, "not a regular file; not copied"))
            return
        problem = self.confined(dst)
        if problem:
            self.errors.append((src, problem))
            return
        try:
            self.folder_for(dst)
            shutil.copy2(src, dst)
        except OSError as exc:
            self.errors.append((src, f"cannot copy to {dst}: {exc.strerror or exc}"))

    def write(self, r, dst: str) -> bool:
        """Write one input's result to ``dst``; False (with an error row) when refused."""
        if os.path.abspath(dst) in self.clashes:
            return False
        problem = self.confined(dst) if self.outtree is not None else None
        if problem is None and r.changed and self.outtree is None:
            problem = self._in_place_problem(r)
        if problem == STALE:
            self.stale.add(r.path)
            return False
        if problem:
            self.errors.append((r.path, problem))
            return False
        try:
            if r.changed and self.outtree is None:
                replace_file(r.path, r.new, r.digest)
            elif r.changed:
                self.folder_for(dst)
                atomic_write(dst, r.new, os.stat(r.path).st_mode & 0o7777)
            elif self.outtree is not None:
                self.folder_for(dst)
                shutil.copy2(r.path, dst)
        except Changed:
            self.stale.add(r.path)
            return False
        except OSError as exc:
            self.errors.append((r.path, f"cannot write {dst}: {exc.strerror or exc}"))
            return False
        return True

    @staticmethod
    def _in_place_problem(r) -> Optional[str]:
        if os.path.islink(r.path):
            return "is a symbolic link; not rewritten (migrate the file it points to)"
        if _read_only(r.path):
            return "file is read-only; not changed"
        if r.digest is not None and current_digest(r.path) != r.digest:
            return STALE
        return None


def _read_only(path: str) -> bool:
    """Not writable for us, or marked read-only by its owner (root ignores permissions)."""
    return not os.access(path, os.W_OK) or not os.stat(path).st_mode & 0o200


def _under(path: str, root: str) -> bool:
    rel = os.path.relpath(path, root)
    return rel != os.pardir and not rel.startswith(os.pardir + os.sep)


def write_names(folder: str, files: dict) -> Optional[ErrorRow]:
    """Merge this run's name maps into ``folder/tf-migrate-names.json``; an error row
    when the existing map cannot be read or the new one cannot be written."""
    path = os.path.join(folder, NAMES_FILE)
    try:
        with folder_lock(folder):  # two runs merging into one map: each sees the other's entries
            return _merge_names(path, files)
    except OSError as exc:
        return path, f"cannot write the name map ({describe(exc)})"


def _merge_names(path: str, files: dict) -> Optional[ErrorRow]:
    from migrate.checkpoints.names import (  # the checkpoint face, only when maps exist
        FORMAT,
        merge,
    )

    existing = None
    if os.path.lexists(path):
        try:
            existing = json.loads(read_regular(path).decode("utf-8"))
        except OSError as exc:
            return path, f"cannot read the name map ({describe(exc)}); left as it is"
        except ValueError:
            return path, ("not valid JSON, so not a name map written by tf-migrate; left as "
                          "it is (move it away to get a new one)")
    foreign = existing is not None and not (
        isinstance(existing, dict) and existing.get("format") == FORMAT
        and isinstance(existing.get("files", {}), dict))
    if foreign:
        return path, ("not a name map written by tf-migrate; left as it is "
                      "(move it away to get a new one)")
    data = merge(existing, files)
    try:
        atomic_write(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())
    except OSError as exc:
        return path, f"cannot write the name map ({describe(exc)})"
    return None


def write_report(path: str, data: bytes) -> None:
    """A report file is replaced whole (never left partial); a device or FIFO the user named
    (/dev/stdout) is written directly. Raises OSError."""
    st = os.stat(path) if os.path.exists(path) else None
    if st is not None and not stat.S_ISREG(st.st_mode):
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    else:
        atomic_write(path, data)
