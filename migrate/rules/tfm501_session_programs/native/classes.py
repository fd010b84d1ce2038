"""A class's Session program, native (#58): an agent or model object that builds its graph
in ``__init__`` with placeholders as attributes, makes its own session there and runs it
from its methods (``self.sess.run(self.q_eval, feed_dict={self.s: obs})``).

The object keeps its public methods and their signatures. Its layers are made where
``__init__`` (or a build method it calls, ``self._build_net()``) called them, its variables
and optimizers where they were, once; each kind of run of its methods becomes a
``@tf.function`` method of the class (``compute_q_eval(self, s)``, ``train_step``), whose
parameters are the placeholders the run feeds and whose locals are the graph values it
computes (``self.q_eval`` is ``q_eval`` there: the attribute held a graph tensor, which TF2
has not); the session and its initializer go. Where a step's TensorSpecs read ``__init__``'s
values (``n_features``) its signature is given there (``self.step = tf.function(self.step,
input_signature=[...])``). The planner has made sure the graph's attributes are read by the
session's runs only. Pure but for :func:`localized` (a transform of written code).

Not written natively, said why: a graph built elsewhere, a layer made from values bound
where it is called, a step reading ``__init__``'s locals, and what the class form does not
cover yet (Savers, summaries, functions making layers).
"""
from __future__ import annotations

import builtins
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from migrate.codemod.cstutil import nodes_of

from ..syntax import GRAPH_SEEDS, ObjectKeys, _ids, _key, _value
from .model import NativeProgram
from .syntax import _bound, _imported, _names_read


@dataclass(frozen=True)
class ClassForm:
    """The class whose ``__init__`` holds the program, and its methods' first parameter."""
    cls: cst.ClassDef
    init: cst.FunctionDef
    self_name: str
    # build methods __init__ calls (``self._build_net()``): (the call's statement, the method)
    built: Tuple[Tuple[cst.BaseStatement, cst.FunctionDef], ...] = ()
    graph: Tuple[cst.BaseStatement, ...] = ()  # the graph's statements, as planned

    def ref(self, name: str) -> str:
        """An attribute of the object: ``self.name``."""
        return f"{self.self_name}.{name}"

    @property
    def builders(self) -> Tuple[cst.FunctionDef, ...]:
        """``__init__`` and the build methods it calls: where the graph was made."""
        return (self.init, *(method for _, method in self.built))


VARIABLE_MAKERS = ("tf.get_variable", "tf.Variable")
SCOPE_MAKERS = ("tf.variable_scope", "tf.name_scope")


def kept_on_object(form: ClassForm, call_name) -> ClassForm:
    """``form`` whose ``self_name`` keys the variables its build methods bind to locals
    (``w1 = tf.get_variable("w1", ...)``) as attributes of the object: the steps, now methods,
    read them there (``self.w1``), as a TF2 class keeps what ``__init__``/``build`` made. A
    local bound so in several scopes (an evaluation and a target net) is named by its scopes
    (``self.eval_net_l1_w1``, ``self.target_net_l1_w1``); each read is of the binding above it."""
    bindings: List[Tuple[cst.Name, Tuple[str, ...]]] = []
    for method in form.builders:
        _variable_bindings(method.body.body, (), call_name, bindings)
    taken = {a.attr.value for a in nodes_of(form.cls, (cst.Attribute,))
             if isinstance(a.value, cst.Name) and a.value.value == form.self_name} \
        | {s.name.value for s in form.cls.body.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    count = Counter(name.value for name, _ in bindings)
    attrs: Dict[int, str] = {}
    for name, scopes in bindings:
        attr = name.value if count[name.value] == 1 else re.sub(r"\W", "_", "_".join((*scopes, name.value)))
        if attr in taken or not attr.isidentifier():
            continue
        taken.add(attr)
        attrs[id(name)] = f"self.{attr}"
    promoted: Dict[int, Tuple[cst.Name, str]] = {}
    for method in form.builders:
        _reads_of(method.body.body, attrs, {}, promoted)
    return replace(form, self_name=ObjectKeys(form.self_name, promoted.values())) if promoted else form


def kept_edits(finding, form: ClassForm) -> None:
    """Each local the object keeps, where it stays (``w1 = tf.Variable(...)`` in the build
    method), as the object's attribute (``self.eval_net_l1_w1``); the steps' own are
    written so by ``moved_reads``."""
    for node, key in getattr(form.self_name, "nodes", ()):
        finding.replace(node, lambda updated, key=key: _attribute(form.self_name, key))


def moved_reads(form: ClassForm, original: cst.BaseStatement, moved: cst.BaseStatement) -> cst.BaseStatement:
    """A statement moved into a step (``moved``, as the fixes left ``original``) reading the
    object's kept locals as its attributes: each read is of the binding above ``original``,
    so one statement reads one binding of a name."""
    promoted = getattr(form.self_name, "promoted", {})
    keys = {n.value: promoted[id(n)] for n in nodes_of(original, (cst.Name,)) if id(n) in promoted}
    if not keys:
        return moved
    self_name = str(form.self_name)

    class Kept(cst.CSTTransformer):
        def leave_Name(self, original_node, updated):
            return _attribute(self_name, keys[updated.value]) if updated.value in keys else updated

        def leave_Attribute(self, original_node, updated):  # (``x.w1``: not the local)
            return updated.with_changes(attr=original_node.attr)

        def leave_Arg(self, original_node, updated):  # (``f(w1=...)``: neither)
            return updated.with_changes(keyword=original_node.keyword)
    return moved.visit(Kept())


def _attribute(self_name: str, key: str) -> cst.Attribute:
    return cst.Attribute(cst.Name(str(self_name)), cst.Name(key.split(".", 1)[1]))


def _variable_bindings(body, scopes, call_name, out) -> None:
    """The Name nodes a statement of ``body`` binds to a new variable, with their scopes."""
    for stmt in body:
        if isinstance(stmt, cst.With):
            inner = [call_name(i.item) in SCOPE_MAKERS and i.item.args and isinstance(i.item.args[0].value, cst.SimpleString)
                     and i.item.args[0].value.evaluated_value for i in stmt.items]
            _variable_bindings(stmt.body.body, (*scopes, *(n for n in inner if n)), call_name, out)
            continue
        value = _value(stmt)
        target = stmt.body[0].targets[0].target if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and isinstance(stmt.body[0], cst.Assign) and len(stmt.body[0].targets) == 1 else None
        if isinstance(target, cst.Name) and isinstance(value, cst.Call) and call_name(value) in VARIABLE_MAKERS:
            out.append((target, scopes))


def _reads_of(body, attrs: Dict[int, str], alive: Dict[str, str], out: Dict[int, Tuple[cst.Name, str]]) -> None:
    """Each Name node reading (or binding) a kept variable -> its attribute's key: a read is
    of the binding above it, until the local is bound to something else."""
    for stmt in body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            alive.pop(stmt.name.value, None)
            continue
        if isinstance(stmt, cst.With):
            _reads_of(stmt.body.body, attrs, alive, out)
            continue
        targets = {id(n) for t in nodes_of(stmt, (cst.AssignTarget, cst.AugAssign, cst.For, cst.CompFor, cst.AsName))
                   for n in nodes_of(getattr(t, "target", None) or getattr(t, "name", None), (cst.Name,))}
        skip = {id(a.attr) for a in nodes_of(stmt, (cst.Attribute,))} \
            | {id(a.keyword) for a in nodes_of(stmt, (cst.Arg,)) if a.keyword is not None}
        for name in nodes_of(stmt, (cst.Name,)):
            if id(name) not in targets and id(name) not in skip and name.value in alive:
                out[id(name)] = (name, alive[name.value])
        for name in nodes_of(stmt, (cst.Name,)):
            if id(name) in targets:
                if id(name) in attrs:
                    alive[name.value] = attrs[id(name)]
                    out[id(name)] = (name, attrs[id(name)])
                else:
                    alive.pop(name.value, None)


def complete(form: ClassForm, anchor: cst.BaseStatement) -> cst.BaseStatement:
    """The statement of ``__init__`` after which the graph was complete (its last graph
    statement, or the call of its last build method; else the session's, ``anchor``): the
    steps are ready from there."""
    graph = {id(s) for s in form.graph} | {id(call) for call, _ in form.built}
    return next((s for s in reversed(form.init.body.body) if graph & _ids(s)), anchor)


def homes(form: ClassForm, layers) -> Dict[int, cst.BaseStatement]:
    """Where each layer is made: before the statement of ``__init__`` or of a build method
    that called it (its arguments are bound there), by id of the layer."""
    out: Dict[int, cst.BaseStatement] = {}
    for method in form.builders:
        for stmt in method.body.body:
            inside = _ids(stmt)
            for layer in layers:
                if id(layer.call) in inside and layer.owner is None:
                    out[id(layer)] = stmt
    return out


def seeds(form: Optional[ClassForm], reader, module: cst.Module) -> tuple:
    """The program's ``tf.set_random_seed(1)`` statements (``tf.random.set_seed`` natively):
    its graph's, and a class's the module's own where it is the module's one class (TF1 set
    the default graph's seed there, TF2's function sets the global one, as the graph's)."""
    if form is None or sum(isinstance(s, cst.ClassDef) for s in module.body) != 1:
        return tuple(reader.seeds)
    return (*reader.seeds, *(s for s in module.body if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
                             and reader.call_name(_value(s)) in GRAPH_SEEDS))


def blocker(form: ClassForm, reader, program: NativeProgram) -> Optional[str]:
    """Why the class's program is not written natively, else None."""
    inside = {i for method in form.builders for i in _ids(method)}
    if any(id(s) not in inside for s in reader.graph):
        return "the graph is built by another method than __init__ and the build methods it calls"
    found = homes(form, program.layers)
    for layer in program.layers:  # made before the statement calling it: its arguments bound by then
        home = found.get(id(layer))
        made_in = _bound([home]) if home is not None else set()
        late = [n for a in layer.call.args[1:] for n in _names_read(a.value, form.self_name) if n in made_in]
        if home is None or late:
            return f"the layer {layer.name!r} is made from {late[0]!r}, bound where it is called" if late \
                else f"the layer {layer.name!r} is made outside __init__ and its build methods"
    for present, what in ((program.saver is not None or program.saves, "a tf.train.Saver"),
                          (program.writers or any(s.summaries for s in program.steps), "summaries"),
                          (program.layer_functions, "functions making layers"),
                          (program.renames or program.reopened or program.assigns,
                           "runs assigning variables or a second session")):
        if present:
            return f"a class's program with {what} (its native form is not written yet)"
    made_locals = {p.name.value for m in form.builders for p in nodes_of(m.params, (cst.Param,))} \
        | {n for m in form.builders for n in _bound(m.body.body)}
    for step in program.steps:
        bound = {b for c in step.computed for b in c.binds}
        for computed in step.computed:  # (its reads leave a layer's arguments to the layer made where it was)
            read = (set(computed.reads) & made_locals) - bound
            if read:
                return f"a step reads __init__'s local {sorted(read)[0]!r} (keep it on the object to convert)"
        for copy in step.copies:
            read = set(_names_read(copy.value, form.self_name)) & made_locals - {copy.target, copy.source}
            if read:
                return f"a variable copy reads __init__'s local {sorted(read)[0]!r} (keep it on the object to convert)"
    return None


def method_names(form: ClassForm, program: NativeProgram) -> Dict[int, str]:
    """Each step's method name (``train_step``), unless the class keeps a method or an
    attribute of that name (then ``train_step_1``, ...); the graph's attributes go."""
    gone = {key.split(".", 1)[1] for key in removed_keys(program, "")} \
        | {c.key.rpartition(".")[2] for step in program.steps for c in step.copies}
    taken = {s.name.value for s in form.cls.body.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))} \
        | {a.attr.value for a in nodes_of(form.cls, (cst.Attribute,))
           if isinstance(a.value, cst.Name) and a.value.value == form.self_name and a.attr.value not in gone}
    return {id(step): _unique(step.name, taken) for step in program.steps}


