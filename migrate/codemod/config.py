"""Planning a run: ``[tool.tf-migrate]`` from pyproject.toml and the rule codes to run.

Every problem is a :class:`UsageError` with one line to show; nothing here prints.
"""
from __future__ import annotations

import difflib
import os
from typing import Iterable, List, Optional

from migrate.codemod.target import KERAS_GENERATIONS, PROGRAM_FORMS, Target
from migrate.safeio import describe, read_regular

CONFIG_KEYS = ("select", "ignore", "exclude", "keras", "programs")


class UsageError(Exception):
    """Bad settings or options: one line, exit 2, before any work."""


def load_config(paths: List[str]) -> dict:
    """``[tool.tf-migrate]`` of the nearest pyproject.toml above the first path. An
    unknown key is an error (a misspelt ``exclude`` would migrate what was excluded)."""
    import tomllib  # only when a run is planned (not for --help)

    start = os.path.abspath(paths[0] if paths else ".")
    folder = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.lexists(candidate):
            try:
                data = tomllib.loads(read_regular(candidate).decode("utf-8"))
            except OSError as exc:
                raise UsageError(f"{candidate}: cannot read ({describe(exc)})") from None
            except UnicodeDecodeError:
                raise UsageError(f"{candidate}: not a TOML file (not UTF-8 text)") from None
            except tomllib.TOMLDecodeError as exc:
                raise UsageError(f"{candidate}: not valid TOML ({exc})") from None
            return _settings(candidate, data)
        parent = os.path.dirname(folder)
        if parent == folder:
            return {}
        folder = parent


def _settings(candidate: str, data: dict) -> dict:
    tool = data.get("tool", {})
    config = tool.get("tf-migrate", {}) if isinstance(tool, dict) else {}
    if not isinstance(config, dict):
        raise UsageError(f"{candidate}: [tool.tf-migrate] must be a table")
    for key in config:
        if key not in CONFIG_KEYS:
            near = difflib.get_close_matches(key, CONFIG_KEYS, 1)
            raise UsageError(f"{candidate}: [tool.tf-migrate] has no setting {key!r}"
                             + (f" (did you mean {near[0]!r}?)" if near else "")
                             + f"; the settings are {', '.join(CONFIG_KEYS)}")
    return config


def config_list(config: dict, key: str) -> List[str]:
    """A ``[tool.tf-migrate]`` list of strings; anything else is a usage error."""
    value = config.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        example = '["build/*", "*_pb2.py"]' if key == "exclude" else '["TFM1"]'
        raise UsageError(f"[tool.tf-migrate] {key} must be a list of strings, like {key} = "
                         f"{example}; got {value!r}")
    return value


def split_codes(values: Optional[Iterable[str]]) -> List[str]:
    """``--select TFM1,tfm2 --select TFM5`` -> ``["TFM1", "TFM2", "TFM5"]``."""
    out: List[str] = []
    for v in values or ():
        out += [p.strip().upper() for p in v.split(",") if p.strip()]
    return out


def choose_codes(select, ignore, config: dict, lint_only: bool, use_cache: bool = True) -> List[str]:
    """The rule codes to run: options first, then the config; an unknown prefix is an error."""
    from migrate.codemod.registry import (  # libcst-free, but the rule index reads a cache: only when a run is planned
        rule_index,
        select_codes,
    )

    if select is not None and not split_codes(select):
        raise UsageError("--select names no rule code; give one such as --select TFM1")
    if not select and config.get("select") == []:
        raise UsageError("[tool.tf-migrate] select = [] selects no rule; name codes, like "
                         'select = ["TFM1"], or remove the key to run every rule')
    select = split_codes(select) or split_codes(config_list(config, "select"))
    ignore = split_codes(ignore) + split_codes(config_list(config, "ignore"))
    known = rule_index(use_cache)
    for prefix in select + ignore:
        if not any(code.startswith(prefix) for code in known):
            raise UsageError(f"no rule code starts with {prefix!r} (see `tf-migrate rules`)")
    return select_codes(select, ignore, lint_only=lint_only, use_cache=use_cache)


def run_problem(jobs: int, timeout: float, report: Optional[str]) -> Optional[str]:
    """Why the run options cannot be used, or None (refused before any work)."""
    if jobs < 0 or jobs > 256:
        return f"--jobs must be between 0 (all cores) and 256, not {jobs}"
    if not timeout > 0:
        return f"--timeout must be a positive number of seconds, not {timeout}"
    if report is not None:
        folder = os.path.dirname(os.path.abspath(report))
        if os.path.isdir(report):
            return f"--report {report} is a folder; give a file path"
        if not os.path.isdir(folder):
            return f"--report {report}: the folder {folder} does not exist"
    return None


def choose_target(keras: Optional[str], config: dict, programs: Optional[str] = None) -> Target:
    """The run's :class:`Target`: ``--keras`` first, then ``keras`` of ``[tool.tf-migrate]``
    (a string or a number, "2" or "3"); ``--programs`` first, then ``programs`` ("native" or
    "shims"); anything else is a usage error."""
    value = keras if keras is not None else config.get("keras", 2)
    source = "--keras" if keras is not None else "[tool.tf-migrate] keras"
    text = str(value).strip()
    if isinstance(value, bool) or text not in {str(g) for g in KERAS_GENERATIONS}:
        raise UsageError(f"{source} must be 2 (tf_keras, the default) or 3 (Keras 3), not {value!r}")
    form = programs if programs is not None else config.get("programs", "native")
    where = "--programs" if programs is not None else "[tool.tf-migrate] programs"
    if not isinstance(form, str) or form.strip() not in PROGRAM_FORMS:
        raise UsageError(f"{where} must be native (the default) or shims, not {form!r}")
    return Target(keras=int(text), programs=form.strip())
