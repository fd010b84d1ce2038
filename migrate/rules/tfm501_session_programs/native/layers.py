"""TF1's functional layers (``tf.layers.dense`` ...) read as Keras layers made once (pure).

In the graph code, each call is one layer, made with the steps' definitions and called where
the call was. In a module function the graph calls (a model, a GAN's generator and
discriminator), each call of its body is one layer made before the function, the body
calling it: TF1 made those layers at the function's first call and, where the function's
variable scope reused them (``reuse=True``, ``scope.reuse_variables()``, ``tf.AUTO_REUSE``,
or a named layer's own ``reuse=``), its later calls shared them. A later call that does not reuse made new layers in TF1 (or
failed): not written here. The function's variable scopes become name scopes around the
calls, so the layers' variables keep TF1's names (``Generator/dense/kernel``).

``tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="Generator")`` (or
``tf.trainable_variables("Generator")``) bound to a name that only ``var_list=`` reads: the
trainable variables made so far whose TF1 names the scope matches, as TF1 filtered them.
"""
from __future__ import annotations

import builtins
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of
from migrate.codemod.tf1_layers import LAYERS, WEIGHTLESS

from ..syntax import _ids, _value
from . import batchnorm, copies, optimizers, regularizers
from .model import Layer, LayerFunction
from .syntax import _binds, _bound, _names_read, _names_read_beside

# TF1's functional layers written as one Keras layer made once (TF1's layer name given, so
# its variables keep TF1's names): what the Keras class takes the same way. Batch norm's
# `training` (often a fed boolean) goes to the layer's call, which tf_keras takes as a tensor
# too (``batchnorm``); dropout's masks are not TF 1.15's: not here.
NATIVE_LAYERS = {f"tf.layers.{name}": name for name in LAYERS if name != "dropout"}
CALL_ARGS = ("training",)  # arguments of the layer's call, not of its constructor
NATIVE_LAYERS["tf.contrib.layers.flatten"] = "flatten"  # (TF 1.15's is tf.layers.flatten in a name scope)
NOT_KERAS = {"activity_regularizer", "kernel_constraint",
             "bias_constraint", "depthwise_regularizer", "pointwise_regularizer", "depthwise_constraint",
             "pointwise_constraint", "reuse"}
VARIABLE_SCOPE_PARAMS = ("name_or_scope", "default_name", "values", "initializer", "regularizer",
                         "caching_device", "partitioner", "custom_getter", "reuse", "dtype", "use_resource",
                         "constraint", "auxiliary_name_scope")
COLLECTIONS = {"tf.get_collection": ("key", "scope"), "tf.trainable_variables": ("scope",)}
AUTO = "auto"  # tf.AUTO_REUSE: made where missing, reused where made


@dataclass
class _Found:
    """A layer call of a function's body: the scopes around it and their reuse arguments."""
    call: cst.Call
    scope: Tuple[str, ...]
    reuse: Tuple[cst.BaseExpression, ...]


@dataclass
class _Function:
    """A module function whose body makes layers, as read (its layers once first called)."""
    func: cst.FunctionDef
    found: List[_Found] = field(default_factory=list)
    scopes: List[cst.WithItem] = field(default_factory=list)
    reuses: List[cst.If] = field(default_factory=list)
    layers: List[Layer] = field(default_factory=list)  # made by the first call
    regularizers: set = field(default_factory=set)  # ids of tf.contrib's given to its layers
    # names its body reads only as its layers' regularizers (read when they are made)
    regularizer_names: set = field(default_factory=set)

    def allowed(self) -> set:
        """The ids of its calls the native form writes (the layers, the variable scopes, the
        contrib regularizers given to layers, read with them at the first call)."""
        return {id(f.call) for f in self.found} | {id(item.item) for item in self.scopes} | self.regularizers


# -- layers of the graph code -----------------------------------------------------------
def graph_layers(reader, value, binds) -> Optional[str]:
    """The functional layers of a graph statement, each one Keras layer made once; why one
    cannot be, else None."""
    for call in nodes_of(value, (cst.Call,)):
        function = NATIVE_LAYERS.get(reader.call_name(call) or "")
        if function is None:
            continue
        # in a variable scope of the graph: TF1 named its variables in it (``policy/fc1/kernel``),
        # the step calls it in a name scope of the same name (see ``Computed.scope``)
        scope = "/".join(reader.variable_scope_names)
        made = _layer(reader, call, function, scope, binds[0] if call is value and len(binds) == 1 else None, None)
        if isinstance(made, str):
            return made
    return None


