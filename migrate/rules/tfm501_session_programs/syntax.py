"""TFM501's vocabulary: the TF1 names it looks for, the keys it gives graph values
(``x``, ``self.x``), and the small readers of libcst statements every stage uses."""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Union

import libcst as cst

from migrate.codemod.cstutil import NameReads, code, nodes_of, walk

SESSIONS = {"tf.Session", "tf.InteractiveSession"}
# why a session with no graph before it is not a program here (detect names the code it is
# handed to where another module builds the graph)
NO_GRAPH = "no graph-building code found before the Session"
# graph code that reads the graph as a whole (its summaries) rather than named values: written
# inside the session's block (`merged = tf.summary.merge_all()` beside the FileWriter), it is
# graph code all the same
GRAPH_READERS = {"tf.summary.merge_all", "tf.merge_all_summaries"}
PLACEHOLDERS = {"tf.placeholder", "tf.placeholder_with_default"}
INITIALIZERS = {"tf.global_variables_initializer", "tf.initialize_all_variables",
                "tf.local_variables_initializer", "tf.initialize_local_variables",
                "tf.tables_initializer", "tf.variables_initializer"}
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
ASSIGNS = ("assign", "assign_add", "assign_sub")  # a variable's own assignments (GraphProgram's too)
GRAPH_SEEDS = {"tf.set_random_seed", "tf.random.set_random_seed", "tf.random.set_seed"}
# a tf.train.Supervisor's ways to a session (graph mode too, like the monitored sessions)
SUPERVISED = {"managed_session", "prepare_or_wait_for_session"}
# the monitored session converted to shims.MonitoredTrainingSession (the others stay blocked)
# a program on a TF1 cluster (between-graph replication): its graph is placed on parameter
# servers and its session talks to a server, so an eager single-process conversion would
# train a private copy on each worker; it stays in graph mode, where TF 2's compat.v1 runs it
# on the cluster as TF1 did, with a finding naming tf.distribute
CLUSTER = {"tf.train.Server", "tf.train.ClusterSpec", "tf.train.replica_device_setter",
           "tf.train.SyncReplicasOptimizer", "tf.train.WorkerSessionCreator"}
CONVERTED_MONITORED = {"tf.train.MonitoredTrainingSession": "shims.MonitoredTrainingSession",
                       "tf.train.SingularMonitoredSession": "shims.SingularMonitoredSession",
                       "tf.train.MonitoredSession": "shims.MonitoredSession"}
# what a tf.train.Scaffold may carry into the eager monitored sessions (shims.estimator's
# check_scaffold): init_fn, run when nothing was restored, and a saver's max_to_keep
SCAFFOLD_FIELDS = ("init_fn", "saver")
SUPERVISOR = "tf.train.Supervisor"  # `with sv.managed_session() as s:`: shims.Supervisor
# what shims.Supervisor cannot honour (it has no session to prepare or wait for): such a
# supervisor keeps its program in graph mode
SUPERVISOR_REFUSED = {"init_fn", "ready_op", "ready_for_local_init_op", "local_init_op",
                      "init_feed_dict", "session_manager"}
# attributes of a graph value that are graph values too (an iterator's or a variable's
# initializer, a tensor's op); others (``.name``, ``.shape``) are Python values
GRAPH_ATTRIBUTES = {"initializer", "op"}
# TensorFlow that runs on the Python side of a program and builds no graph (threads, protocol
# buffers, files, logs): code calling only these stays where it is when the graph moves into
# the build function (a loop writing TFRecords must run once, not once per trace)
PYTHON_SIDE = {"tf.train.Coordinator", "tf.train.Example", "tf.train.SequenceExample",
               "tf.train.Features", "tf.train.Feature", "tf.train.FeatureList",
               "tf.train.FeatureLists", "tf.train.BytesList", "tf.train.FloatList",
               "tf.train.Int64List", "tf.io.TFRecordWriter", "tf.io.TFRecordOptions",
               "tf.ConfigProto", "tf.GPUOptions", "tf.RunOptions", "tf.RunMetadata",
               "tf.train.latest_checkpoint", "tf.train.get_checkpoint_state",
               "tf.train.ChiefSessionCreator",
               # a new default graph: no graph code (what follows it is, see sections._sections)
               "tf.reset_default_graph",
               # a cluster's description and its task's server: the process's, not the graph's
               "tf.train.ClusterSpec", "tf.train.Server"}
