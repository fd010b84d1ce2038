"""Stage 3, convert: the graph code moves into a build function run by
shims.GraphProgram, and every use of the session becomes a use of the program."""
from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from migrate.codemod.cstutil import code, fresh_name, walk
from migrate.codemod.rule import Finding

from .plan import Plan
from .towers import TowerLoop, on_replicas
from .workers import WorkerProgram, on_workers
from .syntax import (
    ASSIGNS,
    COLLECTION_READS,
    _as_evaluated,
    CONVERTED_MONITORED,
    GRAPH_SEEDS,
    RANDOM_OPS,
    _assigned_key,
    _Blocked,
    _collect,
    _ids,
    _key,
    _method_args,
    _only_placeholders,
    _plain,
    _value,
)


class Converter:
    """Rewrites a planned program into a build function and GraphProgram runs."""

    # -- rewrite -----------------------------------------------------------------------------
    def _apply(self, stmts, session_at, plan: Plan, owner) -> Finding:
        """Build function + GraphProgram in place of the session; its uses rewired."""
        ctx = self.ctx
        anchor = stmts[session_at]
        moved = self._moved(stmts, plan)
        towers = None
        if not plan.self_name and not plan.monitored and plan.supervisor is None:
            graph = [stmts[i] for i in moved]
            towers = self._tower_loop(graph, _collect(*graph).binds)
        kept = f"; its towers stay in one graph ({towers})" if isinstance(towers, str) else ""
        towers = towers if isinstance(towers, TowerLoop) else None
        workers = plan.workers
        gone = self._unused_makers(plan)
        finding = self.report(anchor, "Session program converted to eager TF2: the graph is built "
                                      "by a function run as tf.function steps (shims.GraphProgram)"
                              + (f"; its towers run as tf.distribute.MirroredStrategy replicas "
                                 f"({towers.on_towers[1:]})" if towers else kept)
                              + (_workers_note(workers) if workers else "")
                              + "".join(f"; {f.name.value}() made only its placeholders, which are "
                                        "TensorSpecs of the program now: it goes" for f in gone))
        finding.add_import("import shims")
        build = fresh_name(ctx, "build_graph")
        program_name = fresh_name(ctx, "program")
        program = f"{plan.self_name}.{program_name}" if plan.self_name else program_name
        plan.program = program
        # each graph expression a run fetches gets a graph name of the build function
        exprs = {id(call): [(expr, fresh_name(ctx, _fetched_name(expr))) for expr in found]
                 for call in plan.runs if (found := plan.fetch_exprs.get(id(call)))}
        if plan.scaffold is not None:  # made in the build function, given to the session by name
            exprs[id(plan.scaffold)] = [(plan.scaffold, fresh_name(ctx, "scaffold"))]
            finding.replace(plan.scaffold, self._by_name(exprs[id(plan.scaffold)][0]))
        self._unseeded_note(anchor, [stmts[i] for i in moved])
        for _, call, at in plan.writers:  # its graph is added once the program is made
            if at >= 0:
                finding.replace(call, lambda updated, at=at: updated.with_changes(
                    args=_without_arg(updated.args, at)))
        for stmt in [*(stmts[i] for i in plan.graph), *(stmts[i] for i in plan.switches),
                     *plan.scoped,  # the moved scope block keeps the rest of its body
                     *plan.hoisted,  # graph code written in the session block joins the graph
                     *plan.late_inits]:  # an initializer made there goes with its run
            if self._graph_seed(stmt):  # the build function sets it too (see _graph_seed)
                finding.replace(stmt, lambda updated: updated)
            else:
                finding.remove(stmt)
        definition = self._definition(finding, stmts, plan, moved, build, program,
                                      isinstance(owner, cst.Module), exprs, towers)
        if plan.self_name or plan.session_first:  # the program is made where the graph was complete
            self._made_where_complete(finding, stmts, plan, moved, definition)
        elif plan.monitored:  # the session stays, over the program: its runs are its own
            for call in plan.runs:
                plan.program_of[id(call)] = plan.session
            if plan.supervisor is not None:  # `sv = shims.Supervisor(program, ...)` before its session
                finding.remove(plan.supervisor)
                made = plan.supervisor
                finding.replace(anchor, lambda updated: cst.FlattenSentinel([*definition(), _edited(_program_first(
                    self.ctx.facts.rewritten.get(id(made), made), program, "shims.Supervisor"),
                    plan.supervisor_edits), updated]))
            elif isinstance(anchor, cst.With):
                shim = CONVERTED_MONITORED[self._call_name(anchor.items[0].item)]
                finding.replace(anchor, lambda updated: cst.FlattenSentinel(
                    [*definition(), _monitored_over(updated, program, shim, bool(workers))]))
            else:  # `sess = tf.train.MonitoredTrainingSession(...)`
                shim = CONVERTED_MONITORED[self._call_name(_value(anchor))]
                finding.replace(anchor, lambda updated: cst.FlattenSentinel(
                    [*definition(), _program_first(updated, program, shim, bool(workers))]))
            if workers:
                self._to_workers(finding, stmts, workers)
        elif isinstance(anchor, cst.With):  # its block's statements, as edited, follow the program
            finding.replace(anchor, lambda updated: cst.FlattenSentinel([*definition(), *updated.body.body]))
        else:  # `sess = tf.Session()`: made once the file is rewritten, graph code hoisted from
            finding.insert_before(anchor, definition)  # below it included
            finding.remove(anchor)
        for function in gone:
            finding.remove(function)
        self._drop_findings_of_removed(finding, stmts, plan, moved, anchor, gone)
        self._rewire(finding, stmts, plan, program, exprs)
        return finding

    def _made_where_complete(self, finding, stmts, plan: Plan, moved, definition) -> None:
        """A class's program (or one whose session came first) is made after its last graph
        statement; a class's graph spread over ``__init__`` and build methods, in ``__init__``
        where the last build method was called (``_placement``). The session statement goes,
        unless it is a handed session (the graph the program joins) or there is none."""
        place = self._placement(stmts, plan) if plan.self_name else None
        if place is not None:
            call, calls, methods = place
            # on the class, whose methods were rewritten by then (definition() reads them)
            finding.replace(self._class_now, lambda updated: _placed(updated, call, calls, methods, definition))
        else:
            finding.insert_after(stmts[max(moved or plan.graph)], definition)
        if not plan.handed and not plan.anchorless:
            finding.remove(finding.node)

    def _homes(self, stmts, plan: Plan) -> dict:
        """id(build method) -> (its call in __init__, it) for the build methods holding the
        class's graph code, and "init" -> None when ``__init__`` holds some."""
        homes: dict = {}
        for i in plan.graph:
            owner = next(((call, method) for call, method in self._built_now
                          if any(stmts[i] is s for s in method.body.body)), None)
            homes[id(owner[1]) if owner else "init"] = owner
        return homes

    def _spread(self, stmts, plan: Plan) -> Optional[dict]:
        """The build methods holding graph code (see ``_homes``), when the graph spans more
        than one function (``__init__`` and build methods); else None."""
        homes = self._homes(stmts, plan)
        methods = {k: v for k, v in homes.items() if v is not None}
        return methods if len(methods) + ("init" in homes) > 1 else None

    def _placement_blocker(self, stmts, plan: Plan) -> Optional[str]:
        """Graph code spread over ``__init__`` and build methods is made into one build
        function in ``__init__`` (``_placement``): each such method must hold graph code
        alone, reading none of its own parameters (``h_size=10``), since it goes."""
        graph = {id(stmts[i]) for i in plan.graph}
        for _, method in (self._spread(stmts, plan) or {}).values():
            if any(id(s) not in graph for s in method.body.body):
                return (f"graph code in __init__ and in build methods, beside other code in "
                        f"{method.name.value}()")
            params = {p.name.value for p in method.params.params[1:]}
            if params & {k for _, k in _collect(method.body).reads}:
                return f"graph code in several methods, reading {method.name.value}()'s own parameters"
        return None

    def _placement(self, stmts, plan: Plan):
        """(the build-method call in ``__init__`` the build function replaces, the other
        calls, the names of the build methods that go), when the graph spans several
        functions; else None (it goes after the last graph statement)."""
        spread = self._spread(stmts, plan)
        if spread is None:
            return None
        calls = [call for call, method in self._built_now if id(method) in spread]  # __init__'s order
        return calls[-1], calls[:-1], {method.name.value for _, method in spread.values()}

    def _to_workers(self, finding, stmts, workers: WorkerProgram) -> None:
        """A synchronous cluster program's server is ``shims.cluster.MultiWorker``, its
        optimizer's hook goes from its statements and hooks lists (see ``workers``)."""
        finding.replace(workers.server_call, lambda updated: updated.with_changes(
            func=cst.parse_expression(workers.task)))
        for stmt in workers.hook_stmts:
            if any(stmt is s for s in stmts):
                finding.remove(stmt)
        for lst, drop in workers.hook_lists:
            finding.replace(lst, lambda updated, drop=drop: _without(updated, drop))

    def _moved(self, stmts, plan: Plan) -> List[int]:
        """Indices of the graph statements that go into the build function (placeholders
        become its parameters; initializers and savers are dropped)."""
        self_name = plan.self_name
        dropped = plan.inits | plan.savers
        scoped = {id(stmt) for stmt in plan.scoped}
        placeholder_stmts = {i for i in plan.graph if _assigned_key(stmts[i], self_name)
                             in plan.placeholders or _only_placeholders(stmts[i], scoped)
                             or id(stmts[i]) in plan.made}
        return [i for i in plan.graph
                if i not in placeholder_stmts and _assigned_key(stmts[i], self_name) not in dropped]

    def _fetched(self, plan: Plan, exprs) -> List[str]:
        """Graph names the program returns: what any run fetches, and the global steps savers use."""
        fetched: List[str] = [name for found in exprs.values() for _, name in found]
        fetched += [key for key in plan.returns if key not in fetched]  # a graph object's attributes
        for call in plan.runs:
            target = call.func.value if self._is_method_run(call, plan) else call.args[0].value
            # names read inside a fetched expression are read by the build function itself
            inside = {id(n) for expr, _ in exprs.get(id(call), ())
                      for n, _ in _collect(expr, self_name=plan.self_name).reads}
            kept = plan.kept.get(id(call), ())  # a function's parameter, handed a graph name
            for node, key in _collect(target, self_name=plan.self_name).reads:
                if id(node) not in inside and key in plan.graph_keys and key not in fetched \
                        and key not in kept:
                    fetched.append(key)
        fetched += [key for key in plan.handed_fetches if key not in fetched]
        for _, key, _ in plan.assigns:  # variables given Python values
            if key not in fetched:
                fetched.append(key)
        for _, key in plan.hook_reads:  # what hooks ask for
            if key not in fetched:
                fetched.append(key)
        fetched += [k for k in dict.fromkeys(plan.save_steps.values()) if k not in fetched]
        savers = (_key(call.func.value, plan.self_name) for call, _ in plan.saves)  # the build's own
        return fetched + [k for k in dict.fromkeys(savers) if k in plan.graph_savers and k not in fetched]

    def _definition(self, finding, stmts, plan: Plan, moved, build, program, at_module: bool, exprs,
                    towers: Optional[TowerLoop] = None):
        """A callable making ``def build(...): <graph code>; return {...}`` and the
        ``program = shims.GraphProgram(build, ...)`` line (from the rewritten statements);
        a tower loop runs as replicas (``.on_towers(count)``, see ``towers``)."""
        self_name = plan.self_name
        tf_expr = code(self.ctx.tf(finding, ""))
        params = [_plain(k) for k in plan.placeholders]
        specs = [f"{_plain(k)}={self._spec(call, tf_expr)}" for k, call in plan.placeholders.items()]
        # a placeholder kept on the object is set from the parameter, for the graph code
        used = set()
        for i in moved:
            found = _collect(stmts[i], self_name=self_name)
            used |= found.binds | {key for _, key in found.reads}
        keep = [f"{k} = {_plain(k)}\n" for k in plan.placeholders
                if k.startswith("self.") and k in used]
        returned = ", ".join(f'"{_plain(k)}": {k}' for k in self._fetched(plan, exprs))
        facts = self.ctx.facts
        captured = self._captured  # the fetched expressions as the other fixes left them
        header = f"def {build}({', '.join(params)}):\n    pass\n"
        workers = plan.workers
        program_line = (f"{program} = shims.GraphProgram({build}"
                        f"{''.join(', ' + s for s in specs)}){towers.on_towers if towers else ''}"
                        f"{workers.on_workers if workers else ''}"
                        f"{f'.in_graph({plan.session})' if plan.handed else ''}\n")

        def definition() -> list:
            body = [cst.parse_statement(line) for line in keep]
            body += _as_moved(facts, [stmts[i] for i in moved])
            if towers:
                body = on_replicas(body, towers)
            if workers:
                body = on_workers(body, workers)
            body += _as_moved(facts, plan.hoisted)
            body += [cst.parse_statement(f"{name} = {code(captured.get(id(expr), expr))}\n")
                     for found in exprs.values() for expr, name in found]
            # a moved statement keeps its comments (the first one: no blank line above it)
            body = [b.with_changes(leading_lines=_nested_blanks(b.leading_lines, first=n == 0))
                    for n, b in enumerate(body)]
            body.append(cst.parse_statement(f"return {{{returned}}}\n"))
            blank = [cst.EmptyLine(), cst.EmptyLine()] if at_module else []
            func = cst.parse_statement(header)
            func = func.with_changes(body=func.body.with_changes(body=body), leading_lines=blank)
            line = cst.parse_statement(program_line)
            if at_module:
                line = line.with_changes(leading_lines=blank)
            # a summary writer made before the program writes the program's graph, as TF1's
            # FileWriter(logdir, tf.get_default_graph()) wrote the graph
            graphs = [cst.parse_statement(f"{key}.add_graph({program}.graph)\n")
                      for key, _, at in plan.writers if at >= 0]
            return [func, line, *graphs]

        return definition

    def _unused_makers(self, plan: Plan) -> list:
        """The functions that made the program's placeholders (``placeholder_inputs``) and
        go: this program made every call of them, those calls are TensorSpecs now, and TF 2
        could not run them."""
        gone = []
        for function in dict.fromkeys(plan.makers):
            name = function.name.value
            uses = [n for n, k in _collect(self.ctx.module).reads if k == name and n is not function.name]
            if all(id(n) in plan.made for n in uses):
                gone.append(function)
        return gone

    def _drop_findings_of_removed(self, finding, stmts, plan: Plan, moved, anchor, gone=()) -> None:
        """Other rules' findings on code this conversion removes go (their edits would be lost)."""
        dead: Set[int] = set()
        made = anchor.items[0].item if isinstance(anchor, cst.With) else _value(anchor)
        session = ([made.func] if plan.monitored else  # its hooks are converted
                   [] if plan.handed or plan.anchorless else  # the statement stays
                   anchor.items if isinstance(anchor, cst.With) else [anchor])
        if plan.supervisor is not None:  # re-made as shims.Supervisor: its renames go
            session.append(plan.supervisor.body[0].value.func)
        if plan.workers is not None:  # the server is re-made as shims.cluster.MultiWorker
            session.append(plan.workers.server_call.func)
        for node in [*(stmts[i] for i in plan.graph if i not in moved),
                     *(stmts[i] for i in plan.switches),
                     *session,
                     *(item for stmt in plan.reopened for item in stmt.items),
                     *plan.removals, *(c.func for c in plan.runs), *plan.queue_runners,
                     *(f for c, _, _ in plan.assigns for f in _assign_funcs(c)),
                     *(c.func for c, _ in plan.saves), *plan.collections, *plan.late_inits, *gone]:
            dead |= _ids(node)
        self.ctx.findings[:] = [f for f in self.ctx.findings if f is finding or id(f.node) not in dead]

    def _rewire(self, finding, stmts, plan: Plan, program: str, exprs) -> None:
        """Runs, feeds, sessions passed on, reopened sessions and saver calls use the program."""
        self_name = plan.self_name
        for call in plan.runs:
            finding.replace(call, self._run_replacement(
                plan.program_of.get(id(call), program), self_name, self._is_method_run(call, plan),
                exprs.get(id(call), []), self._captured, plan.kept.get(id(call), frozenset())))
        for node, key in plan.handed_names:  # `do_eval(sess, eval_correct)`: by its graph name
            finding.replace(node, cst.SimpleString(f'"{_plain(key)}"'))
        for node in plan.passed:  # `train(sess, 20)`: the function gets the program
            finding.replace(node, cst.parse_expression(program))
        for stmt in plan.repeated:  # graph code the program already has
            finding.remove(stmt)
        for stmt in plan.reopened:  # the new session on the same graph: its body stays
            finding.replace(stmt, lambda updated: cst.FlattenSentinel(
                [updated.body.body[0].with_changes(leading_lines=updated.leading_lines),
                 *updated.body.body[1:]]))
        for literal in plan.feed_dicts.values():
            finding.replace(literal, self._feed_replacement(self_name))
        for call in plan.collections:  # tf.trainable_variables() past the graph: the program's
            finding.replace(call, cst.parse_expression(
                COLLECTION_READS[self._call_name(call)].format(program=program)))
        for call, key, how in plan.assigns:  # sess.run(tf.assign(lr, value)): the program's variable
            owner = plan.program_of.get(id(call), program)
            finding.replace(call, lambda updated, owner=owner, key=key, how=how: cst.parse_expression(
                f'{owner}.{how}("{_plain(key)}", {code(_assigned_value(updated))})'))
        for call in plan.eager_runs:  # sess.run(tf.argmax(labels, 1)): computed where it is
            finding.replace(call, _as_evaluated)
        for node in plan.session_graphs:  # FileWriter(logdir, sess.graph): the step's graph
            finding.replace(node, cst.parse_expression(f"{program}.graph"))
        for node, key in plan.hook_reads:  # NanTensorHook(loss): the hooks fetch by name
            finding.replace(node, cst.SimpleString(f'"{_plain(key)}"'))
        scopes = [*stmts, *plan.methods]
        for call in plan.removals:
            finding.remove(self._statement_of(call, scopes))
        for call in plan.queue_runners:  # no threads to start: `threads = []`, or no statement
            try:
                finding.remove(self._statement_of(call, scopes))
            except _Blocked:
                finding.replace(call, cst.List([]))
        for call, kind in plan.saves:
            owner_key = _key(call.func.value, self_name)
            if owner_key in plan.graph_savers:  # the build's own Saver (over some variables)
                options = [f'saver="{_plain(owner_key)}"']
            else:
                options = plan.saver_options[owner_key] if kind == "save" else []
            finding.replace(call, self._save_replacement(plan.program_of.get(id(call), program),
                                                         kind, options, plan.save_steps.get(id(call))))

    def _graph_seed(self, stmt) -> bool:
        """``tf.set_random_seed(777)``: it stays where it was as well as joining the build
        function. TF1 code that ran before the graph read it there: TF 1.x's MNIST reader
        seeded numpy from the graph seed (``get_seed``), so its batches depend on it."""
        return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) \
            and self._call_name(_value(stmt)) in GRAPH_SEEDS

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
            walk(stmt, Find())
        if not found:
            raise _Blocked("an initializer run or close() inside an expression")
        return found[0]

    @staticmethod
    def _spec(call: cst.Call, tf_expr: str) -> str:
        args = {}
        positional = ["dtype", "shape", "name"]
        default = call.args and Converter._is_default(call)
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
        session = plan.program_of.get(id(call), plan.session)
        return _key(call.func.value, plan.self_name) != session

    @staticmethod
    def _run_replacement(program: str, self_name: Optional[str], method: bool = False, exprs=(),
                         captured=None, kept=frozenset()):
        """``kept``: names that hold graph names already (a function's parameters)."""
        def rewrite(updated: cst.Call):
            if method:  # op.run(feed_dict) / t.eval(feed_dict): the owner is the fetch
                fetch = updated.func.value
                feeds = [a for name, a in _method_args(updated) if name == "feed_dict"]
            else:
                fetch, feeds = updated.args[0].value, updated.args[1:]
            names = iter(exprs)  # the fetched expressions, in the order the fetch lists them
            parts = [Converter._names_as_strings(fetch, self_name, names, captured, kept)]
            for a in feeds:
                if isinstance(a.value, (cst.Name, cst.Call)):  # a proved feed dict, or a function's:
                    parts.append(f"**{code(a.value)}")  # its keys are names now
                    continue
                handed = []  # keys that hold graph names already: one dict of them
                for element in a.value.elements:
                    key = _key(element.key, self_name)
                    if key in kept:
                        handed.append(f"{key}: {code(element.value)}")
                    else:
                        parts.append(f"{_plain(key)}={code(element.value)}")
                if handed:
                    parts.append(f"**{{{', '.join(handed)}}}")
            return cst.parse_expression(f"{program}.run({', '.join(parts)})")
        return rewrite

    def _by_name(self, made):
        """An expression the build function makes: its name, and it as the fixes left it."""
        original, name = made

        def rewrite(updated):
            self._captured[id(original)] = updated
            return cst.SimpleString(f'"{name}"')
        return rewrite

    @staticmethod
    def _feed_replacement(self_name: Optional[str]):
        def rewrite(updated: cst.Dict):
            elements = [e.with_changes(key=cst.SimpleString(f'"{_plain(_key(e.key, self_name))}"'))
                        for e in updated.elements]
            return updated.with_changes(elements=elements)
        return rewrite

    @staticmethod
    def _names_as_strings(fetch, self_name, exprs=iter(()), captured=None, kept=frozenset()) -> str:
        key = _key(fetch, self_name)
        if key is not None:
            return key if key in kept else f'"{_plain(key)}"'
        if not isinstance(fetch, (cst.List, cst.Tuple, cst.Dict)):  # a fetched graph expression
            original, name = next(exprs)
            if captured is not None:
                captured[id(original)] = fetch  # the build function takes it as the fixes left it
            return f'"{name}"'
        inner = [Converter._names_as_strings(e.value, self_name, exprs, captured, kept) for e in fetch.elements] \
            if not isinstance(fetch, cst.Dict) else None
        if isinstance(fetch, cst.List):
            return "[" + ", ".join(inner) + "]"
        if isinstance(fetch, cst.Tuple):
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        parts = [f"{code(e.key)}: {Converter._names_as_strings(e.value, self_name, exprs, captured, kept)}"
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


def _without_arg(args, at: int) -> list:
    """A call's arguments without the one at ``at`` (the last one left loses its comma)."""
    kept = [a for i, a in enumerate(args) if i != at]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return kept


def _workers_note(workers: WorkerProgram) -> str:
    """What the finding says of a cluster program's workers."""
    if workers.asynchronous:
        return ("; its cluster runs it on tf.distribute.ParameterServerStrategy (shims.cluster."
                f"ParameterServers, {workers.on_workers[1:]}): the variables stay on the parameter "
                "servers and the chief schedules each step on a free worker, which applies its "
                "gradients without waiting for the others, as TF1's asynchronous workers did")
    return ("; its cluster's workers run it on tf.distribute.MultiWorkerMirroredStrategy "
            f"(shims.cluster.MultiWorker, {workers.on_workers[1:]}), which averages "
            "their gradients every step as SyncReplicasOptimizer did")


def _monitored_over(updated: cst.With, program: str, shim: str, local: bool = False) -> cst.With:
    """``with tf.train.MonitoredTrainingSession(args) as s:`` (as the other fixes left its
    arguments) -> ``with shims.MonitoredTrainingSession(program, args) as s:``; ``local``:
    without its ``master=`` (a cluster's workers now run the program themselves)."""
    item = updated.items[0]
    made = _over(_without_master(item.item) if local else item.item, program, shim)
    return updated.with_changes(items=[item.with_changes(item=made)])


def _program_first(updated: cst.SimpleStatementLine, program: str, shim: str, local: bool = False):
    """``sv = tf.train.Supervisor(args)`` -> ``sv = shims.Supervisor(program, args)``."""
    assign = updated.body[0]
    made = _over(_without_master(assign.value) if local else assign.value, program, shim)
    return updated.with_changes(body=[assign.with_changes(value=made)], leading_lines=())


def _without_master(call: cst.Call) -> cst.Call:
    """A monitored session's call without its ``master`` (keyword, or first positional)."""
    args = [a for i, a in enumerate(call.args)
            if not ((a.keyword is not None and a.keyword.value == "master") or (a.keyword is None and i == 0))]
    if args and isinstance(call.args[-1].comma, cst.MaybeSentinel):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def _without(lst: cst.List, drop) -> cst.List:
    """The list without its elements at the indexes ``drop`` (its last one without a comma
    when the list had none there)."""
    kept = [e for i, e in enumerate(lst.elements) if i not in drop]
    if kept and isinstance(lst.elements[-1].comma, cst.MaybeSentinel):
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return lst.with_changes(elements=kept)


def _edited(statement: cst.SimpleStatementLine, edits) -> cst.SimpleStatementLine:
    """``sv = shims.Supervisor(program, init_op=init, saver=saver, ...)`` with the keyword
    arguments ``edits`` names replaced (``saver=saver`` -> ``max_to_keep=2``) or gone."""
    if not edits:
        return statement
    assign = statement.body[0]
    args = []
    for arg in assign.value.args:
        keyword = arg.keyword.value if arg.keyword else None
        if keyword not in edits:
            args.append(arg)
        elif edits[keyword] is not None:
            name, _, value = edits[keyword].partition("=")
            args.append(arg.with_changes(keyword=cst.Name(name.strip()), value=cst.parse_expression(value)))
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT and isinstance(assign.value.args[-1].comma,
                                                                                cst.MaybeSentinel):
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)  # no trailing comma added
    return statement.with_changes(body=[assign.with_changes(value=assign.value.with_changes(args=args))])


