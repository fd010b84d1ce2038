"""TFM501: graph-then-Session programs -> eager TF2 (shims.GraphProgram)."""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import NameReads, code, fresh_name
from migrate.codemod.rule import Finding, Rule
from migrate.codemod.shared import is_graph_switch

SESSIONS = {"tf.Session", "tf.InteractiveSession"}
PLACEHOLDERS = {"tf.placeholder", "tf.placeholder_with_default"}
INITIALIZERS = {"tf.global_variables_initializer", "tf.initialize_all_variables",
                "tf.local_variables_initializer", "tf.initialize_local_variables",
                "tf.tables_initializer", "tf.variables_initializer"}
SWITCHES = {"tf.disable_v2_behavior", "tf.disable_eager_execution"}
# sessions that own hooks, a scaffold and checkpointing: no eager conversion yet, so the
# program stays in graph mode with a finding (never silently left to crash on TF2)
# random ops TF1 seeded from the graph-level seed and the op's position in the graph when
# given no seed of their own (ctx.v1 names)
RANDOM_OPS = {"tf.nn.dropout", "tf.layers.dropout", "tf.random_normal", "tf.random_uniform",
              "tf.truncated_normal", "tf.random.normal", "tf.random.uniform",
              "tf.random.truncated_normal", "tf.multinomial", "tf.random.categorical",
              "tf.random_shuffle", "tf.random.shuffle", "tf.random_crop", "tf.image.random_crop",
              "tf.image.random_flip_left_right", "tf.image.random_flip_up_down",
              "tf.image.random_brightness", "tf.image.random_contrast"}
GRAPH_SEEDS = {"tf.set_random_seed", "tf.random.set_random_seed", "tf.random.set_seed"}
MONITORED = {"tf.train.MonitoredTrainingSession", "tf.train.MonitoredSession",
             "tf.train.SingularMonitoredSession"}


class _NotAProgram(Exception):
    """A Session that never runs anything: nothing to convert, nothing to report."""


class _Blocked(Exception):
    """Why a block cannot be converted with proof (the finding's message)."""


def _key(expr, self_name: Optional[str]) -> Optional[str]:
    """A graph name: ``x`` for a name, ``self.x`` for an attribute of the owning object."""
    if isinstance(expr, cst.Name):
        return expr.value
    if self_name and isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
            and expr.value.value == self_name:
        return f"self.{expr.attr.value}"
    return None


def _assigned_key(stmt, self_name: Optional[str] = None) -> Optional[str]:
    """The key of a one-target simple assignment ``x = ...`` / ``self.x = ...``."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1:
        return _key(stmt.body[0].targets[0].target, self_name)
    return None


def _value(stmt) -> Optional[cst.BaseExpression]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and isinstance(stmt.body[0], (cst.Assign, cst.Expr)):
        return stmt.body[0].value
    return None


def _shadowed(rest, keys) -> Set[str]:
    """Graph names the program's own code binds anew before it uses them
    (``b = (step % 8) * 64`` in the training loop, beside a bias ``b``): past the graph
    they are the program's Python values. Proven when the first statement naming one is a
    plain assignment not reading it, and every later mention follows it in the same block
    (so each use is of that value); object attributes are never taken this way."""
    found: Set[str] = set()
    for key in keys:
        if key.startswith("self."):
            continue
        total = _mentions(rest, key)
        if total and _bound_first(rest, key, total):
            found.add(key)
    return found


def _mentions(nodes, key) -> int:
    return sum(1 for node in nodes for _, k in _collect(node).reads if k == key)


def _bound_first(stmts, key, total) -> bool:
    for i, stmt in enumerate(stmts):
        count = _mentions([stmt], key)
        if not count:
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            small = stmt.body[0]
            return (len(stmt.body) == 1 and isinstance(small, cst.Assign)
                    and any(_key(t.target, None) == key for t in small.targets)
                    and not _mentions([small.value], key)
                    and _mentions(stmts[i:], key) == total)
        body = getattr(stmt, "body", None)
        if isinstance(stmt, (cst.For, cst.While, cst.With)) and isinstance(body, cst.IndentedBlock) \
                and _mentions(body.body, key) == count and getattr(stmt, "orelse", None) is None:
            return _bound_first(list(body.body), key, total)
        return False
    return False


def _only_placeholders(stmt, scoped: Set[int]) -> bool:
    """A scope block that made placeholders and nothing else: it goes with them."""
    return isinstance(stmt, cst.With) and isinstance(stmt.body, cst.IndentedBlock) and all(
        id(inner) in scoped or _only_placeholders(inner, scoped) for inner in stmt.body.body)


def _default_of(item, self_name) -> Optional[str]:
    """The key of ``<key>.as_default()``."""
    if isinstance(item, cst.Call) and not item.args and isinstance(item.func, cst.Attribute) \
            and item.func.attr.value == "as_default":
        return _key(item.func.value, self_name)
    return None


def _bare_pass(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(small, cst.Pass) for small in stmt.body)


def _plain(key: str) -> str:
    """The name a key gets in the build function's parameters and returned dict."""
    return key[len("self."):] if key.startswith("self.") else key