def read_beside_layers(reader, stmt) -> Tuple[str, ...]:
    """The names a graph statement reads, but for the arguments its layer calls make their
    layers from (those are read once, where the layers are made)."""
    made = {id(a.value) for call in nodes_of(stmt, (cst.Call,)) if (reader.call_name(call) or "") in NATIVE_LAYERS
            for a in call.args[1:] if not (a.keyword is not None and a.keyword.value in CALL_ARGS)}
    return _names_read_beside(stmt, made, reader.self_name)


def _layer(reader, call: cst.Call, function: str, scope: str, bound: Optional[str],
           owner: Optional[str]) -> Union[Layer, str]:
    """The Keras layer of one call, named as TF1 named it (its ``name=``, else the function's
    name made unique in its variable scope: dense, dense_1), added to what the program makes."""
    keras, params, _ = LAYERS[function]
    args = optimizers.arguments(call, ("inputs", *params))
    if args is None or "inputs" not in args:
        return f"a tf.layers.{function} call whose arguments cannot be read"
    if function == batchnorm.BATCH_NORM:
        why = batchnorm.readable(reader, call, args)
        if why:
            return why
    for name in (n for key, value in args.items() if key not in ("inputs", *CALL_ARGS)
                 for n in _names_read(value, reader.self_name)):  # (the layer is made once)
        if name in reader.placeholders or name in reader.state:
            return f"tf.layers.{function}'s arguments read the graph value {name!r}"
        why = reader.made_once(name) if name in reader.computed else None
        if why:
            return f"tf.layers.{function}'s arguments read the graph value {name!r}, {why}"
    extra = sorted(set(args) & NOT_KERAS - ({"reuse"} if owner is not None else set()))
    if extra:
        return f"tf.layers.{function}'s {extra[0]}= (regularizers, constraints, reuse)"
    for key in regularizers.PARAMS:
        why = regularizers.layer_regularizer(reader, args[key]) if key in args else None
        if why:
            return f"tf.layers.{function}'s {key}= is {why}"
    given = args.get("name")
    if given is not None and not isinstance(given, cst.SimpleString):
        return f"a tf.layers.{function} named by an expression"
    if "reuse" in args and given is None:  # (TF1 reused the function's name: dense)
        return f"a tf.layers.{function} given reuse= without a name"
    taken = {layer.scoped for layer in reader.layers}
    prefix = scope + "/" if scope else ""
    if given is not None:
        name = given.evaluated_value
        if prefix + name in taken:
            return f"two layers named {prefix + name!r} (TF1 reused or renamed them)"
    else:
        name = next(n for n in (function if k == 0 else f"{function}_{k}" for k in range(len(taken) + 1))
                    if prefix + n not in taken)
    # the layer object is named for what it makes (`pool1 = max_pooling2d(...)`: pool1_layer)
    made = bound.rpartition(".")[2] if bound and not given else re.sub(r"\W", "_", f"{scope.lower()}_{name}" if scope else name)
    layer = Layer(call, keras, name, given is not None, function, made, scope, owner, regularizers.regularized(args))
    reader.layers.append(layer)
    reader.allowed.add(id(call))
    trainable = args.get("trainable")
    if function not in WEIGHTLESS:  # its variables, once built (trainable=False: a global collection's)
        reader.variables.append((layer, not (isinstance(trainable, cst.Name) and trainable.value == "False")))
    return layer


# -- layers of the functions the graph calls --------------------------------------------
def function_calls(reader, value) -> Optional[str]:
    """Calls of module functions making layers in a graph statement: the first call makes
    their layers, a later one must reuse them; why not written natively, else None."""
    for call in nodes_of(value, (cst.Call,)):
        if not (isinstance(call.func, cst.Name) and call.func.value in reader.module_functions):
            continue
        read = prepared(reader, reader.module_functions[call.func.value])
        if read is None:
            continue
        if isinstance(read, str):
            return read
        name = read.func.name.value
        if reader.variable_scope_names:
            return f"{name}() makes layers and is called in a variable scope of the graph"
        reuse = _reuse_at(read, call)
        if isinstance(reuse, str):
            return reuse
        if not read.layers:  # the first call: TF1 made the layers (reusing nothing)
            if True in reuse:
                return f"{name}()'s first call reuses variables it never made"
            for found in read.found:
                made = _layer(reader, found.call, NATIVE_LAYERS[reader.call_name(found.call)],
                              "/".join(found.scope), None, name)
                if isinstance(made, str):
                    return f"{name}() makes {made}"
                read.layers.append(made)
            reader.allowed |= read.allowed()
        elif False in reuse:
            return f"{name}() is called again without reusing its variables (TF1 made new layers)"
    return None


