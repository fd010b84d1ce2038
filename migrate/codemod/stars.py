"""TensorFlow names a file gets through star imports of the project's own modules.

Research code often writes ``from model.layers import *`` where ``model/layers.py`` did
``import tensorflow as tf``. The file being migrated then uses ``tf`` it never imports. This
module finds the project file a star import names, next to the importing file, and reads
(with CPython's ``ast``, never importing it) which top-level names it binds to TensorFlow,
following its own star imports a few levels deep. Only regular files are read, never
through a symbolic link, and only small ones; anything unclear binds nothing.

The engine binds what is found before the rules run; the runner adds the files' contents to
the cache key, so a change in ``model/layers.py`` is a new key for its importers.
"""
from __future__ import annotations

import ast
import hashlib
import os
import re
import stat
from typing import Dict, List, Optional, Tuple

from migrate.codemod.needles import TF_ROOTS

STAR = re.compile(rb"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*\*", re.M)
MOST_BYTES = 2 << 20  # a module bigger than this is not read
DEPTH = 3  # star imports followed through this many modules
LEVELS = 5  # folders above the importing file searched for an absolute module


def module_file(path: str, dots: int, module: str) -> Optional[str]:
    """The project file ``from <dots><module> import *`` in the file at ``path`` names:
    relative to the file's package, or for an absolute name, under the file's folder or one
    of its parents (the project root is not known). None when there is none."""
    if not path or (not module and not dots):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    parts = module.split(".") if module else []
    if dots:
        for _ in range(dots - 1):
            folder = os.path.dirname(folder)
        bases = [folder]
    else:
        bases = [folder]
        for _ in range(LEVELS):
            parent = os.path.dirname(bases[-1])
            if parent == bases[-1]:
                break
            bases.append(parent)
    for base in bases:
        for candidate in (os.path.join(base, *parts) + ".py", os.path.join(base, *parts, "__init__.py")):
            if parts and _regular(candidate):
                return candidate
            if not parts and candidate.endswith("__init__.py") and _regular(candidate):
                return candidate
    return None


def _regular(path: str) -> bool:
    """A regular file reached through no symbolic link, small enough to read."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size > MOST_BYTES:
        return False
    return os.path.realpath(path) == os.path.abspath(path)


def _read(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as handle:
            return handle.read(MOST_BYTES + 1)
    except OSError:
        return None


def tf_bindings(path: str, dots: int, module: str, depth: int = 0) -> Dict[str, str]:
    """``{local name: TensorFlow qualname}`` that ``from <dots><module> import *`` binds in
    the file at ``path`` (``{"tf": "tensorflow"}``); empty when unknown."""
    target = module_file(path, dots, module)
    data = _read(target) if target else None
    if data is None or len(data) > MOST_BYTES:
        return {}
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: Dict[str, str] = {}
    public = None
    for node in tree.body:  # statement order: a later binding wins, as at run time
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                root = alias.name.split(".")[0]
                if root in TF_ROOTS:
                    found[local] = alias.name if alias.asname else root
                else:
                    found.pop(local, None)
        elif isinstance(node, ast.ImportFrom):
            name = node.module or ""
            if any(alias.name == "*" for alias in node.names):
                if node.level == 0 and name.split(".")[0] in TF_ROOTS:
                    continue  # `from tensorflow import *`: nothing TF1 code calls tf
                if depth < DEPTH:
                    found.update(tf_bindings(target, node.level, name, depth + 1))
                continue
            for alias in node.names:
                local = alias.asname or alias.name
                if node.level == 0 and name.split(".")[0] in TF_ROOTS:
                    found[local] = f"{name}.{alias.name}"
                else:
                    found.pop(local, None)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.ClassDef)):
            for name in _bound(node):
                if name == "__all__" and isinstance(node, ast.Assign):
                    public = _literal_names(node.value)
                found.pop(name, None)
    found = {k: v for k, v in found.items() if not k.startswith("_")}
    if public is not None:
        found = {k: v for k, v in found.items() if k in public}
    return found


def _bound(node) -> List[str]:
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _literal_names(value) -> Optional[set]:
    try:
        names = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return None
    return set(names) if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names) else None


def key_material(path: str, raw: bytes) -> str:
    """The contents of every project file the star imports of ``raw`` reach (a digest),
    for the cache key of the file at ``path``; "" when it has none."""
    if b"import" not in raw or b"*" not in raw:
        return ""
    digest, seen = hashlib.sha256(), set()
    todo: List[Tuple[str, bytes, int]] = [(path, raw, 0)]
    while todo:
        here, data, depth = todo.pop()
        for match in STAR.finditer(data):
            target = module_file(here, len(match.group(1)), match.group(2).decode("ascii", "replace"))
            if target is None or target in seen:
                continue
            seen.add(target)
            content = _read(target) or b""
            digest.update(target.encode("utf-8", "surrogateescape") + b"\0" + content + b"\0")
            if depth < DEPTH:
                todo.append((target, content, depth + 1))
    return digest.hexdigest() if seen else ""


def project_stars(path: str, source: str) -> Dict[Tuple[int, str], Dict[str, str]]:
    """``{(dots, module): tf_bindings(...)}`` for every star import of ``source`` that names
    a project module, each module read once per file."""
    if "*" not in source or "import" not in source or not path:
        return {}
    found: Dict[Tuple[int, str], Dict[str, str]] = {}
    for match in STAR.finditer(source.encode("utf-8", "surrogateescape")):
        module = match.group(2).decode("ascii", "replace")
        if not match.group(1) and module.split(".")[0] in TF_ROOTS:
            continue
        key = (len(match.group(1)), module)
        if key not in found:
            found[key] = tf_bindings(path, *key)
    return found


def header(stars: Dict[Tuple[int, str], Dict[str, str]]) -> str:
    """Import lines standing for what those star imports bring (``import tensorflow as
    tf\n``), for the text tests that decide which rules run and whether a file is TF1 code:
    such a file mentions no tensorflow import itself."""
    names = {name: qualname for bindings in stars.values() for name, qualname in bindings.items()}
    return "".join(f"import {qualname} as {name}\n" for name, qualname in sorted(names.items()))