class _Collect(NameReads):
    """Keys a subtree binds and reads (with their nodes), and the calls in it."""

    def __init__(self, self_name: Optional[str] = None) -> None:
        super().__init__()
        self.self_name = self_name
        self.reads: List[tuple] = []  # (node, key)
        self.binds: Set[str] = set()
        self.calls: List[cst.Call] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        key = _key(node, self.self_name)
        if key is not None and key.startswith("self."):
            self.reads.append((node, key))
            return False
        return super().visit_Attribute(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_Name(self, node: cst.Name) -> None:
        super().visit_Name(node)
        self.reads.append((node, node.value))

    def _targets(self, target) -> None:
        key = _key(target, self.self_name)
        if key == "_":
            return  # the throwaway name (`outputs, _ = dynamic_rnn(...)`, `_, loss = sess.run(...)`)
        if key is not None:
            self.binds.add(key)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._targets(element.value)
        elif isinstance(target, cst.StarredElement):
            self._targets(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._targets(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._targets(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._targets(node.asname.name)


def _ids(node) -> Set[int]:
    """The ids of a node and everything under it."""
    found: Set[int] = set()

    class Walk(cst.CSTVisitor):
        def on_visit(self, n) -> bool:
            found.add(id(n))
            return True

    node.visit(Walk())
    return found


def _method_args(call: cst.Call):
    """(parameter, argument) of ``op.run(feed_dict=None, session=None)`` / ``t.eval(...)``."""
    for index, a in enumerate(call.args):
        yield (a.keyword.value if a.keyword is not None else ("feed_dict", "session")[min(index, 1)]), a


def _collect(*nodes, self_name: Optional[str] = None) -> _Collect:
    visitor = _Collect(self_name)
    for node in nodes:
        node.visit(visitor)
    return visitor


def _fresh_container(value) -> bool:
    """``[]``, ``{}``, ``set()``, ``list()``, ``dict()``, a comprehension: a new mutable
    container."""
    if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return True
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and \
        value.func.value in ("list", "dict", "set", "OrderedDict", "defaultdict")


class SessionPrograms(Rule):
    code = "TFM501"
    needle = needles.GRAPH_PROGRAM
    tf1_only = True
    summary = "a graph driven by a Session: becomes eager TF2 steps (shims.GraphProgram)"
    fixable = True
    explanation = """
A TF1 program builds a graph (placeholders, variables, a train op) and drives it with
`sess.run(fetches, feed_dict)`. In TF2 that crashes at the first placeholder. This rule
converts the program, in a module or a function body, to eager TF2:

- the graph-building statements move into a function whose parameters are the former
  placeholders (their dtype and shape become `tf.TensorSpec`s, a
  `placeholder_with_default` becomes `shims.Default`);
- `shims.GraphProgram` runs that function as `tf.function` steps, one per distinct
  `(fetches, feeds)`, with `sess.run`'s semantics: only what the fetches need runs,
  variables are created once with their TF1 names, TF1 optimizers apply their updates
  with the same math and slot names;
- `sess.run(fetches, feed_dict={x: a})` becomes `program.run(fetches, x=a)` (numpy values
  in the same structure), initializer runs and `sess.close()` disappear, a TF1 `Saver`'s
  `save`/`restore` become the program's (TF1-named checkpoints, so old ones load).

- a program that owns its graph (`g = tf.Graph()`, `with g.as_default():`,
  `tf.Session(graph=g)`, also as `self.graph`) loses the graph and its block; functions
  the session is passed to (`train(sess, steps)`) get the program in its place; a new
  session that first restores the Saver's checkpoint continues on the program.

Where the conversion cannot be proven (a fetch or feed that is not a graph name, the
session passed elsewhere, a graph name rebound later, a monitored session, ...), the
program keeps running: it is put in explicit graph mode
(`tf.compat.v1.disable_eager_execution()`), keeps TF1's functional layers and hooks, and
this finding says what blocked the conversion. A placeholder left outside every program,
with nothing switching graph mode on, is a finding too (an error at module level, where
importing the module fails on TF2).
"""
    before = """
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.zeros([3, 1]), name="w")
loss = tf.reduce_mean(tf.matmul(x, w))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(loss, feed_dict={x: data}))
"""
    after = """
import shims
import tensorflow as tf


def build_graph(x):
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    loss = tf.reduce_mean(tf.matmul(x, w))
    return {"loss": loss}


program = shims.GraphProgram(build_graph, x=tf.TensorSpec([None, 3], tf.float32))
print(program.run("loss", x=data))
"""

    def leave_Module(self, node: cst.Module) -> None:  # after the walk: every import is known
        self._programs: Set[int] = set()  # nodes of the programs converted or kept in graph mode
        self._blocks(list(node.body), node)
        self._fallback(node)
        self._left_in_graph_code(node)

    def _blocks(self, body, owner) -> None:
        """A program wherever people put one: the module, a function, a class, and the
        blocks inside them (``if __name__ == "__main__":``, ``with tf.device(...)``,
        ``try:``), at any depth."""
        self._block(body, owner, [])
        for stmt in body:
            if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
                self._blocks(list(stmt.body.body), stmt)
            elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                self._class(stmt)
            else:
                for inner in self._inner_blocks(stmt):
                    self._blocks(inner, stmt)

    def _fresh_graph(self, stmt) -> bool:
        """``with tf.Graph().as_default():`` (one item, no name): a converted program drops
        it, since the graph it makes the default is used by nothing else."""
        if len(stmt.items) != 1 or stmt.items[0].asname is not None:
            return False
        call = stmt.items[0].item
        return (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "as_default" and not call.args
                and isinstance(call.func.value, cst.Call)
                and self._call_name(call.func.value) == "tf.Graph" and not call.func.value.args)

    def _monitored(self, stmt) -> Optional[str]:
        """The TF1 name of a monitored session the statement makes (``with
        tf.train.MonitoredTrainingSession(...) as sess:``, ``sess = ...``), else None."""
        values = [item.item for item in stmt.items] if isinstance(stmt, cst.With) else [_value(stmt)]
        return next((name for name in map(self._call_name, values) if name in MONITORED), None)

    def _owned_graph(self, stmts, methods, self_name):
        """``graph = tf.Graph()``, ``with graph.as_default(): <graph code>`` and
        ``tf.Session(graph=graph)``, the graph named nowhere else (tutorials, and classes
        owning their graph as ``self.graph``): the program is read as if the block's code
        stood in this block. Returns (statements as read, (the graph's statement, the
        with block)), or (statements, None) where the pattern is not there."""
        for i, stmt in enumerate(stmts):
            key = _assigned_key(stmt, self_name)
            if not key or self._call_name(_value(stmt)) != "tf.Graph" or _value(stmt).args:
                continue
            blocks = [j for j, other in enumerate(stmts) if j > i and isinstance(other, cst.With)
                      and len(other.items) == 1 and other.items[0].asname is None
                      and isinstance(other.body, cst.IndentedBlock)
                      and _default_of(other.items[0].item, self_name) == key]
            if len(blocks) != 1:
                continue
            sessions = [c for c in _collect(*stmts, *methods, self_name=self_name).calls
                        if self._call_name(c) in SESSIONS and any(
                            a.keyword is not None and a.keyword.value == "graph"
                            and _key(a.value, self_name) == key for a in c.args)]
            scope = self.ctx.module if self_name is None else cst.IndentedBlock(
                body=[*stmts, *methods])
            mentions = sum(1 for _, k in _collect(scope, self_name=self_name).reads if k == key)
            if mentions != 2 + len(sessions):  # bound, made the default, given to sessions
                continue
            block = stmts[blocks[0]]
            flat = [*stmts[:i], *stmts[i + 1:blocks[0]], *block.body.body, *stmts[blocks[0] + 1:]]
            return flat, (stmt, block)
        return stmts, None

    def _inner_blocks(self, stmt) -> list:
        """The statement lists of a compound statement that a program may live in. A
        ``with`` that makes another graph the default is not one (converted code inside it
        would build that graph instead of running eagerly), except a fresh anonymous
        ``tf.Graph().as_default()``, which the conversion removes."""
        blocks = []
        if isinstance(stmt, cst.If):
            branch = stmt
            while isinstance(branch, (cst.If, cst.Else)):
                if isinstance(branch.body, cst.IndentedBlock):
                    blocks.append(list(branch.body.body))
                branch = getattr(branch, "orelse", None)
        elif isinstance(stmt, cst.With) and isinstance(stmt.body, cst.IndentedBlock):
            defaults = [item for item in stmt.items if isinstance(item.item, cst.Call)
                        and isinstance(item.item.func, cst.Attribute)
                        and item.item.func.attr.value == "as_default"]
            if not defaults or self._fresh_graph(stmt):
                blocks.append(list(stmt.body.body))
        elif isinstance(stmt, cst.Try) and isinstance(stmt.body, cst.IndentedBlock):
            blocks.append(list(stmt.body.body))
        return blocks

    # -- helpers -----------------------------------------------------------------------
    def _tfname(self, expr) -> Optional[str]:
        return self.ctx.v1(expr)

    def _call_name(self, expr) -> Optional[str]:
        if isinstance(expr, cst.Call):
            return self._tfname(expr.func)
        return None

    def _session_stmt(self, stmt, self_name=None) -> Optional[str]:
        """The session's key for ``s = tf.Session()``, ``self.s = tf.Session()`` or
        ``with tf.Session() as s:``."""
        key = _assigned_key(stmt, self_name)
        if key and self._call_name(_value(stmt)) in SESSIONS:
            return key
        if self_name is None and isinstance(stmt, cst.With):
            # `with tf.Session() as sess:`, also beside device blocks (`, tf.device("/cpu:0")`),
            # which the eager program does without, as it does without the session
            sessions = [i for i in stmt.items if self._call_name(i.item) in SESSIONS]
            others = [i for i in stmt.items if i not in sessions]
            if len(sessions) == 1 and sessions[0].asname is not None \
                    and isinstance(sessions[0].asname.name, cst.Name) \
                    and all(self._call_name(i.item) == "tf.device" and i.asname is None for i in others):
                return sessions[0].asname.name.value
        return None

    def _uses_tf(self, stmt) -> bool:
        """Does the statement build graph? Data readers that only share TensorFlow's package
        (``tensorflow.examples.tutorials``' MNIST reader, numpy out) do not."""
        return any((self._tfname(call.func) or "tf.examples.").partition("tf.examples.")[0]
                   for call in _collect(stmt).calls)

    # -- a block: a module, a function body, or a class's __init__ with its methods -------
    def _block(self, stmts, owner, methods, self_name=None, outside=None) -> None:
        written = stmts
        stmts, owned = self._owned_graph(stmts, methods, self_name)
        session_at = next((i for i, s in enumerate(stmts) if self._session_stmt(s, self_name)), None)
        if session_at is None:
            monitored = next((s for s in stmts if self._monitored(s)), None)
            if monitored is not None:
                self.ctx.shared.setdefault("sessions_blocked", []).append(
                    (monitored, f"{self._monitored(monitored)} (hooks, scaffold, checkpoints) has "
                                "no eager conversion yet", written))
            return
        try:
            plan = self._plan(stmts, session_at, methods, self_name)
            if outside is not None:
                used = self._used_from_outside(outside, plan)
                if used:
                    raise _Blocked(f"the object's {used!r} is used from outside the class")
        except _NotAProgram:
            return
        except _Blocked as why:
            self.ctx.shared.setdefault("sessions_blocked", []).append(
                (stmts[session_at], str(why), written))
            return
        finding = self._apply(stmts, session_at, plan, owner)
        for stmt in [*stmts, *methods]:
            self._programs |= _ids(stmt)
        if owned:  # the object's own graph goes: its block's code now stands in the block
            graph_stmt, block = owned
            finding.remove(graph_stmt)
            finding.replace(block, lambda updated: cst.FlattenSentinel(
                [s for s in updated.body.body if not _bare_pass(s)]))
        if isinstance(owner, cst.With) and self._fresh_graph(owner):
            finding.replace(owner, lambda updated: cst.FlattenSentinel(
                [updated.body.body[0].with_changes(leading_lines=updated.leading_lines),
                 *updated.body.body[1:]]))

    def _class(self, cls: cst.ClassDef) -> None:
        methods = [m for m in cls.body.body if isinstance(m, cst.FunctionDef)
                   and isinstance(m.body, cst.IndentedBlock) and m.params.params]
        init = next((m for m in methods if m.name.value == "__init__"), None)
        if init is None:
            return
        self_name = init.params.params[0].name.value
        others = [m for m in methods if m is not init]
        if any(m.params.params[0].name.value != self_name for m in others):
            others = [m for m in others if m.params.params[0].name.value == self_name]
        self._block(list(init.body.body), init, others, self_name, outside=cls)

    def _used_from_outside(self, cls, plan) -> Optional[str]:
        """An attribute the conversion removes (the session, a graph value) read through
        another name anywhere in the module (``agent.sess.run``): not provable, blocked."""
        attrs = {_plain(k) for k in (plan["graph_keys"] | {plan["session"]}) if k.startswith("self.")}
        inside = _ids(cls)
        found = []

        class Find(cst.CSTVisitor):
            def visit_Attribute(self, node):
                if node.attr.value in attrs and id(node) not in inside:
                    found.append(node.attr.value)

        self.ctx.module.visit(Find())
        return found[0] if found else None

    def _plan(self, stmts, session_at, methods, self_name) -> dict:
        session = self._session_stmt(stmts[session_at], self_name)
        scopes = [*stmts[session_at:], *methods]
        runs_anything = any(
            isinstance(c.func, cst.Attribute) and c.func.attr.value == "run"
            and _key(c.func.value, self_name) == session
            for c in _collect(*scopes, self_name=self_name).calls)
        if not runs_anything:
            raise _NotAProgram()  # a Session that never runs anything: nothing to convert
        placeholders: Dict[str, cst.Call] = {}
        graph: List[int] = []
        graph_keys: Set[str] = set()
        inits: Set[str] = set()
        savers: Set[str] = set()
        saver_options: Dict[str, List[str]] = {}  # a Saver's max_to_keep=..., for its save()
        switches: List[int] = []
        scoped: List[cst.SimpleStatementLine] = []  # placeholders made under a scope block
        # in a class, graph code may follow the session's creation
        blockers: List[str] = []
        region = range(len(stmts)) if self_name else range(session_at)
        for i in region:
            try:
                stmt = stmts[i]
                if i == session_at or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or (
                        isinstance(stmt, cst.SimpleStatementLine)
                        and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)):
                    continue
                value, key = _value(stmt), _assigned_key(stmt, self_name)
                called = self._call_name(value)
                if called in SWITCHES and isinstance(stmt.body[0], cst.Expr):
                    switches.append(i)
                    continue
                if called in PLACEHOLDERS:
                    if not key:
                        raise _Blocked("a placeholder not assigned to a plain name")
                    placeholders[key] = value
                    graph_keys.add(key)
                    graph.append(i)
                    continue
                if key and (called in INITIALIZERS or self._initializer_group(value, inits)):
                    inits.add(key)
                    graph.append(i)
                    continue
                if key and called == "tf.train.Saver":
                    for a in value.args:
                        if a.keyword is None or a.keyword.value not in ("max_to_keep",):
                            raise _Blocked("a tf.train.Saver with a var_list or options other than "
                                           "max_to_keep")
                    savers.add(key)
                    saver_options[key] = [code(a) for a in value.args]
                    graph.append(i)
                    continue
                found = _collect(stmt, self_name=self_name)
                if self_name and i > session_at and any(
                        isinstance(c.func, cst.Attribute) and _key(c.func.value, self_name) == session
                        for c in found.calls):
                    continue  # a run in __init__ (an initializer): handled with the other uses
                if self._uses_tf(stmt) or any(k in graph_keys for _, k in found.reads):
                    if not isinstance(stmt, (cst.SimpleStatementLine, cst.For, cst.With, cst.If)):
                        raise _Blocked(f"graph code in a {type(stmt).__name__} statement")
                    graph.append(i)
                    graph_keys |= found.binds
                    for inner, inner_key, call in self._scoped_placeholders(stmt, self_name):
                        placeholders[inner_key] = call
                        scoped.append(inner)
            except _Blocked as why:  # every blocker is named at once, not one per run
                blockers.append(str(why))
        if not placeholders and not graph and not blockers:
            raise _Blocked("no graph-building code found before the Session")
        graph_keys |= self._containers_of_graph(stmts, region, graph, switches, session_at, self_name)
        names = [_plain(k) for k in graph_keys]
        if len(set(names)) != len(names):
            blockers.append("a graph name used both as a local and as an attribute")
        # everything else: every use of the session and of graph names
        rest = [s for i, s in enumerate(stmts) if i not in graph and i not in switches] + methods
        shadowed = _shadowed(rest, graph_keys | inits | savers)
        graph_keys = graph_keys - shadowed  # past the graph, those names are the program's own
        feed_dicts, feed_reads = self._named_feeds(rest, session, placeholders, self_name)
        helpers = {} if self_name else self._session_helpers(rest, session, graph_keys | inits | savers)
        passed = {id(n) for _, _, nodes in helpers.values() for n in nodes}  # `train(sess, 20)`
        runs, removals, saves, reopened = [], [], [], []
        program_of: Dict[int, str] = {}  # a run or save in a helper: its parameter holds the program
        save_steps: Dict[int, str] = {}  # saver.save(sess, path, global_step=<graph name>)
        for stmt in rest:
            scope_session = session
            if stmt is stmts[session_at]:
                if not isinstance(stmt, cst.With):
                    continue
                found = _collect(stmt.body, self_name=self_name)
            elif stmt in methods:
                found = _collect(stmt.body, self_name=self_name)
            elif id(stmt) in helpers:
                scope_session = helpers[id(stmt)][1]
                found = _collect(stmt.body, self_name=self_name)
            elif self._reopened(stmt, session, savers):
                reopened.append(stmt)
                found = _collect(stmt.body, self_name=self_name)
            else:
                found = _collect(stmt, self_name=self_name)
            rebound = (found.binds & (graph_keys | inits | savers)) - {session} - shadowed
            for name in sorted(rebound):
                blockers.append(f"graph name {name!r} is rebound after the graph is built")
            handled: Set[int] = set()
            for call in found.calls:
                try:
                    kind = self._session_call(call, scope_session, graph_keys, inits, savers,
                                              placeholders, self_name)
                except _Blocked as why:
                    blockers.append(str(why))
                    handled |= {id(n) for n, _ in _collect(call, self_name=self_name).reads}
                    continue
                if kind is None:
                    continue
                handled |= {id(n) for n, _ in _collect(call.func.value, self_name=self_name).reads}
                if kind in ("run", "init", "run_method"):
                    handled |= {id(n) for n, _ in _collect(*call.args, self_name=self_name).reads}
                if id(stmt) in helpers:
                    program_of[id(call)] = scope_session
                if kind in ("run", "run_method"):
                    runs.append(call)
                elif kind in ("init", "close"):
                    removals.append(call)
                else:
                    handled |= {id(n) for n, _ in
                                _collect(call.args[0].value, self_name=self_name).reads}
                    step = next((a.value for a in call.args[1:] if kind == "save" and a.keyword
                                 is not None and a.keyword.value == "global_step"), None)
                    if _key(step, self_name) in graph_keys:  # TF1 read its value: the program does
                        save_steps[id(call)] = _key(step, self_name)
                        handled.add(id(step))
                    saves.append((call, kind))
            for node, key in found.reads:
                if id(node) in handled or id(node) in feed_reads or key in shadowed \
                        or id(node) in passed:
                    continue
                if key == scope_session:
                    blockers.append(f"the session {key!r} is used other than by run()/close()")
                elif key in graph_keys | inits | savers:
                    blockers.append(f"graph value {key!r} is used outside sess.run()")
        if blockers:
            raise _Blocked("; ".join(dict.fromkeys(blockers)))
        if not runs:
            raise _NotAProgram()  # only initializer runs: nothing is computed, nothing to convert
        return {"session": session, "placeholders": placeholders, "graph": graph,
                "graph_keys": graph_keys, "inits": inits, "runs": runs,
                "removals": removals, "saves": saves, "switches": switches, "savers": savers,
                "saver_options": saver_options, "self_name": self_name, "methods": methods,
                "feed_dicts": feed_dicts, "scoped": scoped, "program_of": program_of,
                "save_steps": save_steps, "reopened": reopened,
                "passed": [n for _, _, nodes in helpers.values() for n in nodes]}

    def _session_helpers(self, rest, session, graph_names) -> Dict[int, tuple]:
        """Functions of the program's block that the session is passed to
        (``def train(sess, steps): ... sess.run(...) ... saver.save(sess, path)`` called as
        ``train(sess, 20)``): their parameter gets the program instead, and their runs and
        saves are converted with it. Every call of the function in the module must pass the
        session there, and the function binds no graph name of its own. Returns
        ``{id(function): (function, parameter, [the session arguments at the calls])}``."""
        functions = {stmt.name.value: stmt for stmt in rest if isinstance(stmt, cst.FunctionDef)
                     and isinstance(stmt.body, cst.IndentedBlock)}
        if not functions:
            return {}
        calls = [c for c in _collect(self.ctx.module).calls
                 if isinstance(c.func, cst.Name) and c.func.value in functions]
        found: Dict[int, tuple] = {}
        for name, function in functions.items():
            params = function.params
            if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.star_kwarg \
                    or params.posonly_params:
                continue
            names = [p.name.value for p in params.params]
            chosen, nodes = set(), []
            for c in (c for c in calls if c.func.value == name):
                at = [(i, a) for i, a in enumerate(c.args) if _key(a.value, None) == session]
                if len(at) != 1 or at[0][1].star:
                    chosen.add(None)
                    continue
                index, a = at[0]
                chosen.add(a.keyword.value if a.keyword is not None else
                           (names[index] if index < len(names) else None))
                nodes.append(a.value)
            if len(chosen) != 1 or None in chosen or not nodes:
                continue
            parameter = chosen.pop()
            local = set(names) | _collect(function.body).binds
            if parameter in names and not (local & graph_names):
                found[id(function)] = (function, parameter, nodes)
        return found

    def _reopened(self, stmt, session, savers) -> bool:
        """``with tf.Session() as sess: saver.restore(sess, path) ...`` after the program: a
        new session on the same graph whose first act restores every variable (a Saver with
        no var_list), so the program's own variables, restored, are what it runs on."""
        if not isinstance(stmt, cst.With) or self._session_stmt(stmt) != session \
                or not isinstance(stmt.body, cst.IndentedBlock):
            return False
        first = _value(stmt.body.body[0]) if stmt.body.body else None
        return (isinstance(first, cst.Call) and isinstance(first.func, cst.Attribute)
                and first.func.attr.value == "restore" and _key(first.func.value, None) in savers
                and bool(first.args) and _key(first.args[0].value, None) == session)

    def _initializer_group(self, value, inits) -> bool:
        """``tf.group(tf.global_variables_initializer(), tf.local_variables_initializer())``
        (or of names bound to initializers): running it initializes, nothing else."""
        if self._call_name(value) != "tf.group" or not value.args:
            return False
        return all(a.keyword is None and not a.star and (
            self._call_name(a.value) in INITIALIZERS
            or isinstance(a.value, cst.Name) and a.value.value in inits) for a in value.args)

    def _scoped_placeholders(self, stmt, self_name):
        """``with tf.name_scope("input"): x = tf.placeholder(...)``: placeholders made in
        the scope blocks of a graph statement, at any depth, as (statement, key, call). They
        become parameters like the others; the scope keeps the rest of its body."""
        while_blocks = [stmt] if isinstance(stmt, cst.With) else []
        for block in while_blocks:
            for inner in block.body.body:
                if isinstance(inner, cst.With):
                    while_blocks.append(inner)
                    continue
                value, key = _value(inner), _assigned_key(inner, self_name)
                if key and self._call_name(value) in PLACEHOLDERS:
                    yield inner, key, value

    def _containers_of_graph(self, stmts, region, graph, switches, session_at, self_name) -> Set[str]:
        """``pooled = []`` before graph code that fills it (``pooled.append(conv)``): the
        container holds tensors of one trace, so it is made in the graph function, afresh
        each time the function is traced (a module-level list would hand the second trace
        the first one's tensors). Adds those statements to ``graph``; returns their names."""
        reads: Set[str] = set()
        for i in graph:
            reads |= {k for _, k in _collect(stmts[i], self_name=self_name).reads}
        moved: Set[str] = set()
        for i in region:
            stmt = stmts[i]
            if i in graph or i in switches or i == session_at or not isinstance(stmt, cst.SimpleStatementLine):
                continue
            key = _assigned_key(stmt, self_name)
            if key and key in reads and _fresh_container(_value(stmt)):
                graph.append(i)
                moved.add(key)
        graph.sort()
        return moved

    def _session_call(self, call, session, graph_keys, inits, savers, placeholders, self_name):
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        owner, method = _key(func.value, self_name), func.attr.value
        if method in ("run", "eval") and owner != session:
            # the default session's forms: `tf.global_variables_initializer().run()`,
            # `train_step.run(feed_dict={...})`, `accuracy.eval(feed_dict={...})`
            if self._call_name(func.value) in INITIALIZERS or (owner in inits and not call.args):
                return "init"
            if owner in graph_keys:
                self._check_feeds(self._method_feeds(call, session, self_name), placeholders,
                                  self_name)
                return "run_method"
            return None
        if owner is None:
            return None
        if owner in savers and method in ("save", "restore"):
            if not call.args or _key(call.args[0].value, self_name) != session:
                raise _Blocked(f"{owner}.{method}() with another session")
            return method
        if owner != session:
            return None
        if method == "close" and not call.args:
            return "close"
        if method != "run":
            raise _Blocked(f"{session}.{method}() has no eager equivalent here")
        if not call.args:
            raise _Blocked("sess.run() without fetches")
        fetch = call.args[0].value
        if self._call_name(fetch) in INITIALIZERS or _key(fetch, self_name) in inits:
            return "init"
        problems = []  # the fetch and the feeds are both checked: all is said at once
        try:
            self._fetch_keys(fetch, graph_keys, self_name)
        except _Blocked as why:
            problems.append(str(why))
        feeds = [a for a in call.args[1:] if a.keyword is None or a.keyword.value == "feed_dict"]
        others = [a for a in call.args[1:] if a not in feeds]
        if others or len(feeds) > 1:
            problems.append("sess.run() with options or run_metadata")
        else:
            try:
                self._check_feeds(feeds, placeholders, self_name)
            except _Blocked as why:
                problems.append(str(why))
        if problems:
            raise _Blocked("; ".join(problems))
        return "run"

    @staticmethod
    def _method_feeds(call, session, self_name) -> list:
        """The feed arguments of ``op.run(feed_dict, session)`` / ``t.eval(...)``."""
        feeds = []
        for name, a in _method_args(call):
            if a.star or name not in ("feed_dict", "session"):
                raise _Blocked(f".{call.func.attr.value}() with {name}=")
            if name == "session":
                if _key(a.value, self_name) != session:
                    raise _Blocked(f".{call.func.attr.value}() with another session")
            else:
                feeds.append(a)
        return feeds

    def _check_feeds(self, feeds, placeholders, self_name) -> None:
        if feeds:
            feed = feeds[0].value
            if isinstance(feed, cst.Name) and feed.value in self._proved_feeds:
                return "run"
            if not isinstance(feed, cst.Dict):
                raise _Blocked("a feed_dict that is neither a dict literal nor a name bound once "
                               "to one")
            for element in feed.elements:
                if not isinstance(element, cst.DictElement) \
                        or _key(element.key, self_name) not in placeholders:
                    raise _Blocked("a feed of something other than a placeholder")

    def _named_feeds(self, scopes, session, placeholders, self_name):
        """``feed = {x: a, y: b}`` then ``sess.run(..., feed_dict=feed)``: proved when the
        name is bound exactly once, to a dict literal of placeholders, and is used only as
        the feed of this session's runs. Returns ``{name: dict node}`` and the ids of the
        placeholder reads in those dicts (they become parameter names)."""
        self._proved_feeds = set()
        uses: Dict[str, int] = {}
        for call in _collect(*scopes, self_name=self_name).calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in ("run", "eval")):
                continue
            on_session = _key(func.value, self_name) == session
            if func.attr.value == "eval" and on_session:
                continue
            for a in (call.args[1:] if on_session else call.args[:1]):
                if (a.keyword is None or a.keyword.value == "feed_dict") \
                        and isinstance(a.value, cst.Name):
                    uses[a.value.value] = uses.get(a.value.value, 0) + 1
        if not uses:
            return {}, set()
        assigns: Dict[str, list] = {n: [] for n in uses}
        seen: Dict[str, int] = {n: 0 for n in uses}

        class Scan(cst.CSTVisitor):
            def visit_Assign(self, node):
                if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name) \
                        and node.targets[0].target.value in assigns:
                    assigns[node.targets[0].target.value].append(node.value)

            def visit_Arg(self, node):  # `feed_dict=feed_dict`: the keyword is no use
                node.value.visit(self)
                return False

            def visit_Name(self, node):
                if node.value in seen:
                    seen[node.value] += 1

        for scope in scopes:
            scope.visit(Scan())
        found, reads = {}, set()
        for name, count in uses.items():
            values = assigns[name]
            # every appearance of the name: its one binding and its uses as a feed, nothing else
            if len(values) != 1 or seen[name] != count + 1 or not isinstance(values[0], cst.Dict):
                continue
            literal = values[0]
            if not all(isinstance(e, cst.DictElement) and _key(e.key, self_name) in placeholders
                       for e in literal.elements):
                continue
            found[name] = literal
            for element in literal.elements:
                reads |= {id(n) for n, _ in _collect(element.key, self_name=self_name).reads}
        self._proved_feeds = set(found)
        return found, reads

    def _fetch_keys(self, fetch, graph_keys, self_name) -> None:
        key = _key(fetch, self_name)
        if key is not None:
            if key not in graph_keys:
                raise _Blocked(f"a fetch of {key!r}, which is not built in the graph")
            return
        if isinstance(fetch, (cst.List, cst.Tuple)):
            for element in fetch.elements:
                if isinstance(element, cst.StarredElement):
                    raise _Blocked("a starred fetch list")
                self._fetch_keys(element.value, graph_keys, self_name)
            return
        if isinstance(fetch, cst.Dict):
            for element in fetch.elements:
                if not isinstance(element, cst.DictElement):
                    raise _Blocked("a fetch dict with ** entries")
                self._fetch_keys(element.value, graph_keys, self_name)
            return
        raise _Blocked(f"a fetch that is not a graph name: {code(fetch)}")

    # -- rewrite -----------------------------------------------------------------------------
    def _apply(self, stmts, session_at, plan, owner) -> Finding:
        ctx = self.ctx
        self_name = plan["self_name"]
        at_module = isinstance(owner, cst.Module)
        anchor = stmts[session_at]
        finding = self.report(anchor, "Session program converted to eager TF2: the graph is built "
                                      "by a function run as tf.function steps (shims.GraphProgram)")
        finding.add_import("import shims")
        build = fresh_name(ctx, "build_graph")
        program_name = fresh_name(ctx, "program")
        program = f"{self_name}.{program_name}" if self_name else program_name
        tf_expr = code(ctx.tf(finding, ""))
        dropped = plan["inits"] | plan["savers"]
        scoped = {id(stmt) for stmt in plan["scoped"]}
        placeholder_stmts = {i for i in plan["graph"] if _assigned_key(stmts[i], self_name)
                             in plan["placeholders"] or _only_placeholders(stmts[i], scoped)}
        moved = [i for i in plan["graph"]
                 if i not in placeholder_stmts and _assigned_key(stmts[i], self_name) not in dropped]
        self._unseeded_note(anchor, [stmts[i] for i in moved])
        for i in plan["graph"]:
            finding.remove(stmts[i])
        for i in plan["switches"]:
            finding.remove(stmts[i])
        for stmt in plan["scoped"]:  # the moved scope block keeps the rest of its body
            finding.remove(stmt)
        fetched: List[str] = []
        for call in plan["runs"]:
            target = call.func.value if self._is_method_run(call, plan) else call.args[0].value
            for _, key in _collect(target, self_name=self_name).reads:
                if key in plan["graph_keys"] and key not in fetched:
                    fetched.append(key)
        fetched += [k for k in dict.fromkeys(plan["save_steps"].values()) if k not in fetched]
        params = [_plain(k) for k in plan["placeholders"]]
        specs = [f"{_plain(k)}={self._spec(call, tf_expr)}" for k, call in plan["placeholders"].items()]
        # a placeholder kept on the object is set from the parameter, for the graph code
        used = set()
        for i in moved:
            found = _collect(stmts[i], self_name=self_name)
            used |= found.binds | {key for _, key in found.reads}
        keep = [f"{k} = {_plain(k)}\n" for k in plan["placeholders"]
                if k.startswith("self.") and k in used]
        returned = ", ".join(f'"{_plain(k)}": {k}' for k in fetched)
        rewritten = ctx.shared.setdefault("rewritten", {})
        header = f"def {build}({', '.join(params)}):\n    pass\n"
        program_line = (f"{program} = shims.GraphProgram({build}"
                        f"{''.join(', ' + s for s in specs)})\n")

        def definition() -> list:
            body = [cst.parse_statement(line) for line in keep]
            body += [rewritten.get(id(stmts[i]), stmts[i]) for i in moved]
            body = [b.with_changes(leading_lines=()) if n == 0 else b for n, b in enumerate(body)]
            body.append(cst.parse_statement(f"return {{{returned}}}\n"))
            blank = [cst.EmptyLine(), cst.EmptyLine()] if at_module else []
            func = cst.parse_statement(header)
            func = func.with_changes(body=func.body.with_changes(body=body), leading_lines=blank)
            line = cst.parse_statement(program_line)
            if at_module:
                line = line.with_changes(leading_lines=blank)
            return [func, line]

        if self_name:  # the program is made where the graph was complete
            last = max(moved or plan["graph"])
            finding.insert_after(stmts[last], definition)
            finding.remove(anchor)
        else:
            def replacement(updated):
                new = definition()
                if isinstance(updated, cst.With):
                    new.extend(updated.body.body)
                return cst.FlattenSentinel(new)

            finding.replace(anchor, replacement)
        dead: Set[int] = set()
        for node in [*(stmts[i] for i in plan["graph"] if i not in moved),
                     *(stmts[i] for i in plan["switches"]),
                     *(anchor.items if isinstance(anchor, cst.With) else [anchor]),
                     *(item for stmt in plan["reopened"] for item in stmt.items),
                     *plan["removals"], *(c.func for c in plan["runs"]),
                     *(c.func for c, _ in plan["saves"])]:
            dead |= _ids(node)
        ctx.findings[:] = [f for f in ctx.findings if f is finding or id(f.node) not in dead]
        for call in plan["runs"]:
            finding.replace(call, self._run_replacement(plan["program_of"].get(id(call), program),
                                                        self_name, self._is_method_run(call, plan)))
        for node in plan["passed"]:  # `train(sess, 20)`: the function gets the program
            finding.replace(node, cst.parse_expression(program))
        for stmt in plan["reopened"]:  # the new session on the same graph: its body stays
            finding.replace(stmt, lambda updated: cst.FlattenSentinel(
                [updated.body.body[0].with_changes(leading_lines=updated.leading_lines),
                 *updated.body.body[1:]]))
        for literal in plan["feed_dicts"].values():
            finding.replace(literal, self._feed_replacement(self_name))
        scopes = [*stmts, *plan["methods"]]
        for call in plan["removals"]:
            finding.remove(self._statement_of(call, scopes))
        for call, kind in plan["saves"]:
            owner_key = _key(call.func.value, self_name)
            options = plan["saver_options"][owner_key] if kind == "save" else []
            finding.replace(call, self._save_replacement(plan["program_of"].get(id(call), program),
                                                         kind, options, plan["save_steps"].get(id(call))))
        return finding

    def _unseeded_note(self, anchor, graph_code) -> None:
        """Under ``tf.set_random_seed(s)``, TF1 seeded each random op given no seed of its
        own from the op's position in the graph (its op count), which TF2 does not
        reproduce: the converted program draws other dropout masks and random values than
        the TF1 program did. Said, not hidden (report-only)."""
        calls = [c for c in _collect(self.ctx.module).calls if self._call_name(c) in GRAPH_SEEDS]
        if not calls:
            return
        unseeded = sorted({self._call_name(c) for c in _collect(*graph_code).calls
                           if self._call_name(c) in RANDOM_OPS
                           and not any(a.keyword is not None and a.keyword.value == "seed"
                                       for a in c.args)})
        if unseeded:
            self.report(anchor, f"random values differ from TF1's: under tf.set_random_seed, TF1 "
                                f"seeded {', '.join(unseeded)} (no seed= of its own) from its "
                                "position in the graph, which TF2 does not reproduce; give each a "
                                "seed= in the TF1 program and its migration for the same draws")

    def _statement_of(self, call, stmts):
        """The simple statement that is exactly ``call`` (an initializer run, a close)."""
        found = []

        class Find(cst.CSTVisitor):
            def visit_SimpleStatementLine(self, node):
                if len(node.body) == 1 and isinstance(node.body[0], cst.Expr) \
                        and node.body[0].value is call:
                    found.append(node)

        for stmt in stmts:
            stmt.visit(Find())
        if not found:
            raise _Blocked("an initializer run or close() inside an expression")
        return found[0]

    @staticmethod
    def _spec(call: cst.Call, tf_expr: str) -> str:
        args = {}
        positional = ["dtype", "shape", "name"]
        default = call.args and SessionPrograms._is_default(call)
        if default:
            positional = ["input", "shape", "name"]
        for i, a in enumerate(call.args):
            key = a.keyword.value if a.keyword is not None else (positional[i] if i < 3 else None)
            args[key] = code(a.value)
        if default:
            shape = args.get("shape")
            return f"shims.Default({args['input']}{', ' + shape if shape else ''})"
        return f"{tf_expr}.TensorSpec({args.get('shape', 'None')}, {args['dtype']})"

    @staticmethod
    def _is_default(call: cst.Call) -> bool:
        func = call.func
        return isinstance(func, cst.Attribute) and func.attr.value == "placeholder_with_default" \
            or isinstance(func, cst.Name) and func.value == "placeholder_with_default"

    @staticmethod
    def _is_method_run(call: cst.Call, plan) -> bool:
        """``op.run(...)`` / ``t.eval(...)`` rather than ``sess.run(op, ...)`` (in a function
        the session is passed to, the session is that function's parameter)."""
        session = plan["program_of"].get(id(call), plan["session"])
        return _key(call.func.value, plan["self_name"]) != session

    @staticmethod
    def _run_replacement(program: str, self_name: Optional[str], method: bool = False):
        def rewrite(updated: cst.Call):
            if method:  # op.run(feed_dict) / t.eval(feed_dict): the owner is the fetch
                fetch = updated.func.value
                feeds = [a for name, a in _method_args(updated) if name == "feed_dict"]
            else:
                fetch, feeds = updated.args[0].value, updated.args[1:]
            parts = [SessionPrograms._names_as_strings(fetch, self_name)]
            for a in feeds:
                if isinstance(a.value, cst.Name):  # a proved feed dict: its keys are names now
                    parts.append(f"**{a.value.value}")
                    continue
                for element in a.value.elements:
                    parts.append(f"{_plain(_key(element.key, self_name))}={code(element.value)}")
            return cst.parse_expression(f"{program}.run({', '.join(parts)})")
        return rewrite

    @staticmethod
    def _feed_replacement(self_name: Optional[str]):
        def rewrite(updated: cst.Dict):
            elements = [e.with_changes(key=cst.SimpleString(f'"{_plain(_key(e.key, self_name))}"'))
                        for e in updated.elements]
            return updated.with_changes(elements=elements)
        return rewrite

    @staticmethod
    def _names_as_strings(fetch, self_name) -> str:
        key = _key(fetch, self_name)
        if key is not None:
            return f'"{_plain(key)}"'
        inner = [SessionPrograms._names_as_strings(e.value, self_name) for e in fetch.elements] \
            if not isinstance(fetch, cst.Dict) else None
        if isinstance(fetch, cst.List):
            return "[" + ", ".join(inner) + "]"
        if isinstance(fetch, cst.Tuple):
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        parts = [f"{code(e.key)}: {SessionPrograms._names_as_strings(e.value, self_name)}"
                 for e in fetch.elements]
        return "{" + ", ".join(parts) + "}"

    @staticmethod
    def _save_replacement(program: str, kind: str, options: List[str], step: Optional[str] = None):
        def rewrite(updated: cst.Call):
            rest = [code(a) if a.keyword is not None else code(a.value) for a in updated.args[1:]
                    if not (step and a.keyword is not None and a.keyword.value == "global_step")]
            if step:  # the step's value, as TF1's Saver read it from the session
                rest.append(f'global_step={program}.run("{_plain(step)}")')
            rest = [r.rstrip().rstrip(",") for r in rest + options]
            return cst.parse_expression(f"{program}.{kind}({', '.join(rest)})")
        return rewrite

    # -- programs that stay in graph mode -------------------------------------------------
    def _fallback(self, module: cst.Module) -> None:
        blocked = self.ctx.shared.get("sessions_blocked", [])
        if not blocked:
            return
        text = self.ctx.source
        explicit = any(s in text for s in ("disable_eager_execution(", "disable_v2_behavior("))
        for stmt, why, block in blocked:
            # what the user must do stays a finding after --write: report-only
            self.report(stmt, f"Session program kept in TF1 graph mode: {why}; "
                              "convert it by hand or restructure it for TFM501")
            self._graph_mode_names(block, module)
            if explicit:
                continue
            explicit = True
            where = self._switch_place(module, block)
            if where is None:
                continue
            anchor, after = where
            finding = self.report(stmt, "graph-mode switch added (tf.compat.v1.disable_eager_execution()"
                                        " where the Session program starts) so it runs on TF2")
            switch = cst.parse_statement(
                f"{code(self.ctx.tf(finding, 'compat.v1.disable_eager_execution'))}()\n")
            if after:
                finding.insert_after(anchor, [switch])
            else:
                finding.insert_before(anchor, [switch])
            finding.add_import("import shims")  # legacy Keras: tf.compat.v1.layers in graph mode

    def _left_in_graph_code(self, module: cst.Module) -> None:
        """A placeholder outside every program this rule converted or kept in graph mode,
        where nothing switches graph mode on, cannot run on TF2 (``tf.placeholder() is not
        compatible with eager execution``): said, never left silently (a library function
        making one, or a Session form not recognised). At module level it fails on import:
        an error. Code under ``with <graph>.as_default():`` is graph code on TF2 too."""
        for stmt, why, block in self.ctx.shared.get("sessions_blocked", []):
            for inner in block:
                self._programs |= _ids(inner)
        rule, seen, found = self, set(), []

        class Walk(cst.CSTVisitor):
            def __init__(self):
                super().__init__()
                self.functions, self.graphs = [], 0

            def visit_FunctionDef(self, node):
                self.functions.append(node)

            def leave_FunctionDef(self, node):
                self.functions.pop()

            def visit_With(self, node):
                self.graphs += any(_default_of(item.item, None) is not None or
                                   isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Attribute)
                                   and item.item.func.attr.value == "as_default" for item in node.items)

            def leave_With(self, node):
                self.graphs -= any(isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Attribute)
                                   and item.item.func.attr.value == "as_default" for item in node.items)

            def visit_Call(self, node):
                owner = self.functions[-1] if self.functions else None
                if rule._call_name(node) not in PLACEHOLDERS or id(node) in rule._programs \
                        or self.graphs or id(owner) in seen:
                    return
                switched = [s for s in (*module.body, *(s for f in self.functions
                                                         if isinstance(f.body, cst.IndentedBlock)
                                                         for s in f.body.body))
                            if is_graph_switch(rule.ctx, s)]
                if not switched:
                    seen.add(id(owner))
                    found.append((node, owner))

        module.visit(Walk())
        for node, owner in found:
            name = self._call_name(node)
            if owner is None:
                self.report(node, f"error: {name} at module level runs only in TF1 graph mode, and no "
                                  "Session program here was converted or kept in graph mode with it: "
                                  "importing this module fails on TF2; move it into the program "
                                  "that feeds it, or add tf.compat.v1.disable_eager_execution()")
            else:
                self.report(node, f"{name} in {owner.name.value}() runs only in TF1 graph mode and no "
                                  "Session program here was converted with it: call it under "
                                  "tf.compat.v1.disable_eager_execution(), or move its graph into "
                                  "the program that runs it")

    def _graph_mode_names(self, block, module: cst.Module) -> None:
        """A program kept in graph mode keeps TF1's own objects where other rules made eager
        ones: functional ``tf.layers.*`` stay ``tf.compat.v1.layers.*`` (TFM201's Keras
        objects register no UPDATE_OPS, so batch norm's moving statistics never update, and
        draw other dropout masks), and ``tf.train.StopAtStepHook`` and the other hooks stay
        ``tf.compat.v1.train.*`` (TFM110's shims.estimator hooks are eager; TF's monitored
        session cannot run them). The block, and the module-level functions it calls."""
        called = {c.func.value for c in _collect(*block).calls if isinstance(c.func, cst.Name)}
        region = [*block, *(s for s in module.body if isinstance(s, cst.FunctionDef)
                            and s.name.value in called)]
        inside: Set[int] = set()
        for stmt in region:
            inside |= _ids(stmt)
        for found in [f for f in self.ctx.findings if id(f.node) in inside and f.fixable
                      and f.code in ("TFM110", "TFM201")]:
            name = self.ctx.v1(found.node.func if isinstance(found.node, cst.Call) else found.node)
            if found.code == "TFM110" and (name or "").startswith("tf.train."):
                node, why = found.node, "the program runs in graph mode, in TF's own session"
            elif found.code == "TFM201" and (name or "").startswith("tf.layers."):
                node, why = found.node.func, "graph mode (TF1's variables, UPDATE_OPS and dropout masks)"
            else:
                continue
            self.ctx.findings.remove(found)
            finding = self.report(found.node, f"{name} is tf.compat.v1.{name[3:]} in TF2 {why}")
            finding.replace(node, self.ctx.tf(finding, "compat.v1." + name[3:]))

    def _switch_place(self, module: cst.Module, block) -> Optional[tuple]:
        """Where graph mode is switched on: (statement, after?). For a program at module
        level, right after the statement that imports TensorFlow (never before it, whatever
        precedes that import); for one in a function or under ``if __name__ ==
        "__main__":``, at the start of that block, so importing the module (a library, a
        test) does not flip the whole process to graph mode."""
        first = block[0]
        if first is not module.body[0]:  # a function's or a compound statement's block
            doc = isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1 and \
                isinstance(first.body[0], cst.Expr) and isinstance(first.body[0].value, cst.SimpleString)
            return (first, True) if doc and len(block) > 1 else (first, False)
        binding = None
        for name, qualname in self.ctx.resolver.aliases.items():
            if qualname in ("tensorflow", "tensorflow.compat.v1"):
                binding = self.ctx.resolver.bindings.get(name)
                break
        if binding is None:
            return None
        inside = None
        for top in module.body:
            if top is binding or id(binding) in _ids(top):
                inside = top
        return (inside, True) if inside is not None else None
