"""A light TensorFlow alias resolver.

libcst's QualifiedNameProvider resolves every name in a file (~3k lines/s);
we only care about names bound by ``import tensorflow...`` statements, so the
engine feeds import statements and function scopes to this resolver while it
walks the tree once, and rules ask it for the dotted name of an expression.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Set

import libcst as cst

from migrate.codemod.needles import TF_ROOTS  # noqa: E402  (the libcst-free home of the list)
# TF 1.15's tensorflow-estimator package under its public spellings: tf.estimator
ESTIMATOR_PUBLIC = ("tensorflow_estimator.compat.v1.estimator", "tensorflow_estimator.compat.v2.estimator",
                    "tensorflow_estimator.estimator")


def dotted(node: cst.BaseExpression) -> Optional[str]:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: List[str] = []
    while type(node) is cst.Attribute:  # (isinstance against libcst's ABCs is slow)
        parts.append(node.attr.value)
        node = node.value
    if type(node) is cst.Name:
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _is_tf_module(name: str) -> bool:
    """TensorFlow and the Keras packages (Keras names matter to the tracking rules)."""
    return name.split(".")[0] in TF_ROOTS


class Resolver:
    """Maps local names to the TensorFlow module or symbol they are bound to."""

    def __init__(self) -> None:
        self.aliases: Dict[str, str] = {}  # local name -> qualified name
        self.bindings: Dict[str, cst.CSTNode] = {}  # local name -> import statement
        self._shadowed: List[Set[str]] = []
        # TensorFlow imports of the module, for function bodies: a function defined above the
        # module's `import tensorflow as tf` runs after it (notebooks define their helpers
        # first); bound by one module-level import and nothing else at module level
        self.late: Dict[str, str] = {}

    # -- imports -----------------------------------------------------------
    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted(alias.name)
            if not full or not _is_tf_module(full):
                if full and not self._shadowed:  # ``import numpy as tf``: tf is numpy from here on
                    self.rebind(alias.asname.name.value if alias.asname is not None and isinstance(
                        alias.asname.name, cst.Name) else full.split(".")[0])
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
                self.aliases[local] = full
            else:  # ``import tensorflow.compat.v1`` binds ``tensorflow``
                local = full.split(".")[0]
                self.aliases[local] = local
            self.bindings[local] = node

    def add_import_from(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        module = dotted(node.module)
        if not module or not _is_tf_module(module):
            if not self._shadowed and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:  # ``from numpy import random as tf``
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        self.rebind(alias.asname.name.value)
                    elif isinstance(alias.name, cst.Name):
                        self.rebind(alias.name.value)
            return
        if isinstance(node.names, cst.ImportStar):
            return
        for alias in node.names:
            name = dotted(alias.name)
            if not name:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{module}.{name}"
            self.bindings[local] = node

    def rebind(self, name: str, qualname: Optional[str] = None) -> None:
        """A module-level statement binds ``name`` again (names follow statement order):
        to the TensorFlow name ``qualname`` (``tf = tf.compat.v1``), or to something else."""
        if qualname and _is_tf_module(qualname):
            self.aliases[name] = qualname
        else:
            self.aliases.pop(name, None)

    def prescan(self, module: cst.Module) -> None:
        """Reads the module-level TensorFlow imports for ``late`` (before the walk): names
        every module-level binding of which imports the same TensorFlow name."""
        seen: Dict[str, Set[Optional[str]]] = {}
        for stmt in module.body:
            smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else []
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                seen.setdefault(stmt.name.value, set()).add(None)
            for small in smalls:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    one = Resolver()
                    if isinstance(small, cst.Import):
                        one.add_import(small)
                    else:
                        one.add_import_from(small)
                    for alias in small.names:
                        name = alias.asname.name if alias.asname is not None else alias.name
                        local = name.value if isinstance(name, cst.Name) else (dotted(name) or "").split(".")[0]
                        seen.setdefault(local, set()).add(one.aliases.get(local))
                elif isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for target in targets:
                        if isinstance(target, cst.Name):
                            seen.setdefault(target.value, set()).add(None)
        self.late = {name: next(iter(quals)) for name, quals in seen.items()
                     if len(quals) == 1 and None not in quals}

    # -- scopes ------------------------------------------------------------
    def push_scope(self, local_names: Iterable[str]) -> None:
        self._shadowed.append({n for n in local_names if n in self.aliases or n in self.late})

    def pop_scope(self) -> None:
        self._shadowed.pop()

    def is_shadowed(self, name: str) -> bool:
        return any(name in s for s in self._shadowed)

    # -- queries -----------------------------------------------------------
    def qualname(self, node: cst.BaseExpression) -> Optional[str]:
        """The full dotted TensorFlow name of ``node`` (``tensorflow.compat.v1.layers.dense``)."""
        root = node
        while type(root) is cst.Attribute:
            root = root.value
        if type(root) is not cst.Name:
            return None
        head = root.value
        target = self.aliases.get(head)
        if target is None:
            target = self.late.get(head) if self._shadowed else None  # in a function body
            if target is None:
                return None  # most names: not bound by a TensorFlow import
        if self.is_shadowed(head):
            return None
        rest = dotted(node).partition(".")[2]
        name = f"{target}.{rest}" if rest else target
        # tf.compat.v2.compat.v1.X (tf_keras's spelling) is tf.compat.v1.X
        for prefix in ("tensorflow.compat.v2.compat.v1", "tensorflow.compat.v1.compat.v1"):
            if name == prefix or name.startswith(prefix + "."):
                return "tensorflow.compat.v1" + name[len(prefix):]
        return name

    def tf_alias(self) -> Optional[str]:
        """A local name bound to the ``tensorflow`` package itself, preferring ``tf``."""
        names = [n for n, q in self.aliases.items() if q == "tensorflow"]
        if not names and self._shadowed:  # a function body: the module's import, made later
            names = [n for n, q in self.late.items() if q == "tensorflow" and not self.is_shadowed(n)]
        if not names:
            return None
        return "tf" if "tf" in names else sorted(names)[0]


def v1name(qualname: Optional[str]) -> Optional[str]:
    """Canonical TF1 spelling: ``tensorflow.compat.v1.layers.dense`` -> ``tf.layers.dense``."""
    if not qualname:
        return None
    if qualname.startswith("tensorflow.compat.v1."):
        return "tf." + qualname[len("tensorflow.compat.v1."):]
    if qualname == "tensorflow.compat.v1":
        return "tf"
    if qualname.startswith("tensorflow.compat.v2"):
        return None
    if qualname.startswith("tensorflow."):
        return "tf." + qualname[len("tensorflow."):]
    if qualname == "tensorflow":
        return "tf"
    if qualname.startswith("tensorflow_estimator"):
        return _estimator_name(qualname)
    return None


def _estimator_name(qualname: str) -> Optional[str]:
    """``tf.estimator.tpu.TPUEstimator`` for ``tensorflow_estimator.estimator.tpu.TPUEstimator``
    and for its private path (``...python.estimator.tpu.tpu_estimator.TPUEstimator``, from
    the table read from TF 1.15), else None."""
    for prefix in ESTIMATOR_PUBLIC:
        if qualname == prefix or qualname.startswith(prefix + "."):
            return "tf.estimator" + qualname[len(prefix):]
    from migrate.codemod.tables import upgrade_tables  # the tables: only for this package's names

    names = upgrade_tables().get("private_names", {})
    parts = qualname.split(".")
    for end in range(len(parts), 2, -1):  # a member of a private object: Class.attr
        public = names.get(".".join(parts[:end]))
        if public is not None:
            return ".".join([public, *parts[end:]])
    return None


def keras_name(qualname: Optional[str]) -> Optional[str]:
    """``keras.layers.Dense`` for tf.keras / keras / tf_keras spellings of a Keras name."""
    if not qualname:
        return None
    for prefix in ("tensorflow.compat.v1.keras.", "tensorflow.compat.v2.keras.",
                   "tensorflow.keras.", "tf_keras.", "keras."):
        if qualname.startswith(prefix):
            return "keras." + qualname[len(prefix):]
    return None


def local_names(func: cst.FunctionDef) -> Set[str]:
    """Names a function binds locally (params, assignments, loop/with targets,
    nested defs, local imports), without looking into nested scopes."""
    names: Set[str] = set()
    params = func.params
    for p in (*params.posonly_params, *params.params, *params.kwonly_params):
        names.add(p.name.value)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    declared_global: Set[str] = set()

    def targets(t: cst.BaseExpression) -> None:
        if isinstance(t, cst.Name):
            names.add(t.value)
        elif isinstance(t, (cst.Tuple, cst.List)):
            for el in t.elements:
                targets(el.value)
        elif isinstance(t, cst.StarredElement):
            targets(t.value)

    def scan(body: Iterable[cst.CSTNode]) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign):
                        for t in small.targets:
                            targets(t.target)
                    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                        targets(small.target)
                    elif isinstance(small, (cst.Global, cst.Nonlocal)):
                        declared_global.update(n.name.value for n in small.names)
            elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                names.add(stmt.name.value)
            elif isinstance(stmt, (cst.For,)):
                targets(stmt.target)
                scan(stmt.body.body)
                if stmt.orelse:
                    scan(stmt.orelse.body.body)
            elif isinstance(stmt, cst.With):
                for item in stmt.items:
                    if item.asname is not None:
                        targets(item.asname.name)
                scan(stmt.body.body)
            elif isinstance(stmt, (cst.If, cst.While)):
                scan(stmt.body.body)
                orelse = stmt.orelse
                while orelse is not None:
                    scan(orelse.body.body)
                    orelse = getattr(orelse, "orelse", None)
            elif isinstance(stmt, cst.Try):
                scan(stmt.body.body)
                for h in stmt.handlers:
                    if h.name is not None:
                        targets(h.name.name)
                    scan(h.body.body)
                for extra in (stmt.orelse, stmt.finalbody):
                    if extra is not None:
                        scan(extra.body.body)

    if isinstance(func.body, cst.IndentedBlock):
        scan(func.body.body)
    return names - declared_global
