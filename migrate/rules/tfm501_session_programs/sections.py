"""Stage 1b, sections: a block that starts a new graph with ``tf.reset_default_graph()``
(notebook chapters, scripts running one experiment after another) is one program per
section; what keeps a section's program from converting though each of its uses could (its
graph read as a graph, its meta graph read by a later section, its names read after the
reset); and sections left in graph mode beside converted ones, which run on a graph of
their own (``with shims.tf1_graph():``) since the global switch would stop the others."""
from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from migrate.codemod.cstutil import nodes_of
from migrate.codemod.shared import TF1_GRAPH, graph_loop, resets_graph

from .convert import _as_moved
from .plan import Plan
from .syntax import _collect, _ids, _key

# reads of TF1's default graph as a whole (its tensors by name, its collections)
GRAPH_READS = ("tf.get_default_graph", "tf.get_collection", "tf.get_collection_ref")
BY_NAME = ("get_tensor_by_name", "get_operation_by_name")
COLLECTIONS = ("tf.get_collection", "tf.get_collection_ref")


class Sections:
    """Cuts blocks into sections and keeps the sections that stay (``self`` is the
    SessionPrograms rule)."""

    def _sections(self, body) -> list:
        """The block cut where it starts a new graph: before each statement that calls
        ``tf.reset_default_graph()``, or a function of the module doing so first thing
        (``reset_graph()`` in many tutorials). Scripts and notebooks that run one experiment
        after another rebind the same graph names in each; each section is its own program.
        A loop each pass of which starts a new graph (a search's trials) is a section too (its
        body holds the programs, see ``detect._inner_blocks``)."""
        cuts = [i for i, stmt in enumerate(body) if i and (resets_graph(self.ctx, stmt) or graph_loop(self.ctx, stmt))]
        bounds = [0, *cuts, len(body)]
        return [body[a:b] for a, b in zip(bounds, bounds[1:])]

    def _graph_read_after(self, stmts, session_at, plan: Plan) -> Optional[str]:
        """``tf.get_default_graph().get_tensor_by_name(...)``, ``tf.get_collection(...)`` in
        a statement after the session's (a notebook looking at what it built), a collection
        read in the session's block (``for var in tf.get_collection(...)``), or a lookup
        by name in the graph code (``W1 = graph.get_tensor_by_name("hidden1/kernel:0")``):
        the name called, else None. Graph code that joins the program (hoisted) is not such
        a read."""
        for index in plan.graph:  # graph code looking a tensor up by name: a converted
            for call in _collect(stmts[index]).calls:  # program's variables are no graph tensors
                if isinstance(call.func, cst.Attribute) and call.func.attr.value in BY_NAME:
                    return call.func.attr.value
        joined = {id(s) for s in [*plan.hoisted, *plan.repeated, *plan.late_inits]}
        graph = set(plan.graph)  # (a class making its session first builds its graph after it)
        for at, stmt in enumerate(stmts[session_at + 1:], session_at + 1):
            if id(stmt) in joined or at in graph:
                continue
            for call in _collect(stmt).calls:
                name = self._call_name(call)
                if name in GRAPH_READS:
                    return name
        session = stmts[session_at]  # in the session's block: a collection read as the graph's
        for inner in session.body.body if isinstance(session, cst.With) else ():
            if id(inner) not in joined:
                for call in _collect(inner).calls:
                    if self._call_name(call) in COLLECTIONS:
                        return self._call_name(call)
        return None

    def _meta_graph_read(self, plan: Plan, after) -> Optional[str]:
        """A checkpoint path (a string literal) the program saves to, whose meta graph
        ``tf.train.import_meta_graph("<path>.meta")`` reads before another save to it
        (a notebook's later section restoring the graph one saved): that path, else None.
        ``after``: the statements that follow the program (its block's later sections)."""
        if "import_meta_graph" not in self.ctx.source:
            return None
        saved = {_literal(path) for call, kind in plan.saves if kind == "save"
                 and (path := _save_path(call)) is not None} - {None}
        for stmt in after:
            calls = _collect(stmt).calls
            read = {string[:-len(".meta")] for call in calls
                    if self._call_name(call) == "tf.train.import_meta_graph" and call.args
                    and (string := _literal(call.args[0].value)) is not None and string.endswith(".meta")}
            if saved & read:
                return sorted(saved & read)[0]
            saved -= {_literal(path) for call in calls if isinstance(call.func, cst.Attribute)
                      and call.func.attr.value == "save" and (path := _save_path(call)) is not None}
            if not saved:
                return None
        return None

    def _read_later(self, plan: Plan, after) -> Optional[str]:
        """A name the converted program removes (a graph value, the session, a Saver) that
        code after the section reads before binding it anew: that code would lose it."""
        live = plan.graph_keys | set(plan.placeholders) | plan.savers | plan.inits | {plan.session}
        return _read_before_bound(list(after), live)

    def _section_blocker(self, stmts, session_at, plan: Plan, after) -> Optional[str]:
        """Why the planned program cannot convert though each of its uses can: its graph read
        as a graph, its meta graph read later, its names read after the next reset."""
        graph_read = self._graph_read_after(stmts, session_at, plan)
        if graph_read is not None:
            return (f"{graph_read}() reads TF1's graph as a graph (its tensors by name, its "
                    "collections), which a converted program does not build")
        meta = self._meta_graph_read(plan, after)
        if meta is not None:
            return (f"tf.train.import_meta_graph reads {meta}.meta, the TF1 meta graph its Saver "
                    "writes, which a converted program does not write")
        late = self._read_later(plan, after)
        if late is not None:
            return (f"{late!r} is read after the next tf.reset_default_graph(), where the converted "
                    "program no longer binds it")
        return None

    def _graph_sections(self, kept) -> None:
        """Graph code with no session in a section beside converted ones (a notebook's
        section showing how a graph is built, or naming variables: ``v.op.name``): it stays
        graph code, on a graph of its own (after a reset, any TensorFlow there is).
        ``kept``: the first statements of sections kept as programs (done by ``_fallback``)."""
        for first, section in self._own_graph_sections.items():
            if first in kept:
                continue
            inside: Set[int] = set()
            for stmt in section:
                inside |= _ids(stmt)
            if inside & self._programs:  # a program converted in it (a search loop's trials)
                continue
            made = next((node for node, _ in self._placeholders if id(node) in inside), None) \
                or next((stmt for stmt in section if self._session_stmt(stmt)), None)
            what = self._call_name(made) if isinstance(made, cst.Call) else "a Session running no program"
            if made is None and resets_graph(self.ctx, section[0]):  # TF1 code in the new graph
                made = next((stmt for stmt in section[1:] if self._uses_tf(stmt)), None)  # (`v.op.name`)
                what = "TensorFlow after tf.reset_default_graph()"
            if made is None:  # (a session that never runs anything but an initializer is TF1's too)
                continue
            self._programs |= inside
            self._graph_mode_names(section, self.ctx.module)
            self._on_own_graph(made, section, f"graph code with no Session program to convert it with ({what})")

    def _on_own_graph(self, stmt, section, what: str = "the program") -> None:
        """A section kept in graph mode in a block whose other sections were converted (see
        ``_sections``): the global switch would stop those running eagerly, so the
        section runs under ``with shims.tf1_graph():``, from its first TensorFlow statement
        (its ``tf.reset_default_graph()`` stays before it, where TF 2 allows it)."""
        start = 1 if resets_graph(self.ctx, section[0]) else 0
        while start < len(section) - 1 and not self._uses_tf(section[start]) \
                and not isinstance(section[start], (cst.With, cst.For, cst.While, cst.If, cst.Try)):
            start += 1
        wrapped = section[start:]
        finding = self.report(stmt, f"{what} runs in TF1 graph mode on a graph of its own (with "
                                    "shims.tf1_graph():), as other programs of this block run eagerly")
        finding.add_import("import shims")
        facts = self.ctx.facts

        def block() -> list:
            body = [s.with_changes(leading_lines=[line.with_changes(indent=False) if line.comment is None
                                                  else line for line in s.leading_lines])
                    for s in _as_moved(facts, wrapped)]  # blank lines carry no indentation
            first = body[0]
            header = cst.parse_statement(f"with {TF1_GRAPH}():\n    pass\n")
            return [header.with_changes(leading_lines=first.leading_lines, body=header.body.with_changes(
                body=[first.with_changes(leading_lines=[]), *body[1:]]))]

        for inner in wrapped:
            finding.remove(inner)
        finding.insert_before(wrapped[0], block)


