"""Stage 1b, a session that only evaluates: ``sess = tf.Session()`` first, then
``print(sess.run(tf.nn.relu([-3., 3., 10.])))`` and ``y = sess.run(tf.nn.sigmoid(x_vals))``
(the first chapters of tutorials and cookbooks, showing what an op computes). There is no
graph to build: every run is TensorFlow on Python values, which eager TF2 computes where it
stands. The session goes (its ``close()`` and initializer runs too) and each run becomes
``shims.evaluated(...)``, which gives numpy as the run did.

Only when nothing in the block makes graph state or draws random numbers (no variable,
assignment, placeholder, optimizer, summary or random op, in the block or the functions it
defines: eager TF2 would run such a call where it stands, not when a run fetches it), no
tensor is evaluated another way (``t.eval()``, ``op.run()``), and the session is used for
nothing else."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Set

import libcst as cst

from migrate.codemod.cstutil import nodes_of

from .handed import GRAPH_ONLY
from .syntax import PLACEHOLDERS, RANDOM_OPS, _as_evaluated, _collect, _ids, _key, assigned_values


# TensorFlow that makes state, reads input or prints when it runs (a prefix of its TF1 name)
_STATEFUL = ("tf.train.", "tf.summary.", "tf.random", "tf.data.", "tf.contrib.", "tf.io.",
             "tf.Print", "tf.print", "tf.numpy_function", "tf.py_function", "tf.assert_",
             "tf.debugging.", "tf.make_template", "tf.variable_scope", "tf.while_loop")


@dataclass
class EvaluationsScript:
    """What goes from a block whose sessions only evaluate."""
    sessions: List[cst.CSTNode]                              # their statements (``with`` or ``=``)
    removed: List[List[cst.SimpleStatementLine]]             # each one's initializer runs, close()
    evaluated: List[cst.Call] = field(default_factory=list)  # runs: shims.evaluated


class Evaluations:
    """Reads and converts the form (``self`` is the SessionPrograms rule)."""

    def _evaluations_script(self, stmts, session_at) -> Optional[EvaluationsScript]:
        """The block whose sessions (the one at ``session_at`` and any later in the block)
        only evaluate TensorFlow on Python values: what goes and what becomes
        ``shims.evaluated``, else None. All of them convert, or none (a run left on a
        session would get an eager tensor)."""
        reads = [self._script_session(stmts, i) for i in range(session_at, len(stmts))
                 if self._session_stmt(stmts[i])]
        if not reads or any(r is None for r in reads):
            return None
        keys = {r.key for r in reads}
        for call in _collect(*stmts).calls:
            name = self._call_name(call)
            if name and (name in GRAPH_ONLY or name in PLACEHOLDERS or name in RANDOM_OPS
                         or name.startswith(_STATEFUL) or "Reader" in name or "Queue" in name):
                return None  # graph state, input read each run, or a draw each run made anew
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("eval", "run") \
                    and _key(call.func.value, None) not in keys:
                return None  # `t.eval()`: needs a session, which goes
        script = EvaluationsScript([r.anchor for r in reads], [r.removed for r in reads])
        removed = {id(s.body[0].value) for r in reads for s in r.removed}
        handled = set().union(*(r.handled for r in reads))
        for read in reads[1:]:  # a later session's statement names it (`with ... as session:`)
            anchor = read.anchor
            small = anchor.body[0] if isinstance(anchor, cst.SimpleStatementLine) else None
            handled |= _ids(anchor.items[0]) if isinstance(anchor, cst.With) else \
                _ids(small.targets[0] if isinstance(small, cst.Assign) else small.target)
        seen: Set[int] = set()
        for read in reads:
            for call in _collect(*read.rest).calls:
                if id(call) not in removed and id(call) not in seen \
                        and isinstance(call.func, cst.Attribute) and call.func.attr.value == "run" \
                        and _key(call.func.value, None) == read.key \
                        and len(call.args) == 1 and call.args[0].keyword is None \
                        and self._evaluated_value(call.args[0].value, stmts):
                    seen.add(id(call))
                    script.evaluated.append(call)
                    handled.add(id(call.func.value))
        found = _collect(*reads[0].rest)  # everything past the first session, later ones too
        if not script.evaluated or (keys & found.binds) - {r.key for r in reads[1:]} or any(
                k in keys and id(n) not in handled for n, k in found.reads):
            return None
        return script

    def _evaluated_value(self, fetch, stmts) -> bool:
        """Is ``fetch`` TensorFlow on Python values? Followed through the block's one-target
        assignments: it calls TensorFlow, and nothing it reaches is a method or attribute of
        an object the block made (``iterator.initializer``, ``iterator.get_next()``: such an
        object's ops ran at each run, an eager value is computed once). numpy and Python
        (``np.linspace(...)``, ``list("bear")``) are values."""
        bound = assigned_values(stmts)
        seen: Set[str] = set()
        todo, computes = [fetch], False
        while todo:
            expr = todo.pop()
            for attribute in nodes_of(expr, cst.Attribute):
                if isinstance(attribute.value, cst.Name) and attribute.value.value in bound:
                    return False  # a made object's method or attribute
            for call in _collect(expr).calls:
                computes = computes or self._call_name(call) is not None
            for _, key in _collect(expr).reads:
                if key not in seen:
                    seen.add(key)
                    todo += bound.get(key, [])
        return computes

    def _apply_evaluations(self, script: EvaluationsScript, stmts) -> None:
        """The sessions go; each run is its value, computed where it stands."""
        for anchor, removed in zip(script.sessions, script.removed):
            finding = self.report(anchor, "a Session that only evaluates TensorFlow on Python "
                                          "values: eager TF2 computes each where it stands "
                                          "(shims.evaluated gives numpy, as the run did)")
            finding.add_import("import shims")
            if isinstance(anchor, cst.With):
                finding.replace(anchor, lambda updated: cst.FlattenSentinel(
                    [updated.body.body[0].with_changes(leading_lines=updated.leading_lines),
                     *updated.body.body[1:]]))
            else:
                finding.remove(anchor)
            if anchor is script.sessions[0]:
                for call in script.evaluated:
                    finding.replace(call, _as_evaluated)
            self._script_gone(finding, anchor, removed, stmts)