def prepared(reader, func: cst.FunctionDef) -> Union[_Function, str, None]:
    """The function as read (None: it makes no layers; a string: why it is not written)."""
    name = func.name.value
    if name not in reader.layer_functions:
        reader.layer_functions[name] = _read_function(reader, func)
    return reader.layer_functions[name]


def _read_function(reader, func: cst.FunctionDef) -> Union[_Function, str, None]:
    if not any(NATIVE_LAYERS.get(reader.call_name(c) or "") for c in nodes_of(func.body, (cst.Call,))):
        return None
    name = func.name.value
    params = func.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None or params.posonly_params:
        return f"{name}() makes layers and takes *args or **kwargs"
    read = _Function(func)
    why = _walk(reader, read, func.body.body, (), ())
    if why:
        return f"{name}() makes layers {why}"
    local = {p.name.value for p in (*params.params, *params.kwonly_params)} | _bound(func.body.body)
    at = next(i for i, s in enumerate(reader.module_body) if s is func)
    before = _bound(reader.module_body[:at]) | reader.imported | set(dir(builtins))
    given: set = set()  # the names its regularizer arguments read
    for found in read.found:  # the layers are made before the function: from what is bound there
        _, params_, _ = LAYERS[NATIVE_LAYERS[reader.call_name(found.call)]]
        args = optimizers.arguments(found.call, ("inputs", *params_)) or {}
        for key, arg in args.items():
            if key in ("inputs", "reuse"):
                continue
            if key in regularizers.PARAMS:
                read.regularizers |= {id(c) for c in nodes_of(arg, (cst.Call,))
                                      if reader.call_name(c) in regularizers.CONTRIB}
                given |= {id(n) for n in nodes_of(arg, (cst.Name,))}
            for read_name in _names_read(arg):
                if read_name in local:
                    return f"{name}() makes a layer from {read_name!r}, which it computes or takes"
                if read_name not in before:
                    return f"{name}() makes a layer from {read_name!r}, bound after the function"
    names = list(nodes_of(func.body, (cst.Name,)))
    read.regularizer_names = {n.value for n in names if id(n) in given} - {n.value for n in names
                                                                           if id(n) not in given}
    uses = [n for n in nodes_of(reader.module, (cst.Name,)) if n.value == name]
    graph = {id(c) for stmt in reader.graph for c in nodes_of(stmt, (cst.Call,))
             if isinstance(c.func, cst.Name) and c.func.value == name}
    if len(uses) != len(graph) + 1:  # its name and its calls in this program's graph only
        return f"{name}() makes layers and is used other than by calls of this program's graph"
    return read


def _walk(reader, read: _Function, body, scope: Tuple[str, ...], reuse: Tuple) -> Optional[str]:
    """Reads the statements of a function making layers; why not written, else None."""
    for stmt in body:
        layers = [c for c in nodes_of(stmt, (cst.Call,)) if NATIVE_LAYERS.get(reader.call_name(c) or "")]
        if isinstance(stmt, cst.SimpleStatementLine):  # (a layer's own reuse= too)
            read.found += [_Found(call, scope, (*reuse, *_own_reuse(call))) for call in layers]
        elif isinstance(stmt, cst.With):
            inner = list(stmt.body.body)
            names, reuses = list(scope), list(reuse)
            for item in stmt.items:
                why = _scope(reader, read, item, inner, names, reuses)
                if why:
                    return why
            if len(stmt.items) > 1 or not all(isinstance(s, (cst.SimpleStatementLine, cst.With)) for s in inner):
                return f"in a block ({code(stmt).strip().splitlines()[0][:60]!r})"
            why = _walk(reader, read, inner, tuple(names), tuple(reuses))
            if why:
                return why
        elif layers:
            return f"in a block ({code(stmt).strip().splitlines()[0][:60]!r})"
    return None


def _own_reuse(call: cst.Call) -> Tuple[cst.BaseExpression, ...]:
    """``tf.layers.dense(x, 8, name="fc", reuse=reuse)``: the layer's own reuse argument."""
    return tuple(a.value for a in call.args if a.keyword is not None and a.keyword.value == "reuse")