PYTHON_SIDE_MODULES = ("tf.python_io.", "tf.gfile.", "tf.io.gfile.", "tf.logging.", "tf.compat.as_",
                       "tf.config.")  # tf.config: the process's devices and threads, set before any graph
# TF1's variable collections read past the graph -> the program's own lists (eager TF2 has
# no collections: tf.compat.v1.trainable_variables() there is an empty list)
COLLECTION_READS = {"tf.trainable_variables": "list({program}.trainable_variables)",
                    "tf.global_variables": "{program}.global_variables()",
                    "tf.all_variables": "{program}.global_variables()"}
SESSION_RUN_ARGS = {"tf.train.SessionRunArgs", "tf.estimator.SessionRunArgs"}
MONITORED = {"tf.train.MonitoredTrainingSession", "tf.train.MonitoredSession",
             "tf.train.SingularMonitoredSession"}


class _NotAProgram(Exception):
    """A Session that never runs anything: nothing to convert, nothing to report."""


class _Blocked(Exception):
    """Why a block cannot be converted with proof (the finding's message)."""


class ObjectKeys(str):
    """A class program's ``self`` name, also keying the build methods' variables it keeps on
    the object: each Name node (by id) binding or reading such a local -> its attribute's key
    (``w1`` -> ``self.eval_net_l1_w1``; a local bound again in another scope is another
    variable, so keyed by its node, not its text)."""
    promoted: Dict[int, str]
    nodes: tuple  # the Name nodes keyed

    def __new__(cls, name: str, nodes) -> "ObjectKeys":
        """``nodes``: (a Name node, its attribute's key) pairs."""
        made = super().__new__(cls, name)
        made.nodes = tuple(nodes)
        made.promoted = {id(node): key for node, key in made.nodes}
        return made


def _promoted(self_name: Optional[str]) -> Dict[int, str]:
    return getattr(self_name, "promoted", None) or {}


def _key(expr, self_name: Optional[str]) -> Optional[str]:
    """A graph name: ``x`` for a name, ``self.x`` for an attribute of the owning object (or a
    local the object keeps, ``ObjectKeys``)."""
    if isinstance(expr, cst.Name):
        return _promoted(self_name).get(id(expr), expr.value)
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


COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class _Collect(NameReads):
    """Keys a subtree binds and reads (with their nodes), and the calls in it."""

    def __init__(self, self_name: Optional[str] = None) -> None:
        super().__init__()
        self.self_name = self_name
        self.reads: List[tuple] = []  # (node, key)
        self.binds: Set[str] = set()
        self.calls: List[cst.Call] = []
        self._local: List[Set[str]] = []  # the names enclosing comprehensions bind

    # a comprehension's variables are its own (`[sess.run(acc, {X: x[i:i + 8]}) for i in
    # range(...)]` reads no graph name `i`), and so are a function's parameters (a hook
    # class's `def __init__(self, loss)`) and the names its body assigns (a data helper's
    # `x, y = x[idx], y[idx]` beside placeholders `x`, `y`), unless declared global:
    # masked while its subtree is visited, reads and binds alike
    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, COMPREHENSIONS):
            names: Set[str] = set()
            part = node.for_in
            while part is not None:
                names |= {n.value for n in _target_names(part.target)}
                part = part.inner_for_in
            self._local.append(names)
        elif isinstance(node, (cst.FunctionDef, cst.Lambda)):
            names = _parameters(node)
            if isinstance(node, cst.FunctionDef):
                names |= _function_locals(node, self.self_name)
            self._local.append(names)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if isinstance(original_node, (*COMPREHENSIONS, cst.FunctionDef, cst.Lambda)):
            self._local.pop()

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
        if not any(node.value in names for names in self._local):
            self.reads.append((node, node.value))

    def _targets(self, target) -> None:
        key = _key(target, self.self_name)
        if key == "_":
            return  # the throwaway name (`outputs, _ = dynamic_rnn(...)`, `_, loss = sess.run(...)`)
        if key is not None:
            if not any(key in names for names in self._local):  # a function's own local
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


