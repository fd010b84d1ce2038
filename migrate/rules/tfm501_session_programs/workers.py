"""Stage 3c, workers: a synchronous TF1 cluster program (between-graph replication with
``tf.train.SyncReplicasOptimizer``) runs on ``tf.distribute.MultiWorkerMirroredStrategy``
(``shims.cluster.MultiWorker``, ``GraphProgram.on_workers``), an asynchronous one on
``tf.distribute.ParameterServerStrategy`` (``shims.cluster.ParameterServers``,
``GraphProgram.on_parameter_servers``).

``SyncReplicasOptimizer``'s documentation and TF 1.x's distributed guide wrote it so::

    cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
    server = tf.train.Server(cluster, job_name=FLAGS.job_name, task_index=FLAGS.task_index)
    if FLAGS.job_name == "ps":
        server.join()
    elif FLAGS.job_name == "worker":
        with tf.device(tf.train.replica_device_setter(worker_device=..., cluster=cluster)):
            ...
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=n, total_num_replicas=n)
            train_op = opt.minimize(loss, global_step=global_step)
        sync_hook = opt.make_session_run_hook(is_chief)
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
                                               hooks=[sync_hook, ...]) as sess:
            while not sess.should_stop():
                sess.run(train_op, feed_dict=...)

Each worker computed its gradients on its own batch; the chief's queue averaged one
gradient of every worker and applied them once per step. The converted program (the
monitored conversion of ``convert``) does that on the strategy: the server is made by
``shims.cluster.MultiWorker`` (the same arguments; the strategy starts the worker's server),
the program is ``.on_workers(server)``, the ``replica_device_setter`` scope goes (every
worker keeps mirrored variables), the optimizer is ``shims.cluster.SyncReplicasOptimizer``
(the wrapped optimizer, whose gradients the strategy averages across the workers every
step), and the session loses ``master=`` and the optimizer's hook, which started queues
that no longer exist. A parameter server's ``server.join()`` returns: it has nothing to hold.

Only that form is converted: one SyncReplicasOptimizer bound to a name and used for its
gradients (not TF1's queues and tokens: ``get_chief_queue_runner()``, ...), every replica
aggregated (no backup workers), a ``MonitoredTrainingSession`` on ``server.target`` of the
one ``tf.train.Server`` of its function, ``replica_device_setter`` only as a ``tf.device``
scope.

An asynchronous program (no SyncReplicasOptimizer: each worker applied its own gradients
to the variables on the parameter servers) in the same form runs on TF 2's
``ParameterServerStrategy``: its server is ``shims.cluster.ParameterServers``, the program
``.on_parameter_servers(server)``. The chief's loop schedules every step on a free worker
(the variables stay on the parameter servers); the other workers serve those steps, their
own loops never run. It needs ``replica_device_setter`` (parameter servers holding the
variables) and no graph code built by the chief alone (every step is the chief's build).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, List, Optional, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from .syntax import _collect, _ids, _value, innermost_function, input_reads

SYNC_OPTIMIZER = "tf.train.SyncReplicasOptimizer"
SETTER = "tf.train.replica_device_setter"
SERVER = "tf.train.Server"
SESSION = "tf.train.MonitoredTrainingSession"
HOOK = "make_session_run_hook"
# what a converted program may ask of its SyncReplicasOptimizer: its gradients and its hook
# (TF1's queues, tokens and init ops have no counterpart on the strategy)
_OPTIMIZER_USES = {"minimize", "compute_gradients", "apply_gradients", HOOK, "get_slot",
                   "get_slot_names", "variables"}


@dataclass(frozen=True)
class WorkerProgram:
    """A cluster program a strategy takes over (synchronous: MultiWorkerMirroredStrategy;
    asynchronous: ParameterServerStrategy)."""
    server: str                              # the name bound to the task's tf.train.Server
    server_call: cst.Call                    # its Server(...) call: shims.cluster.MultiWorker
    hook_names: FrozenSet[str]               # names bound to the optimizer's session hook
    hook_stmts: Tuple[cst.CSTNode, ...]      # `h = opt.make_session_run_hook(...)`: removed
    hook_lists: Tuple[Tuple[cst.List, Tuple[int, ...]], ...]  # hooks lists, the elements to drop
    asynchronous: bool = False               # no SyncReplicasOptimizer: ParameterServerStrategy

    @property
    def on_workers(self) -> str:
        """The call the program line ends with: ``.on_workers(server)``, or
        ``.on_parameter_servers(server)`` for an asynchronous program."""
        return f".on_parameter_servers({self.server})" if self.asynchronous else f".on_workers({self.server})"

    @property
    def task(self) -> str:
        """What the task's ``tf.train.Server`` becomes."""
        return "shims.cluster.ParameterServers" if self.asynchronous else "shims.cluster.MultiWorker"

    def dropped(self, node) -> bool:
        """Is ``node`` inside a hook element the conversion drops?"""
        return any(id(node) in _ids(lst.elements[i]) for lst, drop in self.hook_lists for i in drop)