def _read_before_bound(stmts, live: set) -> Optional[str]:
    """The first of the ``live`` names ``stmts`` read, in order, before binding it anew
    (``live`` loses the names they bind). Statements run in order, ``with`` blocks too;
    a loop's or branch's body is read in order too, but what it binds may not be bound
    after it, and what a ``try``, a function or a class reads (a function's when it is
    called) counts wherever it is."""
    for stmt in stmts:
        if not live:
            return None
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                value = getattr(small, "value", None) if isinstance(small, (cst.Assign, cst.AnnAssign)) else small
                targets = small.targets if isinstance(small, cst.Assign) else ()
                reads = _collect(value).reads if value is not None else []
                reads += [r for t in targets if not isinstance(t.target, (cst.Name, cst.Tuple, cst.List))
                          for r in _collect(t.target).reads]
                hit = next((k for _, k in reads if k in live), None)
                if hit is not None:
                    return hit
                live -= _collect(small).binds
        elif isinstance(stmt, cst.With) and isinstance(stmt.body, cst.IndentedBlock):
            hit = next((k for item in stmt.items for _, k in _collect(item.item).reads if k in live), None)
            if hit is not None:
                return hit
            live -= {_key(item.asname.name, None) for item in stmt.items if item.asname is not None}
            hit = _read_before_bound(list(stmt.body.body), live)
            if hit is not None:
                return hit
        elif isinstance(stmt, (cst.For, cst.While, cst.If)) and isinstance(stmt.body, cst.IndentedBlock) \
                and getattr(stmt, "orelse", None) is None:
            head = stmt.iter if isinstance(stmt, cst.For) else stmt.test
            hit = next((k for _, k in _collect(head).reads if k in live), None)
            if hit is None:  # the body in order (the first pass: later ones read its own names)
                bound = {n.value for n in nodes_of(stmt.target, cst.Name)} if isinstance(stmt, cst.For) else set()
                hit = _read_before_bound(list(stmt.body.body), set(live) - bound)
            if hit is not None:
                return hit
        else:
            hit = next((k for _, k in _collect(stmt).reads if k in live), None)
            if hit is not None:
                return hit
    return None


def _literal(node) -> Optional[str]:
    """The value of a plain string literal, else None."""
    if isinstance(node, cst.SimpleString) and node.prefix.lower() in ("", "u"):
        return node.evaluated_value
    return None


def _save_path(call: cst.Call):
    """The path a ``saver.save(sess, path)`` call writes (its expression), else None."""
    if len(call.args) > 1 and call.args[1].keyword is None:
        return call.args[1].value
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "save_path"), None)