def _parameters(node: Union[cst.FunctionDef, cst.Lambda]) -> Set[str]:
    """The names of a function's parameters."""
    params = node.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params,
             *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param))]
    return {p.name.value for p in every}


def _function_locals(node: cst.FunctionDef, self_name: Optional[str]) -> Set[str]:
    """The plain names a function's body binds (its locals), less those it declares
    ``global`` or ``nonlocal``."""
    declared = {n.name.value for g in nodes_of(node.body, (cst.Global, cst.Nonlocal)) for n in g.names}
    bound = _collect_one(node.body, self_name).binds
    return {k for k in bound if "." not in k} - declared


def _ids(node) -> Set[int]:
    """The ids of a node and every expression and statement under it."""
    return {id(n) for n in nodes_of(node, cst.CSTNode)}


def _method_args(call: cst.Call):
    """(parameter, argument) of ``op.run(feed_dict=None, session=None)`` / ``t.eval(...)``."""
    for index, a in enumerate(call.args):
        yield (a.keyword.value if a.keyword is not None else ("feed_dict", "session")[min(index, 1)]), a


def _target_names(target) -> List[cst.Name]:
    """The names a for target binds (``i``, ``(a, b)``, ``[x, *rest]``)."""
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _target_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []


# what _collect found under one node, for the file being migrated (the stages ask about the
# same statements many times: 2 s of 6 on tensor2tensor's Session programs). Each entry
# holds its node, so the id cannot be reused while it is cached; cleared per file.
_FOUND: dict = {}


def reset_collect_cache() -> None:
    _FOUND.clear()


def _collect_one(node, self_name: Optional[str]) -> _Collect:
    hit = _FOUND.get((id(node), self_name))
    if hit is not None and hit[0] is node:
        return hit[1]
    visitor = _Collect(self_name)
    walk(node, visitor)
    _FOUND[(id(node), self_name)] = (node, visitor)
    return visitor


def _collect(*nodes, self_name: Optional[str] = None) -> _Collect:
    """What ``nodes`` read, bind and call (read-only: results are shared)."""
    if len(nodes) == 1:
        return _collect_one(nodes[0], self_name)
    merged = _Collect(self_name)
    for node in nodes:
        found = _collect_one(node, self_name)
        merged.reads += found.reads
        merged.binds |= found.binds
        merged.calls += found.calls
        merged.uses.update(found.uses)
    return merged


def assigned_values(nodes) -> Dict[str, list]:
    """name -> the values its one-target assignments in ``nodes`` give it (nested blocks
    too), in source order: what a read of the name may hold."""
    bound: Dict[str, list] = {}
    for stmt in [s for node in nodes for s in nodes_of(node, cst.SimpleStatementLine)]:
        key = _assigned_key(stmt)
        if key:
            bound.setdefault(key, []).append(_value(stmt))
    return bound


def _fresh_container(value) -> bool:
    """``[]``, ``{}``, ``set()``, ``list()``, ``dict()``, a comprehension: a new mutable
    container."""
    if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return True
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and \
        value.func.value in ("list", "dict", "set", "OrderedDict", "defaultdict")


def _last_bare(items: list) -> list:
    """Parameters or arguments with one taken out: the last without a comma of its own."""
    return [*items[:-1], items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)] if items else items


