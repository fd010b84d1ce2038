"""The codemod engine: one parse, one walk for every rule, one transform.

``transform(source, rules)`` parses a file, resolves TensorFlow aliases while it
walks the tree once with every selected rule, then applies the edits of all
unsuppressed findings in a single transform, adds the imports the edits need,
drops TensorFlow imports the edits left unused, and re-parses the result.
"""
from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence, Set, Type

import libcst as cst

from migrate.codemod.cstutil import child_fields as _child_fields
from migrate.checkpoints.names import keras3_only
from migrate.codemod.cstutil import fresh_name, is_chain_part, names_read, taken_names
from migrate.codemod.cstutil import is_node as _is_node
from migrate.codemod.errors import EngineError
from migrate.codemod.layout import Layout
from migrate.codemod.needles import tf1_meaning, tf2_meaning
from migrate.codemod.resolver import TF_ROOTS, Resolver, dotted, keras_name, local_names, v1name
from migrate.codemod.stars import header as star_header
from migrate.codemod.stars import project_stars, tf_bindings
from migrate.codemod.rule import Finding, Reported, Rule, SymbolRule
from migrate.codemod.shared import uses_keras
from migrate.codemod.tables import upgrade_tables
from migrate.codemod.target import DEFAULT, Target

SUPPRESS = re.compile(r"#\s*tf-migrate:\s*ignore(?:\[([A-Z0-9_, ]+)\])?")


@dataclass
class FileFacts:
    """Facts about one file that more than one rule (or the engine and a rule) use, each
    computed once, on first use, by the helper named beside it. A rule's private state
    lives on the rule instance (one per file), not here."""

    identifiers: Optional[Set[str]] = None  # cstutil.fresh_name: every Name used (and reserved)
    reused: Set[str] = field(default_factory=set)  # cstutil.reuse_name: source names an edit rebinds
    new_tf_alias: Optional[str] = None  # FileContext.tf: the alias given to an added TF import
    tf1_file: Optional[bool] = None  # FileContext.is_tf1_file: the file uses TF1-only APIs
    graph_mode: Optional[bool] = None  # shared.in_graph_mode: the module switches to graph mode
    tf1_graph_calls: Optional[Set[str]] = None  # shared.in_graph_mode: functions called under shims.tf1_graph()
    graph_resetters: Optional[Set[str]] = None  # shared.resets_graph: module functions resetting the graph
    keras_classes: Optional[Set[str]] = None  # keras_weights.keras_classes
    shim_decorated: Set[int] = field(default_factory=set)  # keras_weights.add_shim_decorator
    traced: Dict[int, Optional[cst.FunctionDef]] = field(default_factory=dict)  # traced.traced_function
    module_facts: Optional[object] = None  # traced.module_facts (a traced.ModuleFacts)
    # FileContext.star_import: TensorFlow names a star import of a project module binds,
    # with its statement line (TFM113 makes the file import them itself)
    star_names: Dict[str, tuple] = field(default_factory=dict)
    queue_input: Optional[object] = None  # queues.queue_input (a queues.QueueInput)
    # filled by the engine while it applies edits: id(original node) -> the node as the fixes
    # of its children left it (for every node an edit replaces or removes), so an edit that
    # rebuilds statements (TFM118) or moves them (TFM501) keeps the other fixes
    rewritten: Dict[int, cst.CSTNode] = field(default_factory=dict)
    # id(removed statement) -> it as every other edit left it, its own replacements too
    # (TFM118's per-element code is gone, its batch a function and a call): what TFM501 moves
    moved: Dict[int, object] = field(default_factory=dict)


@dataclass
class Outcome:
    new_source: Optional[str]  # None when nothing changed
    findings: List[Reported]
    names: Dict[str, str] = field(default_factory=dict)


