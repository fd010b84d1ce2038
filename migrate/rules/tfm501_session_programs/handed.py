"""Stage 1b, a session handed to model classes: ``m1 = Model(sess, "m1")``, where the
class keeps ``self.sess = sess``, builds its graph in a method ``__init__`` calls
(``self._build_net()``) and runs ``self.sess.run(...)`` in its methods, and the script
makes the session, the models and runs the initializer once for all of them (the
lab-by-lab tutorials' CNN and ensemble classes, DQN agents).

Each class converts as a class owning its session does (its own ``shims.GraphProgram``,
made where its graph was built), and the program joins the graph it is handed
(``.in_graph(self.sess)``). The script's session becomes that graph, a
``shims.SharedGraph()``: the objects' programs are built when they are made and name their
variables as TF1's one graph did (the second Adam's ``beta1_power_1``), so checkpoints and
``verify --program`` see TF1's names. Its initializer runs and ``close()`` go.

Converted only when the class is made in its own module, every construction is handed
the session of such a script, and that script uses the session for nothing else (else
both stay as they were: a class whose objects another module makes, with a session of
its own, is left to run there in graph mode)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from .native import summaries
from .syntax import (GRAPH_SEEDS, INITIALIZERS, PLACEHOLDERS, RANDOM_OPS, SESSIONS, _as_evaluated, _assigned_key, _collect, _last_bare, _numpy,
                     _ids, _key, _value, after_session, assigned_values)

# TensorFlow calls that make graph state: a script's fetch reading one is no eager value
GRAPH_ONLY = {"tf.Variable", "tf.get_variable", "tf.assign", "tf.assign_add", "tf.assign_sub",
              "tf.group", "tf.no_op", "tf.trainable_variables", "tf.global_variables",
              "tf.get_collection", "tf.gradients", "tf.py_func"}


@dataclass
class HandedClass:
    """A class whose constructor is handed the session."""
    name: str
    param: str      # the constructor's parameter holding the session
    position: int   # its position among the arguments a call passes (``self`` not counted)
    cls: Optional[cst.ClassDef] = None


@dataclass
class ScriptSession:
    """A script's own session, read for the forms converting it with objects."""
    anchor: cst.CSTNode   # ``sess = tf.Session()`` or ``with tf.Session() as sess:``
    key: str              # the session's name
    rest: list            # the statements after it (its block's first)
    block: list           # the whole block but the session statement
    inits: Set[str] = field(default_factory=set)     # names bound to initializers
    removed: list = field(default_factory=list)      # initializer runs, close(), unused inits
    handled: Set[int] = field(default_factory=set)   # the session's reads accounted for


@dataclass
class HandedScript:
    """What goes from a script whose session only serves converted classes."""
    session: cst.CSTNode                                    # its statement (``with`` or ``=``)
    removed: List[cst.SimpleStatementLine] = field(default_factory=list)  # init runs, close()
    passed: List[cst.BaseExpression] = field(default_factory=list)        # handed to constructors
    evaluated: List[cst.Call] = field(default_factory=list)  # runs of eager values: shims.evaluated
    classes: List[str] = field(default_factory=list)
    constructions: List[cst.Call] = field(default_factory=list)  # the calls handed the session
    graph_read: bool = False  # the session's graph is read other than by graph writes (below)
    # ``tf.summary.FileWriter(logdir, sess.graph)`` (``.close()``) standing alone, each object
    # bound to a name where it is made: (the statement, logdir); the objects: (name, class)
    graph_writes: List[cst.SimpleStatementLine] = field(default_factory=list)
    objects: List[tuple] = field(default_factory=list)