def _unique(base: str, taken: Set[str]) -> str:
    """``base``, else ``base_1``, ``base_2``, ... (the one chosen is taken then)."""
    name, n = base, 1
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def removed_keys(program: NativeProgram, session: str) -> Set[str]:
    """The object's attributes that held graph values: gone with the graph."""
    keys = {session, *(key for key, _ in program.placeholders)}
    keys |= {b for step in program.steps for c in step.computed for b in c.binds}
    # (a train op made inline with its optimizer under a name naming one, ``self.optimizer =
    # tf.train.AdamOptimizer(lr).minimize(cost)``, names the Keras optimizer now: it stays)
    keys |= {t.key for step in program.steps for t in step.trainings
             if not (t.optimizer.stmt is t.stmt and "optim" in t.key.lower())}
    keys |= {b for c in (program.forward.computed if program.forward else ()) for b in c.binds}
    return {k for k in keys if k.startswith("self.")}


def local_names(form: ClassForm, program: NativeProgram, session: str) -> Dict[str, str]:
    """Each graph attribute's name in the steps (``self.q_eval`` -> ``q_eval``): its own
    name, unless ``__init__`` or a step uses that name for something else."""
    taken: Set[str] = set()
    for method in form.builders:
        skip = {id(a.attr) for a in nodes_of(method, (cst.Attribute,))} \
            | {id(a.keyword) for a in nodes_of(method, (cst.Arg,)) if a.keyword is not None}
        taken |= {n.value for n in nodes_of(method, (cst.Name,)) if id(n) not in skip}
    out: Dict[str, str] = {}
    for key in sorted(removed_keys(program, session)):
        # (no leading underscore: tf.function renames such a parameter, and a call by keyword fails)
        out[key] = _unique(key.split(".", 1)[1].lstrip("_") or "value", taken)
    return out


