"""Reading and writing source files and notebooks without ever losing one.

A file is decoded with its PEP 263 encoding (BOM kept), migrated as text, and
written back atomically (temp file + rename in the same directory) with its
encoding, BOM and mode. Notebooks: code cells only, IPython magics masked and
restored, outputs and metadata untouched.
"""
from __future__ import annotations

import ast
import dataclasses
import hashlib
import fnmatch
import io
import json
import os
import re
import stat
import tempfile
import tokenize
import tokenize as tk
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from migrate.codemod.engine import check_python
from migrate.codemod.errors import EngineError
from migrate.safeio import folder_lock, temp_prefix, why_not_regular

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".tox", ".nox", ".venv", "venv",
             ".mypy_cache", ".pytest_cache", "node_modules", ".ipynb_checkpoints"}
# IPython-only lines: line magics and shell escapes (also indented, also assigned:
# `files = !ls`), help syntax (`?obj`, `obj?`, `f(x)??`)
# a line magic, a shell escape (also assigned), or help syntax (`tf.layers.dense?`): a line
# ending in `?` with no comment on it (a comment may end in one: `use_relu=True): # ReLU?`)
MAGIC = re.compile(r"^(\s*)([%!?]|[\w.]+(\s*,\s*[\w.]+)*\s*=\s*[%!]|[^\s#][^#]*\?\??\s*$)")
TF_VERSION = re.compile(r"^\s*%tensorflow_version\s*(.*?)\s*$")
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
    """Hide IPython-only lines from the parser; None for a whole-cell magic (%%). A
    masked line becomes ``pass  # TOKEN N`` at its indentation (a statement, so an
    ``if`` or ``try`` whose body is a magic still parses); Colab's ``%tensorflow_version``
    becomes IPython's own spelling, ``get_ipython().run_line_magic(...)``, so a rule
    (TFM111) can see it. The token is one the cell does not contain, so a user's own
    comment is never taken for it."""
    if source.lstrip().startswith("%%"):
        return None, [], MASK
    token, n = MASK, 0
    while token in source:
        n += 1
        token = f"{MASK[:-1]}-{n}:"
    saved: List[str] = []
    out = []
    lines = source.split("\n")
    inside = _string_lines(source)
    for number, line in enumerate(lines):
        match = MAGIC.match(line) if number not in inside else None
        if match and not _is_python(line):
            saved.append(line)
            version = TF_VERSION.match(line)
            if version:
                statement = f"get_ipython().run_line_magic('tensorflow_version', {version.group(1)!r})"
            else:
                statement = "pass"
            out.append(f"{match.group(1)}{statement}  {token}{len(saved) - 1}")
        else:
            out.append(line)
    return "\n".join(out), saved, token


def _is_python(line: str) -> bool:
    """A line that is Python by itself (``a = b  # why?``): not a magic."""

    try:
        ast.parse(line.strip())
        return True
    except SyntaxError:
        return False


def _string_lines(source: str) -> set:
    """Line numbers (0-based) that continue a multi-line string: never magics."""

    inside = set()
    try:
        for tok in tk.generate_tokens(io.StringIO(source).readline):
            if tok.type == tk.STRING and tok.end[0] > tok.start[0]:
                inside.update(range(tok.start[0], tok.end[0]))  # lines after the first
    except (tk.TokenError, IndentationError, SyntaxError):
        pass  # magics make the cell untokenizable at times: then no string is known
    return inside


def _unmask(source: str, saved: List[str], token: str = MASK) -> str:
    """Put the masked lines back, at the indentation their statement has now."""
    if not saved:
        return source
    pattern = re.compile(r"^(\s*)\S.*?  " + re.escape(token) + r"(\d+)$")
    out = []
    for line in source.split("\n"):
        match = pattern.match(line)
        if match and int(match.group(2)) < len(saved):
            original = saved[int(match.group(2))]
            out.append(match.group(1) + original.lstrip())
        else:
            out.append(line)
    return "\n".join(out)


