"""TFM303: variables created in a Keras layer's call() -> build()."""
import re
from typing import Optional

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import NameReads, code, walk
from migrate.codemod.keras_weights import (
    add_weight,
    is_variable_call,
    variable_arguments,
)
from migrate.codemod.resolver import local_names
from migrate.codemod.rule import Rule
from migrate.codemod.shared import owner_method, self_name


class _Inputs(NameReads):
    """Names an expression reads, and whether ``inputs`` appears other than as ``inputs.shape``."""

    def __init__(self, inputs: Optional[str]) -> None:
        super().__init__()
        self.inputs = inputs
        self.bad_inputs = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if isinstance(node.value, cst.Name) and node.value.value == self.inputs:
            if node.attr.value != "shape":
                self.bad_inputs = True
            return False
        return super().visit_Attribute(node)

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == self.inputs:
            self.bad_inputs = True
        super().visit_Name(node)


class _ShapeToInputShape(cst.CSTTransformer):
    def __init__(self, inputs: str, input_shape: str) -> None:
        super().__init__()
        self.inputs, self.input_shape = inputs, input_shape

    def leave_Attribute(self, original_node, updated_node):
        if isinstance(updated_node.value, cst.Name) and updated_node.value.value == self.inputs \
                and updated_node.attr.value == "shape":
            return cst.Name(self.input_shape)
        return updated_node


def _guarded(ctx, func) -> bool:
    """Inside ``if self.v is None:`` (the create-once pattern)?"""
    for node in ctx.ancestors(cst.If):
        if ctx.stack.index(node) < ctx.stack.index(func):
            break
        if re.search(r"\bis None\b|\bnot hasattr\b|\bnot self\.built\b", code(node.test)):
            return True
    return False


class VariablesInCall(Rule):
    code = "TFM303"
    needle = (needles.KERAS_CLASS, needles.VARIABLE)
    summary = "variable created in call(): a new weight on every call, and an error under tf.function"
    fixable = True
    lint = True
    explanation = """
A `tf.Variable` created in `call()` gives a new random weight on every eager call, is never
trained, and under tf.function or `fit` fails with "tf.function only supports singleton
tf.Variables created on the first call". It moves to `build(self, input_shape)` as
`self.<name> = self.add_weight(...)` (shapes taken from `inputs.shape` use `input_shape`),
and `call()` reads the weight. A variable whose value depends on other locals of `call()`
cannot move safely and is reported for a manual fix. The create-once pattern
(`if self.v is None:`) is left alone.
"""
    before = """
import tensorflow as tf

class Scale(tf.keras.layers.Layer):
    def call(self, inputs):
        w = tf.Variable(tf.random.normal([int(inputs.shape[-1]), self.units]), name="w")
        return tf.matmul(inputs, w)
"""
    after = """
import tensorflow as tf

class Scale(tf.keras.layers.Layer):
    def build(self, input_shape):
        initial_w = tf.convert_to_tensor(tf.random.normal([int(input_shape[-1]), self.units]))
        self.w = self.add_weight(name="w", shape=initial_w.shape, dtype=initial_w.dtype, initializer=lambda shape, dtype=None: initial_w)
    def call(self, inputs):
        w = self.w
        return tf.matmul(inputs, w)
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._classes: dict = {}  # id(classdef) -> the build() being assembled

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        if not is_variable_call(ctx, node):
            return
        classdef, func = owner_method(ctx)
        if func is None or func.name.value != "call" or _guarded(ctx, func):
            return
        owner = self_name(func)
        statement = ctx.statement()
        params = func.params.params
        inputs = params[1].name.value if len(params) > 1 else None
        problem = self._why_not(node, func, statement, owner, inputs)
        if problem:
            self.report(node, f"{self.summary}; move it to build() by hand ({problem})")
            return
        target = statement.body[0].targets[0].target
        class_code = code(classdef)
        if isinstance(target, cst.Attribute):
            attr = target.attr.value
        else:
            attr = target.value
            existing = set(re.findall(rf"\b{owner}\.(\w+)", class_code))
            base, n = attr, 1
            while attr in existing:
                attr, n = f"{base}_{n}", n + 1
        finding = self.report(node)
        state = self._classes.get(id(classdef))
        if state is None:
            state = self._classes[id(classdef)] = {"items": [], "owner": owner, "inputs": inputs}
            finding.replace(classdef, lambda updated: self._add_build(updated, state, finding))
        item = {"attr": attr}
        state["items"].append(item)

        def capture(updated: cst.Call) -> cst.Call:
            item["call"] = updated
            return updated

        finding.replace(node, capture)
        if isinstance(target, cst.Attribute):
            finding.remove(statement)
        else:
            finding.replace(statement, cst.parse_statement(f"{target.value} = {owner}.{attr}\n")
                            .with_changes(leading_lines=statement.leading_lines))

    def _why_not(self, node, func, statement, owner, inputs) -> Optional[str]:
        if statement is None or not any(statement is s for s in func.body.body):
            return "it is not a plain statement of call()"
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Assign) and statement.body[0].value is node
                and len(statement.body[0].targets) == 1):
            return "it is not assigned on its own line"
        target = statement.body[0].targets[0].target
        if not (isinstance(target, cst.Name) or (isinstance(target, cst.Attribute) and isinstance(
                target.value, cst.Name) and target.value.value == owner)):
            return "its target is neither a name nor an attribute of self"
        if variable_arguments(node) is None:
            return "tf.Variable arguments that add_weight cannot carry"
        reads = _Inputs(inputs)
        walk(node, reads)
        if reads.bad_inputs:
            return f"its value uses {inputs} itself, not only {inputs}.shape"
        locals_ = local_names(func) - {owner, inputs}
        clash = sorted(set(reads.uses) & locals_)
        if clash:
            return f"its value uses locals of call(): {', '.join(clash)}"
        return None

    def _add_build(self, classdef: cst.ClassDef, state: dict, finding) -> cst.ClassDef:
        owner, inputs = state["owner"], state["inputs"]
        body = list(classdef.body.body)
        build_index = next((i for i, s in enumerate(body)
                            if isinstance(s, cst.FunctionDef) and s.name.value == "build"), None)
        shape_name = "input_shape"
        if build_index is not None and len(body[build_index].params.params) > 1:
            shape_name = body[build_index].params.params[1].name.value
        statements = []
        for item in state["items"]:
            call_node = item.get("call")
            if call_node is None:
                continue
            if inputs:
                call_node = call_node.visit(_ShapeToInputShape(inputs, shape_name))
            pre, new = add_weight(self.ctx, finding, variable_arguments(call_node), cst.Name(owner),
                                  item["attr"])
            statements += pre + [cst.SimpleStatementLine([cst.Assign(
                [cst.AssignTarget(cst.Attribute(cst.Name(owner), cst.Name(item["attr"])))], new)])]
        if not statements:
            return classdef
        if build_index is not None:
            build = body[build_index]
            body[build_index] = build.with_changes(body=build.body.with_changes(
                body=[*build.body.body, *statements]))
        else:
            build = cst.FunctionDef(
                name=cst.Name("build"),
                params=cst.Parameters([cst.Param(cst.Name(owner)), cst.Param(cst.Name(shape_name))]),
                body=cst.IndentedBlock(statements),
                leading_lines=[cst.EmptyLine(indent=False)])
            call_index = next(i for i, s in enumerate(body)
                              if isinstance(s, cst.FunctionDef) and s.name.value == "call")
            if call_index == 0:
                build = build.with_changes(leading_lines=())
            body.insert(call_index, build)
        return classdef.with_changes(body=classdef.body.with_changes(body=body))

