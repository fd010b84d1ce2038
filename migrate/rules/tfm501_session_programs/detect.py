"""Stage 1, detect: where a Session program lives (a module, a function, a class owning
its session or graph, the blocks inside them, a class's build methods read into its
``__init__``) and which statement makes its session."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of, walk
from migrate.codemod.shared import DATASET_ITERATOR_METHODS, graph_loop, is_tf1_graph

from . import native
from .built import rebound_after_build
from .handed import global_session_objects, imported_handoff
from .plan import Plan
from .syntax import (NO_GRAPH, CONVERTED_MONITORED, MONITORED, PYTHON_SIDE, PYTHON_SIDE_MODULES, SESSIONS, SUPERVISED, SUPERVISOR, _assigned_key, _bare_pass, _last_bare,
                     _Blocked, _collect, _default_of, _ids, _key, _NotAProgram, _plain, _value, innermost_function)


@dataclass
class ClassParts:
    """A class as a program is read from it."""
    init: cst.FunctionDef
    stmts: list          # __init__'s statements, a build method's body in place of its call
    others: list         # the other methods (a build method read into __init__ is not one)
    self_name: str
    built: list          # [(the call statement in __init__, the build method)]


class Detect:
    """Finds programs and their session statements (``self`` is the SessionPrograms rule)."""

    def _blocks(self, body, owner) -> None:
        """A program wherever people put one: the module, a function, a class, and the
        blocks inside them (``if __name__ == "__main__":``, ``with tf.device(...)``,
        ``try:``), at any depth. Classes first: a script handing its session to a
        class's objects converts with them (see ``handed``)."""
        for stmt in body:
            if isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
                self._class(stmt)
        sections = self._sections(body)
        converted = []
        for at, section in enumerate(sections):
            after = [s for later in sections[at + 1:] for s in later]
            converted.append(self._block(section, owner, [], after=after) is not None)
        if len(sections) > 1 and any(converted):  # a kept section runs on a graph of its own
            self._own_graph_sections.update((id(section[0]), section) for section, done
                                            in zip(sections, converted) if not done)
        for stmt in body:
            if isinstance(stmt, cst.FunctionDef) and isinstance(stmt.body, cst.IndentedBlock):
                self._blocks(list(stmt.body.body), stmt)
            elif isinstance(stmt, cst.ClassDef):
                continue
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
        tf.train.MonitoredTrainingSession(...) as sess:``, ``sess = ...``, a Supervisor's
        ``with sv.managed_session() as sess:``), else None."""
        values = [item.item for item in stmt.items] if isinstance(stmt, cst.With) else [_value(stmt)]
        for value in values:
            name = self._call_name(value)
            if name in MONITORED:
                return name
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and value.func.attr.value in SUPERVISED:
                return f"tf.train.Supervisor's {value.func.attr.value}()"
        return None

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
            scope = self._local_scope(stmts[0]) if self_name is None else cst.IndentedBlock(
                body=[*stmts, *methods])
            mentions = sum(1 for _, k in _collect(scope, self_name=self_name).reads if k == key)
            if mentions != 2 + len(sessions):  # bound, made the default, given to sessions
                continue
            block = stmts[blocks[0]]
            flat = [*stmts[:i], *stmts[i + 1:blocks[0]], *block.body.body, *stmts[blocks[0] + 1:]]
            return flat, (stmt, block)
        return stmts, None

    def _local_scope(self, stmt):
        """Where a name ``stmt`` binds lives: the body of the innermost function holding it
        (``def train(): graph = tf.Graph() ...``: its locals, which reading the module as a
        whole leaves out), else the module."""
        function = innermost_function(self.ctx.module, stmt)
        return self.ctx.module if function is None else function.body

    def _inner_blocks(self, stmt) -> list:
        """The statement lists of a compound statement that a program may live in. A
        ``with`` that makes another graph the default is not one (converted code inside it
        would build that graph instead of running eagerly), except a fresh anonymous
        ``tf.Graph().as_default()``, which the conversion removes. A loop's body is one where
        it starts a new graph (``tf.reset_default_graph()``): each pass is a program of its
        own, as each pass built a graph of its own in TF1."""
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
            if (not defaults or self._fresh_graph(stmt)) and not is_tf1_graph(stmt):
                blocks.append(list(stmt.body.body))
        elif isinstance(stmt, cst.Try) and isinstance(stmt.body, cst.IndentedBlock):
            blocks.append(list(stmt.body.body))
        elif graph_loop(self.ctx, stmt):
            blocks.append(list(stmt.body.body))  # a search's trial, each on a new graph (sections)
        return blocks

    # -- helpers -----------------------------------------------------------------------
    def _tfname(self, expr) -> Optional[str]:
        return self.ctx.public_v1(expr)

    def _call_name(self, expr) -> Optional[str]:
        if isinstance(expr, cst.Call):
            return self._tfname(expr.func)
        return None

    def _session_stmt(self, stmt, self_name=None) -> Optional[str]:
        """The session's key for ``s = tf.Session()``, ``self.s = tf.Session()``,
        ``with tf.Session() as s:`` or a converted monitored session (``with ... as s:``,
        ``s = ...``)."""
        key = _assigned_key(stmt, self_name)
        if key and self._call_name(_value(stmt)) in SESSIONS:
            return key
        handed = self._handed_param_now  # `self.sess = sess`, a parameter (handed)
        if key and self_name and handed is not None and isinstance(_value(stmt), cst.Name) \
                and _value(stmt).value == handed.param:
            return key
        if key and self_name is None and self._call_name(_value(stmt)) in CONVERTED_MONITORED:
            return key  # `sess = tf.train.MonitoredTrainingSession(...)`, closed by the program
        if self_name is None and isinstance(stmt, cst.With) and len(stmt.items) == 1 \
                and self._call_name(stmt.items[0].item) in CONVERTED_MONITORED \
                and stmt.items[0].asname is not None and isinstance(stmt.items[0].asname.name, cst.Name):
            return stmt.items[0].asname.name.value  # shims.MonitoredTrainingSession over the program
        if self_name is None and self._supervisor_of(stmt) is not None:
            return stmt.items[0].asname.name.value  # shims.Supervisor's managed session
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

    def _supervisor_of(self, stmt) -> Optional[cst.SimpleStatementLine]:
        """``with sv.managed_session(...) as s:`` where the block binds ``sv =
        tf.train.Supervisor(...)`` once: that statement (it becomes shims.Supervisor over
        the program), else None."""
        if not isinstance(stmt, cst.With) or len(stmt.items) != 1 or stmt.items[0].asname is None \
                or not isinstance(stmt.items[0].asname.name, cst.Name):
            return None
        call = stmt.items[0].item
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and call.func.attr.value == "managed_session" and isinstance(call.func.value, cst.Name)):
            return None
        made = [s for s in self._supervisors if _assigned_key(s) == call.func.value.value]
        return made[0] if len(made) == 1 else None

    def _uses_tf(self, stmt) -> bool:
        """Does the statement build graph? Data readers that only share TensorFlow's package
        (``tensorflow.examples.tutorials``' MNIST reader, numpy out) and Python-side objects
        (a ``tf.train.Coordinator`` of threads) do not."""
        for call in _collect(stmt).calls:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in DATASET_ITERATOR_METHODS:
                return True  # `dataset.make_initializable_iterator()`: TFM109 makes it tf.compat.v1
            if _shims_contrib(call.func):  # tf.contrib as migrated (a second run reads it the same)
                return True
            name = self._tfname(call.func) or "tf.examples."
            if name.partition("tf.examples.")[0] and name not in PYTHON_SIDE \
                    and not name.startswith(PYTHON_SIDE_MODULES):
                return True
        return False

    # -- a block: a module, a function body, or a class's __init__ with its methods -------
    def _block(self, stmts, owner, methods, self_name=None, outside=None, written=None, after=()):
        """Converts the block's program, or records why not; the finding of a conversion.
        ``written``: the block as written, where ``stmts`` reads a build method into it;
        ``after``: the block's later sections (see ``sections``)."""
        written = stmts if written is None else written
        stmts, owned = self._owned_graph(stmts, methods, self_name)
        self._supervisors = [s for s in stmts if self._call_name(_value(s)) == SUPERVISOR]
        session_at = next((i for i, s in enumerate(stmts) if self._session_stmt(s, self_name)), None)
        if session_at is None:
            monitored = next((s for s in stmts if self._monitored(s)), None)
            if monitored is not None:
                self._blocked.append(
                    (monitored, f"{self._monitored(monitored)} (hooks, scaffold, checkpoints) has "
                                "no eager conversion yet", written))
            return None
        script = None if self_name else self._handed_script(stmts, session_at)
        if script is not None:  # the session only serves objects converted with their own programs
            self._apply_handed(script, written)
            return None
        run = None if self_name else self._object_script(stmts, session_at)
        if run is not None:  # the session only runs one converted object's graph
            self._apply_object_script(run, written)
            return None
        try:
            plan = self._plan(stmts, session_at, methods, self_name)
            spread = self._placement_blocker(stmts, plan) if self_name else None
            if spread:
                raise _Blocked(spread)
            if outside is not None:
                used = self._used_from_outside(outside, plan)
                if used:
                    raise _Blocked(f"the object's {used!r} is used from outside the class")
            why = self._section_blocker(stmts, session_at, plan, after) \
                or rebound_after_build(stmts, session_at, plan)
            if why:
                raise _Blocked(why)
            model, form = self._native_model(stmts, session_at, plan, owner)
            if plan.overrides and not isinstance(model, native.NativeProgram):
                raise _Blocked(f"a feed of {plan.overrides[0]}, a graph value, not a placeholder (TF1 let a fed "
                               "value replace what a tensor computes; only native steps take it, as a parameter"
                               + (f", and not here: {model.reason})" if model is not None else ")"))
            if plan.python_fetches and not isinstance(model, native.NativeProgram):
                fetch, python = plan.python_fetches[0]
                raise _Blocked(f"a fetch that is not a graph name: {code(fetch)} (it reads the Python value"
                               f"{'s' if len(python) > 1 else ''} {', '.join(python)}; only a native step "
                               f"traced at that run reads {'them' if len(python) > 1 else 'it'}"
                               + (f", and not here: {model.reason})"
                                                                  if model is not None else ")"))
        except _NotAProgram:
            return None
        except _Blocked as why:
            evaluations = None if self_name else self._evaluations_script(stmts, session_at)
            if evaluations is not None:  # no graph: each run is TensorFlow on Python values
                self._apply_evaluations(evaluations, written)
                return None
            handed = None if self_name else (self._handed_blocker(stmts, session_at)
                                             or self._object_blocker(stmts, session_at))
            if handed is None and str(why).startswith(NO_GRAPH):  # built by code elsewhere
                session = self._session_stmt(stmts[session_at])
                handed = imported_handoff(self.ctx.module, stmts, session_at, session) \
                    or global_session_objects(self.ctx.module, stmts, session_at, session)
            self._blocked.append(
                (stmts[session_at], handed or str(why), written))
            return None
        finding = self._native(stmts, session_at, plan, owner, model, form)
        for stmt in [*stmts, *methods, *plan.makers]:  # a placeholder function's calls made specs
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
        return finding

    def _native_model(self, stmts, session_at, plan, owner):
        """The program as native TF2 (``native.read``), a Blocker saying why not, or None
        where the target is not native programs; and its class form."""
        if self.ctx.target.programs != "native":
            return None, None
        form = native.ClassForm(self._class_now, owner, plan.self_name, tuple(self._built_now),
                                tuple(stmts[i] for i in plan.graph)) if plan.self_name else None
        form = native.kept_on_object(form, self._call_name) if form is not None else None
        model = native.read(stmts, session_at, plan, self._call_name, self.ctx.module, form, self.ctx.target.keras)
        handed = self._handed_param_now if plan.handed else None
        if handed is not None and not isinstance(model, native.Blocker) and (
                handed.name in self._handed_graph_read or handed.name in self._handed_scoped):
            model = native.Blocker("the script that hands it the session reads the session's graph"
                                   if handed.name in self._handed_graph_read else
                                   "its objects are made in variable scopes, which named their variables in TF1")
        return model, form

    def _native(self, stmts, session_at, plan, owner, model, form):
        """The program written natively where ``native.read`` proved the form (``model``;
        else through shims.GraphProgram, its finding saying why not natively); the finding."""
        if model is None:
            return self._apply(stmts, session_at, plan, owner)
        if isinstance(model, native.Blocker):
            finding = self._apply(stmts, session_at, plan, owner)
            finding.message += f"; not written as native TF2 steps: {model.reason}"
            return finding
        finding = self.report(stmts[session_at], native.summary(model))
        handed = self._handed_param_now if plan.handed else None
        self._unseeded_note(stmts[session_at], [stmts[i] for i in plan.graph] + list(plan.hoisted))
        native.emit(self.ctx, finding, stmts, session_at, plan.session, model, self._statement_of,
                    isinstance(owner, cst.Module), form)
        if handed is not None:  # it takes no session: its parameter goes (its script's constructions drop it)
            self._handed_native.add(handed.name)
            self._handed_steps[handed.name] = native.written_step(form, model)
            finding.replace(form.init.params, lambda updated: updated.with_changes(
                params=_last_bare([p for p in updated.params if p.name.value != handed.param])))
        return finding

    def _class(self, cls: cst.ClassDef) -> None:
        parts = self._class_parts(cls)
        if parts is None:
            return
        self._built_now = parts.built  # where its build function goes (convert._placement)
        self._class_now = cls
        try:
            shape = self._object_classes.get(cls.name.value)  # a graph object a script runs (objects)
            if shape is not None and shape.cls is cls:
                if not self._object_block(cls, shape, parts):
                    del self._object_classes[cls.name.value]
                    self._handed_kept.add(cls.name.value)
                return
            handed = self._handed_classes.get(cls.name.value)  # handed the script's session
            if cls.name.value in self._handed_excluded:  # blocked at a first reading: again, for its finding
                handed = self._handed_shapes.get(cls.name.value)
            if handed is not None and handed.cls is not cls:
                handed = None
            self._handed_param_now = handed
            finding = self._block(parts.stmts, parts.init, parts.others, parts.self_name, outside=cls,
                                  written=list(parts.init.body.body))
        finally:
            self._handed_param_now = None
            self._built_now = []
        if handed is not None and (finding is None or not isinstance(_value(finding.node), cst.Name)):
            self._handed_classes.pop(cls.name.value, None)  # not converted: its script stays as it is
            self._handed_kept.add(cls.name.value)

    def _class_parts(self, cls: cst.ClassDef) -> Optional[ClassParts]:
        """``__init__``, its statements as read (the bodies of the build methods it calls
        read in place of their calls), the other methods, ``self``'s name; else None."""
        methods = [m for m in cls.body.body if isinstance(m, cst.FunctionDef)
                   and isinstance(m.body, cst.IndentedBlock) and m.params.params]
        init = next((m for m in methods if m.name.value == "__init__"), None)
        if init is None:
            return None
        self_name = init.params.params[0].name.value
        others = [m for m in methods if m is not init]
        if any(m.params.params[0].name.value != self_name for m in others):
            others = [m for m in others if m.params.params[0].name.value == self_name]
        stmts = list(init.body.body)
        built = self._build_methods(init, others, self_name, cls)
        for call, method in built:  # `self._build_net()`: its graph is read as __init__'s (handed)
            at = next(i for i, s in enumerate(stmts) if s is call)
            stmts[at:at + 1] = list(method.body.body)
            others = [m for m in others if m is not method]
        return ClassParts(init, stmts, others, self_name, built)

    @staticmethod
    def _build_methods(init: cst.FunctionDef, others, self_name: str, cls: cst.ClassDef):
        """``self._build_net()``, statements of ``__init__`` calling methods of the class
        that take only ``self`` (and parameters with defaults: ``h_size=10``, which the
        build function, defined in the method, still sees), return nothing, are undecorated
        and called nowhere else: [(the call statement, the method)], in ``__init__``'s order."""
        methods = {m.name.value: m for m in others}
        found, uses = [], None
        for stmt in init.body.body:
            call = _value(stmt)
            if not (isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr)
                    and isinstance(call, cst.Call) and not call.args
                    and isinstance(call.func, cst.Attribute) and _key(call.func, self_name)):
                continue
            method = methods.get(call.func.attr.value)
            if method is None or method.decorators \
                    or any(p.default is None for p in method.params.params[1:]) \
                    or not isinstance(method.params.star_arg, cst.MaybeSentinel) or method.params.kwonly_params \
                    or method.params.star_kwarg is not None \
                    or any(nodes_of(method.body, (cst.Return, cst.Yield, cst.Global, cst.Nonlocal))):
                continue
            if uses is None:  # how often each attribute name is read in the class, counted once
                uses = Counter(a.attr.value for a in nodes_of(cls, cst.Attribute))
            if uses[method.name.value] == 1 and all(m is not method for _, m in found):  # the call's own
                found.append((stmt, method))
        return found

    def _used_from_outside(self, cls, plan: Plan) -> Optional[str]:
        """An attribute the conversion removes (the session, a graph value) read through
        another name anywhere in the module (``agent.sess.run``): not provable, blocked."""
        attrs = {_plain(k) for k in (plan.graph_keys | {plan.session}) if k.startswith("self.")}
        inside = _ids(cls)
        found = []

        class Find(cst.CSTVisitor):
            def visit_Attribute(self, node):
                # (another class's `self.sess` is its own object's)
                if node.attr.value in attrs and id(node) not in inside \
                        and not (isinstance(node.value, cst.Name) and node.value.value == "self"):
                    found.append(node.attr.value)

        walk(self.ctx.module, Find())
        return found[0] if found else None


def _shims_contrib(func) -> bool:
    """``shims.contrib.<...>``: tf.contrib as TFM105 migrated it (tf-slim), graph code."""
    while isinstance(func, cst.Attribute):
        if isinstance(func.value, cst.Name) and func.value.value == "shims":
            return func.attr.value == "contrib"
        func = func.value
    return False
