"""The content-hash cache: where it lives, and a salt that changes with the tool."""
from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Optional, Sequence

from migrate import __version__


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
        import importlib.util

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


def write_json(path: str, data) -> None:
    """Best effort: a cache that cannot be written is only a slower run."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # sources stay private
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, path)
    except OSError:
        pass


class Cache:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.root = cache_dir()

    def key(self, raw: bytes, path: str, codes: Sequence[str], fix: bool) -> str:
        digest = hashlib.sha256(salt().encode())
        digest.update(f"{os.path.splitext(path)[1]}|{fix}|{','.join(codes)}|".encode())
        digest.update(raw)
        return digest.hexdigest()

    def _file(self, key: str) -> str:
        return os.path.join(self.root, key[:2], key + ".json")

    def get(self, key: str) -> Optional[dict]:
        if not self.enabled:
            return None
        try:
            with open(self._file(key), "r", encoding="utf-8") as handle:
                data = json.load(handle)
            if not isinstance(data, dict) or data.pop("check", None) != _check(key, data):
                return None  # damaged, or not one this tool wrote for this key: a miss
            if data.get("new") is not None:
                if not isinstance(data["new"], str):
                    return None
                data["new"] = base64.b64decode(data["new"], validate=True)
        except (OSError, ValueError, TypeError):  # unreadable or corrupt: a miss
            return None
        data["validated"] = True  # its checksum proves it is a result validated when made
        return data

    def put(self, key: str, result: dict) -> None:
        if not self.enabled:
            return
        data = dict(result)
        if data.get("new") is not None:
            data["new"] = base64.b64encode(data["new"]).decode("ascii")
        data["check"] = _check(key, data)
        write_json(self._file(key), data)


def _check(key: str, data: dict) -> str:
    """A checksum binding an entry's content to its key: any damaged byte makes a miss
    (parsing alone would accept a flipped letter inside a string)."""
    payload = json.dumps(data, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(f"{key}|{payload}".encode()).hexdigest()