class FileContext:
    """What a rule sees of the file being processed."""

    def __init__(self, module: cst.Module, path: str = "", source: str = "", tree=None,
                 target: Target = DEFAULT) -> None:
        self.module = module
        self.target = target  # what the run migrates to (the Keras generation)
        self.path = path
        self.source = source
        self.tree = tree  # CPython's ast of the source (None when it gave none)
        self.resolver = Resolver()
        self.resolver.prescan(module)
        self.stack: List[cst.CSTNode] = []
        self.in_import = 0  # > 0 while the walk is inside an import statement
        self.findings: List[Finding] = []
        self.facts = FileFacts()
        self.marker_text = source  # the text TF1 markers are looked for in (stars.header added)
        self.stars: dict = {}  # stars.project_stars of the source, read once by transform()

    # -- names ---------------------------------------------------------------
    def qualname(self, node: cst.BaseExpression) -> Optional[str]:
        return self.resolver.qualname(node)

    def v1(self, node: cst.BaseExpression) -> Optional[str]:
        """TF1 spelling of a TensorFlow name (``tf.layers.dense``), else None."""
        return v1name(self.resolver.qualname(node))

    def public_v1(self, node: cst.BaseExpression) -> Optional[str]:
        """``v1``, with a TF1 object reached through its private module by its public name:
        ``ops.reset_default_graph`` (``from tensorflow.python.framework import ops``, as
        many tutorials wrote it) is ``tf.reset_default_graph``."""
        name = self.v1(node)
        if name is None or not name.startswith("tf.python."):
            return name
        module, _, member = name.rpartition(".")
        found = upgrade_tables().get("private_public", {}).get("tensorflow" + module[2:], {})
        return found.get(member, name)

    def keras(self, node: cst.BaseExpression) -> Optional[str]:
        """``keras.layers.Dense`` for any tf.keras / keras / tf_keras spelling, else None."""
        return keras_name(self.resolver.qualname(node))

    def tf(self, finding: Finding, name: str) -> cst.BaseExpression:
        """An expression for ``tensorflow.<name>``, importing tensorflow if needed."""
        alias = self.resolver.tf_alias()
        if alias is None:  # e.g. only `import tensorflow.compat.v1 as tf`: pick a free name
            alias = self.facts.new_tf_alias
            if alias is None:
                alias = "tf" if "tf" not in taken_names(self) else fresh_name(self, "tf2")
                self.facts.new_tf_alias = alias
            finding.add_import(f"import tensorflow as {alias}")
        return cst.parse_expression(f"{alias}.{name}" if name else alias)

    def star_import(self, node: cst.ImportFrom) -> None:
        """``from model.layers import *`` of the project's own module: the TensorFlow names
        it brings (``tf``) are bound here as if imported, so the rules see them. They are
        kept apart from the imports the engine may drop (they are not this file's)."""
        module = dotted(node.module) if node.module is not None else ""
        if module is None or (not node.relative and module.split(".")[0] in TF_ROOTS):
            return
        key = (len(node.relative), module)
        found = self.stars[key] if key in self.stars else tf_bindings(self.path, *key)
        for name, qualname in found.items():
            self.resolver.rebind(name, qualname)
        line = self.stack[-2]  # the statement line holding the import
        self.facts.star_names.update({name: (qualname, line) for name, qualname in found.items()})

    def is_tf1_file(self) -> bool:
        """Does the file use TF1-only APIs? Decides calls that are valid in both TF1 and
        TF2 but mean different things (tf.nn.dropout's second argument, ...)."""

        hit = self.facts.tf1_file
        if hit is None:
            hit = self.facts.tf1_file = tf1_meaning(self.marker_text)
        return hit

    def is_tf2_file(self) -> bool:
        """Does the file run TensorFlow the TF2 way (see ``needles.tf2_meaning``)?"""
        return tf2_meaning(self.marker_text)

    # -- tree position ---------------------------------------------------------
    def parent(self, depth: int = 1) -> Optional[cst.CSTNode]:
        index = len(self.stack) - 1 - depth
        return self.stack[index] if index >= 0 else None

    def enclosing(self, *types: type) -> Optional[cst.CSTNode]:
        for node in reversed(self.stack[:-1]):
            if isinstance(node, types):
                return node
        return None

    def ancestors(self, *types: type) -> List[cst.CSTNode]:
        """Enclosing nodes of the given types, innermost first."""
        return [n for n in reversed(self.stack[:-1]) if isinstance(n, types)]

    def statement(self) -> Optional[cst.CSTNode]:
        """The statement (in a block) that contains the current node."""
        for i in range(len(self.stack) - 1, 0, -1):
            node, parent = self.stack[i], self.stack[i - 1]
            if isinstance(node, cst.BaseStatement) and isinstance(
                    parent, (cst.Module, cst.IndentedBlock)):
                return node
        return None