def migrate_notebook(raw: bytes, convert: Callable[[str], Tuple[Optional[str], object]]):
    """Migrates code cells; returns (new bytes or None, [(cell index, report), ...]).

    The code cells are one program: they are migrated together, in order, so a name
    bound in one cell (``import tensorflow as tf``) resolves in the later ones. Fixes
    and findings stay in their cell; imports a fix needs go to the first code cell. If
    the cells cannot be taken together (one does not parse, or a rewrite would move code
    across a cell boundary), each cell is migrated alone."""
    try:
        notebook = json.loads(raw.decode("utf-8"))
        cells = notebook["cells"]
        if not isinstance(cells, list):
            raise TypeError
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise EngineError("not a valid notebook (JSON with a 'cells' list expected)") from None
    code = []  # (index, cell, text, masked, saved, token, as_list)
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        text = _cell_text(source)
        if text is None:
            raise EngineError(f"cell {index + 1}: its \"source\" is {type(source).__name__} "
                              f"{json.dumps(source)[:40]}, not text (a string or a list of strings)")
        as_list = isinstance(source, list)
        masked, saved, token = _mask(text)
        if masked is not None:
            code.append((index, cell, text, masked, saved, token, as_list))
    for index, _, _, masked, *_ in code:  # a cell Python 3 refuses: said, nothing written
        try:
            check_python(masked)
        except EngineError as exc:
            raise EngineError(f"cell {index + 1}: {exc}") from None
    together = _convert_together([c[3] for c in code], convert) if len(code) > 1 else None
    reports = []
    changed: Dict[int, object] = {}
    for k, (index, cell, text, masked, saved, token, as_list) in enumerate(code):
        if together is not None:
            new, report = together[k]
        else:
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


MOVED = "# tf-migrate: this cell's code moved to another cell (the notebook is migrated as one program)"


@dataclass
class CellReport:
    """One cell's share of a notebook migrated as one program."""
    findings: List[dict]
    names: Dict[str, str]


def _convert_together(sources: List[str], convert):
    """[(new source or None, CellReport)] per cell from one conversion of all cells
    joined, or None when that cannot be split back into the same cells."""
    nonce = 0
    while any(f"tf-migrate-cell-{nonce}" in src for src in sources):
        nonce += 1
    # a statement, not a comment: a comment rides along with the statement after it
    # when a rule moves or removes that one
    marker = f"__tf_migrate_cell_{nonce}__("
    parts, starts, line = [], [], 1
    for k, src in enumerate(sources):
        body = src if src.endswith("\n") or not src else src + "\n"
        parts.append(f"{marker}{k})\n{body}")
        starts.append(line + 1)  # the cell's first line in the joined program
        line += 1 + body.count("\n")
    try:
        new, outcome = convert("".join(parts))
    except EngineError:
        return None  # a cell that does not parse: per cell, so the error names it
    pieces = None
    if new is not None:
        split = re.split(r"(?m)^" + re.escape(marker) + r"(\d+)\)\n", new)
        numbers = [int(n) for n in split[1::2]]
        if numbers != sorted(set(numbers)) or any(marker in b for b in split[2::2]):
            return None  # a rewrite reordered code across cell boundaries
        bodies = {n: body for n, body in zip(numbers, split[2::2])}
        pieces = []
        for k, src in enumerate(sources):
            body = bodies.get(k, "")
            if k == 0:
                body = split[0] + body
            if src.strip() and not body.strip():  # its statements went into another cell
                body = MOVED + "\n"
            if src and not src.endswith("\n") and body.endswith("\n"):
                body = body[:-1]
            pieces.append(body)

        try:
            for body in pieces:
                ast.parse(body)
        except SyntaxError:
            return None  # a cell boundary inside moved code: each cell must stand alone
    per_cell = [[] for _ in sources]
    for finding in outcome.findings:
        if finding.line + 1 in starts:
            continue  # on a marker: not the user's code
        k = max((i for i, start in enumerate(starts) if start <= finding.line), default=0)
        per_cell[k].append(dataclasses.replace(finding, line=finding.line - starts[k] + 1))
    names = dict(getattr(outcome, "names", {}) or {})
    result = []
    for k, src in enumerate(sources):
        cell_new = None
        if pieces is not None and pieces[k] != src:
            cell_new = pieces[k]
        result.append((cell_new, CellReport(per_cell[k], names if k == 0 else {})))
    return result


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