def _scope(reader, read: _Function, item: cst.WithItem, inner: list, names: list, reuses: list) -> Optional[str]:
    """``tf.variable_scope("Generator"[, reuse=...])`` (``as scope`` read only by a first
    ``if reuse: scope.reuse_variables()``, which goes)."""
    call = item.item
    if not (isinstance(call, cst.Call) and reader.call_name(call) == "tf.variable_scope"):
        return f"under {code(call)[:40]} (TF1 named layers by variable scopes only)"
    args = optimizers.arguments(call, VARIABLE_SCOPE_PARAMS)
    if args is None or set(args) - {"name_or_scope", "reuse"} \
            or not isinstance(args.get("name_or_scope"), cst.SimpleString):
        return f"in a variable scope other than a named one ({code(call)[:50]!r})"
    names.append(args["name_or_scope"].evaluated_value)
    if "reuse" in args:
        reuses.append(args["reuse"])
    read.scopes.append(item)
    if item.asname is None:
        return None
    target = item.asname.name
    first = inner[0] if inner else None
    if not (isinstance(target, cst.Name) and isinstance(first, cst.If) and first.orelse is None
            and len(first.body.body) == 1 and code(first.body.body[0]).strip() == f"{target.value}.reuse_variables()"):
        return f"with its variable scope bound to a name ({code(call)[:50]!r})"
    reads = [n for s in inner[1:] for n in nodes_of(s, (cst.Name,)) if n.value == target.value]
    if reads:
        return f"reading its variable scope {target.value!r}"
    reuses.append(first.test)
    read.reuses.append(first)
    inner.pop(0)
    return None


def _reuse_at(read: _Function, call: cst.Call) -> Union[Tuple[object, ...], str]:
    """Each layer's reuse at this call: True, False or AUTO (TF1's reuse is inherited: a
    scope reusing makes every scope in it reuse)."""
    params = [p for p in (*read.func.params.params, *read.func.params.kwonly_params)]
    given: Dict[str, cst.BaseExpression] = {}
    for at, arg in enumerate(call.args):
        if arg.star:
            return f"{read.func.name.value}() called with *args or **kwargs"
        key = arg.keyword.value if arg.keyword is not None else params[at].name.value if at < len(params) else None
        if key is None:
            return f"{read.func.name.value}() called with more arguments than it takes"
        given[key] = arg.value
    defaults = {p.name.value: p.default for p in params if p.default is not None}
    out: List[object] = []
    for found in read.found:
        values = []
        for expr in found.reuse:
            if isinstance(expr, cst.Name) and expr.value in {p.name.value for p in params}:
                expr = given.get(expr.value, defaults.get(expr.value))
            value = _literal(expr)
            if value is None:
                return f"{read.func.name.value}()'s reuse is not a literal at a call ({code(call)[:50]!r})"
            values.append(value)
        out.append(True if True in values else AUTO if AUTO in values else False)
    return tuple(out)


def _literal(expr) -> Optional[object]:
    if expr is None:
        return False
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return expr.value == "True"
    if isinstance(expr, cst.Attribute) and expr.attr.value == "AUTO_REUSE":
        return AUTO
    return None


def functions(reader) -> Tuple[LayerFunction, ...]:
    """The functions whose layers the program makes (those called in its graph)."""
    return tuple(LayerFunction(f.func, tuple(f.layers), tuple(f.scopes), tuple(f.reuses))
                 for f in reader.layer_functions.values() if isinstance(f, _Function) and f.layers)


# -- collections of variables -----------------------------------------------------------
def collection(reader, stmt, binds, value) -> Optional[str]:
    """``d_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="D")``, ``t_vars =
    tf.trainable_variables()``, ``d_vars = [v for v in t_vars if "d_" in v.name]``: bound to a
    name only ``var_list=`` and such filters read (``collections_read``)."""
    if binds is None or len(binds) != 1:
        return "a collection of variables not bound to one name"
    made = filtered(reader, value) if isinstance(value, cst.ListComp) else collected(reader, value)
    if isinstance(made, str):
        return made
    key = value.args[0].value if isinstance(value, cst.Call) and value.args else None
    if isinstance(key, cst.Attribute) and key.attr.value == "GLOBAL_VARIABLES":
        reader.global_collections.add(binds[0])  # (read by copies: no var_list)
        # a trained variable's optimizer slots were global variables too, made by minimize()
        # after the variables it trains: TF1's collection held them after those
        trained = {v: reader.trained_from[t.key] for t in reader.trainings.values()
                   for v in copies.differentiated(reader, t.loss)}
        ids = [id(v) if isinstance(v, Layer) else v for v in made]
        if any(i in trained for i in ids):
            if not all(i in trained for i in ids) or max(_made_at(reader, made)) >= min(trained[i] for i in ids):
                return "a collection of global variables mixing trained ones with others or made after training"
            reader.slotted.add(binds[0])
    reader.collected[binds[0]] = made
    reader.dropped.append(stmt)
    return None