class _Walker:
    """A read-only walk in source order (libcst's visit() rebuilds every node). It also
    records every node's parent, and decides once per Name/Attribute whether it is a
    whole dotted name for the rules that check those (``SymbolRule``)."""

    def __init__(self, ctx: FileContext, rules: Sequence[Rule]) -> None:

        self.ctx = ctx
        self.parents: Dict[int, cst.CSTNode] = {}
        # kind -> [(method, is a SymbolRule's check)], in rule order
        self.visits: Dict[str, list] = {}
        self.leaves: Dict[str, list] = {}
        for rule in rules:
            kind_of_rule = type(rule)
            for attr in dir(kind_of_rule):
                if attr.startswith("visit_") and attr.count("_") == 1:
                    method = getattr(kind_of_rule, attr)
                    symbol = isinstance(rule, SymbolRule) and attr in ("visit_Name", "visit_Attribute") \
                        and method is getattr(SymbolRule, attr)
                    self.visits.setdefault(attr[6:], []).append(
                        (rule.check, True) if symbol else (getattr(rule, attr), False))
                elif attr.startswith("leave_") and attr.count("_") == 1:
                    self.leaves.setdefault(attr[6:], []).append(getattr(rule, attr))
        self._plans: Dict[type, tuple] = {}

    def _plan(self, kind: type) -> tuple:
        name = kind.__name__
        plan = self._plans[kind] = (name, tuple(self.visits.get(name, ())),
                                    tuple(self.leaves.get(name, ())), _child_fields(kind))
        return plan

    def walk(self, node: cst.CSTNode) -> None:
        ctx = self.ctx
        stack = ctx.stack
        parents = self.parents
        if stack:
            parents[id(node)] = stack[-1]
        stack.append(node)
        plan = self._plans.get(type(node)) or self._plan(type(node))
        kind, visits, leaves, fields = plan
        if kind == "Import":
            ctx.resolver.add_import(node)
            ctx.in_import += 1
        elif kind == "ImportFrom":
            ctx.resolver.add_import_from(node)
            if type(node.names) is cst.ImportStar and len(stack) == 3:  # a module-level star import
                ctx.star_import(node)
            ctx.in_import += 1
        elif kind == "FunctionDef":
            ctx.resolver.push_scope(local_names(node))
        elif kind == "Lambda":
            ctx.resolver.push_scope(p.name.value for p in node.params.params)
        if visits:
            whole = None  # a maximal dotted name outside imports (SymbolRule.check's nodes)
            for method, symbol in visits:
                if symbol:
                    if whole is None:
                        parent = stack[-2] if len(stack) > 1 else None
                        whole = not ctx.in_import and not is_chain_part(node, parent)
                    if whole:
                        method(node)
                else:
                    method(node)
        for name in fields:
            value = getattr(node, name)
            if type(value) in _SEQUENCES:
                for item in value:
                    if _is_node(item):
                        self.walk(item)
            elif _is_node(value):
                self.walk(value)
        for method in leaves:
            method(node)
        if kind in ("FunctionDef", "Lambda"):
            ctx.resolver.pop_scope()
        elif kind in ("Import", "ImportFrom"):
            ctx.in_import -= 1
        elif kind in ("Assign", "AnnAssign") and ctx.resolver.aliases:
            self._rebound(node)
        stack.pop()
        if kind in ("FunctionDef", "ClassDef") and node.name.value in ctx.resolver.aliases \
                and self._module_level():
            ctx.resolver.rebind(node.name.value)  # ``def tf(): ...`` at module level

    def _module_level(self) -> bool:
        return not any(type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda) for n in self.ctx.stack)

    def _rebound(self, node) -> None:
        """``tf = tf.compat.v1`` / ``tf = None`` at module level: the name's meaning follows
        (its value was resolved with the old one, as Python evaluates it first)."""
        resolver = self.ctx.resolver
        if not self._module_level():
            return
        targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
        names = [t.value for t in targets if type(t) is cst.Name and t.value in resolver.aliases]
        if not names and type(node) is cst.Assign and len(targets) == 1 and type(targets[0]) is cst.Name:
            # ``slim = tf.contrib.slim``: followed as ``import tensorflow.contrib.slim as slim``
            qualname = resolver.qualname(node.value)
            if qualname and _CONTRIB_MODULE.fullmatch(qualname):
                resolver.rebind(targets[0].value, qualname)
            return
        if names:
            value = node.value
            qualname = resolver.qualname(value) if value is not None else None
            for name in names:
                resolver.rebind(name, qualname)


