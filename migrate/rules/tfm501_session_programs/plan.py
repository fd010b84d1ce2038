"""Stage 2, plan: what the program is made of (placeholders, graph statements, runs,
feeds, savers, helpers the session is passed to), or why it cannot be converted."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of, string_value, walk
from migrate.codemod.queues import START, queue_input
from migrate.codemod.shared import GRAPH_SWITCHES

from .syntax import (NO_GRAPH, ASSIGNS, CLUSTER, COLLECTION_READS, GRAPH_ATTRIBUTES, GRAPH_SEEDS, GRAPH_READERS, INITIALIZERS, PLACEHOLDERS, SCAFFOLD_FIELDS, SESSION_RUN_ARGS,
                     SUPERVISOR_REFUSED,
                     _assigned_key, _Blocked, _collect,
                     _fresh_container, _function_locals, _ids, _key, _method_args, _parameters, _NotAProgram, _plain, _program_saver, _saver_options, _shadowed, _value,
                     fetched_elements, is_run)
from .names import bound_args
from .workers import WorkerProgram


@dataclass
class Plan:
    """What converting one program takes, found before anything is changed. Keys name
    graph values as the program does (``x``, ``self.x``); nodes are the original ones."""
    session: str                                  # the session's key
    self_name: Optional[str]                      # the class's ``self`` when an object owns it
    methods: List[cst.FunctionDef]                # a class's other methods, in the program
    # the graph (Planner._read_graph)
    placeholders: Dict[str, cst.Call] = field(default_factory=dict)  # the build's parameters
    graph: List[int] = field(default_factory=list)                   # graph statements' indexes
    graph_keys: Set[str] = field(default_factory=set)                # names the graph binds
    inits: Set[str] = field(default_factory=set)        # names bound to initializers (dropped)
    savers: Set[str] = field(default_factory=set)       # names bound to tf.train.Saver
    saver_options: Dict[str, List[str]] = field(default_factory=dict)  # a Saver's max_to_keep=
    graph_savers: Set[str] = field(default_factory=set)  # Savers over some variables: graph code
    switches: List[int] = field(default_factory=list)   # graph-mode switch statements' indexes
    scoped: List[cst.SimpleStatementLine] = field(default_factory=list)  # placeholders in scopes
    # its uses (Planner._read_uses)
    runs: List[cst.Call] = field(default_factory=list)        # sess.run / op.run / t.eval
    removals: List[cst.Call] = field(default_factory=list)    # initializer runs, close()
    saves: List[Tuple[cst.Call, str]] = field(default_factory=list)  # (call, "save"/"restore")
    feed_dicts: Dict[int, cst.Dict] = field(default_factory=dict)    # proved feed dicts, by id
    program_of: Dict[int, str] = field(default_factory=dict)  # call id -> the helper's parameter
    save_steps: Dict[int, str] = field(default_factory=dict)  # save id -> its global_step key
    reopened: List[cst.With] = field(default_factory=list)    # sessions that restore and go on
    repeated: List[cst.BaseStatement] = field(default_factory=list)  # hoisted graph code written again
    # a `with tf.train.MonitoredTrainingSession(...) as s:` program: the session object stays
    # (shims.MonitoredTrainingSession over the program), and graph names its hooks are given
    # (`NanTensorHook(loss)`, `SessionRunArgs(loss)`) become the names the program returns
    monitored: bool = False
    session_first: bool = False  # the session was made before the graph (InteractiveSession)
    graph_end: Optional[int] = None  # then: the first statement after it that runs something
    handed: bool = False  # `self.sess = sess`: the object is handed its script's session (handed)
    anchorless: bool = False  # a graph object with no session of its own (objects): no anchor goes
    returns: List[str] = field(default_factory=list)  # keys build returns, fetched or not (objects)
    program: str = ""  # the program's name once converted (``self.program``)
    scaffold: Optional[cst.Call] = None  # `scaffold=tf.train.Scaffold(...)` made in the monitored call
    supervisor: Optional[cst.SimpleStatementLine] = None  # `sv = tf.train.Supervisor(...)`
    hook_reads: List[Tuple[cst.Name, str]] = field(default_factory=list)
    collections: List[cst.Call] = field(default_factory=list)  # tf.trainable_variables() past the graph
    session_graphs: List[cst.Attribute] = field(default_factory=list)  # `sess.graph` (a FileWriter's)
    # `writer = tf.summary.FileWriter(logdir, tf.get_default_graph())` before the session: it
    # stays where it is (Python's), without its graph argument (the index, else -1), and is
    # given the program's graph once the program is made
    writers: List[Tuple[str, cst.Call, int]] = field(default_factory=list)
    # a Supervisor's graph-valued arguments: keyword -> its replacement (None: it goes), the
    # names given by graph name (global_step, summary_op), the name reads those account for
    supervisor_edits: Dict[str, Optional[str]] = field(default_factory=dict)
    supervisor_reads: List[Tuple[cst.Name, str]] = field(default_factory=list)
    supervisor_handled: Set[int] = field(default_factory=set)
    # a synchronous program on a TF1 cluster: its workers run on MultiWorkerMirroredStrategy
    workers: Optional[WorkerProgram] = None
    # graph values a run feeds in place of what they compute (`{self.a: batch_actions}`): only
    # native steps take them (as parameters); the program stays in graph mode otherwise
    overrides: Tuple[str, ...] = ()
    # expressions a run fetches that read Python values too (`tf.reduce_sum(tf.pow(pred - Y, 2))
    # / (2 * test_X.shape[0])`), with those names: TF1 built them at that run, from the values
    # then; a native step traced at that run reads the same (the program stays in graph mode
    # otherwise)
    python_fetches: Tuple[Tuple[cst.BaseExpression, Tuple[str, ...]], ...] = ()
    hoisted: List[cst.SimpleStatementLine] = field(default_factory=list)  # graph code in the session block
    late_inits: List[cst.SimpleStatementLine] = field(default_factory=list)  # `init = ...` made there
    eager_runs: List[cst.Call] = field(default_factory=list)  # sess.run(tf.argmax(numpy_array, 1))
    # sess.run(tf.assign(lr, 0.01 * decay ** e)), `v.assign(epoch + 1).eval()`: (the run, the
    # variable's key, "assign" / "assign_add" / "assign_sub") -> program.assign("lr", ...)
    assigns: List[Tuple[cst.Call, str, str]] = field(default_factory=list)
    passed: List[cst.Name] = field(default_factory=list)      # the session passed to helpers
    queue_runners: List[cst.Call] = field(default_factory=list)  # start_queue_runners: tf.data now
    # run id -> graph expressions it fetches (``sess.run(tf.argmax(pred, 1))``), in the order
    # the fetch lists them: each becomes a graph name of the build function
    fetch_exprs: Dict[int, List[cst.BaseExpression]] = field(default_factory=dict)
    graph_functions: Set[str] = field(default_factory=set)  # module functions moved into the build
    # graph values made by, and handed to, the module's functions by name (names)
    made: Set[int] = field(default_factory=set)  # ids of `x, y = placeholder_inputs(n)` (they go), and of its `placeholder_inputs`
    makers: List[cst.FunctionDef] = field(default_factory=list)  # those functions
    handed_names: List[Tuple[cst.Name, str]] = field(default_factory=list)  # `do_eval(sess, acc)`'s acc
    handed_fetches: List[str] = field(default_factory=list)  # those the function fetches
    kept: Dict[int, Set[str]] = field(default_factory=dict)  # run id -> its function's name parameters
    made_feeds: Set[int] = field(default_factory=set)  # feed arguments a function made (`**feed`)


class Planner:
    """Reads one program into a Plan, or raises _Blocked naming every blocker."""

    def _plan(self, stmts, session_at, methods, self_name) -> Plan:
        """The program whose session statement is ``stmts[session_at]``: its graph, then
        every use of the session and of graph names. Every blocker is named at once."""
        session = self._session_stmt(stmts[session_at], self_name)
        scopes = [*stmts[session_at:], *methods]
        calls = _collect(*scopes, self_name=self_name).calls
        default = isinstance(stmts[session_at], cst.With)  # `t.eval()` runs the block's session
        if not any(isinstance(c.func, cst.Attribute) and (
                c.func.attr.value == "run" and _key(c.func.value, self_name) == session
                or default and c.func.attr.value == "eval" and isinstance(c.func.value, cst.Name))
                for c in calls):
            handed = next((c for c in calls if _runs_it_there(c)
                           and any(_key(a.value, self_name) == session for a in c.args)), None)
            if handed is not None:  # `GAN(sess, ...)` of another module: it runs the session there
                raise _Blocked(f"the session is handed to {_callee(handed)}(), which runs it in TF1 "
                               "graph mode")
            raise _NotAProgram()  # a Session that never runs anything: nothing to convert
        plan = Plan(session=session, self_name=self_name, methods=methods,
                    handed=bool(self_name) and isinstance(_value(stmts[session_at]), cst.Name),
                    monitored=self._monitored(stmts[session_at]) is not None,
                    supervisor=None if self_name else self._supervisor_of(stmts[session_at]))
        blockers: List[str] = []
        self._sync_hooks = self._sync_hook_names(stmts)  # a SyncReplicasOptimizer's hooks: the session's
        self._monitoring = plan.monitored  # _session_call: should_stop() is the session's too
        self._supervisor = _assigned_key(plan.supervisor) if plan.supervisor else None
        if plan.monitored:
            plan.scaffold = self._inline_scaffold(stmts[session_at], blockers)
        self._read_graph(stmts, session_at, plan, blockers)
        self._graph_functions = plan.graph_functions  # _graph_expression: `sess.run(G(z))`
        self._overrides = []  # graph values runs feed (_check_feeds)
        self._python_fetches = []  # fetched expressions reading Python values (_fetch_keys)
        self._read_uses(stmts, session_at, plan, blockers)
        plan.overrides = tuple(self._overrides)
        plan.python_fetches = tuple(self._python_fetches)
        cluster = self._cluster(stmts, session_at)
        workers = self._sync_workers(stmts, session_at, plan) if cluster else None
        if isinstance(workers, WorkerProgram) and not blockers:
            self._on_workers(stmts, plan, workers)
        elif cluster:
            blockers.insert(0, f"a program on a TF1 cluster ({', '.join(cluster)}): it keeps running "
                               "there in graph mode; its TF2 form is tf.distribute "
                               "(MultiWorkerMirroredStrategy or ParameterServerStrategy from TF_CONFIG)"
                               + (f"; not converted: {workers}" if isinstance(workers, str) else ""))
        if blockers:
            raise _Blocked("; ".join(dict.fromkeys(blockers)))
        if not plan.runs:
            raise _NotAProgram()  # only initializer runs: nothing is computed, nothing to convert
        return plan

    @staticmethod
    def _on_workers(stmts, plan: Plan, workers: WorkerProgram) -> None:
        """The workers take the program: the optimizer's hook is neither graph code nor a
        name the hooks fetch (it goes, see ``workers``)."""
        plan.workers = workers
        hooks = {id(s) for s in workers.hook_stmts}
        plan.graph = [i for i in plan.graph if id(stmts[i]) not in hooks]
        plan.hook_reads = [(node, key) for node, key in plan.hook_reads
                           if key not in workers.hook_names and not workers.dropped(node)]

    def _read_graph(self, stmts, session_at, plan: Plan, blockers: List[str]) -> None:
        """The statements that build the graph (before the session; in a class, anywhere in
        ``__init__``): placeholders, initializers, savers, graph-mode switches, graph code."""
        self_name, session = plan.self_name, plan.session
        region = range(len(stmts)) if self_name else range(session_at)
        functions = self._scan(stmts, region, session_at, plan, blockers)
        seeds_only = all(isinstance(stmts[i], cst.SimpleStatementLine)  # `tf.set_random_seed(7)`
                         and self._call_name(_value(stmts[i])) in GRAPH_SEEDS for i in plan.graph)
        end = None if self_name or plan.placeholders or not seeds_only or blockers \
            else self._session_first_end(stmts, session_at, session)
        if end is not None:  # `sess = tf.InteractiveSession()` before the graph it runs
            plan.session_first, plan.graph_end = True, end
            functions += self._scan(stmts, range(session_at + 1, end), session_at, plan, blockers)
            region = range(end)
        if not plan.placeholders and not plan.graph and not blockers:
            raise _Blocked(NO_GRAPH)
        plan.graph += self._helper_values(stmts, region, functions, plan)
        if plan.supervisor is not None:  # it becomes shims.Supervisor(program, <its arguments>)
            blockers += self._supervisor_args(plan)
        makers = {id(f) for f in plan.makers}  # they go, or stay where they are (not graph code)
        plan.graph += self._graph_helpers(stmts, [i for i in functions if id(stmts[i]) not in makers], plan)
        plan.graph.sort()
        plan.graph_keys |= self._containers_of_graph(stmts, region, plan.graph, plan.switches,
                                                     session_at, self_name)
        self._derived_graph(stmts, region, session_at, plan)
        if self._clashing_names(stmts, plan):
            blockers.append("a graph name used both as a local and as an attribute")

    @staticmethod
    def _clashing_names(stmts, plan: Plan) -> Set[str]:
        """Graph names bound both as a local and as an attribute (``mu = dense(...)``, then
        ``self.mu = tf.squeeze(mu * 2)``), which would share one build parameter or returned
        key. In a class, only the attribute leaves the build function (the methods cannot see
        ``__init__``'s locals), so they clash only where one is a placeholder (a parameter)
        or the local is read in ``__init__`` past the graph."""
        count = Counter(_plain(k) for k in plan.graph_keys)
        clashes = {name for name, n in count.items() if n > 1}
        if clashes and plan.self_name:
            fed = {_plain(k) for k in plan.placeholders}
            graph = set(plan.graph)
            outside = {k for j, stmt in enumerate(stmts) if j not in graph
                       for _, k in _collect(stmt, self_name=plan.self_name).reads}
            clashes = {name for name in clashes if name in fed or name in outside}
        return clashes

    def _session_first_end(self, stmts, session_at, session) -> Optional[int]:
        """For ``sess = tf.InteractiveSession()`` (or ``tf.Session()``) made before the graph,
        as the "Deep MNIST for experts" tutorial wrote it: where the graph ends, at the first
        statement that runs something (``sess.run`` of more than an initializer, ``op.run()``,
        ``t.eval()``); None when that is not the form."""
        if not isinstance(stmts[session_at], cst.SimpleStatementLine) or _assigned_key(stmts[session_at]) != session:
            return None
        inits: Set[str] = set()
        for j in range(session_at + 1, len(stmts)):
            stmt = stmts[j]
            value, key = _value(stmt), _assigned_key(stmt)
            if key and self._call_name(value) in INITIALIZERS:
                inits.add(key)
                continue
            if self._runs_initializer(stmt, session, inits):
                continue
            found = _collect(stmt)
            if any(k == session for _, k in found.reads) or any(
                    isinstance(c.func, cst.Attribute) and c.func.attr.value in ("run", "eval")
                    for c in found.calls):
                return j if j > session_at + 1 else None
        return None

    def _scan(self, stmts, region, session_at, plan: Plan, blockers: List[str]) -> List[int]:
        """Read ``region``'s statements into the plan's graph; returns the functions seen."""
        self_name, session = plan.self_name, plan.session
        functions = []  # module-level functions: graph-building helpers if they read the graph
        # a block's own names, where a made placeholder's spec is read (a module's are its globals)
        at_module = bool(stmts) and any(s is stmts[0] for s in self.ctx.module.body)
        self._block_binds = set() if at_module else _collect(*stmts).binds
        for i in region:
            try:
                stmt = stmts[i]
                if isinstance(stmt, cst.FunctionDef) and not self_name:
                    functions.append(i)
                    continue
                if i == session_at or stmt is plan.supervisor \
                        or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or (
                        isinstance(stmt, cst.SimpleStatementLine)
                        and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)):
                    continue
                value, key = _value(stmt), _assigned_key(stmt, self_name)
                called = self._call_name(value)
                if called in GRAPH_SWITCHES and isinstance(stmt.body[0], cst.Expr):
                    plan.switches.append(i)
                    continue
                made = None if called else self._made_placeholders(
                    stmt, self_name, plan.graph_keys, self._block_binds)
                if made is not None:  # `images_pl, labels_pl = placeholder_inputs(batch_size)`
                    function, placeholders = made
                    plan.placeholders.update(placeholders)
                    plan.graph_keys |= {k for k, _ in placeholders}
                    plan.graph.append(i)
                    plan.made |= {id(stmt), id(stmt.body[0].value.func)}
                    plan.makers.append(function)
                    continue
                if called in PLACEHOLDERS:
                    if not key:
                        raise _Blocked("a placeholder not assigned to a plain name")
                    plan.placeholders[key] = value
                    plan.graph_keys.add(key)
                    plan.graph.append(i)
                    read = [k for _, k in _collect(value, self_name=self_name).reads if k in plan.graph_keys]
                    if read:  # (its default is made outside the graph's function, before any step)
                        raise _Blocked(f"{key!r} is a tf.placeholder_with_default whose default reads the graph "
                                       f"({read[0]!r}), which no converted form takes yet")
                    continue
                if key and (called in INITIALIZERS or self._initializer_group(value, plan.inits)):
                    plan.inits.add(key)
                    plan.graph.append(i)
                    continue
                if key and called == "tf.train.Saver":
                    _saver(plan, key, value, self._call_name)
                    plan.graph.append(i)
                    continue
                if called == "tf.train.Scaffold":
                    _scaffold_fields(value)
                writer = _default_graph_writer(key, value, called, self._call_name) \
                    if i < session_at and not self_name else None
                if writer is not None:  # a summary writer of the default graph: Python's
                    plan.writers.append(writer)
                    continue
                found = _collect(stmt, self_name=self_name)
                queues = queue_input(self.ctx).why_not({id(c) for c in found.calls})
                if queues:  # an eager step would wait forever on a queue no thread fills
                    raise _Blocked(f"queue-runner input with no tf.data form: {queues}")
                if plan.monitored and self._makes_hooks(found):
                    continue  # `hooks = [tf.train.NanTensorHook(loss), ...]`: the session's, not graph
                if (self_name or plan.session_first) and i > session_at and any(
                        k == session for _, k in found.reads):
                    continue  # a run in __init__ or amid the graph (an initializer), `FileWriter(d,
                    # self.sess.graph)`: uses of the session, read with the others
                if self._uses_tf(stmt) or any(k in plan.graph_keys for _, k in found.reads):
                    if not isinstance(stmt, (cst.SimpleStatementLine, cst.For, cst.With, cst.If)):
                        raise _Blocked(f"graph code in a {type(stmt).__name__} statement")
                    plan.graph.append(i)
                    plan.graph_keys |= found.binds
                    for inner, inner_key, call in self._scoped_placeholders(stmt, self_name):
                        plan.placeholders[inner_key] = call
                        plan.scoped.append(inner)
            except _Blocked as why:  # every blocker is named at once, not one per run
                blockers.append(str(why))
        return functions

    def _cluster(self, stmts, session_at) -> List[str]:
        """What makes the program one of a TF1 cluster: cluster APIs in its block, or a
        session given a server (``tf.Session(server.target)``, ``master=...``)."""
        found = []
        for call in _collect(*stmts).calls:
            name = self._call_name(call)
            if name in CLUSTER and not _local_setter(name, call):
                found.append(name)
        session = stmts[session_at]
        call = session.items[0].item if isinstance(session, cst.With) else _value(session)
        positional = self._call_name(call) in ("tf.Session", "tf.InteractiveSession")  # (target, ...)
        for i, arg in enumerate(call.args if isinstance(call, cst.Call) else ()):
            keyword = arg.keyword.value if arg.keyword else None
            local = isinstance(arg.value, cst.SimpleString) and arg.value.evaluated_value == ""
            if not local and (keyword in ("target", "master") or (keyword is None and i == 0 and positional)):
                found.append(f"{keyword or 'target'}={code(arg.value)}")
        return list(dict.fromkeys(found))

    def _helper_values(self, stmts, region, functions, plan: Plan) -> List[int]:
        """``w = init_weights([784, 10])`` (``def init_weights(shape): return
        tf.Variable(...)``), read by graph code and nothing else: a value a module-level
        function builds with TensorFlow is graph too, as TF1 made it in the one graph (its variable trained by
        ``minimize()``, saved and initialised with the others). Left outside, it would be an
        eager variable the program's optimizer never sees."""
        # (a function only defining and returning another, `max_norm_regularizer(1.0)`,
        # builds nothing when called: its value is a Python function)
        builders = {stmts[i].name.value for i in functions if any(
            self._uses_tf(s) for s in stmts[i].body.body if not isinstance(s, (cst.FunctionDef, cst.ClassDef)))}
        found: List[int] = []
        if not builders:
            return found
        candidates = {i: _collect(stmts[i]) for i in region
                      if i not in plan.graph and isinstance(stmts[i], cst.SimpleStatementLine)
                      and _assigned_key(stmts[i])}
        candidates = {i: c for i, c in candidates.items() if any(
            isinstance(call.func, cst.Name) and call.func.value in builders for call in c.calls)}
        read = {k for i in plan.graph for _, k in _collect(stmts[i]).reads}
        # what the rest of the block reads (not functions: they read at call time): a value
        # the loop reads too (data a TensorFlow-using loader made) is no graph value; one
        # only fetched (`session.run(weights)`) or handed to a function of the module
        # (`plot_conv_weights(weights=weights_conv1)`, see names) is, and is read so
        rest = [stmt for j, stmt in enumerate(stmts) if j not in plan.graph and j not in candidates
                and not isinstance(stmt, (cst.FunctionDef, cst.ClassDef))]
        handed = self._fetched_or_handed(rest, plan.session, {s.name.value: s for s in stmts
                                                              if isinstance(s, cst.FunctionDef)})
        outside = {k for stmt in rest for n, k in _collect(stmt).reads if id(n) not in handed}
        fetched = {k for stmt in rest for n, k in _collect(stmt).reads if id(n) in handed}
        while True:
            more = [i for i, c in candidates.items()
                    if i not in found and c.binds & (read | fetched) and not c.binds & outside]
            if not more:
                found.sort()
                return found
            for i in more:
                found.append(i)
                plan.graph_keys |= candidates[i].binds
                read |= {k for _, k in candidates[i].reads}

    @staticmethod
    def _fetched_or_handed(stmts, session, functions) -> Set[int]:
        """Ids of the names ``stmts`` fetch with the session (``session.run(w)``,
        ``session.run([w, b])``) or hand to a function of the module that fetches that
        parameter with a session (``show(weights=w)``, ``def show(weights): ...
        session.run(weights)``; see names)."""
        def fetched_names(call) -> list:
            return [n for n in fetched_elements(call) if isinstance(n, cst.Name)]

        found: Set[int] = set()
        for call in _collect(*stmts).calls:
            func = call.func
            if is_run(call, session):
                found |= {id(n) for n in fetched_names(call)}
            elif isinstance(func, cst.Name) and func.value in functions:
                function = functions[func.value]
                given = bound_args(function, call) or {}
                params = {p.name.value for p in function.params.params}
                fetching = {n.value for c in _collect(function.body).calls if is_run(c)
                            for n in fetched_names(c) if n.value in params}
                found |= {id(v) for p, v in given.items() if p in fetching and isinstance(v, cst.Name)
                          and any(v is a.value for a in call.args)}
        return found

    def _graph_helpers(self, stmts, functions, plan: Plan) -> List[int]:
        """``def neural_net(x): ... weights['h1'] ...`` beside graph code that calls it: a
        function reading graph values, called only while the graph is built, builds graph
        itself. It moves into the build function with that code (where those values are
        its locals' neighbours), when no call of it is left outside the graph but in a
        fetch of the session (``sess.run(G(z), ...)``: TF1 built it anew there, the
        program builds it once, see ``_graph_expression``). Its parameters' defaults count
        as its reads (``def G(z, w=g_weights)``)."""
        found: List[int] = []
        module = _collect(self.ctx.module)  # every call and name of the module, read once
        fetches: Set[int] = set()  # what the block's runs fetch
        for call in _collect(*(s for i, s in enumerate(stmts) if i not in plan.graph)).calls:
            if is_run(call, plan.session, plan.self_name):
                fetches |= _ids(call.args[0].value)
        while True:
            graph_ids: Set[int] = set()
            for i in plan.graph + found:
                graph_ids |= _ids(stmts[i])
            more = []
            for i in functions:
                function = stmts[i]
                defaults = [p.default for p in function.params.params if p.default is not None]
                reads = {k for _, k in _collect(function.body, *defaults).reads}
                if i in found or not (reads & plan.graph_keys):
                    continue
                names = [n for n, k in module.reads  # its name, but as defined
                         if k == function.name.value and n is not function.name]
                # every use inside graph code: calls, or the function handed to graph code
                # (a scaffold's ``init_fn=init_fn``), which then sees the graph values it reads
                if names and all(id(n) in graph_ids or id(n) in fetches for n in names) \
                        and any(id(n) in graph_ids for n in names):
                    more.append(i)
                    plan.graph_functions.add(function.name.value)
            if not more:
                return found
            found += more

    def _hoisted(self, stmts, session_at, plan: Plan, rest) -> List[cst.SimpleStatementLine]:
        """``pred = tf.nn.softmax(logits)`` written inside the session block, after
        training (or, with ``sess = tf.Session()``, after it in the same block): graph code
        reading only graph values and what was bound before the session. It joins the
        build function (TF1 built it into the same graph), and its name becomes a graph
        value the program can fetch."""
        block = _session_block(stmts, session_at)
        if plan.self_name or block is None:
            return []
        anchor = stmts[session_at]
        later = _collect(*rest).binds  # names the program binds once it runs
        hoisted = []
        for stmt in block:
            key, value = _assigned_key(stmt), _value(stmt)
            if key is None or key == plan.session or key in plan.graph_keys | plan.inits \
                    or not isinstance(value, cst.BaseExpression) or not self._uses_tf(stmt):
                continue
            found = _collect(value)
            reads = {k for _, k in found.reads}
            others = [*(s for s in self._unrepeated(rest, plan.session, stmt)
                        if s is not anchor and s is not stmt),
                      *(s for s in block if s is not stmt and isinstance(anchor, cst.With))]
            whole = self._call_name(value) in GRAPH_READERS  # merge_all(): every summary
            if not (reads & plan.graph_keys or whole) or reads & (later - plan.graph_keys) \
                    or any(self._call_name(c) in INITIALIZERS for c in found.calls) \
                    or key in _collect(*others).binds:  # bound once: this value is the one read
                continue
            hoisted.append(stmt)
            plan.graph_keys.add(key)
        return hoisted

    def _hoisted_from_functions(self, plan: Plan, rest) -> List[cst.SimpleStatementLine]:
        """``prediction = tf.argmax(model, 2)`` in a function of the block that runs the
        script's session, the name then only fetched there (golbin's seq2seq
        ``translate(word)``): TF1 added the op to its one graph on each call; it joins the
        build function once, under its name. Only a value of graph values and TensorFlow
        (none of the function's own names), bound once, its name nowhere else in the
        module."""
        if plan.self_name:
            return []
        everywhere = Counter(n.value for n in nodes_of(self.ctx.module, cst.Name))
        tf_names = {n for n, q in self.ctx.resolver.aliases.items() if q.split(".")[0] == "tensorflow"}
        found = []
        for function in (s for s in rest if isinstance(s, cst.FunctionDef)):
            if plan.session not in {k for _, k in _collect(function).reads} \
                    or not isinstance(function.body, cst.IndentedBlock):
                continue
            own = {p.name.value for p in function.params.params} | _collect(function.body).binds
            fetched: Counter = Counter()
            for call in _collect(function.body).calls:
                if is_run(call, plan.session):
                    fetched.update(n.value for n in nodes_of(call.args[0].value, cst.Name))
            for stmt in function.body.body:
                key, value = _assigned_key(stmt), _value(stmt)
                if key is None or key in plan.graph_keys or not isinstance(value, cst.BaseExpression) \
                        or not self._uses_tf(stmt):
                    continue
                reads = {k for _, k in _collect(value).reads}
                inside = sum(1 for n in nodes_of(function, cst.Name) if n.value == key)
                if reads & plan.graph_keys and reads <= plan.graph_keys | tf_names and not reads & own \
                        and everywhere[key] == inside == 1 + fetched[key]:
                    found.append(stmt)
                    plan.graph_keys.add(key)
        return found

    def _late_inits(self, stmts, session_at, plan: Plan) -> List[cst.SimpleStatementLine]:
        """``init = tf.global_variables_initializer()`` (or a ``tf.group`` of initializers)
        made after the session (in its ``with`` block, or after ``sess = tf.Session()``), then
        run: the program
        initialises its variables when it makes them, so the statement goes, as its run does.
        So does ``saver = tf.train.Saver()`` made there (``max_to_keep=`` at most): its saves
        and restores are the program's, as a Saver's made with the graph are."""
        block = _session_block(stmts, session_at)
        found = []
        for stmt in block if block is not None and not plan.self_name else ():
            key, value = _assigned_key(stmt), _value(stmt)
            if not key or key == plan.session or not isinstance(value, cst.Call):
                continue
            if (not value.args and self._call_name(value) in INITIALIZERS) \
                    or self._initializer_group(value, plan.inits):
                plan.inits.add(key)
                found.append(stmt)
            elif self._call_name(value) == "tf.train.Saver" and key not in plan.graph_keys \
                    and _program_saver(value, self._call_name):
                _saver(plan, key, value, self._call_name)
                found.append(stmt)
        return found

    def _unrepeated(self, rest, session, stmt) -> list:
        """``rest``, with ``stmt`` written again in a later session's block left out (a
        reopened session rebuilding `accuracy = ...` binds nothing new: the repeat goes)."""
        out, again = [], _bare_code(stmt)
        for other in rest:
            if isinstance(other, cst.With) and isinstance(other.body, cst.IndentedBlock) \
                    and self._session_stmt(other) == session:
                out += [s for s in other.body.body if _bare_code(s) != again]
            else:
                out.append(other)
        return out

    def _read_uses(self, stmts, session_at, plan: Plan, blockers: List[str]) -> None:
        """Every use of the session and of graph names past the graph: runs, initializer
        runs, saves, functions the session is passed to, sessions reopened to restore."""
        self_name, session, methods = plan.self_name, plan.session, plan.methods
        rest = [s for i, s in enumerate(stmts) if i not in plan.graph and i not in plan.switches]
        rest += methods
        plan.late_inits = self._late_inits(stmts, session_at, plan)
        plan.hoisted = self._hoisted(stmts, session_at, plan, rest)
        from_functions = self._hoisted_from_functions(plan, rest)
        plan.hoisted += from_functions
        gone = {id(s) for s in [*plan.hoisted, *plan.late_inits]}  # moved, or dropped
        rest = [s for s in rest if id(s) not in gone]
        named = plan.graph_keys | plan.inits | plan.savers
        shadowed = _shadowed(rest, named) - {_assigned_key(h) for h in plan.hoisted}
        plan.graph_keys -= shadowed  # past the graph, those names are the program's own
        plan.feed_dicts, feed_reads = self._named_feeds(rest, session, plan.placeholders, self_name)
        helpers, handed = ({}, None) if self_name else self._session_helpers(rest, plan, named)
        plan.passed = [n for _, _, nodes in helpers.values() for n in nodes]  # `train(sess, 20)`
        passed = {id(n) for n in plan.passed}
        for stmt in from_functions:  # moved out of their functions: read in the build
            passed |= _ids(stmt)
        by_name: Dict[int, Set[str]] = {}  # id(function) -> the parameters handed graph names
        if handed is not None:
            plan.handed_names, plan.made_feeds = handed.args, handed.feeds
            plan.handed_fetches = handed.fetched
            passed |= {id(n) for n, _ in handed.args}
            by_name = {id(e.function): set(e.roles) for e in handed.functions.values()}
        self._made_feed_ids = plan.made_feeds
        rest += [f for f, _, _ in helpers.values() if not any(f is s for s in rest)]  # the module's
        if plan.monitored:
            plan.hook_reads = self._hook_reads(stmts[session_at], rest, plan)
        plan.hook_reads += plan.supervisor_reads
        passed |= {id(n) for n, _ in plan.hook_reads} | plan.supervisor_handled
        # `tf.summary.FileWriter(logdir, sess.graph)` (or `self.sess.graph`): the program's graph
        plan.session_graphs = [a for stmt in rest for a in nodes_of(stmt, cst.Attribute)
                               if a.attr.value == "graph" and _key(a.value, self_name) == session]
        passed |= {id(a.value) for a in plan.session_graphs} | {
            id(n) for a in plan.session_graphs for n, _ in _collect(a.value, self_name=self_name).reads}
        for stmt in rest:
            scope_session, kept, own = session, by_name.get(id(stmt), set()), set()
            if stmt is stmts[session_at]:
                if not isinstance(stmt, cst.With):
                    continue
                found = _collect(*(s for s in stmt.body.body if id(s) not in gone),
                                 self_name=self_name)
            elif stmt in methods:  # (a method's parameters and locals are its own)
                found = _collect(stmt.body, self_name=self_name)
                own = _function_locals(stmt, self_name) | _parameters(stmt)
            elif id(stmt) in helpers:  # (its locals are its own; its parameters are handed values)
                scope_session = helpers[id(stmt)][1]
                found = _collect(stmt.body, self_name=self_name)
                own = _function_locals(stmt, self_name)
            elif self._reopened(stmt, session, plan.savers, plan.inits):
                plan.reopened.append(stmt)
                # graph code the first session's block already built, written again (`accuracy
                # = ...` after each training): the program has it; the repeat goes
                built = {_bare_code(h) for h in plan.hoisted}
                plan.repeated += [s for s in stmt.body.body if _bare_code(s) in built]
                found = _collect(*(s for s in stmt.body.body if s not in plan.repeated),
                                 self_name=self_name)
            else:
                found = _collect(stmt, self_name=self_name)
            for name in sorted((found.binds & named) - {session} - shadowed - own):
                blockers.append(f"graph name {name!r} is rebound after the graph is built")
            handled = self._read_calls(found.calls, scope_session, id(stmt) in helpers, plan, blockers, kept)
            for node, key in found.reads:
                if id(node) in handled or id(node) in feed_reads or key in shadowed \
                        or id(node) in passed or key in kept or key in own:
                    continue
                if key == scope_session:
                    blockers.append(f"the session {key!r} is used other than by run()/close()")
                elif key in plan.graph_savers:
                    blockers.append(f"a tf.train.Saver with a var_list or options other than max_to_keep "
                                    f"({key!r}) is used by the program")
                elif key in plan.graph_keys | plan.inits | plan.savers:
                    blockers.append(f"graph value {key!r} is used outside sess.run()")
        plan.collections = self._collection_reads(stmts, session_at, plan)
        undone = self._restore_undone(rest, plan)
        if undone:
            blockers.append(undone)

    @staticmethod
    def _restore_undone(rest, plan: Plan) -> Optional[str]:
        """``saver.restore(sess, path)`` then ``sess.run(init)``: TF1 initialized the
        variables again, undoing the restore. The program initializes its variables when
        it makes them and drops the run, so it would keep the restored values: such a
        program stays in graph mode. Not when the two are on exclusive branches of one
        ``if`` (``if ckpt: saver.restore(...) else: sess.run(init)``)."""
        restores = {id(call) for call, kind in plan.saves if kind == "restore"}
        inits = {id(call) for call in plan.removals  # initializer runs, not `sess.close()`
                 if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "close")}
        if not restores or not inits:
            return None
        seen: List[tuple] = []  # (restore's branches) in source order

        class Order(cst.CSTVisitor):
            def __init__(self) -> None:
                self.branches: List[tuple] = []  # (id(if), "body"/"orelse") enclosing
                self.undone = False

            def visit_If(self, node) -> bool:
                self.branches.append((id(node), "body"))
                walk(node.test, self)
                walk(node.body, self)
                self.branches[-1] = (id(node), "orelse")
                if node.orelse is not None:
                    walk(node.orelse, self)
                self.branches.pop()
                return False

            def visit_FunctionDef(self, node) -> bool:
                return False  # a function's calls run when it is called: not this order

            def visit_Call(self, node) -> None:
                here = dict(self.branches)
                if id(node) in restores:
                    seen.append(here)
                elif id(node) in inits and any(
                        not any(branch != here.get(if_id, branch) for if_id, branch in earlier.items())
                        for earlier in seen):
                    self.undone = True

        order = Order()
        for stmt in rest:
            walk(stmt, order)
        return "variables initialized after a Saver's restore, which TF1 undid that way" \
            if order.undone else None

    def _collection_reads(self, stmts, session_at, plan: Plan) -> List[cst.Call]:
        """``tf.trainable_variables()`` past the graph (parameters counted, names printed
        after training): eager TF2 keeps no collections (an empty list), the program does."""
        if plan.self_name:
            return []
        inside: Set[int] = set()
        for node in [*plan.hoisted, *plan.runs]:  # moved into the build, or a fetch
            inside |= _ids(node)
        return [c for c in _collect(*stmts[session_at:]).calls
                if self._call_name(c) in COLLECTION_READS and not c.args and id(c) not in inside]

    def _inline_scaffold(self, anchor, blockers: List[str]) -> Optional[cst.Call]:
        """``MonitoredTrainingSession(..., scaffold=tf.train.Scaffold(...))``: the scaffold
        (its Saver needs the graph's variables) is made in the build function instead."""
        call = anchor.items[0].item if isinstance(anchor, cst.With) else _value(anchor)
        for arg in call.args if isinstance(call, cst.Call) else ():
            if arg.keyword is not None and arg.keyword.value == "scaffold" \
                    and isinstance(arg.value, cst.Call) and self._call_name(arg.value) == "tf.train.Scaffold":
                try:
                    _scaffold_fields(arg.value)
                except _Blocked as why:
                    blockers.append(str(why))
                return arg.value
        return None

    def _supervisor_args(self, plan: Plan) -> List[str]:
        """``tf.train.Supervisor(init_op=init, saver=saver, global_step=step, summary_op=...)``:
        the initializer goes (the program's variables start from their initializers, which
        is what TF1 ran), the Saver gives its ``max_to_keep``, the step and the summary op
        are given by graph name; what else reads the graph is a blocker."""
        blockers = []
        for arg in _value(plan.supervisor).args:
            keyword, key = arg.keyword.value if arg.keyword else None, _key(arg.value, None)
            none = isinstance(arg.value, cst.Name) and arg.value.value == "None"
            if keyword in SUPERVISOR_REFUSED and not none or keyword == "is_chief" and \
                    not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
                blockers.append(f"a tf.train.Supervisor given {keyword}= (the eager supervisor is "
                                "the chief, and makes no session to prepare)")
                continue
            found = {k for _, k in _collect(arg.value).reads} & (plan.graph_keys | plan.inits | plan.savers)
            if keyword == "init_op" and isinstance(arg.value, cst.Call) \
                    and self._call_name(arg.value) in INITIALIZERS:
                plan.supervisor_edits[keyword] = None  # `init_op=tf.global_variables_initializer()`
                continue
            if not found:
                continue
            if keyword == "init_op" and key in plan.inits:
                plan.supervisor_edits[keyword] = None
            elif keyword == "saver" and key in plan.savers:
                options = [o for o in plan.saver_options[key] if o.startswith("max_to_keep")]
                plan.supervisor_edits[keyword] = options[0] if options else None
            elif keyword in ("global_step", "summary_op") and key in plan.graph_keys \
                    and isinstance(arg.value, cst.Name):
                plan.supervisor_reads.append((arg.value, key))
                continue
            else:
                blockers.append(f"a tf.train.Supervisor given graph values ({keyword or 'graph'}="
                                f"{code(arg.value)})")
                continue
            plan.supervisor_handled |= _ids(arg.value)
        return blockers

    def _makes_hooks(self, found) -> bool:
        """Does the statement make TF1 session hooks (``tf.train.StopAtStepHook(...)``)?"""
        names = (self._call_name(c) or "" for c in found.calls)
        return any(n.startswith(("tf.train.", "tf.estimator.")) and n.endswith("Hook") for n in names) \
            or any(k in self._sync_hooks and k not in found.binds for _, k in found.reads)  # [sync_hook, ...]

    def _hook_reads(self, anchor, rest, plan: Plan) -> List[Tuple[cst.Name, str]]:
        """Graph names a monitored session's hooks are given: in the session call's
        arguments (``hooks=[tf.train.NanTensorHook(loss)]``) and in ``SessionRunArgs(...)``
        anywhere (a hook class's ``before_run``). Hooks fetch by name in the eager program."""
        places = [item.item for item in anchor.items] if isinstance(anchor, cst.With) else [_value(anchor)]
        for stmt in rest:
            found = _collect(stmt, self_name=plan.self_name)
            if isinstance(stmt, cst.SimpleStatementLine) and self._makes_hooks(found):
                places.append(stmt)  # `hooks = [tf.train.NanTensorHook(loss)]`
                continue
            places += [c for c in found.calls if self._call_name(c) in SESSION_RUN_ARGS]
        found = []
        made_here = _ids(plan.scaffold) if plan.scaffold is not None else set()  # moves whole
        for place in places:
            for node, key in _collect(place, self_name=plan.self_name).reads:
                if key in plan.graph_keys and isinstance(node, cst.Name) and id(node) not in made_here:
                    found.append((node, key))
        return found

    def _read_calls(self, calls, session, in_helper, plan: Plan, blockers: List[str],
                    kept: Set[str] = frozenset()) -> Set[int]:
        """The session's runs, initializer runs, closes and Saver calls among ``calls``,
        recorded in the plan; returns the ids of the name reads they account for.
        ``kept``: a function's parameters handed graph names (fetched and fed as they are)."""
        self_name = plan.self_name
        handled: Set[int] = set()
        for call in calls:
            try:
                kind = self._session_call(call, session, plan.graph_keys | kept, plan.inits,
                                          plan.savers | plan.graph_savers, set(plan.placeholders) | kept,
                                          self_name)
            except _Blocked as why:
                blockers.append(str(why))
                handled |= {id(n) for n, _ in _collect(call, self_name=self_name).reads}
                continue
            if kind is None:
                continue
            handled |= {id(n) for n, _ in _collect(call.func.value, self_name=self_name).reads}
            if kind == "should_stop":
                continue
            if kind in ("supervisor_saver", "queue_runners"):  # the session given to them is handled
                handled |= {id(n) for n, _ in _collect(*call.args, self_name=self_name).reads}
                if kind == "queue_runners":
                    plan.queue_runners.append(call)
                continue
            if kind in ("run", "init", "run_method", "eager"):
                handled |= {id(n) for n, _ in _collect(*call.args, self_name=self_name).reads}
            if kind == "assign":  # a variable given a Python value: the program's variable takes it
                handled |= {id(n) for n, _ in _collect(call, self_name=self_name).reads}
                plan.assigns.append((call, *self._assign))
                if in_helper:
                    plan.program_of[id(call)] = session
                continue
            if kind == "eager":  # TensorFlow on Python values: computed eagerly where it is
                plan.eager_runs.append(call)
                continue
            if in_helper:  # a function the session is passed to: its parameter holds the program
                plan.program_of[id(call)] = session
            if kind in ("run", "run_method"):
                plan.runs.append(call)
                if kept:
                    plan.kept[id(call)] = kept
                if self._exprs:
                    plan.fetch_exprs[id(call)] = self._exprs
            elif kind == "close" and plan.monitored:
                continue  # a monitored session's close() stays: it saves and ends the hooks
            elif kind in ("init", "close"):
                plan.removals.append(call)
            else:
                handled |= {id(n) for n, _ in _collect(call.args[0].value, self_name=self_name).reads}
                step = next((a.value for a in call.args[1:] if kind == "save" and a.keyword
                             is not None and a.keyword.value == "global_step"), None)
                if _key(step, self_name) in plan.graph_keys:  # TF1 read its value: the program does
                    plan.save_steps[id(call)] = _key(step, self_name)
                    handled.add(id(step))
                plan.saves.append((call, kind))
        return handled

    def _session_helpers(self, rest, plan: Plan, graph_names):
        """Functions the session is passed to (``def train(sess, steps): ... sess.run(...)
        ... saver.save(sess, path)`` called as ``train(sess, 20)``): their parameter gets
        the program instead, and their runs and saves are converted with it. Functions of
        the program's block, and (for a program in a function) of the module. Every call
        of the function in the module must pass the session there, from the program; the
        function binds no graph name of its own, but for parameters it is handed graph
        values to by name (``names``), and a module function reads none of the block's.
        Returns ``{id(function): (function, parameter, [the session arguments at the
        calls])}`` and the graph values handed by name."""
        session = plan.session
        own = {stmt.name.value: stmt for stmt in rest if isinstance(stmt, cst.FunctionDef)}
        functions = {**{k: v for k, v in self._module_functions().items() if k not in own}, **own}
        functions = {k: v for k, v in functions.items() if isinstance(v.body, cst.IndentedBlock)}
        block = [s for s in rest if not isinstance(s, cst.FunctionDef)]
        if not functions:
            return {}, self._handed_names(plan, block, {})
        calls = [c for c in _collect(self.ctx.module).calls
                 if isinstance(c.func, cst.Name) and c.func.value in functions]
        chosen_of: Dict[str, tuple] = {}
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
            if len(chosen) == 1 and None not in chosen and nodes and next(iter(chosen)) in names:
                chosen_of[name] = (function, chosen.pop(), nodes)
        sessions = {k: v[1] for k, v in chosen_of.items()}
        for name, function in own.items():  # functions of the block that run its session itself
            if name not in sessions and session in {k for _, k in _collect(function).reads}:
                sessions[name] = session
        handed = self._handed_names(plan, block, sessions)
        inside: Set[int] = set()
        for stmt in block:
            inside |= _ids(stmt)
        found: Dict[int, tuple] = {}
        for name, (function, parameter, nodes) in chosen_of.items():
            by_name = set(handed.functions[name].roles) if name in handed.functions else set()
            local = {p.name.value for p in function.params.params} | _collect(function.body).binds
            if (local & graph_names) - by_name:
                continue
            if name not in own:  # a module function: called from the program, reading none of its names
                free = {k for _, k in _collect(function.body).reads} - local
                if free & graph_names or not all(id(n) in inside for n in nodes):
                    continue
            found[id(function)] = (function, parameter, nodes)
        return found, handed

    def _reopened(self, stmt, session, savers, inits) -> bool:
        """``with tf.Session() as sess: saver.restore(sess, path) ...`` after the program: a
        new session on the same graph whose first act restores every variable (a Saver with
        no var_list), so the program's own variables, restored, are what it runs on."""
        if not isinstance(stmt, cst.With) or self._session_stmt(stmt) != session \
                or not isinstance(stmt.body, cst.IndentedBlock):
            return False
        body = list(stmt.body.body)
        while body and self._runs_initializer(body[0], session, inits):  # `sess.run(init)`, then restored
            body.pop(0)
        first = _value(body[0]) if body else None
        return (isinstance(first, cst.Call) and isinstance(first.func, cst.Attribute)
                and first.func.attr.value == "restore" and _key(first.func.value, None) in savers
                and bool(first.args) and _key(first.args[0].value, None) == session)

    def _runs_initializer(self, stmt, session, inits) -> bool:
        """``sess.run(init)`` as a statement of its own (``init`` an initializer or a name
        bound to one)."""
        call = _value(stmt)
        return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) \
            and isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) \
            and call.func.attr.value == "run" and _key(call.func.value, None) == session \
            and len(call.args) == 1 and self._initializer_run(call.args[0].value, inits, None)

    def _initializer_run(self, fetch, inits, self_name) -> bool:
        """An initializer, a name bound to one, a `tf.group` of them (`sess.run(tf.group(init,
        local_init))`) or a list of them (`sess.run([init, local_init])`)."""
        if isinstance(fetch, (cst.List, cst.Tuple)) and fetch.elements:
            return all(isinstance(e, cst.Element) and self._initializer_run(e.value, inits, self_name)
                       for e in fetch.elements)
        return self._call_name(fetch) in INITIALIZERS or _key(fetch, self_name) in inits \
            or self._initializer_group(fetch, inits)

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

    def _derived_graph(self, stmts, region, session_at, plan: Plan) -> None:
        """Assignments before the session computing from graph values through the program's
        own helpers (``tower_grads = average_gradients(tower_grads)``, a multi-tower
        program's averaged gradients: no TensorFlow call of its own in the statement) are
        graph code too, and so is what reads what they bind. Statements are taken only as
        whole assignments (a print of a tensor is not graph code)."""
        added = True
        while added:
            added = False
            for i in region:
                stmt = stmts[i]
                if i in plan.graph or i in plan.switches or i == session_at or stmt is plan.supervisor \
                        or not isinstance(stmt, cst.SimpleStatementLine) \
                        or not all(isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign))
                                   for s in stmt.body):
                    continue
                found = _collect(stmt, self_name=plan.self_name)
                if plan.monitored and self._makes_hooks(found):
                    continue  # the monitored session's hooks (_read_graph)
                if any(k in plan.graph_keys for _, k in found.reads):
                    plan.graph.append(i)
                    plan.graph_keys |= found.binds
                    added = True
        plan.graph.sort()

    def _containers_of_graph(self, stmts, region, graph, switches, session_at, self_name) -> Set[str]:
        """``pooled = []`` before graph code that fills it (``pooled.append(conv)``): the
        container holds tensors of one trace, so it is made in the graph function, afresh
        each time the function is traced (a module-level list would hand the second trace
        the first one's tensors). Adds those statements to ``graph``; returns their names."""
        reads: Set[str] = set()
        for i in graph:
            reads |= {k for _, k in _collect(stmts[i], self_name=self_name).reads}
        moved: Set[str] = set()
        python = [i for i in region if i not in graph and i not in switches and i != session_at]
        for i in python:
            stmt = stmts[i]
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            key = _assigned_key(stmt, self_name)
            if not key or key not in reads or not _fresh_container(_value(stmt)):
                continue
            # filled by Python code before the graph reads it (`filenames.append(path)` in a
            # loop): a Python value the graph is given, not a container of the graph's
            first = min((j for j in graph if j > i and any(
                k == key for _, k in _collect(stmts[j], self_name=self_name).reads)), default=i)
            filled = any(k == key for j in python if i < j < first
                         for _, k in _collect(stmts[j], self_name=self_name).reads)
            if not filled:
                graph.append(i)
                moved.add(key)
        graph.sort()
        return moved

    def _session_call(self, call, session, graph_keys, inits, savers, placeholders, self_name):
        self._exprs = []  # the graph expressions this run fetches (_fetch_keys)
        if self._call_name(call) == START:
            return self._queue_runners()
        func = call.func
        if self._supervisor and isinstance(func, cst.Attribute) and func.attr.value in ("save", "restore") \
                and isinstance(func.value, cst.Attribute) and func.value.attr.value == "saver" \
                and _key(func.value.value, None) == self._supervisor:
            return "supervisor_saver"  # `sv.saver.save(sess, path)`: shims.Supervisor's saver takes it
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
                                  self_name, graph_keys)
                return "run_method"
            if method == "eval" and not call.args:  # `last_epoch.assign(epoch + 1).eval()`
                self._assign = self._python_assign(func.value, graph_keys, placeholders, session, self_name)
                return "assign" if self._assign else None
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
        if method == "should_stop" and not call.args and self._monitoring:
            return "should_stop"  # the monitored session stays: so does asking it
        if method != "run":
            raise _Blocked(f"{session}.{method}() has no eager equivalent here")
        if not call.args:
            raise _Blocked("sess.run() without fetches")
        fetch = call.args[0].value
        if self._initializer_run(fetch, inits, self_name):
            return "init"
        if len(call.args) == 1 and call.args[0].keyword is None:
            self._assign = self._python_assign(fetch, graph_keys, placeholders, session, self_name)
            if self._assign:
                return "assign"
        if len(call.args) == 1 and not self._graph_expression(fetch, graph_keys, self_name) \
                and self._eager_expression(fetch, graph_keys | set(placeholders) | {session}, self_name):
            return "eager"
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
                self._check_feeds(feeds, placeholders, self_name, graph_keys)
            except _Blocked as why:
                problems.append(str(why))
        if problems:
            raise _Blocked("; ".join(problems))
        return "run"

    def _queue_runners(self) -> str:
        """``tf.train.start_queue_runners(sess, coord)``: nothing to start once every queue
        of the file is a tf.data pipeline (TFM118); else the program keeps its queues."""
        found = queue_input(self.ctx)
        if found.unconverted:
            raise _Blocked(f"queue-runner input with no tf.data form: {found.unconverted[0].why}")
        if not found.pipelines and not found.dequeues:
            raise _Blocked("queue runners started for input built outside this file")
        return "queue_runners"

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

    def _check_feeds(self, feeds, placeholders, self_name, graph_keys=frozenset()) -> None:
        """Each feed a dict literal of placeholders, or of graph values a run feeds in place of
        what they compute (recorded in ``_overrides``: only native steps take those)."""
        if feeds:
            feed = feeds[0].value
            if id(feed) in self._proved_feeds \
                    or id(feed) in self._made_feed_ids:  # `feed_dict = fill_feed_dict(...)`
                return "run"
            if not isinstance(feed, cst.Dict):
                raise _Blocked("a feed_dict that is neither a dict literal nor a name bound once "
                               "to one")
            for element in feed.elements:
                if not isinstance(element, cst.DictElement):
                    raise _Blocked("a feed dict unpacking another (**)")
                key = _key(element.key, self_name)
                if key in placeholders:
                    continue
                if key in graph_keys and key not in self._overrides:  # the native steps may take it (native.read)
                    self._overrides.append(key)
                elif key not in graph_keys:
                    raise _Blocked(f"a feed of {code(element.key)[:40]}, which is not a placeholder (TF1 let a "
                                   "fed value replace what a tensor computes; no converted form does yet: feed "
                                   "a placeholder the graph reads instead)")

    def _named_feeds(self, scopes, session, placeholders, self_name):
        """``feed = {x: a, y: b}`` then ``sess.run(..., feed_dict=feed)``: proved when the
        name is bound exactly once in the block with its functions, or in one function's
        body, to a dict literal of placeholders, and is used there only as the feed of
        this session's runs. Returns ``{id(dict node): dict node}`` and
        the ids of the placeholder reads in those dicts (they become parameter names); the
        names so fed are recorded (``_proved_feeds``: the ids of those feed arguments)."""
        self._proved_feeds = set()
        found, reads = {}, set()
        # the block and its functions as one (a module's `feed_dict_test = {...}` its functions
        # feed), then each function alone (`feed_dict = {...}` bound in several of them)
        functions = [s for s in scopes if isinstance(s, cst.FunctionDef)]
        for group in [scopes, *([f] for f in functions)]:
            more, more_reads = self._named_feeds_in(group, session, placeholders, self_name)
            found.update(more)
            reads |= more_reads
        return found, reads

    def _named_feeds_in(self, scopes, session, placeholders, self_name):
        """``_named_feeds`` in one scope."""
        uses: Dict[str, list] = {}
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
                    uses.setdefault(a.value.value, []).append(a.value)
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
                walk(node.value, self)
                return False

            def visit_Name(self, node):
                if node.value in seen:
                    seen[node.value] += 1

        for scope in scopes:
            walk(scope, Scan())
        found, reads = {}, set()
        for name, fed in uses.items():
            if all(id(n) in self._proved_feeds for n in fed):
                continue  # proved with the block
            values = assigns[name]
            # every appearance of the name: its one binding and its uses as a feed, nothing else
            if len(values) != 1 or seen[name] != len(fed) + 1 or not isinstance(values[0], cst.Dict):
                continue
            literal = values[0]
            if not all(isinstance(e, cst.DictElement) and _key(e.key, self_name) in placeholders
                       for e in literal.elements):
                continue
            found[id(literal)] = literal
            self._proved_feeds |= {id(n) for n in fed}
            for element in literal.elements:
                reads |= {id(n) for n, _ in _collect(element.key, self_name=self_name).reads}
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
        if self._graph_expression(fetch, graph_keys, self_name):
            self._exprs.append(fetch)
            return
        python = sorted({key for _, key in _collect(fetch, self_name=self_name).reads} - graph_keys
                        - {n for n, q in self.ctx.resolver.aliases.items() if q.startswith("tensorflow")})
        if python and self._graph_expression(fetch, graph_keys, self_name, python=frozenset(python)):
            self._exprs.append(fetch)  # only native steps take it (native.read)
            self._python_fetches.append((fetch, tuple(python)))
            return
        why = f" (it reads the Python value{'s' if len(python) > 1 else ''} {', '.join(python)})" \
            if python and self_name is None else ""
        raise _Blocked(f"a fetch that is not a graph name: {code(fetch)}{why}")

    def _python_assign(self, expr, graph_keys, placeholders, session, self_name) -> Optional[tuple]:
        """``tf.assign(lr, 0.01 * decay ** e)`` (``tf.assign_add``, ``tf.assign_sub``) or
        ``last_epoch.assign(epoch + 1)``: a graph variable given a value of Python's alone
        (no graph value, no feed). TF1 built the op from that value and ran it; the program's
        variable takes it eagerly. (the variable's key, how), else None."""
        if not isinstance(expr, cst.Call) or any(a.star for a in expr.args):
            return None
        name = self._call_name(expr)
        if name in ("tf.assign", "tf.assign_add", "tf.assign_sub"):
            how, slots = name[3:], ("ref", "value")
        elif isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ASSIGNS and not name:
            how, slots = expr.func.attr.value, ("value",)
        else:
            return None
        given = {}
        for i, arg in enumerate(expr.args):
            slot = arg.keyword.value if arg.keyword else (slots[i] if i < len(slots) else None)
            if slot not in slots or slot in given:
                return None  # use_locking=, name=, read_value=: not this simple form
            given[slot] = arg.value
        target = given.get("ref", expr.func.value if len(slots) == 1 else None)
        key = _key(target, self_name)
        if key not in graph_keys or "value" not in given:
            return None
        reads = {k for _, k in _collect(given["value"], self_name=self_name).reads}
        if reads & (graph_keys | set(placeholders) | {session}):
            return None
        return key, how

    def _eager_expression(self, fetch, graph_names, self_name) -> bool:
        """``sess.run(tf.argmax(mnist.test.labels[r:r + 1], 1))``: TensorFlow calls on Python
        values alone (no graph value, no feed). TF1 built the ops with those values as
        constants and ran them at once; eager TF2 computes them where they stand
        (``shims.evaluated`` gives numpy, as the run did)."""
        if self_name is not None or not isinstance(fetch, cst.Call):
            return False
        found = _collect(fetch, self_name=self_name)
        reads = {key for _, key in found.reads}
        if found.binds or reads & graph_names:
            return False
        names = [self._call_name(c) for c in found.calls]
        return bool(self._call_name(fetch)) and all(n not in INITIALIZERS for n in names if n)

    def _graph_expression(self, fetch, graph_keys, self_name, python=frozenset()) -> bool:
        """An expression of graph values and TensorFlow calls only (``a + b``,
        ``tf.argmax(pred, 1)``, ``tf.trainable_variables()``): TF1 built it into the graph
        when the run ran, the conversion builds it with the rest. Not in a class (its build runs elsewhere), and
        no lambda, comprehension or Python value, which could change between runs (``python``:
        the Python names it may read besides, with one graph value at least)."""
        if self_name is not None or isinstance(fetch, (cst.Lambda, cst.ListComp, cst.SetComp,
                                                       cst.DictComp, cst.GeneratorExp)):
            return False
        found = _collect(fetch, self_name=self_name)
        reads = {key for _, key in found.reads}
        tf_names = {name for name in reads
                    if (self.ctx.resolver.aliases.get(name) or "").split(".")[0] == "tensorflow"}
        for attribute in nodes_of(fetch, cst.Attribute):  # y.name, y.shape[0]: Python values
            root = attribute
            while isinstance(root, cst.Attribute):
                root = root.value
            if isinstance(root, cst.Name) and root.value in graph_keys and not (
                    attribute.value is root and attribute.attr.value in GRAPH_ATTRIBUTES):
                return False
        # graph values, or TensorFlow alone (`tf.trainable_variables()`: the graph's variables),
        # through the graph's own functions (`G(z)`)
        tf_names |= self._graph_functions
        if python and not reads & graph_keys:
            return False
        return bool(reads) and reads <= graph_keys | tf_names | python and not found.binds \
            and next(nodes_of(fetch, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
                                      cst.GeneratorExp, cst.NamedExpr)), None) is None


