"""What the lint rules need to know: is this code traced (tf.function body or a
Keras ``call``), and module facts (which functions are tf.functions, which
globals are reassigned) gathered in one light pre-scan per file.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Optional, Set

import libcst as cst

from migrate.codemod.keras_weights import is_keras_class

FUNCTION_NAMES = {"tensorflow.function", "tensorflow.compat.v1.function",
                  "tensorflow.compat.v2.function", "tensorflow.contrib.eager.defun",
                  "tensorflow.compat.v1.contrib.eager.defun"}


def tf_function_decorator(ctx, func: cst.FunctionDef) -> Optional[cst.Decorator]:
    for dec in func.decorators:
        expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        if ctx.qualname(expr) in FUNCTION_NAMES:
            return dec
    return None


def has_input_signature(dec: cst.Decorator) -> bool:
    return isinstance(dec.decorator, cst.Call) and any(
        a.keyword is not None and a.keyword.value in ("input_signature", "reduce_retracing")
        for a in dec.decorator.args)


def is_keras_call(ctx, func: cst.FunctionDef) -> bool:
    if func.name.value != "call":
        return False
    index = next(i for i, n in enumerate(ctx.stack) if n is func)
    return index >= 2 and isinstance(ctx.stack[index - 2], cst.ClassDef) and \
        is_keras_class(ctx, ctx.stack[index - 2])


def traced_function(ctx) -> Optional[cst.FunctionDef]:
    """The innermost enclosing function whose body is traced, else None.

    A function nested in a traced one is traced too (it runs while tracing).
    """
    funcs = ctx.ancestors(cst.FunctionDef)
    if not funcs:
        return None
    cache = ctx.facts.traced
    key = id(funcs[0])
    if key not in cache:
        outermost = None
        for func in funcs:
            if tf_function_decorator(ctx, func) is not None or is_keras_call(ctx, func):
                outermost = func
        cache[key] = outermost
    return cache[key]


def where(ctx, func: cst.FunctionDef) -> str:
    if tf_function_decorator(ctx, func) is not None:
        return f"tf.function {func.name.value}()"
    return "Keras call() (traced by fit/predict)"


@dataclass
class ModuleFacts:
    tf_functions: Dict[str, cst.FunctionDef] = field(default_factory=dict)  # name -> def
    reassigned: Set[str] = field(default_factory=set)  # module globals assigned after their first binding
    python_lists: Set[str] = field(default_factory=set)  # module names bound to list/tuple literals


def module_facts(ctx) -> ModuleFacts:
    facts = ctx.facts.module_facts
    if facts is not None:
        return facts
    facts = ModuleFacts()
    counts: Dict[str, int] = {}

    def count(target: cst.BaseExpression, rebinds: bool = False) -> None:
        """One more binding; ``rebinds`` (``x += 1``, a loop target) is reassignment by itself."""
        if isinstance(target, cst.Name):
            counts[target.value] = counts.get(target.value, 0) + (2 if rebinds else 1)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                count(el.value, rebinds)

    for stmt in ctx.module.body:
        if isinstance(stmt, cst.FunctionDef) and tf_function_decorator(ctx, stmt) is not None:
            facts.tf_functions[stmt.name.value] = stmt
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        count(t.target)
                        if isinstance(t.target, cst.Name) and isinstance(small.value, (cst.List, cst.Tuple)):
                            facts.python_lists.add(t.target.value)
                elif isinstance(small, cst.AnnAssign):
                    count(small.target)
                elif isinstance(small, cst.AugAssign):
                    count(small.target, rebinds=True)
        elif isinstance(stmt, cst.For):
            count(stmt.target, rebinds=True)

    def scan(body, declared) -> None:
        """Statements only: ``global`` names assigned inside functions (no expression walk)."""
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Global):
                        declared |= {n.name.value for n in small.names}
                    elif isinstance(small, cst.Assign):
                        for t in small.targets:
                            if isinstance(t.target, cst.Name) and t.target.value in declared:
                                facts.reassigned.add(t.target.value)
                    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                        if isinstance(small.target, cst.Name) and small.target.value in declared:
                            facts.reassigned.add(small.target.value)
            elif isinstance(stmt, cst.FunctionDef):
                if isinstance(stmt.body, cst.IndentedBlock):
                    scan(stmt.body.body, set())
            elif isinstance(stmt, cst.ClassDef):
                if isinstance(stmt.body, cst.IndentedBlock):
                    scan(stmt.body.body, set())
            else:  # compound statements: their blocks share the enclosing scope
                for name in ("body", "orelse", "finalbody"):
                    block = getattr(stmt, name, None)
                    while block is not None:
                        inner = getattr(block, "body", None)
                        if isinstance(inner, cst.IndentedBlock):
                            scan(inner.body, declared)
                        elif isinstance(inner, (list, tuple)):
                            scan(inner, declared)
                        block = getattr(block, "orelse", None) if name == "orelse" else None
                for handler in getattr(stmt, "handlers", ()):
                    scan(handler.body.body, declared)

    scan(ctx.module.body, set())
    facts.reassigned.update(n for n, c in counts.items() if c > 1)
    ctx.facts.module_facts = facts
    return facts