_SEQUENCES = (tuple, list)
# ``slim = tf.contrib.slim``: tf-slim's uses must be seen (its import becomes tf_slim, some of
# its functions shims'); other contrib modules become a shims module with the same API
_CONTRIB_MODULE = re.compile(r"tensorflow\.contrib\.slim")


class _Apply(cst.CSTTransformer):
    """Applies every edit in one pass. Only the edited nodes and their ancestors are
    visited: a subtree without an edit is kept as it is, unvisited."""

    def __init__(self, findings: Sequence[Finding], facts: Optional[FileFacts] = None,
                 parents: Optional[Dict[int, cst.CSTNode]] = None) -> None:
        super().__init__()
        # edited nodes as the other fixes left them (FileFacts.rewritten, .moved), for rules
        # that rebuild or move statements: their callables run later and read them there
        facts = FileFacts() if facts is None else facts
        self.rewritten, self.moved = facts.rewritten, facts.moved
        self.replace: Dict[int, list] = {}
        self.insert: Dict[int, list] = {}
        self.append: Dict[int, list] = {}
        self.drop: Set[int] = set()
        for f in findings:
            for node, new in f.replacements:
                self.replace.setdefault(id(node), []).append(new)
            for node, stmts in f.inserts:
                self.insert.setdefault(id(node), []).append(stmts)
            for node, stmts in f.appends:
                self.append.setdefault(id(node), []).append(stmts)
            for node in f.removals:
                self.drop.add(id(node))
        self.dirty = None if parents is None else _ancestors_of(
            parents, set(self.replace) | set(self.insert) | set(self.append) | self.drop)

        self.targets = set(self.replace) | set(self.insert) | set(self.append) | self.drop
        self.reached: Set[int] = set()
        self.deferred: List[Callable[[], list]] = []  # inserted statements made after the pass

    def on_visit(self, node) -> bool:
        return self.dirty is None or id(node) in self.dirty

    @property
    def complete(self) -> bool:
        """Every edited node was reached (else the pruning missed a path: visit all)."""
        return self.targets <= self.reached

    def _statements(self, items) -> list:
        """The statements to insert; a callable's stand in as a marker, resolved once the
        pass is over (see _Resolve), so every statement it moves has been rewritten by then,
        also one further down the file than where it inserts."""
        out = []
        for item in items:
            if callable(item):
                out.append(cst.SimpleStatementLine([cst.Expr(cst.Name(f"{_DEFERRED}{len(self.deferred)}"))]))
                self.deferred.append(item)
            else:
                out.extend(item)
        return out

    def on_leave(self, original_node, updated_node):
        key = id(original_node)
        if key in self.targets:
            self.reached.add(key)
        replacements = self.replace.get(key, ())
        if key in self.drop or replacements:  # before the inserts: a callable may move this node
            self.rewritten[key] = updated_node
        for new in replacements:
            updated_node = new(updated_node) if callable(new) else new
        if key in self.drop:
            self.moved[key] = updated_node
        before = self._statements(self.insert.get(key, ()))
        after = self._statements(self.append.get(key, ()))
        if key in self.drop:
            if before or after:
                return cst.FlattenSentinel([*before, *after])
            return cst.RemovalSentinel.REMOVE
        if updated_node is cst.RemovalSentinel.REMOVE:
            return cst.FlattenSentinel([*before, *after]) if before or after else updated_node
        if isinstance(updated_node, cst.IndentedBlock):
            updated_node = _filled(updated_node)
        if before or after:
            nodes = updated_node.nodes if isinstance(updated_node, cst.FlattenSentinel) else [updated_node]
            return cst.FlattenSentinel([*before, *nodes, *after])
        return updated_node