def _graph_input(graph_stmts) -> Optional[str]:
    """Why an asynchronous program's graph input keeps it on its TF1 cluster (each TF1
    worker read its own, where ParameterServerStrategy's steps take per-worker datasets the
    coordinator makes), else None."""
    reads = input_reads(graph_stmts)
    if reads:
        return (f"its graph reads its own input ({reads[0]}()), which each TF1 worker read for "
                "itself; ParameterServerStrategy's steps take per-worker datasets")
    return None


def _is_hook(expr, hook_names) -> bool:
    """``sync_hook`` or ``opt.make_session_run_hook(...)`` (as written or as edited)."""
    if isinstance(expr, cst.Name):
        return expr.value in hook_names
    if isinstance(expr, cst.SimpleString):
        return expr.value.strip("\"'") in hook_names
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == HOOK


def _all(stmts, kind) -> list:
    return [node for stmt in stmts for node in nodes_of(stmt, kind)]


def _hook_statement(stmt, hook_names) -> bool:
    """``sync_hook = <optimizer>.make_session_run_hook(...)``, ``hooks.append(<it>)`` (as
    written or as edited)."""
    line = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    if isinstance(line, cst.Expr) and _appended_hook(line.value):
        return True
    return isinstance(line, cst.Assign) and len(line.targets) == 1 \
        and isinstance(line.targets[0].target, cst.Name) and line.targets[0].target.value in hook_names \
        and _is_hook(line.value, ())


