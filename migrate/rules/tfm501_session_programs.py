"""TFM501: graph-then-Session programs -> eager TF2 (shims.GraphProgram)."""
from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from migrate import needles
from migrate.cstutil import NameReads, code, fresh_name
from migrate.rule import Rule

SESSIONS = {"tf.Session", "tf.InteractiveSession"}
PLACEHOLDERS = {"tf.placeholder", "tf.placeholder_with_default"}
INITIALIZERS = {"tf.global_variables_initializer", "tf.initialize_all_variables",
                "tf.local_variables_initializer", "tf.initialize_local_variables",
                "tf.tables_initializer", "tf.variables_initializer"}
SWITCHES = {"tf.disable_v2_behavior", "tf.disable_eager_execution"}
SESSION_NEEDLE = needles.Needle(("Session",), r"\b(Interactive)?Session\s*\(")


class _NotAProgram(Exception):
    """A Session that never runs anything: nothing to convert, nothing to report."""


class _Blocked(Exception):
    """Why a block cannot be converted with proof (the finding's message)."""


def _assigned_name(stmt) -> Optional[str]:
    """``NAME`` for a one-target simple assignment ``NAME = ...``."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1 \
            and isinstance(stmt.body[0].targets[0].target, cst.Name):
        return stmt.body[0].targets[0].target.value
    return None


def _value(stmt) -> Optional[cst.BaseExpression]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and isinstance(stmt.body[0], (cst.Assign, cst.Expr)):
        return stmt.body[0].value
    return None


class _Collect(NameReads):
    """Names a subtree binds and reads (the Name nodes), and the calls in it."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: List[cst.Name] = []
        self.binds: Set[str] = set()
        self.calls: List[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_Name(self, node: cst.Name) -> None:
        super().visit_Name(node)
        self.reads.append(node)

    def _targets(self, target) -> None:
        if isinstance(target, cst.Name):
            self.binds.add(target.value)
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


def _collect(*nodes) -> _Collect:
    visitor = _Collect()
    for node in nodes:
        node.visit(visitor)
    return visitor


class SessionPrograms(Rule):
    code = "TFM501"
    needle = SESSION_NEEDLE
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

Where the conversion cannot be proven (a fetch or feed that is not a graph name, the
session passed elsewhere, a graph name rebound later, ...), the program keeps running:
it is put in explicit graph mode (`tf.compat.v1.disable_eager_execution()`) and this
finding says what blocked the conversion.
"""
    before = """
x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.zeros([3, 1]), name="w")
loss = tf.reduce_mean(tf.matmul(x, w))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(loss, feed_dict={x: data}))
"""
    after = """
import shims
def build_graph(x):
    w = tf.Variable(tf.zeros([3, 1]), name="w")
    loss = tf.reduce_mean(tf.matmul(x, w))
    return {"loss": loss}