class Handed:
    """Reads the two halves of the form (``self`` is the SessionPrograms rule)."""

    # -- the class --------------------------------------------------------------------------
    def _reused_scopes(self, module: cst.Module) -> Set[int]:
        """The ids of what ``with tf.variable_scope(..., reuse=...):`` blocks hold, and of
        every block that calls ``scope.reuse_variables()`` / ``tf.get_variable_scope()
        .reuse_variables()`` (all of it: the call turns reuse on for the rest of the scope it
        is in): an object made there shares (or may share) another's variables in TF1's one
        graph, which separate programs cannot (PTB's validation model); such classes stay as
        they are."""
        if self._reused is not None:  # read once per file
            return self._reused
        found: Set[int] = set()
        for block in nodes_of(module, cst.With):
            if any(self._call_name(item.item) == "tf.variable_scope" and any(
                    a.keyword is not None and a.keyword.value == "reuse" for a in item.item.args)
                   for item in block.items):
                found |= _ids(block.body)
        if "reuse_variables" in self.ctx.source:
            for body in (module, *nodes_of(module, cst.IndentedBlock)):
                if any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "reuse_variables"
                       for stmt in body.body if isinstance(stmt, cst.SimpleStatementLine)
                       for c in nodes_of(stmt, cst.Call)):
                    found |= _ids(body)
        self._reused = found
        return found

    def _scoped_constructions(self, module: cst.Module) -> Set[int]:
        """The ids of what ``with tf.variable_scope(...)`` / ``tf.name_scope(...)`` blocks
        hold: an object made there had its variables named by the scope in TF1; a native
        object makes its layers when its steps are first traced, outside it (such a class
        keeps its program)."""
        found: Set[int] = set()
        for block in nodes_of(module, cst.With):
            if any(self._call_name(item.item) in ("tf.variable_scope", "tf.name_scope") for item in block.items):
                found |= _ids(block.body)
        return found

    @staticmethod
    def _handed_session(init: cst.FunctionDef, stmts, methods, self_name: str) -> Optional[HandedClass]:
        """``self.sess = sess``, ``sess`` a parameter of ``__init__`` (not keyword-only),
        and ``self.sess.run(...)`` in a method: the session the object is handed."""
        params = [p.name.value for p in init.params.params[1:]]
        if not any(isinstance(_value(s), cst.Name) and _value(s).value in params for s in stmts):
            return None  # no parameter kept on the object: none is its session
        runs = {_key(c.func.value, self_name) for c in _collect(*methods, self_name=self_name).calls
                if isinstance(c.func, cst.Attribute) and c.func.attr.value == "run"}
        for stmt in stmts:
            key, value = _assigned_key(stmt, self_name), _value(stmt)
            if key is not None and key in runs and key.startswith("self.") and isinstance(value, cst.Name) \
                    and value.value in params:
                return HandedClass("", value.value, params.index(value.value))
        return None

    def _handed_candidates(self, module: cst.Module, excluded=frozenset()) -> Dict[str, HandedClass]:
        """The module's classes handed a session whose every construction is handed that of a
        script that uses it for nothing else (see ``_handed_script``), to a fixed point: a
        class left out leaves out the scripts handing to it, and theirs. ``excluded``: classes
        of the form whose own conversion was blocked (a first reading found it)."""
        found: Dict[str, HandedClass] = {}
        if "Session(" not in self.ctx.source or ".run(" not in self.ctx.source:
            return found  # no session to hand, or no object running one
        for cls in module.body:
            if not isinstance(cls, cst.ClassDef) or not isinstance(cls.body, cst.IndentedBlock):
                continue
            parts = self._class_parts(cls)
            handed = parts and self._handed_session(parts.init, parts.stmts, parts.others, parts.self_name)
            if handed and cls.name.value not in found:
                handed.name, handed.cls = cls.name.value, cls
                found[cls.name.value] = handed
            elif handed:  # two classes of one name: neither is known for sure
                found[cls.name.value] = None
        found = {k: v for k, v in found.items() if v is not None}
        self._handed_shapes = dict(found)  # also those left out (see _handed_blocker)
        found = {k: v for k, v in found.items() if k not in excluded}
        if not found:
            return found
        bodies = [list(module.body), *(list(b.body) for b in nodes_of(module, cst.IndentedBlock))]
        names = [n for n in nodes_of(module, cst.Name) if n.value in found]
        calls = {id(c.func): c for c in nodes_of(module, cst.Call) if isinstance(c.func, cst.Name)}
        reused = self._reused_scopes(module)
        scoped = self._scoped_constructions(module)
        while found:
            passed: Set[int] = set()
            for body in bodies:
                for at, stmt in enumerate(body):
                    if self._session_stmt(stmt) is not None:
                        script = self._handed_script(body, at, found)
                        passed |= {id(n) for n in script.passed} if script else set()
                        if script is not None and script.graph_read:  # (no native form has its graph)
                            self._handed_graph_read.update(script.classes)
                        if script is not None:
                            self._handed_scoped.update(name for call, name in zip(script.constructions, script.classes)
                                                       if id(call) in scoped)
            left = set(found) - {n.value for n in names if id(n) in calls}  # made here, or not known
            left |= {n.value for n in names if id(n) in reused and n.value in found}  # sharing variables
            for name in names:
                handed = found.get(name.value)
                if handed is None or name is handed.cls.name:
                    continue
                call = calls.get(id(name))  # a construction, handed the session of a script
                arg = _handed_arg(call, handed) if call is not None else None
                if arg is None or id(arg) not in passed:
                    left.add(name.value)
            if not left:
                return found
            for name in left:
                del found[name]
        return found

    # -- the script: its session only serves converted classes ------------------------------
    def _handed_script(self, stmts, session_at, classes=None) -> Optional[HandedScript]:
        """The session statement at ``session_at`` (``sess = tf.Session()``, ``with
        tf.Session() as sess:``, with nothing but ``config=``) whose session is only handed
        to constructors of converted classes, run on initializers, closed and read for its
        ``.graph`` (``shims.SharedGraph.graph``): what goes."""
        classes = self._handed_classes if classes is None else classes
        read = self._script_session(stmts, session_at) if classes else None
        if read is None:
            return None
        session, rest, handled = read.key, read.rest, read.handled
        script = HandedScript(read.anchor, removed=read.removed)
        removed = {id(s.body[0].value) for s in script.removed}
        for call in _collect(*rest).calls:  # sess.run(accuracy), TensorFlow on numpy alone
            if id(call) not in removed and isinstance(call.func, cst.Attribute) \
                    and call.func.attr.value == "run" and _key(call.func.value, None) == session \
                    and len(call.args) == 1 and call.args[0].keyword is None \
                    and self._eager_fetch(call.args[0].value, rest):
                script.evaluated.append(call)
                handled.add(id(call.func.value))
        writes = {id(s) for s in summaries.graph_writes(self._call_name, rest, session)}
        for node in rest:  # FileWriter(logdir, sess.graph): the shared graph's, as it stands
            graph = {id(a.value) for a in nodes_of(node, cst.Attribute)
                     if a.attr.value == "graph" and _key(a.value, None) == session}
            handled |= graph
            inner = [s for s in [node, *(b for block in nodes_of(node, cst.IndentedBlock) for b in block.body)]
                     if id(s) in writes]
            script.graph_writes += inner
            script.graph_read = script.graph_read or len(graph) > len(inner)
        for call in _collect(*rest).calls:
            handed = classes.get(call.func.value) if isinstance(call.func, cst.Name) else None
            arg = _handed_arg(call, handed) if handed is not None else None
            if arg is not None and _key(arg, None) == session:
                script.passed.append(arg)
                script.classes.append(handed.name)
                script.constructions.append(call)
                handled.add(id(arg))
                bound = next((s for s in rest if isinstance(s, cst.SimpleStatementLine) and _value(s) is call
                              and isinstance(s.body[0], cst.Assign) and isinstance(s.body[0].targets[0].target, cst.Name)), None)
                script.objects.append((bound.body[0].targets[0].target.value if bound else None, handed.name))
        if script.graph_writes and any(name is None for name, _ in script.objects):
            script.graph_read = True  # (the graphs written are each object's step's: they need names)
        found = _collect(*rest)
        if not script.passed or found.binds & {session} or any(
                k == session and id(n) not in handled for n, k in found.reads):
            return None
        self._unused_inits(read)
        return script

    def _script_session(self, stmts, session_at) -> Optional[ScriptSession]:
        """The script's session at ``session_at`` as both script forms read it (handed,
        objects), with its initializer runs and ``close()`` statements; None when it is
        not ``sess = tf.Session()`` or ``with tf.Session() as sess:`` with nothing but
        ``config=``."""
        anchor = stmts[session_at]
        if isinstance(anchor, cst.With):
            if len(anchor.items) != 1 or not isinstance(anchor.body, cst.IndentedBlock):
                return None
            made, body = anchor.items[0].item, list(anchor.body.body)
        else:
            made, body = _value(anchor), []
        if self._call_name(made) not in SESSIONS or any(
                a.keyword is None or a.keyword.value != "config" for a in made.args):
            return None
        rest = [*body, *stmts[session_at + 1:]]
        read = ScriptSession(anchor, self._session_stmt(anchor), rest, [*stmts[:session_at], *rest])
        for stmt in read.block:  # `init = ...`, before the session too
            key, value = _assigned_key(stmt), _value(stmt)
            if key and isinstance(value, cst.Call) and self._initializer_run(value, set(), None) \
                    and not value.args:
                read.inits.add(key)
        for stmt in [s for node in rest for s in nodes_of(node, cst.SimpleStatementLine)]:
            call = _value(stmt)
            if not (isinstance(stmt.body[0], cst.Expr) and isinstance(call, cst.Call)
                    and isinstance(call.func, cst.Attribute) and _key(call.func.value, None) == read.key):
                continue
            if call.func.attr.value == "close" and not call.args or \
                    call.func.attr.value == "run" and len(call.args) == 1 and call.args[0].keyword is None \
                    and self._initializer_run(call.args[0].value, read.inits, None):
                read.removed.append(stmt)
                read.handled |= _ids(stmt)
        return read

    @staticmethod
    def _unused_inits(read: ScriptSession) -> None:
        """An initializer bound to a name goes with its runs, when nothing else reads it."""
        found = _collect(*read.block)
        for stmt in read.block:
            key = _assigned_key(stmt)
            own = _ids(stmt) if key in read.inits else set()  # (its target is among the reads)
            if key in read.inits and all(id(n) in read.handled or id(n) in own
                                         for n, k in found.reads if k == key):
                read.removed.append(stmt)

    def _script_gone(self, finding, anchor, removed, stmts, dead_too=()) -> None:
        """What both script forms drop: initializer runs, ``close()``; other rules'
        findings on what goes; the block is a program's."""
        for stmt in removed:
            finding.remove(stmt)
        dead: Set[int] = set()
        for node in [*(anchor.items if isinstance(anchor, cst.With) else [anchor]), *removed, *dead_too]:
            dead |= _ids(node)
        self.ctx.findings[:] = [f for f in self.ctx.findings if f is finding or id(f.node) not in dead]
        for stmt in stmts:
            self._programs |= _ids(stmt)

    def _eager_fetch(self, fetch, rest) -> bool:
        """``sess.run(ensemble_accuracy)``, where ``ensemble_accuracy = tf.reduce_mean(...)``
        of ``tf.equal(tf.argmax(predictions, 1), ...)`` and ``predictions`` numpy the
        objects' methods returned: the script builds no graph of its own (the objects' graph
        values are theirs alone, or the class is not converted), so what it runs is
        TensorFlow on Python values, which eager TF2 computes where it stands. Followed
        through the script's one-target assignments; nothing that makes variables, feeds,
        trains or initialises, and no random op (each run of it drew anew, an eager value is
        drawn once). What an object's method returns is numpy (its runs are its program's)."""
        bound = assigned_values(rest)
        seen: Set[str] = set()
        todo, computes = [fetch], False
        while todo:
            found = _collect(todo.pop())
            for call in found.calls:
                name = self._call_name(call)
                if name is None:  # an object's method, or its construction: numpy or no value
                    continue
                if name in INITIALIZERS or name in PLACEHOLDERS or name in GRAPH_ONLY \
                        or name in RANDOM_OPS or name.startswith(("tf.train.", "tf.summary.", "tf.random")):
                    return False
                computes = True
            for _, key in found.reads:
                if key not in seen:
                    seen.add(key)
                    todo += bound.get(key, [])
        return computes

    def _handed_blocker(self, stmts, session_at) -> Optional[str]:
        """Why a script handing its session to objects of a class of that form was not
        converted with them (it uses the session for more), else None."""
        session = self._session_stmt(stmts[session_at])
        rest = after_session(stmts, session_at)
        shapes = self._handed_shapes
        calls = [(call, h) for call in _collect(*rest).calls
                 if isinstance(call.func, cst.Name) and (h := shapes.get(call.func.value))
                 and _key(_handed_arg(call, h), None) == session] if shapes and session else []
        names = [h.name for _, h in calls]
        if not names:
            return None
        reused = self._reused_scopes(self.ctx.module)
        shared = [h.name for call, h in calls if id(call) in reused]
        if shared:
            return (f"the session is handed to {', '.join(dict.fromkeys(shared))} objects made where "
                    "variables are reused (reuse= or reuse_variables()): they share variables in "
                    "TF1's one graph, which separate programs cannot")
        kept = [n for n in dict.fromkeys(names) if n in self._handed_kept]
        if kept:
            return (f"the session is handed to {', '.join(kept)} objects, which stay in graph mode "
                    "(see the finding in the class)")
        return (f"the session is handed to {', '.join(dict.fromkeys(names))} objects, and the script "
                "uses it for more than their constructors, initializer runs, close() and runs of "
                "TensorFlow on numpy (so the objects stay in graph mode with it)")

    def _apply_handed(self, script: HandedScript, stmts) -> None:
        """The session becomes the objects' shared graph; its initializer runs and close() go.
        Classes written natively take no session: their constructions drop it, and where every
        class it is handed to is, the session goes."""
        native = [n for n in dict.fromkeys(script.classes) if n in self._handed_native]
        for call, name in zip(script.constructions, script.classes):
            if name in native:
                finding = self.report(call, f"{name} is a native TF2 class, which takes no session: "
                                            "the session goes from its construction")
                finding.replace(call, lambda updated, at=_handed_position(call, self._handed_shapes[name]):
                                updated.with_changes(args=_last_bare([a for i, a in enumerate(updated.args) if i != at])))
        if len(native) == len(set(script.classes)):
            self._apply_handed_native(script, stmts, ", ".join(native))
            return
        names = ", ".join(n for n in dict.fromkeys(script.classes) if n not in native)
        finding = self.report(script.session, f"the Session handed to {names} is the graph their "
                                              "programs share (shims.SharedGraph): TF1's variable "
                                              "names, each initialised when it is made")
        finding.add_import("import shims")
        anchor = script.session
        if isinstance(anchor, cst.With):
            made = cst.parse_statement(f"{anchor.items[0].asname.name.value} = shims.SharedGraph()\n")
            finding.replace(anchor, lambda updated: cst.FlattenSentinel(
                [made.with_changes(leading_lines=updated.leading_lines), *updated.body.body]))
        else:
            finding.replace(_value(anchor), cst.parse_expression("shims.SharedGraph()"))
        for call in script.evaluated:  # TensorFlow on numpy: its eager value, as numpy
            finding.replace(call, _as_evaluated)
        self._script_gone(finding, anchor, script.removed, stmts)

    def _apply_handed_native(self, script: HandedScript, stmts, names: str) -> None:
        """Every class the session is handed to is native: the session goes (a ``with``
        block's body stays), TensorFlow it ran on numpy is computed eagerly, as numpy."""
        finding = self.report(script.session, f"the Session handed to {names} goes: they are native "
                                              "TF2 classes (their variables made when they are made)")
        anchor = script.session
        if isinstance(anchor, cst.With):
            finding.replace(anchor, lambda updated: cst.FlattenSentinel(
                [updated.body.body[0].with_changes(leading_lines=updated.leading_lines), *updated.body.body[1:]]))
        else:
            finding.remove(anchor)
            following = next((s for s in stmts[stmts.index(anchor) + 1:] if s not in script.removed), None) \
                if anchor in stmts else None
            if following is not None:  # (the blank lines and comments above the session stay)
                finding.replace(following, lambda updated: updated.with_changes(
                    leading_lines=[*anchor.leading_lines, *updated.leading_lines]))
        for call in script.evaluated:
            finding.replace(call, lambda updated: _numpy(updated.args[0].value))
        tf = code(self.ctx.tf(finding, ""))
        steps = [f"{obj}.{self._handed_steps[name]}" for obj, name in script.objects]
        for stmt in script.graph_writes:  # TF2 has no session graph: each object's training step's
            finding.replace(stmt, summaries.graph_written(stmt, steps, tf))
        seeds = [s for s in self.ctx.module.body if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                 and self._call_name(_value(s)) in GRAPH_SEEDS]
        for stmt in seeds:  # the module's tf.set_random_seed(2): the global seed, TF2's function
            finding.replace(_value(stmt).func, cst.parse_expression(f"{tf}.random.set_seed"))
        self._script_gone(finding, anchor, script.removed, stmts,
                          [*script.graph_writes, *(_value(s).func for s in seeds)])


