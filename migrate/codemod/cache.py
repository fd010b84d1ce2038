"""The content-hash cache: where it lives, and a salt that changes with the tool."""
from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.util
import json
import os
import stat
import sys
from typing import Optional, Sequence

from migrate import __version__
from migrate.codemod.report import Reported
from migrate.safeio import describe, read_regular


def cache_dir() -> str:
    explicit = os.environ.get("TF_MIGRATE_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tf-migrate")


_SALT: Optional[str] = None


def salt() -> str:
    """Changes whenever the tool's code or data changes."""
    global _SALT
    if _SALT is None:
        digest = hashlib.sha256(__version__.encode())
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the migrate package

        shims = importlib.util.find_spec("shims")  # rules read shims/contrib's export lists
        roots = [root] + [os.path.join(p, "contrib") for p in
                          (shims.submodule_search_locations or [] if shims else [])]
        for folder, dirs, names in sorted(w for r in roots for w in os.walk(r)):
            dirs.sort()
            for name in sorted(names):
                if name.endswith((".py", ".json")):
                    with open(os.path.join(folder, name), "rb") as handle:
                        digest.update(name.encode())
                        digest.update(handle.read())
        _SALT = digest.hexdigest()
    return _SALT


_TRUST: Optional[bytes] = None  # the key of the trusted cache folder, b"" when untrusted
_KEY_FILE = "key"


def _owned_private(path: str) -> Optional[str]:
    """Why the folder at ``path`` may not be trusted (None: it is a real folder the
    current user owns and nobody else can write)."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})"
    if st.st_mode & 0o022:
        return "can be written by other users"
    return None


def cache_key() -> Optional[bytes]:
    """The secret that signs this user's cache entries, or None when the cache folder
    cannot be trusted (then it is not used at all, with one warning). The folder must be
    a real folder owned by the current user that nobody else can write; the key is a
    random 32-byte file inside it, readable by that user only. An entry whose signature
    does not verify under the key is a miss, so nobody without the key can forge one."""
    global _TRUST
    if _TRUST is None:
        root = cache_dir()
        why = None
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
            why = _owned_private(root)
            if why is None:
                path = os.path.join(root, _KEY_FILE)
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                    with os.fdopen(fd, "wb") as handle:
                        handle.write(os.urandom(32))
                except FileExistsError:
                    pass
                st = os.lstat(path)
                if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
                    why = f"holds a key file ({_KEY_FILE}) that is not private to you"
                else:
                    key = read_regular(path, 64)
                    if len(key) != 32:
                        why = f"holds a damaged key file ({_KEY_FILE})"
                    else:
                        _TRUST = key
        except OSError as exc:

            why = f"cannot be used ({describe(exc)})"
        if _TRUST is None:
            _TRUST = b""
            print(f"tf-migrate: warning: cache folder {root} {why}; the cache is not used "
                  "(set TF_MIGRATE_CACHE_DIR to a folder of your own)", file=sys.stderr)
    return _TRUST or None


def read_json(path: str):
    """A cache file's JSON, or None: missing, not a regular file (never blocks on a FIFO),
    not owned by the current user, or unreadable."""
    try:
        return json.loads(read_regular(path, owned=True).decode("utf-8"))
    except (OSError, ValueError):
        return None


def write_json(path: str, data) -> None:
    """Best effort: a cache that cannot be written is only a slower run."""
    if cache_key() is None:
        return
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        if _owned_private(os.path.dirname(path)) is not None:
            return
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # sources stay private
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, path)
    except OSError:
        pass


class Cache:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and cache_key() is not None
        self.root = cache_dir()

    def key(self, raw: bytes, path: str, codes: Sequence[str], fix: bool, extra: str = "") -> str:
        """``extra``: what else the result depends on (the project modules its star imports
        read, ``stars.key_material``)."""
        digest = hashlib.sha256(salt().encode())
        digest.update(f"{os.path.splitext(path)[1]}|{fix}|{','.join(codes)}|{extra}|".encode())
        digest.update(raw)
        return digest.hexdigest()

    def _file(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key + ".json")

    def get(self, key: str) -> Optional[dict]:
        if not self.enabled:
            return None
        try:
            data = read_json(self._file(key))
            if not isinstance(data, dict) or not hmac.compare_digest(
                    str(data.pop("check", "")), _check(key, data)):
                return None  # damaged, or not one this tool wrote for this key: a miss
            if data.get("new") is not None:
                if not isinstance(data["new"], str):
                    return None
                data["new"] = base64.b64decode(data["new"], validate=True)
            if not isinstance(data.get("findings"), list):
                return None
            data["findings"] = [Reported.from_json(f) for f in data["findings"]]
        except (OSError, ValueError, TypeError):  # unreadable or corrupt: a miss
            return None
        data["validated"] = True  # its checksum proves it is a result validated when made
        return data

    def put(self, key: str, result: dict) -> None:
        if not self.enabled:
            return
        data = dict(result)
        data["findings"] = [f.to_json() for f in data.get("findings", ())]
        if data.get("new") is not None:
            data["new"] = base64.b64encode(data["new"]).decode("ascii")
        data["check"] = _check(key, data)
        write_json(self._file(key), data)


def _check(key: str, data: dict) -> str:
    """A keyed checksum (HMAC-SHA256 under :func:`cache_key`) binding an entry's content
    to its key: any damaged byte makes a miss (parsing alone would accept a flipped letter
    inside a string), and without the key nobody can make an entry that verifies."""
    payload = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hmac.new(cache_key() or b"", f"{key}|{payload}".encode(), hashlib.sha256).hexdigest()
