"""TFM301: variables/layers in Python lists/dicts on Keras layers/models."""
from typing import List, Optional

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import code, fresh_name, string_value
from migrate.codemod.keras_weights import is_layer_call, is_variable_call
from migrate.codemod.rule import Rule
from migrate.codemod.shared import CALL_METHODS, owner_method, self_name


def _trackable(ctx, node: cst.CSTNode) -> bool:
    if is_variable_call(ctx, node) or is_layer_call(ctx, node):
        return True
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "add_weight")


def _self_attr(target: cst.BaseExpression, owner: str) -> Optional[str]:
    if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
            and target.value.value == owner:
        return target.attr.value
    return None


def _assign(owner: str, attr: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    target = cst.Attribute(cst.Name(owner), cst.Name(attr))
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)])


def tracking_loop(owner: str, attr: str, is_dict: bool) -> cst.BaseStatement:
    if is_dict:
        text = (f"for key, item in {owner}.{attr}.items():\n"
                f"    setattr({owner}, f\"{attr}_{{key}}\", item)\n")
    else:
        text = (f"for index, item in enumerate({owner}.{attr}):\n"
                f"    setattr({owner}, f\"{attr}_{{index}}\", item)\n")
    return cst.parse_statement(text)


class Containers(Rule):
    code = "TFM301"
    needle = (needles.KERAS_CLASS, needles.CONTAINER)
    summary = "variables/layers in a Python list or dict are missing from Keras 3 checkpoints"
    fixable = True
    explanation = """
Measured on TF 2.21: under Keras 3, variables and sub-layers kept in Python lists or dicts
on a layer/model are in `model.variables` but silently missing from tf.train.Checkpoint
files. Direct attributes are tracked and saved by both Keras generations, so each
variable or layer in the container also becomes a direct attribute (`blocks_0`,
`blocks_1`, `extra_shift`), and the container stays as a view with the same name and
order for the code that iterates it. Containers filled by comprehensions or `.append` in a
loop get a loop that sets the attributes once they are complete.
"""
    before = """
import tensorflow as tf

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.blocks = [tf.keras.layers.Dense(4), tf.keras.layers.Dense(2)]
"""
    after = """
import tensorflow as tf

class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.blocks_0 = tf.keras.layers.Dense(4)
        self.blocks_1 = tf.keras.layers.Dense(2)
        self.blocks = [self.blocks_0, self.blocks_1]
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._loops: set = set()  # (id(method), attr) already given a tracking loop

    def _context(self):
        classdef, func = owner_method(self.ctx)
        if func is None or func.name.value in CALL_METHODS:
            return None
        return self_name(func)

    def visit_Assign(self, node: cst.Assign) -> None:
        owner = self._context()
        if owner is None or len(node.targets) != 1:
            return
        attr = _self_attr(node.targets[0].target, owner)
        if attr is None:
            return
        value = node.value
        statement = self.ctx.parent()
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return
        if isinstance(value, (cst.List, cst.Tuple)):
            self._literal_sequence(node, statement, owner, attr, value)
        elif isinstance(value, cst.Dict):
            self._literal_dict(statement, owner, attr, value)
        elif isinstance(value, (cst.ListComp, cst.DictComp)) or (
                isinstance(value, cst.Call) and isinstance(value.func, cst.Name)
                and value.func.value in ("list", "tuple", "dict") and value.args
                and isinstance(value.args[0].value, cst.GeneratorExp)):
            element = value.elt if isinstance(value, cst.ListComp) else (
                value.value if isinstance(value, cst.DictComp) else value.args[0].value.elt)
            if _trackable(self.ctx, element) and not self._tracked(owner, attr):
                is_dict = isinstance(value, cst.DictComp) or value.func.value == "dict" \
                    if isinstance(value, cst.Call) else isinstance(value, cst.DictComp)
                self.report(node).insert_after(statement, [tracking_loop(owner, attr, is_dict)])

    def _tracked(self, owner: str, attr: str) -> bool:
        """The method already sets the container's items as attributes (a previous run)."""
        _, method = owner_method(self.ctx)
        return f'setattr({owner}, f"{attr}_' in code(method)

    def _literal_sequence(self, node, statement, owner, attr, value) -> None:
        if any(isinstance(e, cst.StarredElement) for e in value.elements):
            return
        self._expand(statement, owner, attr, value, [str(i) for i in range(len(value.elements))])

    def _literal_dict(self, statement, owner, attr, value: cst.Dict) -> None:
        if any(not isinstance(e, cst.DictElement) for e in value.elements):
            return
        keys = [string_value(e.key) for e in value.elements]
        if any(k is None and _trackable(self.ctx, e.value) for k, e in zip(keys, value.elements)):
            return  # non-string keys: TFM304 reports it
        self._expand(statement, owner, attr, value, keys)

    def _expand(self, statement, owner, attr, container, labels) -> None:
        """Each trackable element becomes ``self.<attr>_<label>``; the container keeps its
        name, order and kind as a view of those attributes."""
        marks = [_trackable(self.ctx, e.value) for e in container.elements]
        if not any(marks):
            return
        names = [fresh_name(self.ctx, f"{attr}_{label}") if mark else None
                 for label, mark in zip(labels, marks)]
        finding = self.report(statement.body[0])

        def replace(updated: cst.SimpleStatementLine):
            assign = updated.body[0]
            out: List[cst.BaseStatement] = []
            view = []
            for element, name in zip(assign.value.elements, names):
                if name is None:
                    view.append(element)
                    continue
                out.append(_assign(owner, name, element.value))
                view.append(element.with_changes(value=cst.Attribute(cst.Name(owner), cst.Name(name))))
            out.append(_assign(owner, attr, assign.value.with_changes(elements=view)))
            out[0] = out[0].with_changes(leading_lines=updated.leading_lines)
            return cst.FlattenSentinel(out)

        finding.replace(statement, replace)

    def visit_Call(self, node: cst.Call) -> None:
        """``self.blocks.append(Dense(...))`` / ``.extend`` / ``[key] = ...`` in a loop."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend", "insert")):
            return
        owner = self._context()
        if owner is None:
            return
        attr = _self_attr(func.value, owner)
        if attr is None or not node.args:
            return
        item = node.args[-1].value
        if not (_trackable(self.ctx, item) or (isinstance(item, (cst.List, cst.ListComp)) and any(
                _trackable(self.ctx, e) for e in ([x.value for x in item.elements]
                                                  if isinstance(item, cst.List) else [item.elt])))):
            return
        _, method = owner_method(self.ctx)
        on_stack = {id(n) for n in self.ctx.stack}
        top = next((s for s in method.body.body if id(s) in on_stack), None)
        done = self._loops
        if top is None or (id(method), attr) in done or self._tracked(owner, attr):
            return
        done.add((id(method), attr))
        # after the last statement of the method that touches the container
        last = top
        for stmt in method.body.body:
            if f"{owner}.{attr}" in code(stmt):
                last = stmt
        self.report(node).insert_after(last, [tracking_loop(owner, attr, False)])
