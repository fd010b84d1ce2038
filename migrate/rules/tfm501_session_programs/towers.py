"""Stage 3b, towers: a converted program's multi-GPU tower loop runs on
``tf.distribute.MirroredStrategy`` (``GraphProgram.on_towers``, ``shims.towers``).

TF1's multi-GPU form (TensorFlow's CIFAR-10 multi-GPU trainer, the tutorials after it)::

    tower_grads = []
    for i in range(num_gpus):
        with tf.device('/gpu:%d' % i):
            loss = tower_loss(x_splits[i], ...)
            grads = opt.compute_gradients(loss)
            tower_grads.append(grads)
    grads = average_gradients(tower_grads)
    train_op = opt.apply_gradients(grads)

(or ``for i, d in enumerate(devices):``, ``for d in devices:`` over a list made outside the
graph code) becomes, in the build function, ``for i in shims.towers(range(num_gpus)):`` without the
tower's ``tf.device`` (the strategy places each replica), and the program
``.on_towers(num_gpus)``: replica i runs tower i alone, its gradient list holds its own
gradients (the hand-written average of one tower's is that tower's), and the v1 optimizer's
``apply_gradients`` combines the replicas' through the strategy: their mean (each loss
divided by the number of towers) when the combining function averages, their sum when it
sums. Only that form is converted, where nothing else differs between one replica per tower
and all towers in one graph: one tower loop with a device scope naming its tower, one list
filled in it (the towers' ``compute_gradients``), read after it only by the combining
function, which is defined in the module and plainly averages or sums. A branch on the tower
index (``if i == 0:`` an accuracy on the first tower's slice) may build TensorFlow ops that
make no variables: its names are None in the other replicas (bound so before the loop),
and a run reads them from the replica that built them. Anything else stays
as it is: all towers in one graph, which TF 2 runs as TF1 did.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import List, Optional, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from .syntax import GRAPH_INPUT_READS, _collect, _target_names, input_reads

# TensorFlow calls that make variables (a branch on the tower index may not: a replica alone
# cannot make a mirrored variable)
_MAKES_VARIABLES = ("tf.Variable", "tf.get_variable", "tf.layers.", "tf.contrib.", "tf.keras.",
                    "tf.metrics.", "tf.train.", "tf.estimator.", "tf.nn.rnn_cell.", "tf.make_template",
                    "tf.variable_scope", "tf.compat.", "tf.summary.FileWriter")
# a tower reading its own batch (an iterator's, a queue's): replicas would take them in no
# fixed order, where one graph's towers took them in turn
_INPUT_READS = (*GRAPH_INPUT_READS, "next_batch")
# what makes a combining function an average or a sum of the towers' gradients
_AVERAGING = ("reduce_mean", "mean", "div", "divide", "truediv")
_SUMMING = ("add_n", "reduce_sum", "accumulate_n")


@dataclass(frozen=True)
class TowerLoop:
    """A tower loop the program's replicas take over."""
    iter: str       # the code of what the loop iterates (``range(num_gpus)``)
    count: str      # the code of the number of towers (``num_gpus``, ``len(devices)``)
    average: bool   # the combining function averages (else it sums)
    one_tower: Tuple[str, ...] = ()  # names bound by one tower only (``if i == 0:``)

    @property
    def on_towers(self) -> str:
        """The call the program line ends with: ``.on_towers(num_gpus)``."""
        return f".on_towers({self.count}{'' if self.average else ', average=False'})"


def _statements(stmts) -> list:
    """Every statement in ``stmts`` and the blocks under them, outside functions and classes."""
    found, stack = [], list(reversed(stmts))
    while stack:
        stmt = stack.pop()
        found.append(stmt)
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) or isinstance(stmt, cst.SimpleStatementLine):
            continue
        body = getattr(stmt, "body", None)
        if isinstance(body, cst.IndentedBlock):
            stack.extend(reversed(body.body))
    return found


def _loop_range(loop: cst.For) -> Optional[str]:
    """The number of iterations of a tower loop, as code: ``N`` of ``for i in range(N):``
    (or ``xrange``), ``len(devices)`` of ``for i, d in enumerate(devices):`` or ``for d
    in devices:`` (a plain name or attribute); None for another loop."""
    it, target = loop.iter, loop.target
    names = _target_names(target) if isinstance(target, cst.Tuple) else [target]
    if not all(isinstance(n, cst.Name) for n in names) or not isinstance(
            target, (cst.Name, cst.Tuple)):
        return None
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and len(it.args) == 1 \
            and it.args[0].keyword is None and it.args[0].star == "":
        inner = it.args[0].value
        if it.func.value in ("range", "xrange") and isinstance(target, cst.Name):
            return code(inner)
        if it.func.value == "enumerate" and isinstance(inner, (cst.Name, cst.Attribute)):
            return f"len({code(inner)})"
    if isinstance(it, (cst.Name, cst.Attribute)) and isinstance(target, cst.Name):
        return f"len({code(it)})"
    return None


def _loop_names(loop: cst.For) -> set:
    """The names a loop's target binds (``i``, or ``i`` and ``d`` of ``i, d``)."""
    return {n.value for n in _target_names(loop.target)}


