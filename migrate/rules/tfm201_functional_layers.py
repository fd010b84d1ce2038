"""TFM201: functional tf.layers calls -> Keras layer objects created once."""
import re
from typing import List, Optional, Tuple

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import (
    arg,
    call,
    code,
    fresh_name,
    is_chain_part,
    names_read,
    nodes_of,
    string_value,
)
from migrate.codemod.keras_weights import add_shim_decorator, is_keras_class
from migrate.codemod.resolver import local_names
from migrate.codemod.rule import Rule
from migrate.codemod.shared import graph_loop, in_graph_mode, resets_graph
from migrate.codemod.tf1_layers import LAYERS, WEIGHTLESS

CALL_ARGS = {"training"}  # arguments of the layer call, not the constructor
# a TF1 Session script (its module-level graph becomes a TFM501 program's build function)
GRAPH_SCRIPT = re.compile(r"\b(placeholder|placeholder_with_default|Session|InteractiveSession)\(")
KERAS3_MISSING = {"renorm", "renorm_clipping", "renorm_momentum", "fused", "virtual_batch_size",
                  "adjustment"}


class FunctionalLayers(Rule):
    code = "TFM201"
    needle = needles.TF_LAYERS
    summary = "functional tf.layers call creates new weights on every eager call"
    fixable = True
    explanation = """
`tf.layers.dense(x, ...)` and the other functional layers relied on TF1's graph and
variable scopes to reuse weights. In TF2 eager code every call creates fresh weights, so
the same input gives different outputs and checkpoints drift. tf_upgrade_v2 leaves these
calls untouched.

Each call becomes a Keras layer object created once and called at the original site.
Every argument maps to the Keras constructor or to the call (`training` for dropout and
batch norm, made explicit with TF1's default `training=False`); literal-None defaults are
dropped; `reuse` is expressed by sharing one object.

- In methods of Keras layers/models the layer becomes an attribute created once at the
  end of `__init__` (`self.<scope>_<name>`), called at the original site, when that is
  provably equivalent: not in a loop, literal scope and layer names, constructor
  arguments free of the method's locals. Calls with the same name share one attribute.
- Everywhere else inside functions and methods (free functions like BERT's
  `attention_layer`, plain classes, the cases above that are not provable) the layer is
  created once per variable scope with `shims.get_or_create_layer(name, factory)`, keyed
  like TF1 named it (unnamed layers get TF1's `dense`, `dense_1`, ... auto-names), so the
  function runs under `shims.legacy_layer(fn)` with every variable created once, tracked,
  and loadable from the TF1 checkpoint. Keras methods on this route get
  `@shims.track_tf1_style_variables`.
- At module level (eager scripts) one object is created before its first use and reused
  by every call with the same name, until `tf.reset_default_graph()` starts a new graph
  (a layer named as one before it is then another layer, as in TF1).
- A functional layer passed as a function (`partial(tf.layers.batch_normalization,
  training=training)`, `mp(tf.layers.dense, ...)`) is TF1's layer, `tf.compat.v1.layers.*`:
  called in graph mode or in a GraphProgram's build it makes TF1's variables.

For Keras 3 (`upgrade --keras 3`): `batch_normalization` becomes
`shims.keras3.BatchNormalization` (TF 1.15's arithmetic, a tensor `training`, UPDATE_OPS;
Keras 3's layer computes other moving statistics), `dropout` becomes `shims.dropout` (no
seed-state variable), and what only tf_keras has (`renorm`, `virtual_batch_size`,
`adjustment`; `tf.compat.v1.layers` in graph-mode code) is an error finding.
"""
    before = """
import tensorflow as tf

def encoder(x):
    with tf.variable_scope("encoder"):
        h = tf.layers.dense(x, 64, activation=tf.nn.relu, name="hidden")
        return tf.layers.dropout(h, rate=0.1)
"""
    after = """
import shims.keras2
import tensorflow as tf

def encoder(x):
    with tf.variable_scope("encoder"):
        h = shims.get_or_create_layer("hidden", lambda: tf.keras.layers.Dense(64, activation=tf.nn.relu, name="hidden"))(x)
        return shims.get_or_create_layer(None, lambda: tf.keras.layers.Dropout(0.1), default_name="dropout")(h, training=False)
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._tf1_names: dict = {}  # variable scope -> TF1 layer names taken
        self._module_layers: dict = {}  # literal layer name -> module-level layer variable
        self._attrs: dict = {}  # (id(class), scope, name) -> attribute of a layer made in __init__
        self._classes: dict = {}  # id(classdef) -> layers to add to its __init__
        self._tf_bound = None  # module names bound to TensorFlow values (a Session script's)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if self.ctx.enclosing(cst.FunctionDef) is None and resets_graph(self.ctx, node):
            self._module_layers = {}  # a new graph: TF1's layer names start again, and a
            self._tf1_names = {}      # layer named as one before it is another layer

    def visit_Attribute(self, node: cst.Attribute) -> None:
        """``partial(tf.layers.batch_normalization, training=training)``, ``layer =
        tf.layers.dense``: the function itself, called later with the inputs. No Keras object
        stands in for every call it makes: it is TF1's functional layer,
        ``tf.compat.v1.layers`` (TF1's variables where it is called in graph mode or in a
        GraphProgram's build)."""
        parent = self.ctx.parent()
        if self.ctx.in_import or is_chain_part(node, parent) \
                or isinstance(parent, cst.Call) and parent.func is node:
            return
        name = self.ctx.v1(node)
        if not name or not name.startswith("tf.layers.") or name[len("tf.layers."):] not in LAYERS:
            return
        function = name[len("tf.layers."):]
        self._tf1_layer(node, node, function, (
            f"tf.layers.{function} passed as a function: its TF2 form, tf.compat.v1.layers.{function}, "
            "exists in tf_keras only (not Keras 3); call a Keras layer object instead, or migrate this "
            "file for Keras 2"), (
            f"tf.layers.{function} passed as a function is tf.compat.v1.layers.{function} in TF2: TF1's "
            "variables where it is called in graph mode or a GraphProgram's build (elsewhere in eager "
            "code, new weights at every call)"))

    def visit_Call(self, node: cst.Call) -> None:
        name = self.ctx.v1(node.func)
        if not name or not name.startswith("tf.layers."):
            return
        function = name[len("tf.layers."):]
        spec = LAYERS.get(function)
        if spec is None:
            return
        if in_graph_mode(self.ctx):
            self._graph_mode(node, function)
            return
        self._convert(node, function, spec)

    def _graph_mode(self, node: cst.Call, function: str) -> None:
        """Code that runs in TF1 graph mode (the module or its function switches it on)
        keeps TF1's functional layer as ``tf.compat.v1.layers``: a Keras object there
        registers no UPDATE_OPS (batch norm's moving statistics never update) and draws
        other dropout masks."""
        self._tf1_layer(node, node.func, function, (
            f"tf.layers.{function} in TF1 graph mode: its TF2 form, tf.compat.v1.layers.{function}, "
            "exists in tf_keras only (not Keras 3); migrate this file for Keras 2 (without --keras 3) "
            "or make it eager"), (
            f"tf.layers.{function} is tf.compat.v1.layers.{function} in TF2 graph mode (TF1's "
            "variables, UPDATE_OPS and dropout masks)"))

    def _tf1_layer(self, node, name_node, function: str, keras3: str, message: str) -> None:
        """``name_node`` (``tf.layers.<function>``) becomes TF1's own layer,
        ``tf.compat.v1.layers.<function>`` (tf_keras has it; for Keras 3 the ``keras3``
        error instead); nothing where it already is (``import tensorflow.compat.v1 as tf``)."""
        root = name_node
        while isinstance(root, cst.Attribute):
            root = root.value
        through_v1 = isinstance(root, cst.Name) and \
            self.ctx.resolver.aliases.get(root.value, "").startswith("tensorflow.compat.v1")
        if through_v1 or "compat" in code(name_node):
            return
        if self.ctx.target.keras == 3:
            self.report(node, keras3)
            return
        finding = self.report(node, message)
        finding.replace(name_node, self.ctx.tf(finding, f"compat.v1.layers.{function}"))
        finding.add_import("import shims")  # tf_keras: tf.compat.v1.layers exists there only

    # -- conversion ----------------------------------------------------------------
    def _convert(self, node: cst.Call, function: str, spec) -> None:
        keras_class, params, leading = spec
        # index of each argument in the call -> its TF1 parameter name
        roles: List[str] = []
        position = 0
        for a in node.args:
            if a.star:
                self.report(node, f"tf.layers.{function} called with *args/**kwargs: convert it "
                                  "by hand (the arguments cannot be mapped statically)")
                return
            if a.keyword is not None:
                role = a.keyword.value
            elif position == 0:
                role = "inputs"
                position += 1
            else:
                if position - 1 >= len(params):
                    self.report(node, f"tf.layers.{function}: too many positional arguments")
                    return
                role = params[position - 1]
                position += 1
            if role != "inputs" and role not in params:
                self.report(node, f"tf.layers.{function}: argument {role}= has no Keras "
                                  f"equivalent; convert this call by hand")
                return
            roles.append(role)
        if "inputs" not in roles:
            self.report(node, f"tf.layers.{function} without inputs: convert by hand")
            return
        values = {role: a.value for role, a in zip(roles, node.args)}
        notes = []
        reuse = values.get("reuse")
        reuse_true = isinstance(reuse, cst.Name) and reuse.value == "True"
        if reuse is not None and not (isinstance(reuse, cst.Name) and reuse.value in ("True", "False", "None")):
            notes.append("reuse decided at run time: calls with the same name share one layer")
        missing = sorted((KERAS3_MISSING - {"fused"}) & set(roles))
        if missing and self.ctx.target.keras == 3:
            self.report(node, f"tf.layers.{function}: {', '.join(missing)} "
                              f"{'exists' if len(missing) == 1 else 'exist'} in tf_keras's "
                              "BatchNormalization only, not in Keras 3; migrate this file for Keras 2 "
                              "(without --keras 3) or drop it by hand")
            return
        if KERAS3_MISSING & set(roles) and self.ctx.target.keras == 2:
            notes.append("renorm/fused/virtual_batch_size/adjustment exist in tf_keras "
                         "BatchNormalization only (not Keras 3)")
        name_node = values.get("name")
        literal_name = string_value(name_node)
        seed = values.get("seed")
        seeded = seed is not None and not (isinstance(seed, cst.Name) and seed.value == "None")
        hoistable = self.ctx.enclosing(cst.FunctionDef) is not None or \
            self._hoistable([v for role, v in values.items() if role not in CALL_ARGS | {"inputs"}])
        if function == "dropout" and (seeded or self.ctx.target.keras == 3 or not hoistable):
            self._seeded_dropout(node, roles)  # Keras 3's Dropout keeps a seed-state variable;
            return  # a Dropout made once would keep one trace's tensor rate

        def build(updated: cst.Call) -> Tuple[cst.BaseExpression, List[cst.Arg], List[cst.Arg]]:
            """(constructor call, call args) from the updated node's argument values."""
            current = {role: a.value for role, a in zip(roles, updated.args)}
            ctor_args: List[cst.Arg] = []
            for index, param in enumerate(params):
                if param not in current or param in CALL_ARGS or param in ("reuse",):
                    continue
                value = current[param]
                if isinstance(value, cst.Name) and value.value == "None" and param != "name":
                    continue  # TF1's None means the Keras default
                if param == "name" and isinstance(value, cst.Name) and value.value == "None":
                    continue
                positional = index < leading and all(p in current for p in params[:index])
                ctor_args.append(arg(value) if positional else arg(value, param))
            call_args = [arg(current["inputs"])]
            if "training" in params:
                call_args.append(arg(current.get("training", cst.Name("False")), "training"))
            return ctor_args, call_args

        self._place(node, function, keras_class, build, name_node, literal_name, reuse_true, notes,
                    hoistable)

    def _hoistable(self, ctor_values) -> bool:
        """May this module-level layer's constructor move above its call? Not in a Session
        script (the module makes a placeholder or a session) when it reads a module name
        bound to a TensorFlow value (``rate = tf.placeholder_with_default(...)``, ``w_init =
        tf.random_normal_initializer(...)``): TFM501 moves that binding into the program's
        build function, where the layer is then made too (``shims.get_or_create_layer``)."""
        if self._tf_bound is None:
            self._tf_bound = set()
            if GRAPH_SCRIPT.search(self.ctx.source):
                for line in _module_level_lines(self.ctx.module):
                    if isinstance(line, (cst.Assign, cst.AnnAssign)) and line.value is not None and any(
                            (self.ctx.v1(c.func) or "").startswith("tf.") for c in nodes_of(line.value, cst.Call)):
                        targets = line.targets if isinstance(line, cst.Assign) else [line]
                        self._tf_bound |= {n.value for t in targets for n in nodes_of(t.target, cst.Name)}
        return not any(n.value in self._tf_bound for value in ctor_values for n in nodes_of(value, cst.Name))

    def _seeded_dropout(self, node: cst.Call, roles: List[str]) -> None:
        """A seeded tf.layers.dropout: shims.dropout keeps TF1's random stream (a Keras
        Dropout advances its seed per trace), and it has no weights to create once; also
        one whose rate or noise shape is a graph value of a Session script."""
        finding = self.report(node, "tf.layers.dropout is gone in TF2; shims.dropout keeps its "
                                    "seeded random stream and tensor `training`"
                                    if "seed" in roles else
                                    "tf.layers.dropout is gone in TF2; shims.dropout is TF1's, "
                                    "with no seed-state variable (Keras 3's Dropout has one)"
                                    if self.ctx.target.keras == 3 else
                                    "tf.layers.dropout is gone in TF2; shims.dropout is TF1's, its "
                                    "arguments read where it is called (graph values of the program)")
        finding.add_import("import shims")

        def replace(updated: cst.Call) -> cst.Call:
            args = [arg(a.value) if role == "inputs" else arg(a.value, role)
                    for role, a in zip(roles, updated.args)]
            return call(cst.parse_expression("shims.dropout"), args)

        finding.replace(node, replace)

    def _place(self, node, function, keras_class, build, name_node, literal_name, reuse_true, notes,
               hoistable=True):
        ctx = self.ctx
        func = ctx.enclosing(cst.FunctionDef)
        if function in WEIGHTLESS:
            message = f"tf.layers.{function} is gone in TF2; use tf.keras.layers.{keras_class}"
        else:
            message = f"tf.layers.{function} creates new weights on every eager call; " \
                      f"use one tf.keras.layers.{keras_class}"
        if notes:
            message += " (" + "; ".join(notes) + ")"
        if ctx.target.keras == 3 and keras_class == "BatchNormalization":
            message = (f"tf.layers.{function} creates new weights on every eager call; use one "
                       "shims.keras3.BatchNormalization (TF 1.15's arithmetic and UPDATE_OPS; "
                       "Keras 3's differs)")
        finding = self.report(node, message)
        if ctx.target.keras == 3 and keras_class == "BatchNormalization":
            keras = cst.parse_expression("shims.keras3.BatchNormalization")
            finding.add_import("import shims")
        else:
            keras = ctx.tf(finding, f"keras.layers.{keras_class}")

        if func is None and hoistable and not self._in_graph_loop():  # module level: one object,
            # created before first use (not where each pass of a loop starts a new graph)
            self._module_route(finding, node, function, keras, build, literal_name)
            return
        if func is not None and \
                self._attribute_route(finding, node, func, function, keras, build, name_node, literal_name):
            return

        shim = cst.parse_expression("shims.get_or_create_layer")
        finding.add_import("import shims")
        self._decorate_keras_method(finding, func)

        def replace_shim(updated: cst.Call) -> cst.Call:
            ctor_args, call_args = build(updated)
            factory = cst.Lambda(params=cst.Parameters(), body=call(keras, ctor_args))
            if literal_name is not None or (name_node is not None and not (
                    isinstance(name_node, cst.Name) and name_node.value == "None")):
                current_name = next(a.value for a in ctor_args if a.keyword and a.keyword.value == "name")
                get = call(shim, [arg(current_name), arg(factory)])
            else:
                extra = [arg(cst.SimpleString(f'"{function}"'), "default_name")]
                if reuse_true:
                    extra.append(arg(cst.Name("True"), "reuse"))
                get = call(shim, [arg(cst.Name("None")), arg(factory), *extra])
            return call(get, call_args)

        finding.replace(node, replace_shim)

    def _in_graph_loop(self) -> bool:
        """Is the call in a loop whose body starts a new graph (``tf.reset_default_graph()``,
        a search's trials)? Each pass has layers of its own there, as TF1 built them anew."""
        return any(graph_loop(self.ctx, node) for node in self.ctx.stack)

    def _tf1_used(self, scope: str) -> set:
        return self._tf1_names.setdefault(scope, set())

    def _tf1_default_name(self, scope: str, function: str) -> str:
        """The name TF1 gave an unnamed layer: ``dense``, then ``dense_1``, ``dense_2``
        ... in the order the module runs them, skipping names already taken."""
        used = self._tf1_used(scope)
        name, n = function, 0
        while name in used:
            n += 1
            name = f"{function}_{n}"
        used.add(name)
        return name

    def _module_route(self, finding, node, function, keras, build, literal_name) -> None:
        ctx = self.ctx
        layers = self._module_layers
        captured = {}
        if literal_name is not None and literal_name in layers:
            variable = layers[literal_name]
        else:
            variable = fresh_name(ctx, literal_name or f"{function}_layer")
            if literal_name is not None:
                layers[literal_name] = variable

            def statement():  # from the rewritten call, so inner renames are kept
                ctor_args, _ = build(captured["call"])
                return [cst.SimpleStatementLine([cst.Assign(
                    targets=[cst.AssignTarget(cst.Name(variable))], value=call(keras, ctor_args))])]

            finding.insert_before(ctx.stack[1], statement)
            scope = self._static_scope(0)
            if scope is not None:
                tf1 = literal_name or self._tf1_default_name(scope, function)
                if literal_name is not None:
                    self._tf1_used(scope).add(literal_name)
                finding.names[(scope + "/" if scope else "") + tf1] = variable

        def replace_module(updated: cst.Call) -> cst.Call:
            captured["call"] = updated
            _, call_args = build(updated)
            return call(cst.Name(variable), call_args)

        finding.replace(node, replace_module)

    def _attribute_route(self, finding, node, func, function, keras, build, name_node, literal_name) -> bool:
        """In a Keras layer/model: ``self.<attr> = Layer(...)`` at the end of ``__init__``
        and ``self.<attr>(...)`` at the call site, when that is provably equivalent: not in
        a loop, literal scope and layer names, constructor arguments free of the method's
        locals, and an ``__init__`` to put it in. Returns False to use the shim route."""
        ctx = self.ctx
        stack = ctx.stack
        index = next(i for i, n in enumerate(stack) if n is func)
        classdef = stack[index - 2] if index >= 2 and isinstance(stack[index - 2], cst.ClassDef) else None
        if classdef is None or not is_keras_class(ctx, classdef) or not func.params.params:
            return False
        init = next((s for s in classdef.body.body
                     if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
        if init is None or func is init:
            return False
        if any(isinstance(n, (cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp,
                              cst.GeneratorExp, cst.Lambda)) for n in stack[index + 1:]):
            return False  # made once per iteration in TF1
        if name_node is not None and literal_name is None and not (
                isinstance(name_node, cst.Name) and name_node.value == "None"):
            return False  # a name computed at run time
        scope = self._static_scope(index)
        if scope is None:
            return False
        owner = func.params.params[0].name.value
        ctor_args, _ = build(node)
        if set(names_read(*(a.value for a in ctor_args))) & (local_names(func) - {owner}):
            return False  # the constructor needs values computed in the method
        key = (id(classdef), scope, literal_name) if literal_name is not None else None
        attrs = self._attrs
        state = self._classes.get(id(classdef))
        if state is None:
            existing = set(re.findall(rf"\b{owner}\.(\w+)", code(classdef)))
            state = self._classes[id(classdef)] = {"items": [], "taken": existing}
            finding.replace(classdef, lambda updated: self._add_to_init(updated, state))
        if key is not None and key in attrs:
            attr = attrs[key]
        else:
            wanted = "_".join(p for p in (scope.replace("/", "_"), literal_name or f"{function}_layer") if p)
            attr, n = wanted, 1
            while attr in state["taken"]:
                attr, n = f"{wanted}_{n}", n + 1
            state["taken"].add(attr)
            item = {"attr": attr, "owner": owner, "keras": keras, "build": build}
            state["items"].append(item)
            if key is not None:
                attrs[key] = attr
            if literal_name is not None:
                finding.names[(scope + "/" if scope else "") + literal_name] = attr

            def capture(updated: cst.Call) -> cst.Call:
                item["call"] = updated
                return updated

            finding.replace(node, capture)

        def replace_attribute(updated: cst.Call) -> cst.Call:
            _, call_args = build(updated)
            return call(cst.Attribute(cst.Name(owner), cst.Name(attr)), call_args)

        finding.replace(node, replace_attribute)
        return True

    def _add_to_init(self, classdef: cst.ClassDef, state: dict) -> cst.ClassDef:
        statements = []
        for item in state["items"]:
            ctor_args, _ = item["build"](item["call"])
            target = cst.Attribute(cst.Name(item["owner"]), cst.Name(item["attr"]))
            statements.append(cst.SimpleStatementLine([cst.Assign(
                [cst.AssignTarget(target)], call(item["keras"], ctor_args))]))
        body = list(classdef.body.body)
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.FunctionDef) and stmt.name.value == "__init__":
                body[i] = stmt.with_changes(body=stmt.body.with_changes(body=[*stmt.body.body, *statements]))
                break
        return classdef.with_changes(body=classdef.body.with_changes(body=body))

    def _decorate_keras_method(self, finding, func: cst.FunctionDef) -> None:
        """Methods of Keras layers/models need the shim scope for get_or_create_layer."""
        classdef = self.ctx.enclosing(cst.ClassDef)
        if classdef is None or self.ctx.enclosing(cst.FunctionDef) is not func:
            return
        if is_keras_class(self.ctx, classdef):
            add_shim_decorator(self.ctx, finding, func)

    def _static_scope(self, start: int) -> Optional[str]:
        """The variable scope opened by the ``with`` statements below ``stack[start]`` when
        every one of them names a literal scope, else None."""
        parts = []
        for node in self.ctx.stack[start:]:
            if isinstance(node, cst.With):
                for item in node.items:
                    if isinstance(item.item, cst.Call) and (self.ctx.v1(item.item.func) or "").endswith(
                            "variable_scope"):
                        first = item.item.args[0].value if item.item.args else None
                        value = string_value(first)
                        if value is None:
                            return None
                        parts.append(value)
        return "/".join(parts)


class _ModuleLevel(cst.CSTVisitor):
    """The small statements run at module level: in ``if``/``with``/``for``/``try`` blocks
    too (``if __name__ == "__main__":``), not in functions or classes."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list = []

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_SimpleStatementLine(self, node) -> bool:
        self.lines.extend(node.body)
        return False


def _module_level_lines(module: cst.Module) -> list:
    found = _ModuleLevel()
    module.visit(found)
    return found.lines
