"""Stage 4, graph mode: programs that cannot be converted keep running in TF1 graph mode
(the switch, TF1's own layers and hooks), and graph code left outside every program is said."""
from __future__ import annotations

from typing import Optional, Set

import libcst as cst

from migrate.codemod.cstutil import code
from migrate.codemod.shared import is_graph_switch, is_tf1_graph, uses_keras

from .syntax import _collect, _ids


KEPT = "Session program kept in TF1 graph mode"
# a module switching graph mode on: after --write, its kept programs are said again (``report_only``)
SWITCHES = ("disable_eager_execution(", "disable_v2_behavior(")


class GraphMode:
    """Keeps unconvertible programs running in graph mode, and says what is left."""

    # -- programs that stay in graph mode -------------------------------------------------
    def _fallback(self, module: cst.Module) -> None:
        blocked = self._blocked
        self._graph_sections({id(block[0]) for _, _, block in blocked})
        if not blocked:
            return
        text = self.ctx.source
        explicit = any(s in text for s in SWITCHES)
        switched: Set[int] = set()  # one switch per place: each function program gets its own,
        for stmt, why, block in blocked:  # as either may run without the other
            # what the user must do stays a finding after --write: report-only
            self.report(stmt, f"{KEPT}: {why}; "
                              "convert it by hand or restructure it for TFM501")
            if id(block[0]) in self._own_graph_sections:  # other sections of its block run eagerly
                self._graph_mode_names(block, module)
                self._on_own_graph(stmt, block)
                continue
            block = self._graph_block(module, block)
            self._graph_mode_names(block, module)
            if explicit or self._own_graph_sections:  # a switch would stop the converted sections
                continue  # running eagerly: a function kept here runs in its caller's graph
            where = self._switch_place(module, block)
            if where is None or id(where[0]) in switched:
                continue
            anchor, after = where
            switched.add(id(anchor))
            if after and any(anchor is top for top in module.body):  # after the import: the module's
                self._switched_owners.add(id(module))                  # graph code all runs in graph mode
            finding = self.report(stmt, "graph-mode switch added (tf.compat.v1.disable_eager_execution()"
                                        " where the Session program starts) so it runs on TF2")
            switch = cst.parse_statement(
                f"{code(self.ctx.tf(finding, 'compat.v1.disable_eager_execution'))}()\n")
            if after:
                finding.insert_after(anchor, [switch])
            else:
                finding.insert_before(anchor, [switch])
            if uses_keras(self.ctx.source):  # legacy Keras: tf.compat.v1.layers and
                finding.add_import("import shims")  # Keras objects work in graph mode there

    def _left_in_graph_code(self, module: cst.Module) -> None:
        """A placeholder outside every program this rule converted or kept in graph mode,
        where nothing switches graph mode on, cannot run on TF2 (``tf.placeholder() is not
        compatible with eager execution``): said, never left silently (a library function
        making one, or a Session form not recognised). At module level it fails on import:
        an error. Code under ``with <graph>.as_default():`` is graph code on TF2 too."""
        walked: Set[int] = set()  # blocks are shared by their entries (a module's statements)
        functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
        for stmt, why, block in self._blocked:
            for inner in block:
                if id(inner) not in walked:
                    walked.add(id(inner))
                    self._programs |= _ids(inner)
            # a module function the kept program calls (`x, y = placeholder_inputs(8)`) runs in
            # its graph mode
            for call in _collect(*block).calls:
                if isinstance(call.func, cst.Name) and call.func.value in functions \
                        and id(functions[call.func.value]) not in walked:
                    walked.add(id(functions[call.func.value]))
                    self._programs |= _ids(functions[call.func.value])
        seen, found = set(), []
        for node, functions in self._placeholders:  # recorded during the engine's walk
            owner = functions[-1] if functions else None
            if id(owner if owner is not None else module) in self._switched_owners:
                continue  # graph code under a switch _fallback placed
            if id(node) in self._programs or id(owner) in seen:
                continue
            switched = [s for s in (*module.body, *(s for f in functions
                                                     if isinstance(f.body, cst.IndentedBlock)
                                                     for s in f.body.body))
                        if is_graph_switch(self.ctx, s)]
            if not switched:
                seen.add(id(owner))
                found.append((node, owner))
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
                      and f.code in ("TFM110", "TFM201")
                      and not (f.code == "TFM201" and not isinstance(f.node, cst.Call))]:  # TF1's already
            name = self.ctx.v1(found.node.func if isinstance(found.node, cst.Call) else found.node)
            if found.code == "TFM110" and (name or "").startswith("tf.train."):
                node, why = found.node, "the program runs in graph mode, in TF's own session"
            elif found.code == "TFM201" and (name or "").startswith("tf.layers."):
                node, why = found.node.func, "graph mode (TF1's variables, UPDATE_OPS and dropout masks)"
            else:
                continue
            self.ctx.findings.remove(found)
            if "compat" in code(node):  # already TF1's own (a second run): nothing to change
                continue
            if found.code == "TFM201" and self.ctx.target.keras == 3:
                self.report(found.node, f"{name} in a program kept in graph mode: its TF2 form, "
                                        f"tf.compat.v1.{name[3:]}, exists in tf_keras only (not Keras 3); "
                                        "migrate this file for Keras 2 (without --keras 3) or make the "
                                        "program convertible")
                continue
            finding = self.report(found.node, f"{name} is tf.compat.v1.{name[3:]} in TF2 {why}")
            finding.replace(node, self.ctx.tf(finding, "compat.v1." + name[3:]))

    def _graph_block(self, module: cst.Module, block):
        """The block whose start switches graph mode on for a program kept in graph mode:
        its own, or, when placeholders of the function holding it are built outside it
        (``sess = sv.prepare_or_wait_for_session(...)`` in an ``if`` branch under the graph,
        as TF 1.x's mnist_replica.py does), that function's body, unless a program converted
        to eager lives there too. For a block under a module-level statement (not a def or a
        class) with such placeholders at module level, the module's statements, in a file
        that converted no program. Placeholders there are then graph code this switch
        covers (``self._switched_owners``)."""
        inside = set()
        for stmt in block:
            inside |= _ids(stmt)
        owners = {}
        for node, functions in self._placeholders:
            owner = functions[-1] if functions else module
            if id(node) in inside or id(node) in self._programs:
                continue
            if id(owner) not in owners:
                owners[id(owner)] = _ids(owner) if owner is not module else None
            ids = owners[id(owner)]
            if ids is None and not self._programs and _under_statement(module, block[0]) \
                    or ids is not None and id(block[0]) in ids and not self._programs & ids:
                self._switched_owners.add(id(owner))
                return module.body if ids is None else owner.body.body
        return block

    def _switch_place(self, module: cst.Module, block) -> Optional[tuple]:
        """Where graph mode is switched on: (statement, after?). For a program at module
        level, right after the statement that imports TensorFlow (never before it, whatever
        precedes that import); for one in a function or under ``if __name__ ==
        "__main__":``, at the start of that block, so importing the module (a library, a
        test) does not flip the whole process to graph mode."""
        first = block[0]
        if not any(first is s for s in module.body):  # a function's or a compound statement's block
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


def _under_statement(module: cst.Module, first) -> bool:
    """Is ``first`` inside a module-level statement that is neither a def nor a class?"""
    if any(s is first for s in module.body):
        return False
    top = next(s for s in module.body if id(first) in _ids(s))
    return not isinstance(top, (cst.FunctionDef, cst.ClassDef))


def _makes_default(node: cst.With) -> bool:
    """``with <anything>.as_default():`` (or ``with shims.tf1_graph():``): code under it
    builds that graph, on TF2 too."""
    return is_tf1_graph(node) or any(isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Attribute)
               and item.item.func.attr.value == "as_default" for item in node.items)