def _made_at(reader, made) -> List[int]:
    """Where each of ``made`` stands in the order the variables were made."""
    order = [id(v) if isinstance(v, Layer) else v for v, _ in reader.variables]
    return [order.index(id(v) if isinstance(v, Layer) else v) for v in made]


def is_filter(reader, value) -> bool:
    """``[v for v in t_vars if ...]`` over a collection read here."""
    return isinstance(value, cst.ListComp) and isinstance(value.for_in.iter, cst.Name) \
        and value.for_in.iter.value in reader.collected


def collected(reader, call: cst.Call) -> Union[Tuple[Union[str, Layer], ...], str]:
    """The trainable variables made so far whose TF1 names the scope matches (``re.match``,
    as TF1 matched them), or why they are not read."""
    kind = reader.call_name(call)
    args = optimizers.arguments(call, COLLECTIONS[kind])
    key, scope = (args or {}).get("key"), (args or {}).get("scope")
    which = key.attr.value if isinstance(key, cst.Attribute) else None
    if isinstance(key, cst.SimpleString) and scope is None and kind == "tf.get_collection":
        named = reader.named_collections.get(key.evaluated_value)  # tf.get_variable(..., collections=[...])
        return tuple(named) if named else f"the collection {key.evaluated_value!r}, which no variable made here is in"
    if args is None or scope is not None and not isinstance(scope, cst.SimpleString) or (
            kind == "tf.get_collection" and which not in ("TRAINABLE_VARIABLES", "GLOBAL_VARIABLES")):
        return f"the graph uses {kind}, which is not written natively yet"
    pattern = scope.evaluated_value if scope is not None else ""
    # (the global variables: the trainable ones and the others, a target network's)
    return _matching(reader, lambda name: re.match(pattern, name) is not None, trainable=which != "GLOBAL_VARIABLES")


def var_list(reader, expr) -> Optional[Tuple[Union[str, Layer], ...]]:
    """The variables of ``var_list=[w, b]``, of a name bound to such a list (``gen_vars =
    [weights["gen"], ...]``), of a dict of the state (``weights.values()``), or of a
    collection by scope (``layers.collection``)."""
    key = reader.key(expr)
    if key in reader.collected:
        # one of global variables: TF1 trained the variables it held, optimizer slots too where
        # it was taken after a minimize; taken before any, of trainable ones only, it is those
        made = reader.collected[key]
        trainable = {id(v) if isinstance(v, Layer) else v for v, t in reader.variables if t}
        return made if key not in reader.global_collections or key not in reader.slotted and all(
            (id(v) if isinstance(v, Layer) else v) in trainable for v in made) else None
    if isinstance(expr, cst.Call) and reader.call_name(expr) in COLLECTIONS:
        made = collected(reader, expr)  # var_list=tf.trainable_variables("d_")
        return None if isinstance(made, str) else made
    if isinstance(expr, cst.Call) and code(expr.func) == "list" and len(expr.args) == 1:
        expr = expr.args[0].value  # list(weights.values())
    owner = expr.func.value.value if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
        and not expr.args and expr.func.attr.value == "values" and isinstance(expr.func.value, cst.Name) else ""
    made = reader.state.get(owner, ())
    if made and all(e[len(owner) + 1:][:1] in ("'", '"') for e, _ in made):  # a dict literal of the state
        return tuple(e for e, _ in made)
    if isinstance(expr, cst.Name) and expr.value in reader.computed:
        made = reader.computed[expr.value].stmt
        expr = _value(made) if len(reader.computed[expr.value].binds) == 1 else None
    if isinstance(expr, (cst.List, cst.Tuple)):
        out = []
        for element in expr.elements:
            text = code(element.value)
            if text not in {e for e, _ in reader.variables}:
                return None
            out.append(text)
        return tuple(out)
    return None