_DEFERRED = "__tf_migrate_deferred_"


class _Resolve(cst.CSTTransformer):
    """Replaces each marker _Apply left for a callable's statements with what it returns."""

    def __init__(self, deferred: Sequence[Callable[[], list]]) -> None:
        super().__init__()
        self.deferred = deferred

    def leave_SimpleStatementLine(self, original_node, updated_node):
        body = updated_node.body
        if len(body) == 1 and isinstance(body[0], cst.Expr) and isinstance(body[0].value, cst.Name) \
                and body[0].value.value.startswith(_DEFERRED):
            return cst.FlattenSentinel(self.deferred[int(body[0].value.value[len(_DEFERRED):])]())
        return updated_node

    def leave_IndentedBlock(self, original_node, updated_node):
        return _filled(updated_node)


def _ancestors_of(parents: Dict[int, cst.CSTNode], targets: Set[int]) -> Set[int]:
    """ids of the target nodes and of every node above one."""
    dirty: Set[int] = set()
    for target in targets:
        key = target
        while key is not None and key not in dirty:
            dirty.add(key)
            parent = parents.get(key)
            key = id(parent) if parent is not None else None
    return dirty


def _where(source: str, error: Exception) -> str:
    """``line L, column C`` of a SyntaxError; CPython gives no position for a NUL byte,
    so it is found here."""
    line, column = getattr(error, "lineno", None), getattr(error, "offset", None)
    if line is None and "\0" in source:
        at = source.index("\0")
        line, column = source.count("\n", 0, at) + 1, at - source.rfind("\n", 0, at)
    if line is None:
        return "position unknown"
    return f"line {line}" + (f", column {column}" if column else "")


def check_python(source: str) -> None:
    """EngineError, in CPython's words, when ``source`` is not valid Python 3."""
    _cpython_tree(source)


def _cpython_tree(source: str):
    """CPython's own tree of ``source`` (positions, splicing, the unused-import check),
    or None when it gives none. A source CPython refuses cannot run, so it is reported
    with CPython's own words before libcst's parser sees it: that parser can crash on
    what is nested too deeply for CPython (a 10,000-term sum, 5,000 parentheses)."""

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(min(limit, 1000))  # CPython's C stack overflows above (SIGSEGV)
    try:
        return ast.parse(source)
    except SyntaxError as error:
        raise EngineError(f"not valid Python 3 ({_where(source, error)}): {error.msg}") from None
    except RecursionError:
        raise EngineError("nested too deeply for Python itself (CPython cannot compile it: "
                          "maximum recursion depth exceeded)") from None
    except MemoryError:
        raise EngineError("nested too deeply for Python itself (CPython's parser gives up: "
                          "MemoryError)") from None
    except UnicodeEncodeError as error:  # a notebook's JSON can hold a lone surrogate
        at = error.start
        line, column = source.count("\n", 0, at) + 1, at - source.rfind("\n", 0, at)
        raise EngineError(f"not valid text (line {line}, column {column}): the lone surrogate "
                          f"{source[at]!r} is not a character") from None
    except ValueError as error:  # a NUL byte (before Python 3.11.4)
        raise EngineError(f"not valid Python 3 ({_where(source, error)}): {error}") from None
    finally:
        sys.setrecursionlimit(limit)