class Workers:
    """Finds a cluster program a strategy takes over (see the module doc)."""

    def _sync_workers(self, stmts, session_at, plan) -> Union[WorkerProgram, str]:
        """The program's workers, or why they stay a TF1 cluster in graph mode."""
        calls = _collect(*stmts).calls
        sync = [c for c in calls if self._call_name(c) == SYNC_OPTIMIZER]
        if len(sync) > 1:
            return "several SyncReplicasOptimizers"
        anchor = stmts[session_at]
        session = anchor.items[0].item if isinstance(anchor, cst.With) else _value(anchor)
        if not plan.monitored or self._call_name(session) != SESSION:
            return "its session is not a MonitoredTrainingSession"
        others = sorted({n for c in calls if (n := self._call_name(c)) in
                         ("tf.train.WorkerSessionCreator", "tf.train.Supervisor")})
        if others:
            return f"{others[0]} (TF1's session on the cluster)"
        if not sync:  # asynchronous: the chief drives the workers (ParameterServerStrategy)
            why = self._setters_only_scopes(calls) or self._parameter_servers(calls) \
                or _graph_input(stmts[i] for i in plan.graph)
            if why:
                return why
            server = self._server(session, anchor)
            if isinstance(server, str):
                return server
            return self._chief_only_graph(stmts, plan, session) or WorkerProgram(
                server=server[0], server_call=server[1], hook_names=frozenset(), hook_stmts=(),
                hook_lists=(), asynchronous=True)
        why = self._sync_arguments(sync[0]) or self._setters_only_scopes(calls)
        if why:
            return why
        optimizer = self._bound_name(stmts, sync[0])
        if optimizer is None:
            return "its SyncReplicasOptimizer is not bound to one name"
        used = {n.attr.value for n in _all(stmts, cst.Attribute)  # the program's block, not the file's
                if isinstance(n.value, cst.Name) and n.value.value == optimizer}
        if used - _OPTIMIZER_USES:
            return f"its SyncReplicasOptimizer's {sorted(used - _OPTIMIZER_USES)[0]} (TF1's queues and tokens)"
        server = self._server(session, anchor)
        if isinstance(server, str):
            return server
        return self._chief_only_graph(stmts, plan, session) or self._hooks(stmts, optimizer, *server)

    def _sync_hook_names(self, stmts) -> FrozenSet[str]:
        """Names bound to a SyncReplicasOptimizer's ``make_session_run_hook(...)`` in a block
        that makes one: hooks of the session, not graph values."""
        calls = _collect(*stmts).calls
        if not any(self._call_name(c) == SYNC_OPTIMIZER for c in calls):
            return frozenset()
        return frozenset(line.targets[0].target.value for stmt in _all(stmts, cst.SimpleStatementLine)
                         if isinstance(line := stmt.body[0], cst.Assign) and len(line.targets) == 1
                         and isinstance(line.targets[0].target, cst.Name) and _is_hook(line.value, ()))

    def _sync_arguments(self, call: cst.Call) -> Optional[str]:
        """Every replica aggregated (``replicas_to_aggregate`` is ``total_num_replicas``)."""
        named = {a.keyword.value: a.value for a in call.args if a.keyword}
        positional = [a.value for a in call.args if a.keyword is None]
        if set(named) & {"variable_averages", "variables_to_average"} or len(positional) > 3:
            return "SyncReplicasOptimizer's variable averages"
        wanted = named.get("replicas_to_aggregate", positional[1] if len(positional) > 1 else None)
        total = named.get("total_num_replicas", positional[2] if len(positional) > 2 else None)
        if wanted is None:
            return "SyncReplicasOptimizer without replicas_to_aggregate"
        if total is not None and code(total) != code(wanted):
            return "backup workers (replicas_to_aggregate is not total_num_replicas)"
        return None

    def _parameter_servers(self, calls) -> Optional[str]:
        """An asynchronous program places its variables with ``replica_device_setter`` (on
        the cluster's parameter servers, which ParameterServerStrategy keeps)."""
        if not any(self._call_name(c) == SETTER for c in calls):
            return "asynchronous without replica_device_setter (no parameter servers hold its variables)"
        return None

    def _setters_only_scopes(self, calls) -> Optional[str]:
        """``replica_device_setter(...)`` only as ``with tf.device(<it>):``."""
        scoped = {id(c.args[0].value) for c in calls if self._call_name(c) == "tf.device"
                  and len(c.args) == 1 and self._call_name(c.args[0].value) == SETTER}
        if any(self._call_name(c) == SETTER and id(c) not in scoped for c in calls):
            return "a replica_device_setter used outside a tf.device scope"
        return None

    def _bound_name(self, stmts, call: cst.Call) -> Optional[str]:
        """``opt = tf.train.SyncReplicasOptimizer(...)``: ``opt``."""
        for stmt in _all(stmts, cst.SimpleStatementLine):
            line = stmt.body[0]
            if _value(stmt) is call and isinstance(line, cst.Assign) and len(line.targets) == 1 \
                    and isinstance(line.targets[0].target, cst.Name):
                return line.targets[0].target.value
        return None

    def _server(self, session: cst.Call, anchor) -> Union[Tuple[str, cst.Call], str]:
        """The session's ``master=server.target``: the server's name and its one
        ``tf.train.Server(...)`` call, in the session's own function."""
        master = next((a.value for i, a in enumerate(session.args)
                       if (a.keyword is not None and a.keyword.value == "master")
                       or (a.keyword is None and i == 0)), None)
        if not (isinstance(master, cst.Attribute) and master.attr.value == "target"
                and isinstance(master.value, cst.Name)):
            return "its session's master is not a server's target"
        name = master.value.value
        module = self.ctx.module
        scope = innermost_function(module, anchor)  # the session's function (None: the module)
        made = [s for s in nodes_of(scope or module, cst.SimpleStatementLine)
                if isinstance(s.body[0], cst.Assign) and len(s.body[0].targets) == 1
                and isinstance(s.body[0].targets[0].target, cst.Name)
                and s.body[0].targets[0].target.value == name
                and innermost_function(module, s) is scope]
        if len(made) != 1 or self._call_name(_value(made[0])) != SERVER:
            return f"{name} is not one tf.train.Server made in the session's function"
        return name, _value(made[0])

    def _hooks(self, stmts, optimizer: str, server: str, call) -> Union[WorkerProgram, str]:
        """The optimizer's session hook: its statements (``h = opt.make_session_run_hook(...)``,
        ``hooks.append(opt.make_session_run_hook(...))``) and where hooks lists hold it."""
        hook_stmts: List[cst.CSTNode] = []
        names = set()
        for stmt in _all(stmts, cst.SimpleStatementLine):
            value = _value(stmt)
            if _hook_call(value, optimizer):
                target = stmt.body[0].targets[0].target if isinstance(stmt.body[0], cst.Assign) else None
                if not isinstance(target, cst.Name):
                    return "its sync hook is not bound to one name"
                hook_stmts.append(stmt)
                names.add(target.value)
            elif isinstance(stmt.body[0], cst.Expr) and _appended_hook(value):
                hook_stmts.append(stmt)
        lists = []
        for lst in _all(stmts, cst.List):
            drop = tuple(i for i, e in enumerate(lst.elements) if _is_hook(e.value, names))
            if drop:
                lists.append((lst, drop))
        handled = set().union(*(_ids(s) for s in hook_stmts),
                              *(_ids(lst.elements[i]) for lst, drop in lists for i in drop))
        for node, key in _collect(*stmts).reads:
            if key in names and id(node) not in handled:
                return f"its sync hook {key} is used beyond a hooks list"
        if any(_hook_call(c, optimizer) and id(c) not in handled for c in _all(stmts, cst.Call)):
            return "its sync hook is used beyond a hooks list"
        return WorkerProgram(server=server, server_call=call, hook_names=frozenset(names),
                             hook_stmts=tuple(hook_stmts), hook_lists=tuple(lists))

    @staticmethod
    def _chief_only_graph(stmts, plan, session: cst.Call) -> Optional[str]:
        """Graph code built by the chief alone (``if is_chief:`` an average of the
        variables): every worker of the strategy must make the same variables."""
        chief = next((a.value for a in session.args if a.keyword is not None and a.keyword.value == "is_chief"),
                     None)
        names = _dotted(chief) if chief is not None else set()
        for i in plan.graph:
            for test in [n.test for n in nodes_of(stmts[i], (cst.If, cst.IfExp))]:
                if names & _dotted(test):
                    return f"graph code built by the chief alone (if {code(test)}:)"
        return None


