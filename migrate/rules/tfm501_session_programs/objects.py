"""Stage 1c, a model object the script runs: ``model = Model(3)``, where the class builds
its graph in ``__init__`` (or a build method ``__init__`` calls) and keeps its
placeholders and results as attributes, with no session of its own, and the script runs
them in its session: ``sess.run([model.loss, model.train_op], feed_dict={model.x: x})``.

The class converts as a class owning its session does (its own ``shims.GraphProgram``,
``self.program``, made where its graph was built, returning every attribute the graph
binds), and the script's runs become the object's: ``model.program.run(["loss",
"train_op"], x=x)``; a feed dict bound to a name is run as ``**feed``, the script's Saver
saves and restores the object's program. The session, its initializer runs and
``close()`` go.

Converted only when each construction of the class is a script's one model (``model =
Model(...)`` in the block of a session that runs nothing but that object's attributes,
fed its placeholders, besides a Saver's save and restore, initializers, ``close()`` and
TensorFlow on numpy), no method of the class reads a graph attribute, and nothing else
reads the object; else the class and the script stay as they were."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from .plan import Plan
from .syntax import PLACEHOLDERS, _as_evaluated, _program_saver, _saver_options, _assigned_key, _Blocked, _collect, _ids, _key, _value


@dataclass
class ObjectClass:
    """A class whose objects a script's session runs (see the module's docstring)."""
    cls: cst.ClassDef
    placeholders: Set[str]        # attributes holding placeholders
    attrs: List[str]              # attributes the graph code binds, in order
    program: str = "program"      # the attribute its program is kept in, once converted


@dataclass
class ObjectScript:
    """What a script running one object's graph becomes."""
    session: cst.CSTNode                        # its statement (``with`` or ``=``)
    obj: str                                    # the object's name
    name: str                                   # its class
    removed: List[cst.SimpleStatementLine]      # init runs, close() (ScriptSession's)
    obj_call: cst.Name                          # the class name of its construction
    runs: List[cst.Call] = field(default_factory=list)   # sess.run(<the object's attributes>)
    feeds: Dict[str, cst.Dict] = field(default_factory=dict)  # feed dicts bound to a name, by it
    saves: list = field(default_factory=list)   # (saver.save/restore call, kind, options, step attr)
    evaluated: List[cst.Call] = field(default_factory=list)  # TensorFlow on numpy