class _DropImports(cst.CSTTransformer):
    """Drops the import aliases of ``names``. It visits statements only, and of simple
    statements only those holding an import (imports are statements, never inside an
    expression), so every other node is kept as it is."""

    def __init__(self, names: Set[str]) -> None:
        super().__init__()
        self.names = names

    def on_visit(self, node) -> bool:
        kind = type(node)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            return any(type(s) is cst.Import or type(s) is cst.ImportFrom for s in node.body)
        return kind in _STATEMENT_HOLDERS or isinstance(node, cst.BaseCompoundStatement)

    def _local(self, alias: cst.ImportAlias, is_from: bool) -> str:
        if alias.asname is not None:
            return alias.asname.name.value
        text = cst.Module([]).code_for_node(alias.name)
        return text if is_from else text.split(".")[0]

    def _filter(self, updated, is_from: bool):
        if isinstance(updated.names, cst.ImportStar):
            return updated
        keep = [a for a in updated.names if self._local(a, is_from) not in self.names]
        if len(keep) == len(updated.names):
            return updated
        if not keep:
            return cst.RemovalSentinel.REMOVE
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(names=keep)

    def leave_Import(self, original_node, updated_node):
        return self._filter(updated_node, False)

    def leave_ImportFrom(self, original_node, updated_node):
        return self._filter(updated_node, True)

    def leave_IndentedBlock(self, original_node, updated_node):
        return _filled(updated_node)


def _filled(block: cst.IndentedBlock) -> cst.IndentedBlock:
    """A block the edits emptied holds ``pass``."""
    return block if block.body else block.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])


_STATEMENT_HOLDERS = (cst.Module, cst.IndentedBlock, cst.Else, cst.Finally, cst.ExceptHandler,
                      cst.ExceptStarHandler, cst.MatchCase)


def _module_lines(module: cst.Module, kinds: tuple) -> Set[str]:
    """The code of the module-level simple statement lines that begin with one of ``kinds``."""
    return {module.code_for_node(stmt).strip() for stmt in module.body
            if isinstance(stmt, cst.SimpleStatementLine) and stmt.body and isinstance(stmt.body[0], kinds)}


def _target_imports(statements: List[str], target: Target, source: str) -> List[str]:
    """The module declares the Keras it was migrated for where it gets shims: ``import
    shims.keras3`` first for Keras 3 (``import shims.tutorials`` alone would leave the
    process on shims' default, Keras 2); ``import shims.keras2`` for Keras 2 where the module
    uses Keras (layers, tf.keras, RNN cells), so a Keras 3 process refuses it with one
    ImportError instead of running Keras 2 code on Keras 3 layers."""
    if not any(s == "import shims" or s.startswith(("import shims.", "from shims")) for s in statements):
        return statements
    if target.keras == 2 and not uses_keras(source):
        return statements
    return [target.shims_import, *(s for s in statements if s != "import shims")]


