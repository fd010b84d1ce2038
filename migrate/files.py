"""Reading and writing source files and notebooks without ever losing one.

A file is decoded with its PEP 263 encoding (BOM kept), migrated as text, and
written back atomically (temp file + rename in the same directory) with its
encoding, BOM and mode. Notebooks: code cells only, IPython magics masked and
restored, outputs and metadata untouched.
"""
from __future__ import annotations

import io
import json
import os
import re
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Tuple

from migrate.errors import EngineError

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".tox", ".nox", ".venv", "venv",
             ".mypy_cache", ".pytest_cache", "node_modules", ".ipynb_checkpoints"}
MAGIC = re.compile(r"^(\s*)([%!]|\?\?|\w[\w.]*\?$)")
MASK = "# tf-migrate-magic:"


@dataclass
class Decoded:
    text: str
    encoding: str
    bom: bool


def decode(raw: bytes) -> Decoded:
    if b"\x00" in raw:
        raise EngineError("binary file (contains NUL bytes)")
    bom = raw.startswith(b"\xef\xbb\xbf")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        raise EngineError(f"bad encoding declaration: {exc}") from None
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        text = raw[3:].decode(encoding) if bom else raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise EngineError(f"cannot decode as {encoding}: {exc.reason if hasattr(exc, 'reason') else exc}"
                          " (add a coding declaration or convert the file)") from None
    return Decoded(text, encoding, bom)


def encode(text: str, decoded: Decoded) -> bytes:
    data = text.encode(decoded.encoding)
    return b"\xef\xbb\xbf" + data if decoded.bom else data


def migrate_python(raw: bytes, convert: Callable[[str], Tuple[Optional[str], object]]):
    """Returns (new bytes or None, whatever ``convert`` reports)."""
    decoded = decode(raw)
    new_text, report = convert(decoded.text)
    if new_text is None:
        return None, report
    return encode(new_text, decoded), report


# -- notebooks -----------------------------------------------------------------
def _mask(source: str) -> Tuple[Optional[str], List[str], str]:
    """Hide IPython magics behind comments; None for a whole-cell magic (%%). The comment
    token is one the cell does not contain, so a user's own comment is never taken for it."""
    if source.lstrip().startswith("%%"):
        return None, [], MASK
    token, n = MASK, 0
    while token in source:
        n += 1
        token = f"{MASK[:-1]}-{n}:"
    saved: List[str] = []
    out = []
    for line in source.split("\n"):
        match = MAGIC.match(line)
        if match:
            saved.append(line)
            out.append(f"{match.group(1)}{token}{len(saved) - 1}")
        else:
            out.append(line)
    return "\n".join(out), saved, token


def _unmask(source: str, saved: List[str], token: str = MASK) -> str:
    if not saved:
        return source
    pattern = re.compile(r"^\s*" + re.escape(token) + r"(\d+)$")
    out = []
    for line in source.split("\n"):
        match = pattern.match(line)
        out.append(saved[int(match.group(1))] if match and int(match.group(1)) < len(saved) else line)
    return "\n".join(out)


def migrate_notebook(raw: bytes, convert: Callable[[str], Tuple[Optional[str], object]]):
    """Migrates code cells; returns (new bytes or None, [(cell index, report), ...])."""
    try:
        notebook = json.loads(raw.decode("utf-8"))
        cells = notebook["cells"]
        if not isinstance(cells, list):
            raise TypeError
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise EngineError("not a valid notebook (JSON with a 'cells' list expected)") from None
    reports = []
    changed = False
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        as_list = isinstance(source, list)
        text = "".join(source) if as_list else source
        masked, saved, token = _mask(text)
        if masked is None:
            continue
        try:
            new, report = convert(masked)
        except EngineError as exc:
            raise EngineError(f"cell {index + 1}: {exc}") from None
        reports.append((index, report))
        if new is None:
            continue
        new = _unmask(new, saved, token)
        if new != text:
            changed = True
            cell["source"] = new.splitlines(keepends=True) if as_list else new
    if not changed:
        return None, reports
    text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    return text.encode("utf-8"), reports


# -- discovery -----------------------------------------------------------------
def discover(paths: Sequence[str], exclude: Sequence[str] = ()) -> Tuple[List[str], List[Tuple[str, str]]]:
    """Expands files and directories into .py/.ipynb files; returns (files, errors)."""
    import fnmatch

    files: List[str] = []
    errors: List[Tuple[str, str]] = []

    def excluded(path: str) -> bool:
        rel = os.path.normpath(path)
        return any(fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(os.path.basename(rel), pat)
                   or fnmatch.fnmatch(rel, f"*/{pat}") or fnmatch.fnmatch(rel, f"{pat}/*")
                   or fnmatch.fnmatch(rel, f"*/{pat}/*") for pat in exclude)

    for path in paths:
        if not os.path.lexists(path):
            errors.append((path, "no such file or directory"))
        elif os.path.isdir(path):
            root_real = os.path.realpath(path)

            def unreadable(exc: OSError) -> None:
                errors.append((exc.filename or path, f"cannot read folder: {exc.strerror or exc}"))

            for folder, dirs, names in os.walk(path, onerror=unreadable):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")
                                 and not excluded(os.path.join(folder, d))
                                 and _inside(os.path.join(folder, d), root_real))
                for name in sorted(names):
                    full = os.path.join(folder, name)
                    if name.endswith((".py", ".ipynb")) and not excluded(full):
                        if os.path.islink(full) and not _inside(full, root_real):
                            continue  # never follow a link out of the tree
                        if not os.path.isfile(full):  # a FIFO, socket or device named *.py
                            errors.append((full, "not a regular file (a FIFO, socket or device); "
                                                 "skipped"))
                            continue
                        files.append(full)
        elif os.path.isfile(path):
            if not path.endswith((".py", ".ipynb")):
                errors.append((path, "not a Python file or notebook (.py, .ipynb); skipped"))
            else:
                files.append(path)
        else:
            errors.append((path, "not a regular file"))
    return files, errors


def _inside(path: str, root_real: str) -> bool:
    real = os.path.realpath(path)
    return real == root_real or real.startswith(root_real + os.sep)


# -- writing -------------------------------------------------------------------
def atomic_write(path: str, data: bytes, mode: Optional[int] = None) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    if mode is None:
        mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else 0o644
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tf-migrate-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise

