"""Reads a planned Session program into the native program model, or names what blocks it.

Pure: nodes in, a :class:`~.model.NativeProgram` or a :class:`~.model.Blocker` out. The
native form is written only where its meaning is TF1's by construction:

- the state (``tf.Variable`` assigned to a name, or to a dict/list literal of them) is made
  once, where it was, and reads no graph value; functions of the graph make no variables
  and read no graph value but their arguments;
- every other graph statement binds names to values computed from the placeholders and the
  state; it moves into each step that needs it (TF1 computes a fetch from what it depends
  on, at each run, and nothing else);
- a run's feeds are a dict literal keyed by placeholders; its fetches are graph names,
  expressions, or a list/tuple/dict of them, with at most one train op
  (``optimizer.minimize(loss)``), whose step computes the loss under a GradientTape and
  applies the gradients of the variables minimize would train.
"""
from __future__ import annotations

import builtins
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from ..plan import Plan
from ..syntax import GRAPH_SEEDS, INITIALIZERS, _key, _value
from . import (batchnorm, checkpoints, classes, copies, defaults, forward, gradients, layers, losses,
               optimizers, regularizers, session, state, summaries, traced, updates)
from .blocked import NOT_NATIVE, planned
from .model import (Blocker, Computed, Copy, Layer, NativeProgram, Optimizer, RegularizationRead, Saver,
                    Summary, Training)
from .runs import _train_runs_merged, fed_builders, fed_values, python_reads, read_runs
from .state import GET_VARIABLE, VARIABLES
from .syntax import _binds, _bound, _free_names, _imported, _names_read

CallName = Callable[[cst.BaseExpression], Optional[str]]
SAFE_ROOTS = {"np", "numpy", "math"}

