"""Which rules exist and which a run selects, without importing libcst.

A warm run (every file a cache hit) parses nothing, so it must not pay for importing
libcst and the rules: the index of rule codes is cached per tool version and checked
against the rule files' names.
"""
from __future__ import annotations

import os
import re
from typing import Dict, List, Sequence

from migrate.codemod.cache import cache_dir, cache_key, read_json, salt, write_json


def rule_index(use_cache: bool = True) -> Dict[str, bool]:
    """``{code: runs on lint}`` for every rule, without importing the rules when the
    cache holds the index for this exact version of the tool (fast warm runs). A cached
    index that is not exactly that shape is ignored and rewritten; with ``use_cache=False``
    it is neither read nor written."""

    path = os.path.join(cache_dir(), f"rules-{salt()[:16]}.json")
    use_cache = use_cache and cache_key() is not None
    if use_cache:
        try:
            index = read_json(path)  # None for a FIFO, a foreign or a broken file
            # the codes are the rule files' names (tfm201_*.py, or a package tfm501_*/ for a
            # rule that grew stages): checked without importing them
            import migrate.rules as package

            codes = {f"TFM{name[3:6]}" for name in os.listdir(package.__path__[0])
                     if re.fullmatch(r"tfm\d{3}_\w+\.py", name) or (
                         re.fullmatch(r"tfm\d{3}_\w+", name)
                         and os.path.isfile(os.path.join(package.__path__[0], name, "__init__.py")))}
            if isinstance(index, dict) and set(index) == codes and all(
                    isinstance(v, bool) for v in index.values()):
                return index
        except (OSError, ValueError):
            pass
    # libcst: only when the index is not cached
    from migrate.codemod.rule import all_rules

    index = {code: bool(rule.lint) for code, rule in all_rules().items()}
    if use_cache:
        write_json(path, index)
    return index


def select_codes(select: Sequence[str] = (), ignore: Sequence[str] = (),
                 lint_only: bool = False, use_cache: bool = True) -> List[str]:
    chosen = []
    for code, lint in rule_index(use_cache).items():
        if lint_only and not lint:
            continue
        if select and not any(code.startswith(p) for p in select):
            continue
        if any(code.startswith(p) for p in ignore):
            continue
        chosen.append(code)
    return chosen