class Objects:
    """Reads and converts both halves of the form (``self`` is the SessionPrograms rule)."""

    # -- the class ------------------------------------------------------------------------
    def _object_shape(self, cls: cst.ClassDef) -> Optional[ObjectClass]:
        """A class building a graph with placeholders as attributes and running nothing."""
        parts = self._class_parts(cls)
        if parts is None:
            return None
        stmts, others, self_name = parts.stmts, parts.others, parts.self_name
        placeholders: Set[str] = set()
        attrs: List[str] = []
        for stmt in stmts:
            for line in nodes_of(stmt, cst.SimpleStatementLine):
                key = _assigned_key(line, self_name)
                if key is None or not key.startswith("self."):
                    continue
                if self._call_name(_value(line)) in PLACEHOLDERS:
                    placeholders.add(key[5:])
                elif key[5:] not in attrs:
                    attrs.append(key[5:])
        if not placeholders or any(isinstance(c.func, cst.Attribute) and c.func.attr.value in ("run", "eval")
                                   for c in _collect(cls).calls):
            return None  # no placeholder attribute; or it runs something itself (a session of its own)
        graph = placeholders | set(attrs)
        for method in others:  # a method reading a graph attribute would read a traced value
            if any(k.startswith("self.") and k[5:] in graph
                   for _, k in _collect(method.body, self_name=self_name).reads):
                return None
        return ObjectClass(cls, placeholders, attrs)

    def _object_candidates(self, module: cst.Module) -> Dict[str, ObjectClass]:
        """The module's classes of that form whose every construction is a script's one
        model, that script running nothing else (see ``_object_script``)."""
        found: Dict[str, Optional[ObjectClass]] = {}
        self._object_shapes = {}
        if "Session(" not in self.ctx.source or "placeholder" not in self.ctx.source:
            return {}  # no session to run an object, or no object with placeholders
        for cls in module.body:
            if isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock):
                shape = self._object_shape(cls)
                if shape is not None:
                    found[cls.name.value] = None if cls.name.value in found else shape
        found = {k: v for k, v in found.items() if v is not None}
        self._object_shapes = dict(found)  # also those left out (see _object_blocker)
        if not found:
            return {}
        names = [n for n in nodes_of(module, cst.Name) if n.value in found]
        bodies = [list(module.body), *(list(b.body) for b in nodes_of(module, cst.IndentedBlock))]
        scripts: List[ObjectScript] = []
        for body in bodies:
            for at, stmt in enumerate(body):
                if self._session_stmt(stmt) is not None:
                    script = self._object_script(body, at, found)
                    if script is not None:
                        scripts.append(script)
        made = {id(s.obj_call) for s in scripts} - self._reused_scopes(module)
        for name in names:  # every mention is a class name or one script's construction
            shape = found.get(name.value)
            if shape is not None and name is not shape.cls.name and id(name) not in made:
                del found[name.value]
        built = {s.name for s in scripts}  # and there is one: a class made elsewhere stays
        return {k: v for k, v in found.items() if k in built}

    def _object_block(self, cls: cst.ClassDef, shape: ObjectClass, parts) -> bool:
        """Convert the class: its graph code into a build function returning every graph
        attribute, ``self.program`` made where the graph was complete. False if blocked."""
        init, stmts, others, self_name = parts.init, parts.stmts, parts.others, parts.self_name
        plan = Plan(session="", self_name=self_name, methods=others, anchorless=True)
        blockers: List[str] = []
        try:
            self._read_graph(stmts, len(stmts), plan, blockers)
        except _Blocked as why:
            blockers.append(str(why))
        spread = None if blockers else self._placement_blocker(stmts, plan)
        if spread:
            blockers.append(spread)
        if blockers:
            self._blocked.append((stmts[0], "; ".join(dict.fromkeys(blockers)), list(init.body.body)))
            return False
        plan.returns = [f"self.{a}" for a in shape.attrs if f"self.{a}" in plan.graph_keys]
        first = min(plan.graph)
        finding = self._apply(stmts, first, plan, init)
        if self.ctx.target.programs == "native":
            finding.message += (f"; not written as native TF2 steps: {shape.cls.name.value}'s graph is run by "
                                "the script's session (the native form covers a class that runs its own)")
        shape.program = plan.program.split(".", 1)[1]
        for stmt in [*stmts, *others]:
            self._programs |= _ids(stmt)
        return True

    # -- the script -------------------------------------------------------------------------
    def _object_script(self, stmts, session_at, classes=None) -> Optional[ObjectScript]:
        """The session at ``session_at`` when it runs one object's graph and nothing else:
        ``obj = C(...)`` once in the block (C of ``classes``), every use of the session an
        initializer run, ``close()``, a run of TensorFlow on numpy or ``sess.run(<obj's
        attributes>[, feed_dict={obj.<placeholder>: value, ...}])``, and every read of
        ``obj`` in those runs."""
        classes = self._object_classes if classes is None else classes
        read = self._script_session(stmts, session_at) if classes else None
        if read is None:
            return None
        session, rest, block, handled = read.key, read.rest, read.block, read.handled
        objects = [(s, _value(s)) for s in block if _assigned_key(s) and isinstance(_value(s), cst.Call)
                   and isinstance(_value(s).func, cst.Name) and _value(s).func.value in classes]
        if len(objects) != 1:
            return None
        made_stmt, call = objects[0]
        obj, shape = _assigned_key(made_stmt), classes[call.func.value]
        script = ObjectScript(read.anchor, obj, call.func.value, removed=read.removed, obj_call=call.func)
        feeds = _object_feeds(rest, obj, shape)
        for run in _collect(*rest).calls:
            if id(run) in handled or not (isinstance(run.func, cst.Attribute) and run.func.attr.value == "run"
                                          and _key(run.func.value, None) == session and run.args):
                continue
            if self._object_run(run, obj, shape, feeds):
                script.runs.append(run)
                handled |= _ids(run)
                feed = run.args[1].value if len(run.args) > 1 else None
                if isinstance(feed, cst.Name):  # `feed_dict=feed`: its literal's keys become names
                    target, literal = feeds[feed.value]
                    script.feeds[feed.value] = literal
                    handled |= _ids(literal) | {id(target)}
            elif len(run.args) == 1 and run.args[0].keyword is None \
                    and self._eager_fetch(run.args[0].value, rest):
                script.evaluated.append(run)
                handled.add(id(run.func.value))
        if not self._object_saves(script, read, obj, shape):
            return None
        found = _collect(*block)
        if found.binds & {session} or any(k in (session, obj) and id(n) not in handled and n is not
                                          made_stmt.body[0].targets[0].target for n, k in found.reads):
            return None
        if any(n.value in script.feeds and id(n) not in handled for b in block for n in nodes_of(b, cst.Name)):
            return None  # a feed dict read otherwise too
        self._unused_inits(read)
        return script

    def _object_saves(self, script: ObjectScript, read, obj: str, shape: ObjectClass) -> bool:
        """``saver = tf.train.Saver()`` (``max_to_keep=`` at most) made in the script, whose
        every use is ``saver.save(sess, path[, global_step=...])`` or ``saver.restore(sess,
        path)``: the object's program saves and restores (TF1's names, so the script's old
        checkpoints load); ``global_step=obj.global_step`` is its value, as TF1 read it.
        False when a Saver of the script is used otherwise."""
        savers = {}
        for stmt in read.block:
            key, value = _assigned_key(stmt), _value(stmt)
            if key and self._call_name(value) == "tf.train.Saver" and _program_saver(value, self._call_name):
                savers[key] = (stmt, _saver_options(value))
        calls = []
        for call in _collect(*read.rest).calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in ("save", "restore")
                    and _key(func.value, None) in savers and call.args and call.args[0].keyword is None
                    and _key(call.args[0].value, None) == read.key):
                continue
            step = next((a.value for a in call.args[1:] if func.attr.value == "save"
                         and a.keyword is not None and a.keyword.value == "global_step"), None)
            attr = step.attr.value if isinstance(step, cst.Attribute) and isinstance(step.value, cst.Name) \
                and step.value.value == obj and step.attr.value in shape.attrs else None
            calls.append((call, func.attr.value, savers[func.value.value][1], attr))
            read.handled |= {id(func.value), id(call.args[0].value)} | (_ids(step) if attr else set())
        found = _collect(*read.block)
        for key, (stmt, _) in savers.items():
            own = _ids(stmt)
            if not all(id(n) in read.handled or id(n) in own for n, k in found.reads if k == key):
                return False  # a Saver used otherwise: TF2 has no graph for it to save
            script.removed.append(stmt)
        script.saves = calls
        return True

    @staticmethod
    def _object_run(run: cst.Call, obj: str, shape: ObjectClass, named=None) -> bool:
        """``sess.run(<obj's graph attributes, or a list/tuple/dict of them>[, feed_dict={
        obj.<placeholder>: value}])``, the feed a dict literal or a name bound to one
        (``named``)."""
        def attribute(node, names) -> bool:
            return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.value.value == obj and node.attr.value in names

        def fetch(node) -> bool:
            if isinstance(node, (cst.List, cst.Tuple)):
                return bool(node.elements) and all(isinstance(e, cst.Element) and fetch(e.value)
                                                   for e in node.elements)
            if isinstance(node, cst.Dict):
                return all(isinstance(e, cst.DictElement) and fetch(e.value) for e in node.elements)
            return attribute(node, set(shape.attrs))

        feeds = [a for a in run.args[1:]]
        if run.args[0].keyword is not None or not fetch(run.args[0].value) or len(feeds) > 1:
            return False
        if feeds:
            feed = feeds[0]
            if feed.keyword is not None and feed.keyword.value != "feed_dict":
                return False
            if isinstance(feed.value, cst.Name) and feed.value.value in (named or {}):
                return True  # its keys were checked where it is bound
            if not isinstance(feed.value, cst.Dict):
                return False
            if not all(isinstance(e, cst.DictElement) and attribute(e.key, shape.placeholders)
                       for e in feed.value.elements):
                return False
        return True

    def _object_blocker(self, stmts, session_at) -> Optional[str]:
        """Why a script whose session runs objects of a class of that form was not converted
        with them, else None."""
        if not self._object_shapes:
            return None
        anchor = stmts[session_at]
        block = [*stmts[:session_at], *(anchor.body.body if isinstance(anchor, cst.With) else ()),
                 *stmts[session_at + 1:]]
        names = [c.func.value for c in _collect(*block).calls
                 if isinstance(c.func, cst.Name) and c.func.value in self._object_shapes]
        if not names:
            return None
        kept = [n for n in dict.fromkeys(names) if n in self._handed_kept]
        if kept:
            return f"the session runs {', '.join(kept)} objects, which stay in graph mode (see the finding in the class)"
        return (f"the session runs the graph of {', '.join(dict.fromkeys(names))} objects the script makes, "
                "and converts with them only as one object (`model = Model(...)`) whose attributes its runs "
                "fetch, fed by a dict literal of its placeholders (or a name bound once to one), the object "
                "used for nothing else (also not by a function or another module), and the session only for "
                "that, a Saver's save and restore, initializers, close() and TensorFlow on numpy")

    def _object_run_call(self, run: cst.Call, target: str, obj: str) -> cst.Call:
        """``sess.run(fetch, feed_dict={obj.x: a})`` -> ``obj.program.run(names, x=a)``
        (``feed_dict=feed``: ``**feed``)."""
        args = [self._names_as_strings(run.args[0].value, obj)]
        feed = run.args[1].value if len(run.args) > 1 else None
        if isinstance(feed, cst.Name):
            args.append(f"**{feed.value}")
        elif feed is not None:
            args += [f"{e.key.attr.value}={code(e.value)}" for e in feed.elements]
        return cst.parse_expression(f"{target}.run({', '.join(args)})")

    def _apply_object_script(self, script: ObjectScript, stmts) -> None:
        program = self._object_classes[script.name].program
        finding = self.report(script.session, f"the Session running {script.obj} ({script.name}) "
                                              f"goes: its runs are the object's program's "
                                              f"({script.obj}.{program}.run)")
        finding.add_import("import shims")
        anchor = script.session
        if isinstance(anchor, cst.With):
            finding.replace(anchor, lambda updated: cst.FlattenSentinel(
                [updated.body.body[0].with_changes(leading_lines=updated.leading_lines),
                 *updated.body.body[1:]]))
        else:
            finding.remove(anchor)
        target = f"{script.obj}.{program}"
        for run in script.runs:
            finding.replace(run, lambda updated, target=target: self._object_run_call(updated, target, script.obj))
        for literal in script.feeds.values():  # {obj.x: a} -> {"x": a}, run as **feed
            finding.replace(literal, self._feed_replacement(script.obj))
        for call, kind, options, step in script.saves:
            finding.replace(call, self._save_replacement(target, kind, options, step))
        for run in script.evaluated:  # TensorFlow on numpy: its eager value, as numpy
            finding.replace(run, _as_evaluated)
        self._script_gone(finding, anchor, script.removed, stmts, [r.func for r in script.runs])


def _object_feeds(rest, obj: str, shape: ObjectClass) -> Dict[str, tuple]:
    """``feed = {obj.x: a, obj.y: b}``, the name bound once in the script: (the bound Name,
    the literal)."""
    bound: Dict[str, list] = {}
    for stmt in [s for node in rest for s in nodes_of(node, cst.SimpleStatementLine)]:
        for small in stmt.body:
            if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = small.targets if isinstance(small, cst.Assign) else [small]
                for target in targets:
                    for name in nodes_of(target.target, cst.Name):
                        value = small.value if isinstance(small, cst.Assign) and target.target is name else None
                        bound.setdefault(name.value, []).append((name, value))
    found = {}
    for key, binds in bound.items():
        name, value = binds[0]
        if len(binds) == 1 and isinstance(value, cst.Dict) and value.elements and all(
                isinstance(e, cst.DictElement) and isinstance(e.key, cst.Attribute)
                and isinstance(e.key.value, cst.Name) and e.key.value.value == obj
                and e.key.attr.value in shape.placeholders for e in value.elements):
            found[key] = (name, value)
    return found