# blocks of graph code whose statements read as they would alone (the scope names variables
# made in it, eagerly as in TF1; a device places them)
SCOPES = {"tf.name_scope", "tf.device", "tf.variable_scope"}
def read(stmts: Sequence[cst.BaseStatement], session_at: int, plan: Plan,
         call_name: CallName, module: cst.Module,
         form: Optional[classes.ClassForm] = None, keras: int = 2) -> Union[NativeProgram, Blocker]:
    """The program as native TF2, or why not (``form``: its class; ``keras``: its Keras)."""
    why = planned(plan, form is not None)
    if why:
        return Blocker(why)
    graph = [stmts[i] for i in plan.graph] + list(plan.hoisted) + list(plan.late_inits)
    reader = _Reader(plan, call_name, module, _imported(module), set(_names_read(module)), keras, form)
    reader.graph = graph
    for stmt in graph:
        why = reader.statement(stmt)
        if why:
            return Blocker(why)
    if reader.optimizers:
        return Blocker(f"the optimizer {next(iter(reader.optimizers))!r} is used other than by minimize()")
    why = layers.collections_read(reader) or state.collection_lists_read(reader)
    if why:
        return Blocker(why)
    saved = {id(c) for c in nodes_of(reader.saver.stmt, (cst.Call,))} if reader.saver is not None else set()
    if any(id(call) not in saved for call in plan.collections):  # (a Saver's var_list: every variable)
        return Blocker("a collection of variables read past the graph")
    # the session's block: after the session, or (made before the graph) after the graph
    block = stmts[plan.graph_end:] if plan.session_first else stmts[session_at:]
    rebound = sorted(_bound(block) & (set(reader.state) | reader.functions
                                      | {layer.makes + "_layer" for layer in reader.layers}))
    renames = session.renamed(block, rebound) if all(n in reader.state for n in rebound) else None
    if renames is None or isinstance(renames, str):  # TF1's graph kept the object; a step reads the name
        return Blocker(renames or f"the session's block rebinds {rebound[0]!r}, which the graph reads")
    reader.blocks = [list(stmts)]
    reader.named_feeds = session.named_feeds([*stmts, *plan.methods], plan.feed_dicts)
    runs = read_runs(reader, [*stmts[session_at:], *plan.methods])  # (the runs are all after it)
    if isinstance(runs, Blocker):
        return runs
    for call in plan.eager_runs:
        fetched = call.args[0].value if call.args else None
        if len(call.args) != 1 or isinstance(fetched, (cst.List, cst.Tuple, cst.Dict)):
            return Blocker("a run of TensorFlow on Python values with several fetches")
    runs = _train_runs_merged(runs)
    why = python_reads(plan, runs, stmts, session_at) or gradients.fetched_pairs(reader, runs)
    if why:
        return Blocker(why)
    why = regularizers.unbuilt(reader, runs) or batchnorm.check(reader, runs) or traced.unplaced(reader)
    if why:
        return Blocker(why)
    kept = tuple(dict((id(r.step), r.step) for r in runs if r.step is not None).values())
    beside = session.beside_runs(reader, plan, stmts, session_at, module, call_name, kept)
    if isinstance(beside, Blocker):
        return beside
    overrides = fed_values(reader, kept)
    if isinstance(overrides, Blocker):
        return overrides
    program = NativeProgram(dropped=(*reader.dropped, *plan.repeated), seeds=classes.seeds(form, reader, module),
                         placeholders=tuple((k, plan.placeholders[k]) for k in reader.placeholders),
                         defaults=tuple(reader.defaults.items()),
                         overrides=overrides,
                         optimizers=tuple(dict.fromkeys(t.optimizer for t in reader.trainings.values())),
                         layers=tuple(reader.layers), variable_scopes=tuple(reader.variable_scopes),
                         get_variables=tuple(dict.fromkeys(reader.get_variables)),
                         global_steps=tuple(reader.global_steps), losses=tuple(reader.native_losses),
                         steps=kept, runs=tuple(runs), updates=tuple(reader.updates), update_statements=tuple(reader.update_statements),
                         evaluated=tuple(plan.eager_runs), removals=tuple(plan.removals),
                         feed_literals=tuple(dict.fromkeys(reader.named_feeds[r.feed_name]
                                                           for r in runs if r.feed_name)),
                         forward=forward.share(kept, reader.placeholders),
                         defined_at=plan.graph_end if plan.session_first else None,
                         tf1_names=tuple(reader.tf1_names.items()), reopened=tuple(plan.reopened),
                         unscoped=tuple(reader.unscoped), layer_functions=layers.functions(reader),
                         regularization=tuple(reader.regularization), regularizers=tuple(reader.regularizers),
                         renames=renames, collection_lists=tuple(reader.collection_lists),
                         listed=tuple(reader.listed), initializers=tuple(
                             c for stmt in reader.made_once_stmts for c in state.initializer_calls(reader, stmt)),
                         **beside)
    if copies.traced_first(program) is None:
        return Blocker("a variable copy of a layer no run calls (its variables are never made)")
    if isinstance(built := fed_builders(program), str):
        return Blocker(built)
    why = classes.blocker(form, reader, program) if form is not None else None
    return Blocker(why) if why else program



class _Reader:
    """Classifies the graph statements (``runs.read_run`` reads the runs over it)."""

    def __init__(self, plan: Plan, call_name: CallName, module: cst.Module,
                 imported: Set[str], module_reads: Set[str], keras: int = 2,
                 form: Optional[classes.ClassForm] = None) -> None:
        self.plan, self.call_name, self.module, self.module_body = plan, call_name, module, list(module.body)
        self.keras = keras  # the Keras generation written for (batch norm is tf_keras')
        # a class's program: its graph names are keys ``self.x`` (its form's: the build
        # methods' variables kept on the object too, ``classes.kept_on_object``)
        self.self_name = form.self_name if form is not None else plan.self_name
        self.module_functions = {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}
        # a class's methods the graph may call (``self._build_a(s, scope="eval")``): read as a
        # module function's code is (their calls are not a value's methods)
        self.methods = {m.name.value: m for m in form.cls.body.body if isinstance(m, cst.FunctionDef)} \
            if form is not None else {}
        self.module_reads = module_reads  # every name the module reads
        self.vetted: Dict[str, Optional[str]] = {}
        self.imported = imported
        self.placeholders: List[str] = []
        self.native_losses: List[Tuple[cst.Call, str]] = []  # tf.losses written as TF2 (losses.py)
        self.loss_collection_read: Optional[bool] = None  # whether the module reads TF1's LOSSES
        self.defaults: Dict[str, defaults.Default] = {}  # placeholders with a default: theirs
        self.state: Dict[str, Tuple[Tuple[str, bool], ...]] = {}  # key -> (variable, trainable)
        # every variable (or a layer's), in creation order
        self.variables: List[Tuple[Union[str, Layer], bool]] = []
        self.computed: Dict[str, Computed] = {}
        self.scopes: Set[str] = set()  # name scopes of graph blocks, by path
        self.variable_scopes: List[cst.Call] = []  # written as tf.name_scope
        self.once: Set[str] = set()  # computed once, eagerly, for variables' initial values
        self.made_once_stmts: List[cst.BaseStatement] = []  # where they are computed
        self.order: List[Computed] = []
        self.functions: Set[str] = set()
        self.optimizers: Dict[str, Optimizer] = {}
        self.trainings: Dict[str, Training] = {}
        self.losses: Set[str] = set()  # names minimize() reads (they may not be bound again)
        # compute_gradients' pairs: key -> (its optimizer's key, the loss, the variables)
        self.pairs: Dict[str, Tuple[str, str, tuple]] = {}
        self.dropped: List[cst.BaseStatement] = []
        self.seeds: List[cst.SimpleStatementLine] = []
        self.layers: List[Layer] = []
        self.get_variables: List[cst.Call] = []  # tf.get_variable calls written as tf.Variable
        self.global_steps: List[cst.Call] = []  # tf.train.get_or_create_global_step(): a tf.Variable
        self.named_feeds: Dict[str, cst.Dict] = {}  # feed dicts bound once to a name
        self.allowed: Set[int] = set()  # ids of the layer calls written as Keras layers
        self.saver: Optional[Saver] = None  # tf.train.Saver: a tf.train.Checkpoint
        # TF1's names of the state (checkpoints.name_variables)
        self.name_scopes: List[str] = []
        self.variable_scope_names: List[str] = []
        self.taken_names: Set[str] = set()
        self.tf1_names: Dict[str, str] = {}
        self.unscoped: List[cst.With] = []  # scoped blocks left with an optimizer alone: it stays, unscoped
        self.names_unsure = False
        self.summaries: List[Summary] = []  # the graph's summary ops (summaries.statement)
        self.merged: Dict[str, Tuple[Summary, ...]] = {}  # a name -> the summaries it fetches
        self.tags: Set[str] = set()
        self.blocks: List[list] = []  # the program's statements (a run's add_summary is found there)
        self.layer_functions: Dict[str, object] = {}  # module functions making layers (layers.prepared)
        self.collected: Dict[str, Tuple[Union[str, Layer], ...]] = {}  # var_list collections by scope
        self.global_collections: Set[str] = set()  # collections of global variables (variable copies read them)
        self.slotted: Set[str] = set()  # those TF1 gave optimizer slots too
        self.trained_from: Dict[str, int] = {}  # a train op -> how many variables were made before it
        self.copies: Dict[str, Copy] = {}  # variable copies (target networks)
        self.updates: List[cst.Call] = []  # tf.assign(W, value) in graph code: W.assign(value)
        self.update_keys: Set[str] = set()  # the names bound to them (run as train ops are)
        # and what each binds, a variable one of them updates and another reads (a TF1 race)
        self.update_statements: List[Tuple[cst.BaseStatement, Tuple[str, ...], str]] = []
        self.graph: List[cst.BaseStatement] = []  # the graph's statements
        self.regularization: List[RegularizationRead] = []  # reads of the layers' regularization losses
        self.regularizers: List[Tuple[cst.Call, str]] = []  # tf.contrib's regularizers: written as Keras'
        self.update_ops: Set[str] = set()  # names of the UPDATE_OPS collection (batchnorm)
        self.traced: List[Computed] = []  # statements binding nothing that read graph values
        self.traced_by: Dict[int, tuple] = {}  # id(one of them) -> the kind of run it goes into
        self.updated: Set[str] = set()  # train ops under its control dependencies
        # tf.get_variable's collections=: by call, the named ones; their variables by name, in
        # order; the graph statements binding a list of them (and which name)
        self.variable_collections: Dict[int, Tuple[str, ...]] = {}
        self.named_collections: Dict[str, List[str]] = {}
        self.collection_lists: List[Tuple[cst.BaseStatement, str]] = []
        # collections tf.gradients() reads (gradients._taped): written as the list they held
        self.listed: List[Tuple[cst.BaseStatement, Tuple[str, ...]]] = []
        self.unread_collections = ""  # a collections= not read (why a get_variable is not native)

    def key(self, expr) -> Optional[str]:
        """The graph name an expression is (``x``; ``self.x`` in a class's program), else None."""
        return _key(expr, self.self_name) if expr is not None else None

    def calls(self, node) -> List[str]:
        return [n for n in (self.call_name(c) for c in nodes_of(node, (cst.Call,))) if n]

    def forbidden(self, node) -> Optional[str]:
        """A call under ``node`` the native form does not write (or cannot read), else None."""
        for call in nodes_of(node, (cst.Call,)):
            if id(call) in self.allowed:
                continue
            name = self.call_name(call)
            if name and name.startswith("tf."):
                if name.startswith(NOT_NATIVE) and name not in GRAPH_SEEDS:
                    return f"{name}, which is not written natively yet"
                continue
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in (
                    "assign", "assign_add", "assign_sub", "minimize", "compute_gradients",
                    "apply_gradients", "eval", "run"):
                return f".{call.func.attr.value}(), which is not written natively yet"
            why = self.unread_call(call)
            if why:
                return why
        return None

    def unread_call(self, call: cst.Call) -> Optional[str]:
        """Why a call that is not TensorFlow's cannot be proven free of graph state (it may
        make variables or layers), else None: Python's builtins, numpy and math are; a
        function of this module is when its own code is."""
        func = call.func
        root = func
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
            root = root.value if not isinstance(root, cst.Call) else root.func
        own = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
            and func.value.value == self.self_name and func.attr.value in self.methods
        if own or isinstance(func, cst.Name) and func.value in self.module_functions:
            name = f"{self.self_name}.{func.attr.value}" if own else func.value
            if name not in self.vetted:
                self.vetted[name] = None  # recursion: assumed fine while read
                body = (self.methods[func.attr.value] if own else self.module_functions[name]).body
                self.vetted[name] = self.forbidden(body)
            why = self.vetted[name]
            return f"{name}(), which calls {why}" if why else None
        if isinstance(root, cst.Name) and (root.value in SAFE_ROOTS or (
                isinstance(func, cst.Name) and func.value in dir(builtins))):
            return None
        if isinstance(func, cst.Attribute) and not (isinstance(root, cst.Name) and root.value in self.imported):
            return None  # a method of a value (``logits.get_shape()``), not a module's function
        return f"{code(func)}(), whose code is not read here"

    # -- graph statements ------------------------------------------------------------------
    def statement(self, stmt) -> Optional[str]:
        """Reads one graph statement; why the native form is not written for it, else None."""
        plan = self.plan
        if isinstance(stmt, cst.FunctionDef):
            return self.function(stmt)
        value = _value(stmt)
        if self.call_name(value) in GRAPH_SEEDS:
            self.seeds.append(stmt)
            return None
        binds = _binds(stmt, self.self_name)
        if self.call_name(value) in summaries.OPS or self.call_name(value) in summaries.MERGES:
            return summaries.statement(self, stmt, binds, value)
        first = code(stmt).strip().splitlines()[0][:60]
        if isinstance(stmt, cst.With):
            return self.block(stmt, first)
        if isinstance(stmt, cst.BaseCompoundStatement):
            return f"graph code in a block ({first!r})"
        if binds is None:
            return self.standalone(stmt, first)
        if any(b in self.state or b in self.placeholders or b in self.trainings or b in self.optimizers
               for b in binds):
            return f"the graph name {binds[0]!r} is bound twice"
        # graph code may rebind its own names (`L1 = conv(X)`, `L1 = tf.nn.relu(L1)`): each
        # read is of the binding above it; not in the session's block, where runs come between
        name = self.call_name(value)
        makes_variables = bool((VARIABLES | {GET_VARIABLE}) & set(self.calls(value)))
        once = [n for n in layers.read_beside_layers(self, stmt) if n in self.once]
        if once and not makes_variables:  # (another variable's initial value reads it once too)  # TF1 computed it again for this reader, once for the variable
            return f"the graph value {once[0]!r} is read by a variable's initial value and by the graph"
        again = [b for b in binds if b in self.computed]
        if again and (stmt in plan.hoisted or any(b in self.losses for b in again)):
            return f"the graph name {again[0]!r} is bound twice"
        if len(binds) == 1 and binds[0] in plan.placeholders:
            return self.placeholder(stmt, binds[0], name, value)
        if len(binds) == 1 and binds[0] in plan.savers:
            return checkpoints.saver(self, stmt, binds[0], value)
        if len(binds) == 1 and (binds[0] in plan.inits or stmt in plan.late_inits or name in INITIALIZERS):
            self.dropped.append(stmt)
            return None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value == "minimize":
            return self.training(stmt, binds, value)
        if gradients.is_half(value):  # minimize written out
            return gradients.half(self, stmt, binds, value)
        if name and name.startswith("tf.train.") and name.endswith("Optimizer"):
            return self.optimizer(stmt, binds, value, name)
        if name in state.GLOBAL_STEPS:
            return state.global_step(self, stmt, binds, value)
        if makes_variables or state.made_by_helper(self, value):
            return state.variable(self, stmt, binds, value)
        if batchnorm.is_update_ops(self, value):
            return batchnorm.update_ops(self, stmt, binds)
        if name in layers.COLLECTIONS and not regularizers.is_losses(self, value) or layers.is_filter(self, value):
            return layers.collection(self, stmt, binds, value)
        if copies.is_copy(self, value):
            return copies.read(self, stmt, binds, value)
        if updates.is_update(self, value):
            return updates.read(self, stmt, binds, value)
        made = len(self.layers)
        why = layers.function_calls(self, value) or layers.graph_layers(self, value, binds) \
            or regularizers.losses_read(self, value)
        if why:
            return why
        scope = "/".join(self.variable_scope_names) if len(self.layers) > made else ""
        why = self.forbidden(value)
        if why:
            return f"the graph uses {why}"
        self.native_losses += losses.found(self, value)
        computed = Computed(stmt, binds, layers.read_beside_layers(self, value), scope)
        for key in binds:
            self.computed[key] = computed
        self.order.append(computed)
        self.dropped.append(stmt)
        return None

    def placeholder(self, stmt, key: str, name: str, call: cst.Call) -> Optional[str]:
        """``x = tf.placeholder(...)`` (``tf.placeholder_with_default``: see ``defaults``): a
        parameter of the steps that need it."""
        if name == "tf.placeholder_with_default":
            made = defaults.read(self, key, call)
            if isinstance(made, str):
                return made
            self.defaults[key] = made
        elif name != "tf.placeholder":
            return f"{key!r} is a {name}"
        self.placeholders.append(key)
        self.dropped.append(stmt)
        return None

    def standalone(self, stmt, first: str) -> Optional[str]:
        """``print(W1, W5)`` among graph statements: a statement binding nothing that reads
        the state and Python values only stays where it is, run eagerly once, as TF1 ran it
        once when it built the graph (a variable prints its value too); one reading graph
        values (``print(Y_one_hot)``, an ``assert`` on shapes) runs where a step is traced
        (``traced``)."""
        read = set(_names_read(stmt, self.self_name))
        if not traced.is_traced(stmt) or read & (set(self.trainings) | set(self.optimizers)) \
                or self.forbidden(stmt):
            return f"the graph statement {first!r}, which binds no plain names"
        if read & (set(self.placeholders) | set(self.computed)):
            made = Computed(stmt, (), layers.read_beside_layers(self, stmt))
            self.traced.append(made)
            self.order.append(made)
            self.dropped.append(stmt)
        return None

    def block(self, block: cst.With, first: str) -> Optional[str]:
        """``with tf.name_scope("layer1"):``, ``tf.variable_scope("layer1")`` or
        ``tf.device("/cpu:0")`` over graph statements: each is read as if it stood alone;
        the variables stay in the block (eagerly, TF2's name scope names them as TF1's
        scopes did, a variable scope's ``get_variable`` included), what steps compute moves
        into them. Gone when nothing stays in it."""
        if batchnorm.is_dependencies(self, block):
            return batchnorm.block(self, block, first)
        for item in block.items:
            name = self.call_name(item.item)
            named = item.asname is not None and not (  # `as scope`, never read: as TF2's scope
                isinstance(item.asname.name, cst.Name) and item.asname.name.value not in self.module_reads)
            if name not in SCOPES or named or len(item.item.args) != 1 \
                    or item.item.args[0].keyword is not None \
                    or not isinstance(item.item.args[0].value, cst.SimpleString) and not self.run_time_scope(item):
                return f"graph code in a block ({first!r})"
            if name != "tf.device":
                scope = _scope_name(item.item.args[0].value)
                path = "/".join((*self.name_scopes, scope))  # (``eval_net/l1`` and ``target_net/l1`` differ)
                if path in self.scopes:  # TF1 named the second one scope_1 (or reused it)
                    return f"two scopes named {path!r}"
                self.scopes.add(path)
            if name == "tf.variable_scope":  # (a string: neither reuse nor a default name)
                self.variable_scopes.append(item.item)
        body = block.body.body
        if not all(isinstance(inner, (cst.SimpleStatementLine, cst.With)) for inner in body):  # (scopes in scopes)
            return f"graph code in a block ({first!r})"
        opened = [(self.call_name(item.item), _scope_name(item.item.args[0].value)) for item in block.items
                  if self.call_name(item.item) != "tf.device"]
        made = len(self.layers)
        self.name_scopes += [scope for _, scope in opened]
        self.variable_scope_names += [scope for kind, scope in opened if kind == "tf.variable_scope"]
        try:
            for inner in body:
                why = self.statement(inner)
                if why:
                    return why
        finally:
            del self.name_scopes[len(self.name_scopes) - len(opened):]
            del self.variable_scope_names[len(self.variable_scope_names)
                                          - sum(kind == "tf.variable_scope" for kind, _ in opened):]
        if len(self.layers) > made and any(scope.startswith("{") for _, scope in opened):
            return f"layers in a scope named when the program runs ({first!r})"
        if all(inner in self.dropped for inner in body):
            self.dropped.append(block)
        elif all(inner in self.dropped or inner in self.optimizer_stmts() for inner in body):
            self.unscoped.append(block)  # the optimizer alone stays: it names no variable now
        return None

    def run_time_scope(self, item: cst.WithItem) -> bool:
        """``tf.variable_scope(self.name)``: a scope named by a value of the object or module
        (not a graph value), once, where the variables are made: TF2's name scope names them
        as TF1's did, but their TF1 names are not known here (no checkpoint name map)."""
        value = item.item.args[0].value
        if self.call_name(item.item) == "tf.device" or any(
                n in self.computed or n in self.placeholders or n in self.state for n in _names_read(value, self.self_name)):
            return False
        self.names_unsure = True
        return True

    def optimizer_stmts(self) -> List[cst.BaseStatement]:
        return [o.stmt for o in (*self.optimizers.values(), *(t.optimizer for t in self.trainings.values()))]

    def function(self, func: cst.FunctionDef) -> Optional[str]:
        if func.name.value not in self.plan.graph_functions:
            return f"the function {func.name.value}() of the graph"
        made = layers.prepared(self, func)  # its layers are made at its first call
        if isinstance(made, str):
            return made
        allowed = made.allowed() - self.allowed if made is not None else set()
        self.allowed |= allowed
        try:
            why = self.forbidden(func.body)
        finally:
            self.allowed -= allowed
        if why:
            return f"{func.name.value}() uses {why}"
        graph = set(self.placeholders) | set(self.computed)
        defaults = [p.default for p in nodes_of(func.params, (cst.Param,)) if p.default is not None]
        graph -= made.regularizer_names if made is not None else set()  # (read as its layers are made)
        read = [n for n in (*_free_names(func), *(r for d in defaults for r in _names_read(d))) if n in graph]
        if read:
            return f"{func.name.value}() reads the graph value {read[0]!r}"
        self.functions.add(func.name.value)
        return None

    def made_once(self, name: str) -> Optional[str]:
        """See :func:`.state.made_once`."""
        return state.made_once(self, name)

    def optimizer(self, stmt, binds, call, name) -> Optional[str]:
        if len(binds) != 1:
            return "optimizers unpacked from one statement"
        graph = set(self.placeholders) | set(self.computed)  # (a variable of the state: read each step)
        read = [n for n in _names_read(call, self.self_name) if n in graph]
        if read:
            return f"the optimizer's arguments read the graph value {read[0]!r}"
        self.optimizers[binds[0]] = Optimizer(stmt, call, name, None, "")
        return None

    def training(self, stmt, binds, call) -> Optional[str]:
        """``train_op = <optimizer>.minimize(loss, ...)``."""
        if len(binds) != 1:
            return "a train op unpacked"
        optimizer = gradients.optimizer_of(self, stmt, call.func.value)
        if isinstance(optimizer, str):
            return optimizer
        args = optimizers.arguments(call, gradients.MINIMIZE)
        loss_expr = args.get("loss") if args is not None else None
        negated = isinstance(loss_expr, cst.UnaryOperation) and isinstance(loss_expr.operator, cst.Minus)
        if negated:  # `minimize(-self.exp_v)`: a policy gradient's ascent
            args["loss"] = loss_expr.expression
        if args is None or self.key(args.get("loss")) not in self.computed:
            return "minimize() of something other than a graph name (or its negation)"
        extra = set(args) - {"loss", "global_step", "var_list", "name", "colocate_gradients_with_ops"}
        if extra:
            return f"minimize()'s {sorted(extra)[0]}"
        why = gradients.global_step(self, args.get("global_step"))
        if why:
            return why
        variables = gradients.trained_variables(self, args)
        if variables is None:
            return "a var_list that is not a list of the variables made here"
        return gradients.trains(self, binds[0], stmt, optimizer, self.key(args["loss"]), variables,
                                args.get("global_step"), negated)

    def slice(self, names, cut=()) -> List[Computed]:
        """The computed statements ``names`` need, in the program's order: a name read is
        its last binding above the reader (for a fetch, its last binding); the names of
        ``cut`` are given (a run feeds them), not computed."""
        at = {id(c): n for n, c in enumerate(self.order)}
        todo, needed = [(name, len(self.order)) for name in names if name not in cut], set()
        while todo:
            name, before = todo.pop()
            if name in cut:
                continue
            made = next((c for c in reversed(self.order[:before]) if name in c.binds), None)
            if made is None or id(made) in needed:
                continue
            needed.add(id(made))
            todo.extend((read, at[id(made)]) for read in made.reads)
        return [c for c in self.order if id(c) in needed]

def _scope_name(value: cst.BaseExpression) -> str:
    """A scope's name: the string, or ``{expression}`` for one named when the program runs."""
    return value.evaluated_value if isinstance(value, cst.SimpleString) else "{" + code(value) + "}"