def filtered(reader, comp: cst.ListComp) -> Union[Tuple[Union[str, Layer], ...], str]:
    """``[v for v in t_vars if "d_" in v.name]`` (or ``v.name.startswith("d_")``)."""
    loop = comp.for_in
    test = loop.ifs[0].test if len(loop.ifs) == 1 else None
    if not (is_filter(reader, comp) and isinstance(loop.target, cst.Name) and isinstance(comp.elt, cst.Name)
            and comp.elt.value == loop.target.value and loop.inner_for_in is None and test is not None):
        return "a list of variables the native form does not read"
    name_of = f"{loop.target.value}.name"
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.In) and isinstance(test.left, cst.SimpleString) \
            and code(test.comparisons[0].comparator) == name_of:
        part = test.left.evaluated_value
        keep = (lambda name: part in name)
    elif isinstance(test, cst.Call) and code(test.func) == f"{name_of}.startswith" and len(test.args) == 1 \
            and isinstance(test.args[0].value, cst.SimpleString):
        part = test.args[0].value.evaluated_value
        keep = (lambda name: name.startswith(part))
    else:
        return "a list of variables filtered other than by a string in their names"
    among = {id(v) if isinstance(v, Layer) else v for v in reader.collected[loop.iter.value]}
    return _matching(reader, keep, among)


def _matching(reader, keep, among=None, trainable=True) -> Union[Tuple[Union[str, Layer], ...], str]:
    """The trainable variables (``trainable=False``: all) (a layer: all of its, or none) whose
    TF1 names (``d_h1/kernel:0``) ``keep`` keeps."""
    names = dict(reader.tf1_names)
    out: List[Union[str, Layer]] = []
    for variable, is_trainable in reader.variables:
        if trainable and not is_trainable or among is not None and (id(variable) if isinstance(variable, Layer) else variable) \
                not in among:
            continue
        if isinstance(variable, Layer):
            kept = {keep(f"{variable.scoped}/{w}:0") for w in ("kernel", "bias")}
            if len(kept) != 1:
                return f"a collection of some of the variables of the layer {variable.scoped!r}"
            if kept.pop():
                out.append(variable)
            continue
        name = names.get(variable)
        if name is None:
            return "a collection of variables whose TF1 names are not known here"
        if keep(name + ":0"):
            out.append(variable)
    return tuple(out)


def collections_read(reader) -> Optional[str]:
    """Why a collection is read other than as a ``var_list=`` (or by a filter of it)."""
    allowed = {id(n) for a in nodes_of(reader.module, (cst.Arg,)) if a.keyword is not None
               and a.keyword.value == "var_list" for n in nodes_of(a.value, (cst.Name,))}
    made = [s for s in reader.dropped if (_binds(s, reader.self_name) or ("",))[0] in reader.collected]
    made += [copy.stmt for copy in reader.copies.values()]  # (their filters, variable copies)
    allowed |= {id(n) for stmt in made for n in nodes_of(stmt, (cst.Name,))}
    listed = {_binds(stmt, reader.self_name)[0] for stmt, _ in reader.listed}  # (lists of their own)
    for name in set(reader.collected) - listed:
        if any(n.value == name and id(n) not in allowed for n in nodes_of(reader.module, (cst.Name,))):
            return f"the collection {name!r} is read other than as a var_list"
    return None


__all__ = ["CALL_ARGS", "COLLECTIONS", "NATIVE_LAYERS", "collected", "collection", "collections_read", "function_calls",
           "functions", "graph_layers", "is_filter", "prepared"]


def variables_read(reader, computed) -> Tuple[Union[str, Layer], ...]:
    """The variables ``computed`` (graph statements) read: those of the state they name, and
    those of the layers they call (in them, or in the module functions they call)."""
    out: List[Union[str, Layer]] = [name for c in computed for name in c.reads if name in reader.state]
    out += [layer for layer in reader.layers if calls_layer(computed, layer)]
    return tuple(out)


def calls_layer(computed, layer: Layer) -> bool:
    """Whether the graph statements call the layer (in them, or in the module function
    making it)."""
    return any(id(layer.call) in _ids(c.stmt) or layer.owner is not None and any(
        isinstance(call.func, cst.Name) and call.func.value == layer.owner for call in nodes_of(c.stmt, (cst.Call,)))
        for c in computed)
