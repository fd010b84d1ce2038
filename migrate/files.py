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
from typing import Dict, Callable, List, Optional, Sequence, Tuple

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
    changed: Dict[int, object] = {}
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
            cell["source"] = changed[index] = new.splitlines(keepends=True) if as_list else new
    if not changed:
        return None, reports
    text = raw.decode("utf-8")
    spliced = _splice(text, changed)
    if spliced is not None and json.loads(spliced) == notebook:
        return spliced.encode("utf-8"), reports  # only the changed sources differ
    text = json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"
    return text.encode("utf-8"), reports


def _source_spans(text: str) -> Optional[Dict[int, Tuple[int, int]]]:
    """(start, end) of each cell's "source" value in a notebook's JSON text, found with
    the json module's own scanners; None for a layout this does not follow."""
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")

    def skip(i: int) -> int:
        return ws.match(text, i).end()

    def members(i: int):
        """(key, value start, value end) of the object at i; the value is not decoded."""
        i = skip(i)
        if text[i:i + 1] != "{":
            raise ValueError
        i = skip(i + 1)
        if text[i:i + 1] == "}":
            return
        while True:
            key, i = json.decoder.scanstring(text, i + 1) if text[i:i + 1] == '"' else (None, None)
            if key is None:
                raise ValueError
            i = skip(i)
            if text[i:i + 1] != ":":
                raise ValueError
            start = skip(i + 1)
            end = yield key, start
            i = skip(end)
            if text[i:i + 1] == "}":
                return
            if text[i:i + 1] != ",":
                raise ValueError
            i = skip(i + 1)

    def value_end(i: int) -> int:
        return decoder.raw_decode(text, i)[1]

    spans: Dict[int, Tuple[int, int]] = {}
    try:
        walk = members(0)
        item = next(walk)
        while True:
            key, start = item
            if key != "cells":
                item = walk.send(value_end(start))
                continue
            i = skip(start + 1)
            index = 0
            while text[i:i + 1] != "]":
                cell = members(i)
                entry = next(cell, None)
                while entry is not None:
                    ckey, cstart = entry
                    cend = value_end(cstart)
                    if ckey == "source":
                        spans[index] = (cstart, cend)
                    try:
                        entry = cell.send(cend)
                    except StopIteration:
                        entry = None
                i = skip(value_end(i))
                index += 1
                if text[i:i + 1] == ",":
                    i = skip(i + 1)
            item = walk.send(i + 1)
    except StopIteration:
        return spans
    except (ValueError, IndexError):
        return None


def _splice(text: str, changed: Dict[int, object]) -> Optional[str]:
    """The notebook text with only the changed cells' sources replaced, each written in
    the layout its old value had (one item per line at the same indentation, or one line)."""
    spans = _source_spans(text)
    if spans is None or any(index not in spans for index in changed):
        return None
    ascii_only = text.isascii()
    newline = "\r\n" if "\r\n" in text else "\n"
    out, last = [], 0
    for index in sorted(changed):
        start, end = spans[index]
        old, new = text[start:end], changed[index]
        if isinstance(new, str) or not new:
            value = json.dumps(new, ensure_ascii=ascii_only)
        elif newline in old:
            first = old[old.index(newline) + len(newline):]
            indent = first[:len(first) - len(first.lstrip(" \t"))]
            close = old[old.rindex(newline) + len(newline):-1]
            value = ("[" + newline + ("," + newline).join(indent + json.dumps(line, ensure_ascii=ascii_only)
                                                       for line in new) + newline + close + "]")
        else:
            line = text[text.rfind("\n", 0, start) + 1:start]
            key_indent = line[:len(line) - len(line.lstrip(" \t"))]
            if old.strip() == "[]" and line.strip().startswith('"source"'):
                step = key_indent[:1] or " "
                value = ("[" + newline + ("," + newline).join(key_indent + step + json.dumps(line, ensure_ascii=ascii_only)
                                                           for line in new) + newline + key_indent + "]")
            else:
                value = json.dumps(new, ensure_ascii=ascii_only)
        out.append(text[last:start])
        out.append(value)
        last = end
    out.append(text[last:])
    return "".join(out)


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
def atomic_write(path: str, data: bytes, mode: Optional[int] = None,
                 owner: Optional[Tuple[int, int]] = None) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory (given ``owner``,
    the temp file gets that uid/gid before it replaces ``path``; PermissionError if it
    cannot)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    if mode is None:
        mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else 0o644
    tmp = _synced_temp(folder, data)
    try:
        if owner is not None:
            current = os.stat(tmp)
            if (current.st_uid, current.st_gid) != owner:
                os.chown(tmp, *owner)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _synced_temp(folder: str, data: bytes) -> str:
    """A ``.tf-migrate-*.tmp`` file in ``folder`` holding ``data``, on disk."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tf-migrate-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


class Changed(Exception):
    """The file is no longer what was read."""


def replace_file(path: str, data: bytes, expected: Optional[bytes]) -> None:
    """Replace a source file's content, keeping what a rename would lose. Normally a
    temp file with the same mode and owner is renamed over it (atomic). A file with
    other hard links, or one whose owner cannot be given to a new file, is rewritten in
    place instead, so the links and the owner stay; the complete new text is fsynced
    next to it first (``.tf-migrate-*.tmp``) and removed once the in-place write is on
    disk, so even a kill then loses nothing. ``expected``: the bytes that were read;
    ``Changed`` if the file now holds something else."""
    st = os.stat(path)
    mode = stat.S_IMODE(st.st_mode)
    if st.st_nlink == 1:
        try:
            atomic_write(path, data, mode, owner=(st.st_uid, st.st_gid))
            return
        except PermissionError:
            pass  # cannot hand a new file to the owner: rewrite in place
    rescue = _synced_temp(os.path.dirname(os.path.abspath(path)), data)
    try:
        with open(path, "r+b") as handle:
            if expected is not None and handle.read() != expected:
                raise Changed(path)
            handle.seek(0)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
    finally:
        os.unlink(rescue)