def _tower_devices(loop: cst.For) -> List[cst.WithItem]:
    """The ``with`` items in the loop's body placing the tower by its index: a
    ``tf.device(...)`` call reading the loop variable."""
    names = _loop_names(loop)
    items = []
    for with_ in _statements(loop.body.body):
        if not isinstance(with_, cst.With):
            continue
        for item in with_.items:
            call = item.item
            if isinstance(call, cst.Call) and isinstance(call.func, (cst.Attribute, cst.Name)) \
                    and code(call.func).rsplit(".", 1)[-1] == "device" and item.asname is None \
                    and any(k in names for _, k in _collect(*call.args).reads):
                items.append(item)
    return items


def _combination(module: cst.Module, name: str) -> Optional[bool]:
    """Does the module's function ``name`` average (True) or sum (False) the towers'
    gradients? None when it is not found or does neither plainly."""
    defs = [d for d in nodes_of(module, cst.FunctionDef) if d.name.value == name]
    if len(defs) != 1:
        return None
    called = {code(c.func).rsplit(".", 1)[-1] for c in nodes_of(defs[0].body, cst.Call)}
    divides = any(isinstance(b.operator, cst.Divide) for b in nodes_of(defs[0].body, cst.BinaryOperation))
    if divides or called & set(_AVERAGING):
        return True
    if called & set(_SUMMING):
        return False
    return None


class Towers:
    """Finds the tower loop of a program's graph statements (see the module doc)."""

    def _tower_loop(self, graph_stmts, bound: set) -> Union[TowerLoop, str, None]:
        """The tower loop in ``graph_stmts`` that can run as replicas; a string saying why
        a tower loop cannot (its towers stay in one graph); None when there is none.
        ``bound``: the names the graph statements bind (the count must not be one)."""
        loops = [s for s in _statements(graph_stmts) if isinstance(s, cst.For)
                 and _loop_range(s) is not None and _tower_devices(s)]
        if not loops:
            return None
        if len(loops) > 1:
            return "several tower loops"
        loop = loops[0]
        count = _loop_range(loop)
        if any(k in bound for _, k in _collect(loop.iter).reads):
            return f"the tower count {count} is made by graph code"
        reads = input_reads(loop.body.body, _INPUT_READS)
        if reads:  # replicas would take the batches in no fixed order
            return f"each tower reads its own input ({reads[0]}())"
        if any(n.value == "UPDATE_OPS" for n in nodes_of(self.ctx.module, cst.Name)):
            # TF1 ran the update ops it was given (often the last tower's alone, as the CIFAR-10
            # trainer did); replicas would each keep their own batch-norm statistics
            return "batch-norm updates (UPDATE_OPS): TF1 applied the towers' updates as listed"
        one_tower = self._built_by_one_tower(graph_stmts, loop)
        if isinstance(one_tower, str):
            return one_tower
        grads, why = self._gradient_list(loop)
        if grads is None:
            return why
        found = self._combined(graph_stmts, loop, grads, count)
        return replace(found, one_tower=one_tower) if isinstance(found, TowerLoop) else found

    def _built_by_one_tower(self, graph_stmts, loop: cst.For) -> Union[Tuple[str, ...], str]:
        """The names bound under a branch on the tower index (``if i == 0:`` an accuracy
        on the first tower's slice): in the replicas of the other towers they are None
        (bound so before the loop) and the program's run reads them from the replica that
        built them. Such a branch may only call TensorFlow ops that make no variables (a
        replica alone cannot make a mirrored one) and bind names nothing else binds; else
        the reason it cannot run as replicas."""
        loop_names = _loop_names(loop)
        var = ", ".join(sorted(loop_names))
        branches = [s for s in _statements(loop.body.body) if isinstance(s, (cst.If, cst.While))
                    and any(k in loop_names for _, k in _collect(s.test).reads)]
        if any(isinstance(b, cst.While) for b in branches):
            return f"a while loop on the tower index {var}"
        names: List[str] = []
        for branch in branches:
            for call in nodes_of(branch, cst.Call):
                name = self._call_name(call) or code(call.func)
                if not name.startswith("tf.") or name.startswith(_MAKES_VARIABLES):
                    return (f"a branch on the tower index {var} calls {name}(), which may make "
                            "variables in one tower only")
            names += [n.value for t in nodes_of(branch, cst.AssignTarget) for n in _target_names(t.target)]
        in_branches = {id(t) for b in branches for t in nodes_of(b, cst.AssignTarget)}
        others = [n.value for s in graph_stmts for t in nodes_of(s, cst.AssignTarget)
                  if id(t) not in in_branches for n in _target_names(t.target)]
        if set(names) & set(others):
            return f"{sorted(set(names) & set(others))[0]} is bound both in one tower and elsewhere"
        return tuple(dict.fromkeys(names))

    def _combined(self, graph_stmts, loop: cst.For, grads: str, count: str) -> Union[TowerLoop, str]:
        """How the towers' gradient list ``grads`` is combined after the loop: once, by a
        module function that averages or sums (``F(L)``, or ``L = F(L)`` read later)."""
        rest = [s for s in graph_stmts if s is not loop]
        # reads of the list, not its assignments nor the loop's own append
        skipped = {id(n) for s in rest for t in nodes_of(s, cst.AssignTarget) for n in nodes_of(t, cst.Name)}
        skipped |= {id(n) for n in nodes_of(loop, cst.Name)}
        uses = [n for n, k in _collect(*rest).reads if k == grads and id(n) not in skipped]
        combine = [c for s in rest for c in nodes_of(s, cst.Call) if uses and isinstance(c.func, cst.Name)
                   and len(c.args) == 1 and c.args[0].value is uses[0] and c.args[0].star == ""]
        if len(combine) != 1:
            return f"{grads} is not combined by one function call"
        rebinds = any(isinstance(a, cst.Assign) and a.value is combine[0] and len(a.targets) == 1
                      and isinstance(a.targets[0].target, cst.Name) and a.targets[0].target.value == grads
                      for s in _statements(rest) if isinstance(s, cst.SimpleStatementLine) for a in s.body)
        if len(uses) > 1 and not rebinds:
            return f"{grads} is read again after {combine[0].func.value}({grads})"
        average = _combination(self.ctx.module, combine[0].func.value)
        if average is None:
            return f"{combine[0].func.value}() neither plainly averages nor sums the towers' gradients"
        return TowerLoop(iter=code(loop.iter), count=count, average=average)

    def _gradient_list(self, loop: cst.For) -> Tuple[Optional[str], str]:
        """``(L, "")`` for the one list the loop fills, ``L.append(g)`` with ``g`` from
        ``compute_gradients`` in the loop (or ``L.append(opt.compute_gradients(loss))``);
        else ``(None, why)``."""
        body = loop.body.body
        gradients = {k for s in _statements(body) if isinstance(s, cst.SimpleStatementLine)
                     for a in s.body if isinstance(a, cst.Assign) and len(a.targets) == 1
                     and isinstance(a.value, cst.Call) and isinstance(a.value.func, cst.Attribute)
                     and a.value.func.attr.value == "compute_gradients"
                     for k in (n.value for n in _target_names(a.targets[0].target))}
        filled = []
        for call in (c for s in body for c in nodes_of(s, cst.Call)):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert"):
                filled.append((func.value, call))
        if any(True for st in body for _ in nodes_of(st, cst.AugAssign)):
            return None, "a value accumulated over the towers (+=)"
        if len(filled) > 1:
            return None, ("the loop collects more than the towers' gradients "
                          f"({', '.join(code(t) for t, _ in filled)})")
        none = None, "no list of the towers' compute_gradients"
        if not filled:
            return none
        target, call = filled[0]
        if not isinstance(target, cst.Name) or call.func.attr.value != "append" or len(call.args) != 1:
            return none
        item = call.args[0].value  # `grads` from compute_gradients, or the call itself
        direct = isinstance(item, cst.Call) and isinstance(item.func, cst.Attribute) \
            and item.func.attr.value == "compute_gradients"
        if not direct and not (isinstance(item, cst.Name) and item.value in gradients):
            return none
        return target.value, ""