def _add_imports(module: cst.Module, statements: Sequence[str]) -> cst.Module:
    wanted = {s: cst.parse_statement(s) for s in dict.fromkeys(statements)}
    kinds = tuple({type(w.body[0]) for w in wanted.values()
                   if isinstance(w, cst.SimpleStatementLine) and w.body})
    present = _module_lines(module, kinds) if kinds else set()
    todo = [s for s, w in wanted.items() if module.code_for_node(w).strip() not in present]
    if not todo:
        return module
    # shims must come before tensorflow (it selects the Keras generation)
    todo.sort(key=lambda s: 0 if s.startswith("import shims") else 1)
    new = [cst.parse_statement(s) for s in todo]
    body = list(module.body)
    index = 0
    # after the docstring and __future__ imports
    while index < len(body):
        stmt = body[index]
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if index == 0 and isinstance(small, cst.Expr) and isinstance(
                    small.value, (cst.SimpleString, cst.ConcatenatedString)):
                index += 1
                continue
            if isinstance(small, cst.ImportFrom) and isinstance(small.module, cst.Name) \
                    and small.module.value == "__future__":
                index += 1
                continue
        break
    if index < len(body):  # keep the comments that lead the statement we insert before
        first = body[index]
        new[0] = new[0].with_changes(leading_lines=first.leading_lines)
        body[index] = first.with_changes(leading_lines=())
    return module.with_changes(body=[*body[:index], *new, *body[index:]])


def _suppressed(line_text: str, code: str) -> bool:
    match = SUPPRESS.search(line_text)
    if not match:
        return False
    if match.group(1) is None:
        return True
    return any(code.startswith(c.strip()) for c in match.group(1).split(",") if c.strip())


def _syntax_message(exc) -> str:
    """libcst's message in one short line, without its list of expected tokens. What
    CPython refuses was already said in CPython's words by ``_cpython_tree``, so this is
    code Python runs that libcst's parser cannot read (10,000 adjoining string literals):
    said as such, never as invalid Python."""
    message = exc.message.splitlines()[0]
    message = message.split(": expected one of")[0].replace("parser error: ", "")
    message = re.sub(r"^error at \d+:\d+:?\s*", "", message) or "unexpected token"
    return (f"valid Python that libcst's parser, which tf-migrate rewrites code with, cannot "
            f"read (it stops at line {exc.raw_line}, column {exc.raw_column + 1}: {message}); "
            "left untouched")


_CSTNode = cst.CSTNode
_VALIDATE = _CSTNode.__dict__["__post_init__"]  # libcst's own, taken at import


def _no_validation(self) -> None:
    pass


def parse(source: str) -> cst.Module:
    """libcst's tree of ``source``. Nodes are built without libcst's per-node validation
    (about an eighth of the parse): the parser only builds nodes of valid code, and
    validation checks nothing else; nodes the rules build are validated as usual."""
    _CSTNode.__post_init__ = _no_validation
    try:
        return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        raise EngineError(_syntax_message(exc)) from None
    except RecursionError:
        raise EngineError("valid Python nested too deeply for libcst's parser, which tf-migrate "
                          "rewrites code with; left untouched") from None
    finally:  # libcst's own, taken at import: right even if parses overlap in threads
        _CSTNode.__post_init__ = _VALIDATE