def _session_block(stmts, session_at) -> Optional[list]:
    """The statements run with the session: its ``with`` block, or those after ``sess =
    tf.Session()`` in the same block; None for another form."""
    anchor = stmts[session_at]
    if isinstance(anchor, cst.With):
        return list(anchor.body.body) if isinstance(anchor.body, cst.IndentedBlock) else None
    return list(stmts[session_at + 1:]) if isinstance(anchor, cst.SimpleStatementLine) else None


def _scaffold_fields(call: cst.Call) -> None:
    """What a Scaffold may carry into the eager monitored sessions, else why not."""
    extra = [code(a.keyword) if a.keyword else "a positional argument"
             for a in call.args if a.keyword is None or a.keyword.value not in SCAFFOLD_FIELDS]
    if extra:
        raise _Blocked(f"a tf.train.Scaffold given {', '.join(extra)} (the eager monitored "
                       "session honours init_fn and saver)")


def _local_setter(name: str, call: cst.Call) -> bool:
    """``replica_device_setter(ps_device='/cpu:0', worker_device='/gpu:%d' % i, ps_tasks=1)``,
    as multi-GPU trainers pin a tower's variables to this machine's CPU: no cluster (no
    ``cluster`` argument, a parameter device without a ``/job:``)."""
    if name != "tf.train.replica_device_setter":
        return False
    positional = ("ps_tasks", "ps_device", "worker_device", "merge_devices", "cluster", "ps_ops",
                  "ps_strategy")  # TF 1.15's signature
    args = {a.keyword.value if a.keyword else positional[min(i, len(positional) - 1)]: a.value
            for i, a in enumerate(call.args)}
    ps_device = string_value(args.get("ps_device"))
    return "cluster" not in args and ps_device is not None and "/job:" not in ps_device