def _numpy(expr: cst.BaseExpression) -> cst.Call:
    """``expr.numpy()``, in parentheses where ``expr`` needs them."""
    if not isinstance(expr, (cst.Name, cst.Call, cst.Attribute, cst.Subscript)) and not expr.lpar:
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(cst.Attribute(expr, cst.Name("numpy")))


def _as_evaluated(updated: cst.Call) -> cst.Call:
    """``sess.run(tf.argmax(labels, 1))`` -> ``shims.evaluated(tf.argmax(labels, 1))``:
    TensorFlow on Python values, computed eagerly where it stands, as numpy."""
    return updated.with_changes(func=cst.parse_expression("shims.evaluated"),
                                args=[updated.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])


ALL_VARIABLES = ("tf.global_variables", "tf.all_variables")


def _program_saver(call: cst.Call, name_of) -> bool:
    """``tf.train.Saver()`` with ``max_to_keep=`` at most, or given every variable
    (``tf.train.Saver(tf.global_variables())``, the save/restore tutorials' form, which is
    the default's list; ``name_of`` names the calls): a Saver of every variable, whose
    saves and restores the program's own take (given its ``max_to_keep``)."""
    for index, a in enumerate(call.args):
        if a.keyword is not None and a.keyword.value == "max_to_keep":
            continue
        if (a.keyword is None and index == 0 or a.keyword is not None and a.keyword.value == "var_list") \
                and isinstance(a.value, cst.Call) and not a.value.args \
                and name_of(a.value) in ALL_VARIABLES:
            continue
        return False
    return True


def _saver_options(call: cst.Call) -> List[str]:
    """What of a program Saver's arguments its saves keep: ``max_to_keep=`` (its list of
    every variable is the program's own)."""
    return [code(a) for a in call.args if a.keyword is not None and a.keyword.value == "max_to_keep"]


def is_run(call: cst.Call, session: Optional[str] = None, self_name: Optional[str] = None) -> bool:
    """``<x>.run(fetches, ...)`` with its fetches given; with ``session``, run by that key."""
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "run" and bool(call.args) \
        and (session is None or _key(call.func.value, self_name) == session)


def fetched_elements(call: cst.Call) -> list:
    """What a run fetches at its top level: the fetch, or the elements of a fetched list or
    tuple (``sess.run([train_op, loss])``)."""
    fetch = call.args[0].value
    if isinstance(fetch, (cst.List, cst.Tuple)):
        return [e.value for e in fetch.elements]
    return [fetch]


def feed_dict_of(call: cst.Call) -> Optional[cst.BaseExpression]:
    """A run's ``feed_dict`` (by keyword, or its second positional argument), else None."""
    for i, a in enumerate(call.args[1:], 1):
        if (a.keyword.value if a.keyword else ("feed_dict" if i == 1 else None)) == "feed_dict":
            return a.value
    return None


def innermost_function(module: cst.Module, node) -> Optional[cst.FunctionDef]:
    """The innermost function of ``module`` holding ``node``, else None (the module's)."""
    found = [f for f in nodes_of(module, cst.FunctionDef) if id(node) in _ids(f)]
    return min(found, key=lambda f: len(_ids(f)), default=None)


# a graph reading its own input (an iterator's, a queue's): what each tower of one graph, or
# each worker of a TF1 cluster, read for itself
GRAPH_INPUT_READS = ("get_next", "dequeue", "dequeue_many", "dequeue_up_to")


def input_reads(stmts, methods=GRAPH_INPUT_READS) -> List[str]:
    """The input-reading methods called in ``stmts`` (``iterator.get_next()``), sorted."""
    return sorted({c.func.attr.value for s in stmts for c in nodes_of(s, cst.Call)
                   if isinstance(c.func, cst.Attribute) and c.func.attr.value in methods})


def after_session(stmts, session_at: int) -> list:
    """The statements that run once the session is made: its ``with`` block's, then those
    after it."""
    anchor = stmts[session_at]
    return [*(anchor.body.body if isinstance(anchor, cst.With) else ()), *stmts[session_at + 1:]]