def on_replicas(body: list, loop: TowerLoop) -> list:
    """The build function's statements with the tower loop over ``shims.towers(...)`` and
    its towers' ``tf.device`` scopes gone (the strategy places each replica)."""
    out = []
    for stmt in body:
        new = stmt.visit(_ToReplicas(loop))
        out.extend(new.nodes if isinstance(new, cst.FlattenSentinel) else [new])
    return out


class _ToReplicas(cst.CSTTransformer):
    def __init__(self, loop: TowerLoop) -> None:
        super().__init__()
        self.loop = loop
        self.found: Optional[cst.For] = None  # the tower loop (the first that matches)
        self.devices: List[cst.WithItem] = []  # its device items (nodes of the loop only)

    def visit_For(self, node: cst.For) -> None:
        if self.found is None and _loop_range(node) == self.loop.count and code(node.iter) == self.loop.iter:
            self.found, self.devices = node, _tower_devices(node)

    def leave_For(self, original: cst.For, updated: cst.For):
        if original is not self.found:
            return updated
        towers = cst.parse_expression(f"shims.towers({code(original.iter)})")
        updated = updated.with_changes(iter=towers)
        if not self.loop.one_tower:
            return updated
        unbuilt = [cst.parse_statement(f"{name} = None  # built by one tower (shims.towers)\n")
                   for name in self.loop.one_tower]
        unbuilt[0] = unbuilt[0].with_changes(leading_lines=updated.leading_lines)
        return cst.FlattenSentinel([*unbuilt, updated.with_changes(leading_lines=())])

    def leave_With(self, original: cst.With, updated: cst.With):
        if not any(item is d for item in original.items for d in self.devices):
            return updated
        kept = [new for old, new in zip(original.items, updated.items)
                if not any(old is d for d in self.devices)]
        if not kept:
            return cst.FlattenSentinel(updated.body.body)
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(items=kept)