def transform(source: str, rules: Sequence[Type[Rule]], fix: bool = True,
              path: str = "", target: Target = DEFAULT) -> Outcome:
    """Run ``rules`` over ``source``; return the new source (if changed) and findings."""
    memo: dict = {}
    stars = project_stars(path, source)  # what star imports of project modules bring
    text = star_header(stars) + source
    rules = [rule for rule in rules if rule.applies(text, memo)]
    if not rules:
        return Outcome(None, [])
    tree = _cpython_tree(source)  # parsed once: positions, splicing, the unused-import check
    module = parse(source)
    ctx = FileContext(module, path, source, tree, target)
    ctx.marker_text = text
    ctx.stars = stars
    instances = [rule(ctx) for rule in rules]
    walker = _Walker(ctx, instances)
    try:
        walker.walk(module)
    except RecursionError:
        raise EngineError("too deeply nested to analyse") from None
    if not ctx.findings:
        return Outcome(None, [])

    parents = walker.parents
    layout = Layout(module, source, tree, parents)
    position = layout.position
    lines = source.splitlines()
    kept: List[Finding] = []
    records: List[dict] = []
    for finding in ctx.findings:
        pos = position(finding.node)
        line_text = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
        if _suppressed(line_text, finding.code):
            continue
        kept.append(finding)
        records.append(Reported(pos.line, pos.column + 1, finding.code, finding.message,
                                finding.fixable))
    records.sort(key=lambda r: (r.line, r.column, r.code))

    names: Dict[str, str] = {}
    for finding in kept:
        names.update(finding.names)
    fixes = [f for f in kept if f.fixable]
    if not fix or not fixes:
        return Outcome(None, records, names if fix else {})

    apply = _Apply(fixes, ctx.facts, parents)
    new_module = module.visit(apply)
    if not apply.complete:  # an edit below a field the pruning walk skips: the full pass
        apply = _Apply(fixes, ctx.facts)
        new_module = module.visit(apply)
    if apply.deferred:
        new_module = new_module.visit(_Resolve(apply.deferred))
    imports = _target_imports([s for f in fixes for s in f.imports], target, source)
    if "import shims.keras2" in imports:  # the module runs on tf_keras: no Keras 3 optimizer layout
        names = {k: v for k, v in names.items() if not keras3_only(v)}
    new_module = _add_imports(new_module, imports)
    new_source, new_tree = _code(new_module, source, layout)
    bindings = ctx.resolver.bindings
    if bindings:  # imports the fixes left unused go; counted on CPython's fast trees
        after = _names_read_fast(new_tree, set(bindings))
        unused = {n for n in bindings if after[n] == 0}
        before = (_names_read_fast(tree, unused) if tree is not None else names_read(module)) \
            if unused else {}
        orphaned = {n for n in unused if before[n] > 0}
        if orphaned:
            new_module = new_module.visit(_DropImports(orphaned))
            new_source, _ = _code(new_module, source, layout)
    return Outcome(new_source if new_source != source else None, records, names)


def _code(module: cst.Module, source: str, layout: Layout):
    """The module's code and its CPython tree: what is written must parse (checked with
    CPython's own parser, ~20x faster than a libcst re-parse). Statements the fixes kept
    are taken from the source text (see ``layout``)."""

    code = layout.code(module)
    if source.endswith("\r") and not code.endswith("\r"):
        code += "\r"  # libcst drops a CR-only file's final CR
    try:
        return code, ast.parse(code)
    except (SyntaxError, ValueError) as exc:  # never write what we cannot read back
        raise EngineError(f"internal error: the rewrite did not parse ({exc}); "
                          "file left untouched") from None
    except RecursionError:
        raise EngineError("too deeply nested to check the rewrite; file left untouched") from None


def _names_read_fast(tree, wanted: Set[str]):
    """``cstutil.names_read`` on a CPython tree, for the names in ``wanted``: names read or
    bound outside imports, attribute roots included, attribute and keyword names not."""

    uses: Counter = Counter()
    stack = [tree]
    pop, push = stack.pop, stack.append
    name_kind, arg_kind, handler, node_kind = ast.Name, ast.arg, ast.ExceptHandler, ast.AST
    defs, scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef), (ast.Global, ast.Nonlocal)
    while stack:  # (a plain stack: ast.walk costs about three times more)
        node = pop()
        kind = type(node)
        if kind is name_kind:
            if node.id in wanted:
                uses[node.id] += 1
            continue
        if kind is arg_kind:
            if node.arg in wanted:
                uses[node.arg] += 1
        elif kind in defs or kind is handler:
            if node.name and node.name in wanted:
                uses[node.name] += 1
        elif kind in scopes:
            for name in node.names:
                if name in wanted:
                    uses[name] += 1
        for name_of_field in node._fields:
            value = getattr(node, name_of_field)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_kind):
                        push(item)
            elif isinstance(value, node_kind):
                push(value)
    return uses
