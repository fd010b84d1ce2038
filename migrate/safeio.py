"""Opening files the user did not make for us: never block, never follow a surprise.

Every file tf-migrate reads that is not a source it was asked to migrate -- a cache
entry, the rules index, a checkpoint's ``checkpoint`` file or ``.index``, a name map,
``pyproject.toml`` -- goes through :func:`read_regular`: it opens with ``O_NONBLOCK``
(a FIFO in place of the file cannot hang the run) and checks with ``fstat`` that what
it opened is a regular file before reading a byte. Errors are ``OSError`` whose
``str`` is one line for the user.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import time
from typing import Iterator, List, Optional, Tuple

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the lock file below
    fcntl = None  # type: ignore[assignment]


class NotRegular(OSError):
    """The path names a FIFO, socket, device or folder, not a file."""


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def why_not_regular(path: str) -> str:
    """What ``path`` is instead of a regular file, in a few words."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ENOENT and os.path.islink(path):
            return "a broken symbolic link"
        return describe(exc)
    return kind_of(mode)


def describe(exc: OSError) -> str:
    """``exc`` as a short cause: ``a symbolic link loop``, ``permission denied``, ..."""
    if isinstance(exc, (NotRegular, NotOwned)):
        return exc.args[0]
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop"
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    return str(exc) or type(exc).__name__


class NotOwned(OSError):
    """The file belongs to another user (for files only we may have written)."""


def read_regular(path: str, limit: Optional[int] = None, owned: bool = False) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit``); a FIFO, socket,
    device or folder raises :class:`NotRegular` without blocking; with ``owned``, a file
    of another user raises :class:`NotOwned`."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{kind_of(st.st_mode)}, not a regular file")
        if owned and st.st_uid != os.geteuid():
            raise NotOwned(f"owned by uid {st.st_uid}, not by you")
        chunks = []
        size = 0
        while limit is None or size < limit:
            chunk = os.read(fd, 1 << 20 if limit is None else min(1 << 20, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str) -> str:
    """:func:`read_regular` decoded as UTF-8 (``UnicodeDecodeError`` is a ``ValueError``)."""
    return read_regular(path).decode("utf-8")


def is_regular(path: str) -> bool:
    """True for a regular file (after links); never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


# -- temp files with an owner marker ------------------------------------------------
TEMP = ".tf-migrate-"
_TEMP_NAME = re.compile(r"^\.tf-migrate-(\d+)-(new|rescue|ckpt)(?:\.(.+))?\.[^.]+\.tmp$")


def temp_prefix(kind: str, target: Optional[str] = None) -> str:
    """The start of a temp file's name: it carries the owner marker (this process's id)
    and, for a rescue copy, the name of the file it rescues; ``sweep_temps`` knows them by
    it."""
    return f"{TEMP}{os.getpid()}-{kind}" + (f".{target}" if target else "") + "."


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


def sweep_temps(folder: str) -> List[Tuple[str, str]]:
    """Remove what an interrupted run (killed, or out of power) left in ``folder``: temp
    files and checkpoint staging folders whose owner marker names a process that is gone,
    if they are the current user's. A rescue copy (the complete new text of a file that
    was being rewritten in place) is removed only when the file already holds it;
    otherwise it is kept and reported, so nothing is lost. Returns (path, message) rows."""

    kept: List[Tuple[str, str]] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return kept
    for name in names:
        match = _TEMP_NAME.match(name)
        if match is None:
            continue
        pid, kind, target = int(match.group(1)), match.group(2), match.group(3)
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
            if st.st_uid != os.geteuid() or _alive(pid):
                continue
            if kind == "ckpt" and stat.S_ISDIR(st.st_mode):
                shutil.rmtree(path)
            elif not stat.S_ISREG(st.st_mode):
                continue
            elif kind == "rescue" and target:
                original = os.path.join(folder, target)
                try:
                    same = read_regular(original) == read_regular(path)
                except OSError:
                    same = False
                if same:
                    os.unlink(path)
                else:
                    kept.append((original, f"an interrupted run was rewriting this file in "
                                           f"place; its complete new text is kept in {path}: "
                                           "check the file, then remove that copy"))
            else:
                os.unlink(path)
        except OSError:
            continue
    return kept


# -- one writer a folder at a time ----------------------------------------------------
LOCK_FILE = ".tf-migrate.lock"


@contextlib.contextmanager
def folder_lock(folder: str) -> Iterator[None]:
    """Hold ``folder``'s write lock: between tf-migrate runs, only one at a time checks a
    file of this folder and replaces it (the check that the file still holds what was read
    and the rename are one step). POSIX: ``flock`` on the folder itself, released by the
    kernel when a run dies, leaving nothing behind. Elsewhere: a lock file made with
    ``O_EXCL`` and removed after (one left by a killed run is taken over after 60 s)."""
    if fcntl is not None:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing the only descriptor releases the lock
        return
    path = os.path.join(folder, LOCK_FILE)  # pragma: no cover - Windows
    while True:  # pragma: no cover - Windows
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            break
        except FileExistsError:
            try:
                if time.time() - os.stat(path).st_mtime > 60:
                    os.unlink(path)
                    continue
            except OSError:
                continue
            time.sleep(0.01)
    try:  # pragma: no cover - Windows
        yield
    finally:  # pragma: no cover - Windows
        with contextlib.suppress(OSError):
            os.unlink(path)