def _over(call: cst.Call, program: str, shim: str) -> cst.Call:
    """``shim(program, <the call's arguments>)``, the program laid out as the first argument was."""
    laid_out = isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace)
    first = cst.Arg(cst.parse_expression(program),
                    comma=cst.Comma(whitespace_after=call.whitespace_before_args if laid_out
                                    else cst.SimpleWhitespace(" "))
                    if call.args else cst.MaybeSentinel.DEFAULT)
    return call.with_changes(func=cst.parse_expression(shim), args=[first, *call.args])


def _as_moved(facts, stmts) -> list:
    """Statements as every other edit left them (one another rule rebuilt may now be several,
    or none); one also kept in place (a graph seed) as the edits of its parts left it."""
    out = []
    for stmt in stmts:
        new = facts.moved.get(id(stmt))
        if new is None and id(stmt) in facts.rewritten:  # its comments stay with it, where it was
            new = facts.rewritten[id(stmt)].with_changes(leading_lines=[])
        new = stmt if new is None else new
        if isinstance(new, cst.FlattenSentinel):
            out.extend(new.nodes)
        elif new is not cst.RemovalSentinel.REMOVE:
            out.append(new)
    return out


def _fetched_name(expr) -> str:
    """The build function's name for a fetched expression: ``iterator.initializer`` is
    ``iterator_initializer``, a call of the graph's own function ``G(z)`` is ``G_z``; any
    other expression is ``fetched``."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        return f"{expr.value.value}_{expr.attr.value}"
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        names = [a.value.value for a in expr.args if isinstance(a.value, cst.Name) and a.keyword is None]
        return "_".join([expr.func.value, *names[:2]])
    return "fetched"


def _nested_blanks(lines, first: bool = False):
    """A moved statement's leading lines inside the build function: blank lines carry no
    indentation and come one at a time (two separated module-level definitions); the
    function's first statement has none above its comments."""
    out = []
    if first:
        lines = list(lines)
        while lines and lines[0].comment is None:
            lines.pop(0)
    for line in lines:
        if line.comment is None:
            if out and out[-1].comment is None:
                continue
            line = line.with_changes(indent=False)
        out.append(line)
    return out