program = shims.GraphProgram(build_graph, x=tf.TensorSpec([None, 3], tf.float32))
print(program.run("loss", x=data))
"""

    def leave_Module(self, node: cst.Module) -> None:  # after the walk: every import is known
        self.blocks: List[tuple] = []
        self._block(node.body, node)
        for stmt in node.body:
            if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
                self._block(stmt.body.body, stmt)
        self._fallback(node)

    # -- helpers -----------------------------------------------------------------------
    def _tfname(self, expr) -> Optional[str]:
        return self.ctx.v1(expr)

    def _call_name(self, expr) -> Optional[str]:
        if isinstance(expr, cst.Call):
            return self._tfname(expr.func)
        return None

    def _session_stmt(self, stmt) -> Optional[str]:
        """The session's name for ``s = tf.Session()`` or ``with tf.Session() as s:``."""
        name = _assigned_name(stmt)
        if name and self._call_name(_value(stmt)) in SESSIONS:
            return name
        if isinstance(stmt, cst.With) and len(stmt.items) == 1:
            item = stmt.items[0]
            if self._call_name(item.item) in SESSIONS and item.asname is not None \
                    and isinstance(item.asname.name, cst.Name):
                return item.asname.name.value
        return None

    def _uses_tf(self, stmt) -> bool:
        for call in _collect(stmt).calls:
            if self._tfname(call.func):
                return True
        return False

    # -- one block -------------------------------------------------------------------------
    def _block(self, body, owner) -> None:
        stmts = list(body)
        session_at = next((i for i, s in enumerate(stmts) if self._session_stmt(s)), None)
        if session_at is None:
            return
        self.ctx.shared.setdefault("sessions_seen", []).append(stmts[session_at])
        try:
            plan = self._plan(stmts, session_at)
        except _NotAProgram:
            return
        except _Blocked as why:
            self.ctx.shared.setdefault("sessions_blocked", []).append((stmts[session_at], str(why)))
            return
        self._apply(stmts, session_at, plan, isinstance(owner, cst.Module))

    def _plan(self, stmts, session_at) -> dict:
        session = self._session_stmt(stmts[session_at])
        placeholders: Dict[str, cst.Call] = {}
        graph: List[int] = []
        graph_names: Set[str] = set()
        inits: Set[str] = set()
        savers: Set[str] = set()
        saver_options: Dict[str, List[str]] = {}  # a Saver's max_to_keep=..., for its save()
        switches: List[int] = []
        for i, stmt in enumerate(stmts[:session_at]):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or (
                    isinstance(stmt, cst.SimpleStatementLine)
                    and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)):
                continue
            value, name = _value(stmt), _assigned_name(stmt)
            called = self._call_name(value)
            if called in SWITCHES and isinstance(stmt.body[0], cst.Expr):
                switches.append(i)
                continue
            if called in PLACEHOLDERS:
                if not name:
                    raise _Blocked("a placeholder not assigned to a plain name")
                placeholders[name] = value
                graph_names.add(name)
                graph.append(i)
                continue
            if name and called in INITIALIZERS:
                inits.add(name)
                graph.append(i)
                continue
            if name and called == "tf.train.Saver":
                for a in value.args:
                    if a.keyword is None or a.keyword.value not in ("max_to_keep",):
                        raise _Blocked("a tf.train.Saver with a var_list or options other than "
                                       "max_to_keep")
                savers.add(name)
                saver_options[name] = [code(a) for a in value.args]
                graph.append(i)
                continue
            found = _collect(stmt)
            if self._uses_tf(stmt) or any(r.value in graph_names for r in found.reads):
                if not isinstance(stmt, (cst.SimpleStatementLine, cst.For, cst.With, cst.If)):
                    raise _Blocked(f"graph code in a {type(stmt).__name__} statement")
                graph.append(i)
                graph_names |= found.binds
        if not any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "run"
                   and isinstance(c.func.value, cst.Name) and c.func.value.value == session
                   for c in _collect(*stmts[session_at:]).calls):
            raise _NotAProgram()  # a Session that never runs anything: nothing to convert
        if not placeholders and not graph:
            raise _Blocked("no graph-building code found before the Session")
        # everything else in the block: every use of the session and of graph names
        rest = [s for i, s in enumerate(stmts) if i not in graph and i not in switches]
        runs, removals, saves = [], [], []
        for stmt in rest:
            if stmt is stmts[session_at]:
                if isinstance(stmt, cst.With):
                    found = _collect(stmt.body)
                else:
                    continue
            else:
                found = _collect(stmt)
            rebound = (found.binds & (graph_names | inits | savers)) - {session}
            if rebound:
                raise _Blocked(f"graph name {sorted(rebound)[0]!r} is rebound after the graph is built")
            handled: Set[int] = set()
            for call in found.calls:
                kind = self._session_call(call, session, graph_names, inits, savers, placeholders)
                if kind is None:
                    continue
                handled.add(id(call.func.value) if isinstance(call.func, cst.Attribute) else 0)
                if kind in ("run", "init"):
                    for n in _collect(*call.args).reads:
                        handled.add(id(n))
                if kind == "run":
                    runs.append(call)
                elif kind in ("init", "close"):
                    removals.append(call)
                else:
                    handled.add(id(call.args[0].value))
                    saves.append((call, kind))
            for read in found.reads:
                if id(read) in handled:
                    continue
                if read.value == session:
                    raise _Blocked(f"the session {session!r} is used other than by run()/close()")
                if read.value in graph_names | inits | savers:
                    raise _Blocked(f"graph value {read.value!r} is used outside sess.run()")
        if not runs:
            raise _NotAProgram()
        return {"session": session, "placeholders": placeholders, "graph": graph,
                "graph_names": graph_names, "inits": inits, "runs": runs,
                "removals": removals, "saves": saves, "switches": switches, "savers": savers,
                "saver_options": saver_options}

    def _session_call(self, call, session, graph_names, inits, savers, placeholders):
        func = call.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return None
        owner, method = func.value.value, func.attr.value
        if owner in savers and method in ("save", "restore"):
            if not call.args or not isinstance(call.args[0].value, cst.Name) \
                    or call.args[0].value.value != session:
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
        if self._call_name(fetch) in INITIALIZERS or (isinstance(fetch, cst.Name)
                                                      and fetch.value in inits):
            return "init"
        self._fetch_names(fetch, graph_names)
        feeds = [a for a in call.args[1:] if a.keyword is None or a.keyword.value == "feed_dict"]
        others = [a for a in call.args[1:] if a not in feeds]
        if others or len(feeds) > 1:
            raise _Blocked("sess.run() with options or run_metadata")
        if feeds:
            feed = feeds[0].value
            if not isinstance(feed, cst.Dict):
                raise _Blocked("a feed_dict that is not a dict literal")
            for element in feed.elements:
                if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.Name) \
                        or element.key.value not in placeholders:
                    raise _Blocked("a feed of something other than a placeholder")
        return "run"

    def _fetch_names(self, fetch, graph_names) -> None:
        if isinstance(fetch, cst.Name):
            if fetch.value not in graph_names:
                raise _Blocked(f"a fetch of {fetch.value!r}, which is not built in the graph")
            return
        if isinstance(fetch, (cst.List, cst.Tuple)):
            for element in fetch.elements:
                if isinstance(element, cst.StarredElement):
                    raise _Blocked("a starred fetch list")
                self._fetch_names(element.value, graph_names)
            return
        if isinstance(fetch, cst.Dict):
            for element in fetch.elements:
                if not isinstance(element, cst.DictElement):
                    raise _Blocked("a fetch dict with ** entries")
                self._fetch_names(element.value, graph_names)
            return
        raise _Blocked(f"a fetch that is not a graph name: {code(fetch)}")

    # -- rewrite -----------------------------------------------------------------------------
    def _apply(self, stmts, session_at, plan, owner_is_module: bool) -> None:
        ctx = self.ctx
        anchor = stmts[session_at]
        finding = self.report(anchor, "Session program converted to eager TF2: the graph is built "
                                      "by a function run as tf.function steps (shims.GraphProgram)")
        finding.add_import("import shims")
        build = fresh_name(ctx, "build_graph")
        program = fresh_name(ctx, "program")
        tf_expr = code(ctx.tf(finding, ""))
        params = [name for name in plan["placeholders"]]
        moved = [stmts[i] for i in plan["graph"]
                 if _assigned_name(stmts[i]) not in plan["placeholders"]
                 and _assigned_name(stmts[i]) not in plan["inits"]
                 and _assigned_name(stmts[i]) not in plan["savers"]]
        for i in plan["graph"]:
            finding.remove(stmts[i])
        for i in plan["switches"]:
            finding.remove(stmts[i])
        fetched: List[str] = []
        for call in plan["runs"]:
            for read in _collect(call.args[0].value).reads:
                if read.value not in fetched:
                    fetched.append(read.value)
        specs = []
        for name, call in plan["placeholders"].items():
            specs.append(f"{name}={self._spec(call, tf_expr)}")
        rewritten = ctx.shared.setdefault("rewritten", {})
        returned = ", ".join(f'"{n}": {n}' for n in fetched if n not in plan["placeholders"])
        placeholders_fetched = [n for n in fetched if n in plan["placeholders"]]
        if placeholders_fetched:
            returned = ", ".join(filter(None, [returned] + [f'"{n}": {n}' for n in placeholders_fetched]))
        header = f"def {build}({', '.join(params)}):\n    pass\n"
        program_line = (f"{program} = shims.GraphProgram({build}"
                        f"{''.join(', ' + s for s in specs)})\n")

        def replacement(updated):
            body = [rewritten.get(id(s), s) for s in moved]
            body = [s.with_changes(leading_lines=()) if i == 0 else s for i, s in enumerate(body)]
            body.append(cst.parse_statement(f"return {{{returned}}}\n"))
            func = cst.parse_statement(header)
            blank = [cst.EmptyLine(), cst.EmptyLine()]
            func = func.with_changes(body=func.body.with_changes(body=body),
                                     leading_lines=blank if owner_is_module else [])
            line = cst.parse_statement(program_line)
            if owner_is_module:
                line = line.with_changes(leading_lines=blank)
            new = [func, line]
            if isinstance(updated, cst.With):
                inner = list(updated.body.body)
                new.extend(inner)
            return cst.FlattenSentinel(new)

        finding.replace(anchor, replacement)
        dead: Set[int] = set()
        for node in [*(stmts[i] for i in plan["graph"] if stmts[i] not in moved),
                     *(stmts[i] for i in plan["switches"]),
                     anchor.items[0] if isinstance(anchor, cst.With) else anchor,
                     *plan["removals"], *(c.func for c in plan["runs"]),
                     *(c.func for c, _ in plan["saves"])]:
            dead |= _ids(node)
        ctx.findings[:] = [f for f in ctx.findings if f is finding or id(f.node) not in dead]
        for call in plan["runs"]:
            finding.replace(call, self._run_replacement(call, program))
        for call in plan["removals"]:
            stmt = self._statement_of(call, stmts)
            if stmt is None:
                raise AssertionError("unreachable")
            finding.remove(stmt)
        for call, kind in plan["saves"]:
            options = plan["saver_options"][call.func.value.value] if kind == "save" else []
            finding.replace(call, self._save_replacement(program, kind, options))

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
            return None
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
    def _run_replacement(call: cst.Call, program: str):
        def rewrite(updated: cst.Call):
            fetch = updated.args[0].value
            fetch_code = SessionPrograms._names_as_strings(fetch)
            parts = [fetch_code]
            for a in updated.args[1:]:
                for element in a.value.elements:
                    parts.append(f"{element.key.value}={code(element.value)}")
            return cst.parse_expression(f"{program}.run({', '.join(parts)})")
        return rewrite

    @staticmethod
    def _names_as_strings(fetch) -> str:
        if isinstance(fetch, cst.Name):
            return f'"{fetch.value}"'
        if isinstance(fetch, cst.List):
            return "[" + ", ".join(SessionPrograms._names_as_strings(e.value) for e in fetch.elements) + "]"
        if isinstance(fetch, cst.Tuple):
            inner = [SessionPrograms._names_as_strings(e.value) for e in fetch.elements]
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        parts = [f"{code(e.key)}: {SessionPrograms._names_as_strings(e.value)}" for e in fetch.elements]
        return "{" + ", ".join(parts) + "}"

    @staticmethod
    def _save_replacement(program: str, kind: str, options: List[str]):
        def rewrite(updated: cst.Call):
            rest = [code(a) if a.keyword is not None else code(a.value) for a in updated.args[1:]]
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
        for stmt, why in blocked:
            finding = self.report(stmt, f"Session program kept in TF1 graph mode: {why}; "
                                        "convert it by hand or restructure it for TFM501")
            if explicit:
                continue
            explicit = True
            index = 0
            while index < len(module.body) and isinstance(module.body[index], cst.SimpleStatementLine) \
                    and (all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in module.body[index].body)
                         or (index == 0 and isinstance(module.body[0].body[0], cst.Expr))):
                index += 1
            if index == 0 or index > len(module.body):
                continue
            switch = cst.parse_statement(
                f"{code(self.ctx.tf(finding, 'compat.v1.disable_eager_execution'))}()\n")
            finding.insert_after(module.body[index - 1], [switch])
            finding.add_import("import shims")