def _saver(plan: Plan, key: str, call: cst.Call, name_of) -> None:
    """``saver = tf.train.Saver(...)``: the program's own saves and restores take
    ``max_to_keep`` only; a Saver over some variables (a scaffold's ``init_fn`` restoring a
    backbone, a ``restore_saver`` taking layers from another model) is graph code, whose
    ``restore`` and ``save`` run eagerly on the program's variables: returned by the build,
    ``program.restore(path, saver="restore_saver")`` at the program level."""
    if not _program_saver(call, name_of):
        plan.graph_keys.add(key)
        plan.graph_savers.add(key)
        return
    plan.savers.add(key)
    plan.saver_options[key] = _saver_options(call)


def _default_graph_writer(key, value, called, name_of) -> Optional[Tuple[str, cst.Call, int]]:
    """``writer = tf.summary.FileWriter(logdir)`` or ``(logdir, tf.get_default_graph())``
    (TensorBoard's tutorials): (its name, the call, the index of its graph argument or -1),
    else None. Any other argument reading the graph keeps it graph code."""
    if not key or called != "tf.summary.FileWriter" or not isinstance(value, cst.Call):
        return None
    graph, positional = -1, ("logdir", "graph")  # (FileWriter's first parameters)
    for i, arg in enumerate(value.args):
        keyword = arg.keyword.value if arg.keyword else positional[i] if i < len(positional) else None
        if keyword == "graph":
            if not (isinstance(arg.value, cst.Call) and not arg.value.args
                    and name_of(arg.value) == "tf.get_default_graph"):
                return None
            graph = i
        elif keyword != "logdir" or any(name_of(c) for c in nodes_of(arg.value, cst.Call)):
            return None  # other options, or a log directory computed by TensorFlow
    return key, value, graph


def _bare_code(stmt) -> str:
    """A statement's code without the comments and blank lines above it."""
    return code(stmt.with_changes(leading_lines=())) if isinstance(stmt, cst.SimpleStatementLine) else ""


# calls given a session that do not run it: Keras' session for its own graph-mode work (TF2's
# Keras runs eagerly without it: `K.set_session(sess)` only set GPU options), Python's own
NOT_RUN_BY = frozenset({"set_session", "print", "repr", "str", "id", "type", "isinstance", "hasattr",
                        "getattr", "setattr", "len", "format"})


def _runs_it_there(call: cst.Call) -> bool:
    """Might ``call`` run the session it is given (see NOT_RUN_BY)?"""
    func = call.func
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    return name not in NOT_RUN_BY


def _callee(call: cst.Call) -> str:
    """How a finding names what a call calls: ``GAN``, ``model.train``, else ``a call``."""
    return code(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else "a call"
