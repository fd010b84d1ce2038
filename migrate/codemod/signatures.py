"""How TensorFlow's functions bind a call's arguments, from the generated tables.

``tf1_signatures`` holds each TF1 name's parameters as TF 1.15 binds them (its
``tf.compat.v1`` function, which keeps TF1's signature); ``tf2_signatures`` those of every
rewrite target in TF 2.21 (raw ops take keywords only). A rule binds a call the way Python
would, to learn which parameter each argument fills, and whether the call raises
``TypeError`` before it runs.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Sequence, Tuple

from migrate.codemod.tables import upgrade_tables


@dataclass(frozen=True)
class Signature:
    positional: Tuple[str, ...]  # parameters an argument may fill by position, in order
    keyword_only: Tuple[str, ...]
    required: FrozenSet[str]
    varargs: bool = False
    varkw: bool = False

    @property
    def names(self) -> Tuple[str, ...]:
        return self.positional + self.keyword_only

    @property
    def all_keyword_only(self) -> bool:
        return not self.positional and not self.varargs


@dataclass(frozen=True)
class Binding:
    params: Tuple[Optional[str], ...]  # per argument, the parameter it fills (None: *args)
    problem: Optional[str]  # why Python raises TypeError for this call; None: it binds


def parse(line: str) -> Signature:
    positional: List[str] = []
    keyword_only: List[str] = []
    required = set()
    varargs = varkw = star = False
    for part in filter(None, (p.strip() for p in line.split(","))):
        if part == "*":
            star = True
        elif part.startswith("**"):
            varkw = True
        elif part.startswith("*"):
            varargs = star = True
        else:
            name = part.rstrip("=")
            (keyword_only if star else positional).append(name)
            if not part.endswith("="):
                required.add(name)
    return Signature(tuple(positional), tuple(keyword_only), frozenset(required), varargs, varkw)


@functools.lru_cache(maxsize=None)
def tf1_signature(name: str) -> Optional[Signature]:
    line = upgrade_tables().get("tf1_signatures", {}).get(name)
    return None if line is None else parse(line)


@functools.lru_cache(maxsize=None)
def tf2_signature(name: str) -> Optional[Signature]:
    line = upgrade_tables().get("tf2_signatures", {}).get(name)
    return None if line is None else parse(line)


@functools.lru_cache(maxsize=None)
def tf2_same_name_signature(name: str) -> Optional[Signature]:
    """TF 2.21's own function of a TF1 name TensorFlow renames into tf.compat.v1 although
    TF2 has that name too (tf.zeros_initializer: TF2's Zeros takes no dtype)."""
    line = upgrade_tables().get("tf2_same_name_signatures", {}).get(name)
    return None if line is None else parse(line)


def rewrite_target(name: str) -> str:
    """The TF2 name a TF1 name's calls end up calling (TensorFlow's rename, else itself)."""
    target = upgrade_tables()["symbol_renames"].get(name, name)
    return "tf." + target[len("tf.compat.v2."):] if target.startswith("tf.compat.v2.") else target


def bind(signature: Signature, keywords: Sequence[Optional[str]]) -> Binding:
    """Binds a call whose arguments are ``keywords`` (None for a positional argument, in
    order; no ``*``/``**`` arguments) as Python would."""
    params: List[Optional[str]] = []
    filled = set()
    position = 0
    problem = None
    for keyword in keywords:
        if keyword is None:
            if position < len(signature.positional):
                name = signature.positional[position]
            elif signature.varargs:
                name = None
            else:
                problem = problem or (
                    "takes keyword arguments only" if signature.all_keyword_only else
                    f"takes {len(signature.positional)} positional arguments, not {position + 1}")
                name = None
            position += 1
        else:
            name = keyword
            if name not in signature.names and not signature.varkw:
                problem = problem or f"has no parameter {name}="
        if name is not None:
            if name in filled:
                problem = problem or f"gets {name} twice"
            filled.add(name)
        params.append(name)
    missing = sorted(signature.required - filled)
    if problem is None and missing:
        problem = "needs " + ", ".join(f"{m}=" for m in missing)
    return Binding(tuple(params), problem)


def call_keywords(call) -> Optional[List[Optional[str]]]:
    """A libcst call's arguments as ``bind`` takes them; None if it has ``*``/``**``."""
    if any(a.star for a in call.args):
        return None
    return [a.keyword.value if a.keyword is not None else None for a in call.args]


def tf1_keyword_evidence(name: str, keywords: Sequence[Optional[str]]) -> bool:
    """Does the call pass a keyword only TF1's ``name`` has (``dim=``, ``keep_dims=``)?
    Then the call is TF1 code, whatever the rest of its file is."""
    tf1, tf2 = tf1_signature(name), tf2_signature(name)
    if tf1 is None or tf2 is None or tf2.varkw:
        return False
    return any(k is not None and k in tf1.names and k not in tf2.names for k in keywords)


@dataclass(frozen=True)
class Readings:
    """How a call of a name valid in TF1 and TF2 binds under each signature."""
    tf1: Binding
    tf2: Binding
    # TensorFlow's upgrade tables know a change of this function's arguments (a transform,
    # a reorder, a keyword rename, a warning); without one, a parameter that only changed its
    # name (tf.device's device_name_or_function -> device_name) means what it meant
    changed: bool = True

    @property
    def verdict(self) -> str:
        """"tf1"/"tf2": only that reading binds; "same": both bind each argument to the same
        parameter (TF1's keyword renames applied), or to parameters TensorFlow's tables
        record no change of; "differ": both bind, differently; "neither": the call is
        invalid either way."""
        if self.tf1.problem and self.tf2.problem:
            return "neither"
        if self.tf1.problem or self.tf2.problem:
            return "tf2" if self.tf1.problem else "tf1"
        return "same" if self.tf1.params == self.tf2.params or not self.changed else "differ"

    def differ_message(self, name: str) -> str:
        """The error finding's text for a call both signatures bind, differently."""
        index, one, two = self.first_difference()
        one, two = (p if p and "=" in p else f"{p or '*args'}=" for p in (one, two))
        return (f"error: {name}: argument {index + 1} is {one} in TF1 but {two} in TF2, and this "
                "file uses no TF1-only API to tell which it was written for; pass that argument "
                "by keyword and run the upgrade again")

    def first_difference(self) -> Tuple[int, Optional[str], Optional[str]]:
        for index, (one, two) in enumerate(zip(self.tf1.params, self.tf2.params)):
            if one != two:
                return index, one, two
        return -1, None, None


def readings(name: str, keywords: Sequence[Optional[str]]) -> Optional[Readings]:
    """The call bound as TF 1.15's ``name`` and as TF 2.21's ``name`` binds it (TF1's
    parameters under their TF2 names), or None when either signature is unknown."""
    tf1, tf2 = tf1_signature(name), tf2_signature(rewrite_target(name))
    if tf1 is None or tf2 is None:
        return None
    tables = upgrade_tables()
    renames = tables["keyword_renames"].get(name, {})
    one = bind(tf1, keywords)
    one = Binding(tuple(_renamed(renames, p) for p in one.params), one.problem)
    changed = any(name in tables.get(table, ()) for table in
                  ("transforms", "reorders", "keyword_renames", "arg_warnings", "function_warnings"))
    return Readings(one, bind(tf2, keywords), changed)


def same_name_readings(name: str, keywords: Sequence[Optional[str]]) -> Optional[Readings]:
    """A call of a name TF2 has too but TensorFlow moves into tf.compat.v1, bound as TF
    1.15's function and as TF 2.21's function of the same name binds it."""
    tf1, tf2 = tf1_signature(name), tf2_same_name_signature(name)
    if tf1 is None or tf2 is None:
        return None
    renames = upgrade_tables()["keyword_renames"].get(name, {})  # max_pool's value is input
    one = bind(tf1, keywords)
    return Readings(Binding(tuple(_renamed(renames, p) for p in one.params), one.problem),
                    bind(tf2, keywords))


def _renamed(renames: dict, param: Optional[str]) -> Optional[str]:
    if param is None or param not in renames:
        return param
    return renames[param] or f"{param}= (gone in TF2)"