def _dotted(expr) -> set:
    """The whole dotted names ``expr`` reads (``FLAGS.task_index``, ``is_chief``)."""
    def whole(node) -> bool:
        while isinstance(node, cst.Attribute):
            node = node.value
        return isinstance(node, cst.Name)

    nodes = list(nodes_of(expr, (cst.Name, cst.Attribute)))
    attrs = {id(n.attr) for n in nodes if isinstance(n, cst.Attribute)}
    found = {code(n) for n in nodes if id(n) not in attrs and whole(n)}
    return {n for n in found if not any(other.startswith(n + ".") for other in found)}


def _hook_call(expr, optimizer: str) -> bool:
    """``<optimizer>.make_session_run_hook(...)``."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
        and expr.func.attr.value == HOOK and code(expr.func.value) == optimizer


def _appended_hook(expr) -> bool:
    """``hooks.append(<an optimizer>.make_session_run_hook(...))``."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
        and expr.func.attr.value == "append" and len(expr.args) == 1 and _is_hook(expr.args[0].value, ())


def on_workers(body: list, program: WorkerProgram) -> list:
    """The build function's statements without the ``replica_device_setter`` scopes and
    the optimizer's hook, its SyncReplicasOptimizer the strategy's."""
    out = []
    for stmt in body:
        new = stmt.visit(_ToWorkers(program))
        if isinstance(new, cst.FlattenSentinel):
            out.extend(new.nodes)
        elif not isinstance(new, cst.RemovalSentinel):
            out.append(new)
    return out


def _ends_with(expr, name: str) -> bool:
    return isinstance(expr, cst.Call) and code(expr.func).rsplit(".", 1)[-1] == name


class _ToWorkers(cst.CSTTransformer):
    def __init__(self, program: WorkerProgram) -> None:
        super().__init__()
        self.program = program

    def leave_Call(self, original: cst.Call, updated: cst.Call):
        if _ends_with(updated, "SyncReplicasOptimizer"):
            return updated.with_changes(func=cst.parse_expression("shims.cluster.SyncReplicasOptimizer"))
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if _hook_statement(updated, self.program.hook_names):
            return cst.RemoveFromParent()
        return updated

    def leave_With(self, original: cst.With, updated: cst.With):
        kept = [item for item in updated.items if not (
            _ends_with(item.item, "device") and len(item.item.args) == 1
            and _ends_with(item.item.args[0].value, "replica_device_setter"))]
        if len(kept) == len(updated.items):
            return updated
        if not kept:
            first = updated.body.body[0]
            return cst.FlattenSentinel([first.with_changes(leading_lines=updated.leading_lines),
                                        *updated.body.body[1:]])
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(items=kept)
