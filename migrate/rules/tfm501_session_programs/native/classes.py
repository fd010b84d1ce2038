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
from dataclasses import dataclass
from typing import Dict, Optional, Set, Tuple

import libcst as cst

from migrate.codemod.cstutil import nodes_of

from ..syntax import _ids, _key
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


def removed_keys(program: NativeProgram, session: str) -> Set[str]:
    """The object's attributes that held graph values: gone with the graph."""
    keys = {session, *(key for key, _ in program.placeholders)}
    keys |= {b for step in program.steps for c in step.computed for b in c.binds}
    keys |= {t.key for step in program.steps for t in step.trainings}
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
        base = key.split(".", 1)[1]
        name, n = base, 1
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        out[key] = name
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