def localized(node: cst.CSTNode, self_name: str, names: Dict[str, str]) -> cst.CSTNode:
    """``node`` with each graph attribute (``self.q_eval``) its step's local (``q_eval``)."""
    class Localize(cst.CSTTransformer):
        def leave_Attribute(self, original, updated):
            key = _key(updated, self_name)
            return cst.Name(names[key]) if key in names else updated
    return node.visit(Localize())


def module_names(module: cst.Module) -> Set[str]:
    """The names a method's decorator can read: the module's own (not those of its
    functions' and classes' bodies), its imports' and the builtins."""
    bound = _imported(module) | set(dir(builtins))
    for stmt in module.body:
        bound |= {stmt.name.value} if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) else _bound([stmt])
    return bound


@dataclass(frozen=True)
class Methods:
    """How the steps are written as the class's methods: ``self`` first, the graph
    attributes their locals, the TensorSpecs in the decorator where the module's names
    make them (else given in ``__init__``: ``self.step = tf.function(self.step, ...)``)."""
    form: ClassForm
    names: Dict[str, str]          # graph attribute -> its local name in the steps
    module_names: Set[str]         # what a decorator can read (``module_names``)

    def param(self, key: str) -> str:
        return self.names.get(key, key)

    def params(self, keys) -> list:
        return [self.form.self_name, *(self.param(k) for k in keys)]

    def static(self, specs) -> bool:
        """Whether the TensorSpecs read only the module's names (the decorator can hold
        them); else the step is given its signature in ``__init__``."""
        return all(set(_names_read(cst.parse_expression(spec))) <= self.module_names for spec in specs)

    def written(self, func: cst.FunctionDef) -> cst.FunctionDef:
        return localized(func, self.form.self_name, self.names)

    def signatures(self, steps, names: Dict[int, str], specs: Dict[str, str], tf: str) -> list:
        """``self.step = tf.function(self.step, input_signature=[...])`` for each step whose
        TensorSpecs read ``__init__``'s values (``n_features``)."""
        out = []
        for step in steps:
            spec = [specs[p] for p in step.params]
            if step.params and not self.static(spec):
                method = self.form.ref(names[id(step)])
                out.append(cst.parse_statement(
                    f"{method} = {tf}.function({method}, input_signature=[{', '.join(spec)}])\n"))
        return out