def _assign_call(run: cst.Call) -> cst.Call:
    """The assignment a run runs: ``sess.run(<it>)`` or ``<it>.eval()``."""
    return run.func.value if isinstance(run.func, cst.Attribute) and run.func.attr.value == "eval" \
        and not run.args else run.args[0].value


def _assign_funcs(run: cst.Call) -> list:
    """What other rules may have rewritten in a converted assignment run (its renames go
    with it): the run's and the assignment's callee."""
    return [run.func, _assign_call(run).func]


def _assigned_value(run: cst.Call) -> cst.BaseExpression:
    """The value of ``sess.run(tf.assign(v, value))``, ``sess.run(v.assign(value))`` or
    ``v.assign(value).eval()`` (as the other fixes left it)."""
    call = _assign_call(run)
    method = isinstance(call.func, cst.Attribute) and call.func.attr.value in ASSIGNS \
        and not any(a.keyword is not None and a.keyword.value == "ref" for a in call.args) \
        and len(call.args) == 1
    for i, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == "value" or arg.keyword is None and i == (0 if method else 1):
            return arg.value
    raise ValueError("no value in the assignment")  # _python_assign proved there is one


def _placed(cls: cst.ClassDef, call, calls, methods, definition) -> cst.ClassDef:
    """The class with its build function and program made in ``__init__`` at ``call`` (the
    last build-method call; the other ``calls`` go), and the build ``methods`` gone: their
    graph code is the build function's."""
    body = []
    for member in cls.body.body:
        if isinstance(member, cst.FunctionDef) and member.name.value in methods:
            continue
        if isinstance(member, cst.FunctionDef) and member.name.value == "__init__":
            stmts = []
            for stmt in member.body.body:
                if stmt is call:
                    stmts.extend(definition())
                elif not any(stmt is other for other in calls):
                    stmts.append(stmt)
            member = member.with_changes(body=member.body.with_changes(body=stmts))
        body.append(member)
    return cls.with_changes(body=cls.body.with_changes(body=body))