def cell_sources(raw: bytes) -> Optional[Dict[int, str]]:
    """Each code cell's source text by its index (what a diff of a notebook shows, cell by
    cell), or None when ``raw`` is not a notebook whose cells hold text."""
    try:
        cells = json.loads(raw.decode("utf-8"))["cells"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(cells, list):
        return None
    out: Dict[int, str] = {}
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = _cell_text(cell.get("source", ""))
        if text is None:
            return None
        out[index] = text
    return out


def _cell_text(source) -> Optional[str]:
    """A cell's ``source`` as text (a string, or a list of strings joined), else None."""
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    return source if isinstance(source, str) else None


def notebook_lines(raw: bytes) -> Dict[int, List[int]]:
    """For each code cell (by index), the line of the .ipynb file where each of its
    source lines is written (1-based): what a code-scanning UI showing the file needs.
    A source written as one JSON string maps every line to the string's line."""
    try:
        text = raw.decode("utf-8")
        spans = _source_spans(text)
    except (UnicodeDecodeError, ValueError):
        return {}
    if not spans:
        return {}
    decoder = json.JSONDecoder()
    out: Dict[int, List[int]] = {}
    for index, (start, end) in spans.items():
        value = text[start:end]
        first = text.count("\n", 0, start) + 1
        if not value.startswith("["):
            out[index] = [first] * (json.loads(value).count("\n") + 1 if value.startswith('"') else 1)
            continue
        lines, i = [], start + 1
        while True:
            i = re.compile(r"[ \t\n\r,]*").match(text, i).end()
            if i >= end - 1 or text[i] == "]":
                break
            item, after = decoder.raw_decode(text, i)
            lines.append(text.count("\n", 0, i) + 1)
            i = after
        out[index] = lines
    return out


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
            errors_before, candidates = len(errors), 0

            def unreadable(exc: OSError) -> None:
                errors.append((exc.filename or path, f"cannot read folder: {exc.strerror or exc}"))

            for folder, dirs, names in os.walk(path, onerror=unreadable):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith(".")
                                 and not excluded(os.path.join(folder, d))
                                 and _inside(os.path.join(folder, d), root_real))
                for name in sorted(names):
                    full = os.path.join(folder, name)
                    candidates += name.endswith((".py", ".ipynb"))
                    if name.endswith((".py", ".ipynb")) and not excluded(full):
                        if os.path.islink(full) and not _inside(full, root_real):
                            continue  # never follow a link out of the tree
                        if not os.path.isfile(full):  # a FIFO, socket, device or link loop
                            errors.append((full, f"{why_not_regular(full)}, not a regular file; "
                                                 "skipped"))
                            continue
                        files.append(full)
            if not candidates and len(errors) == errors_before and not excluded(path):
                # a CI check on a wrong path must not pass; one the config excludes is chosen
                errors.append((path, "no Python files (.py, .ipynb) in this folder"))
        elif os.path.isfile(path):
            if not path.endswith((".py", ".ipynb")):
                errors.append((path, "not a Python file or notebook (.py, .ipynb); skipped"))
            else:
                files.append(path)
        else:
            errors.append((path, f"{why_not_regular(path)}, not a regular file"))
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
        mode = stat.S_IMODE(os.stat(path).st_mode) if os.path.exists(path) else new_file_mode()
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


def new_file_mode() -> int:
    """The mode ``open()`` would give a new file: 0666 less the process umask."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _synced_temp(folder: str, data: bytes, rescues: Optional[str] = None) -> str:
    """A ``.tf-migrate-<pid>-*.tmp`` file in ``folder`` holding ``data``, on disk."""
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp",
                               prefix=temp_prefix("rescue" if rescues else "new", rescues))
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


def content_digest(data: bytes) -> str:
    """SHA-256 (hex) of a file's content: what a run keeps of what it read."""
    return hashlib.sha256(data).hexdigest()


def replace_file(path: str, data: bytes, expected: Optional[str]) -> None:
    """Replace a source file's content, keeping what a rename would lose. ``expected``:
    the SHA-256 (hex) of the bytes that were read; ``Changed`` if the file now holds
    something else. The check and the replacement are one step for tf-migrate runs: both
    happen under the folder's lock (:func:`migrate.safeio.folder_lock`), so a concurrent
    run's write is either seen by the check or made after this one, never overwritten.
    Normally a temp file with the same mode and owner is renamed over the file (atomic).
    A file with other hard links, or one whose owner cannot be given to a new file, is
    rewritten in place instead, so the links and the owner stay; the complete new text
    is fsynced next to it first (``.tf-migrate-*.tmp``) and removed once the in-place
    write is on disk, so even a kill then loses nothing."""
    with folder_lock(os.path.dirname(os.path.abspath(path))):
        if expected is not None and current_digest(path) != expected:
            raise Changed(path)
        st = os.stat(path)
        mode = stat.S_IMODE(st.st_mode)
        if st.st_nlink == 1:
            try:
                atomic_write(path, data, mode, owner=(st.st_uid, st.st_gid))
                return
            except PermissionError:
                pass  # cannot hand a new file to the owner: rewrite in place
        rescue = _synced_temp(os.path.dirname(os.path.abspath(path)), data,
                              rescues=os.path.basename(path))
        try:
            with open(path, "r+b") as handle:
                handle.seek(0)
                handle.write(data)
                handle.truncate()
                handle.flush()
                os.fsync(handle.fileno())
        finally:
            os.unlink(rescue)


def current_digest(path: str) -> Optional[str]:
    """The SHA-256 of what ``path`` holds now (None when it cannot be read)."""
    try:
        with open(path, "rb") as handle:
            return content_digest(handle.read())
    except OSError:
        return None