def _handed_position(call: cst.Call, handed: HandedClass) -> int:
    """The index among ``call``'s arguments of the one handing the session."""
    arg = _handed_arg(call, handed)
    return next(i for i, a in enumerate(call.args) if a.value is arg)


def _handed_arg(call: cst.Call, handed: HandedClass) -> Optional[cst.BaseExpression]:
    """The argument a construction gives the session parameter, else None."""
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is None and position == handed.position \
                or arg.keyword is not None and arg.keyword.value == handed.param:
            return arg.value
    return None


def imported_handoff(module: cst.Module, stmts, session_at: int, session: Optional[str]) -> Optional[str]:
    """Where the session of a script with no graph code of its own is handed to code of
    another module (``DoubleDQN(..., sess=sess)``, ``from RL_brain import DoubleDQN``): what
    it is handed to and where that is from, for the finding, else None. That code builds
    the graph (and runs it) in its own module: not this script's program."""
    if session is None:
        return None
    origin: Dict[str, str] = {}  # local name -> the module it is imported from
    for stmt in module.body:
        for small in (stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()):
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                source = "." * len(small.relative) + (code(small.module) if small.module is not None else "")
                for alias in small.names:
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(local, cst.Name):
                        origin[local.value] = source
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    local = alias.asname.name if alias.asname is not None else alias.name
                    while isinstance(local, cst.Attribute):  # `import a.b` binds a
                        local = local.value
                    if isinstance(local, cst.Name):
                        origin[local.value] = code(alias.name)
    rest = after_session(stmts, session_at)
    handed: Dict[str, str] = {}
    for stmt in rest:
        for call in nodes_of(stmt, (cst.Call,)):
            root = call.func
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name) and root.value in origin and origin[root.value].split(".")[0] not in (
                    "tensorflow", "tf") and any(_key(a.value, None) == session for a in call.args):
                handed.setdefault(code(call.func), origin[root.value])
    if not handed:
        return None
    what = ", ".join(f"{name} (from {source})" for name, source in handed.items())
    return (f"the session is handed to {what}, whose code in another module builds and runs the graph: "
            "a session shared with another module's graph stays in graph mode with it")


def global_session_objects(module: cst.Module, stmts, session_at: int, session: Optional[str]) -> Optional[str]:
    """Where a script's session is made before objects of classes of the module that run
    it through its module-level name (A3C's ``SESS = tf.Session()``, then ``ACNet(...)`` and
    ``Worker(...)`` whose methods call ``SESS.run``): those objects, for the finding."""
    if session is None or "." in session:
        return None
    classes = {c.name.value for c in module.body if isinstance(c, cst.ClassDef)
               and any(n.value == session for n in nodes_of(c, (cst.Name,)))}
    rest = after_session(stmts, session_at)
    made = [call.func.value for stmt in rest for call in nodes_of(stmt, (cst.Call,))
            if isinstance(call.func, cst.Name) and call.func.value in classes]
    if not made:
        return None
    return (f"the graph is built by {', '.join(dict.fromkeys(made))} objects, whose methods run the session "
            f"{session!r} through its module-level name: a session its objects share as a global stays in "
            "graph mode with them")
