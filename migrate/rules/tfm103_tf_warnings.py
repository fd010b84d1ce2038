"""TFM103: TF1 calls whose TF2 behaviour changed (tf_upgrade_v2's warnings)."""
import re

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.tables import owned_by_rules, upgrade_tables
from migrate.codemod.shared import fine_in_tf2, removed_parameter


class BehaviourChanges(Rule):
    code = "TFM103"
    needle = needles.TF1_IMPORT
    summary = "call whose behaviour changed in TF2; review by hand"
    explanation = """
TensorFlow's upgrade tables list calls whose meaning changed in TF2 in ways no rename can
fix (different defaults, a custom transform that tf_upgrade_v2 applies). Each such call is
reported once, with TensorFlow's own message, and only where the call is not fine in TF2
as written (`tf.zeros_like(x)` is). Arguments TF2 removed are TFM102's, and TF1 forms of
`tf.name_scope`/`tf.device` TFM101's: they fix the call and their message carries
TensorFlow's note, so a call is never reported twice.
"""
    before = """
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.zeros_like(x, optimize=False)
"""
    after = """
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 4])
y = tf.compat.v1.zeros_like(x, optimize=False)  # TF1's optimize=False, kept where it exists
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._transformed = []
        self._method_notes = []  # (node, message, the methods it is about): see leave_Module
        self._called = set()     # attribute names called in the module (x.reduce(...) -> reduce)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute):
            self._called.add(node.func.attr.value)
        qualname = self.ctx.qualname(node.func)
        if not qualname or qualname.startswith("tensorflow.compat."):
            return
        old = self.ctx.v1(node.func)
        if not old or owned_by_rules(old):
            return
        tables = upgrade_tables()
        if tables["symbol_renames"].get(old, "").startswith("tf.compat.v1."):
            return  # TFM101 moves it to compat.v1, which keeps the TF1 behaviour
        message = tables["function_warnings"].get(old)
        if message:
            message = message.replace("<function name>", old)
            if removed_parameter(tables, old):  # "`partition_strategy` has been removed ...":
                message = None  # TFM102 fixes the calls that pass it (dropped, or compat.v1)
            elif not self.ctx.is_tf1_file():
                message = None  # whole-function notes describe TF1 code
        methods = changed_methods(message) if message else frozenset()
        if methods:  # a note on some methods of the object: reported if the module calls one
            self._method_notes.append((node, f"{old}: {message}", methods))
        elif message:
            self.report(node, f"{old}: {message}")
        renamed = tables["keyword_renames"].get(old, {})
        for a in node.args:
            if a.keyword is not None and a.keyword.value not in renamed:  # TFM102 fixes those
                warn = tables["arg_warnings"].get(old, {}).get(a.keyword.value)
                if warn:
                    self.report(a, f"{old}: {warn.replace('<function name>', old)}")
        if old in tables["transformed"] and not message and self.ctx.is_tf1_file() \
                and old not in TRANSFORM_NOTES and not fine_in_tf2(old, node):
            self._transformed.append(self.report(
                node, f"{old} changed in TF2 (tf_upgrade_v2 rewrites it with a custom "
                      "transform); check the call against the TF2 API"))

    def leave_Module(self, node: cst.Module) -> None:
        """A transformed call another rule rewrote (TFM107's dropout, TFM102's summaries,
        ...) is that rule's: "check the call" beside "rewritten" is noise, and would be
        counted as left after --write. A note about some methods of the object a call
        makes (a strategy's ``make_dataset_iterator``, ``reduce``, ...) is reported where
        the module calls one of them: a strategy only handed to ``RunConfig`` or entered
        with ``scope()`` is used as TF2 uses it."""
        for call, message, methods in self._method_notes:
            if methods & self._called:
                self.report(call, message)
        fixed = set()
        for f in self.ctx.findings:
            if f.code != self.code and f.fixable:
                fixed |= {id(f.node), id(getattr(f.node, "func", None))}
        ours = {id(f) for f in self._transformed if id(f.node) in fixed or id(f.node.func) in fixed}
        self.ctx.findings[:] = [f for f in self.ctx.findings if id(f) not in ours]


_METHODS = re.compile(r"following changes in methods:(.*)", re.S)


def changed_methods(message: str) -> frozenset:
    """The methods a table note says changed ("... note the following changes in methods:
    make_dataset_iterator->experimental_distribute_dataset, ..., reduce requires an axis
    argument, unwrap->..."): the first name of each part, and any snake_case name in it
    (``experimental_initialize and experimental_finalize no longer needed``); last
    attribute only (``extended.call_for_each_replica`` -> ``call_for_each_replica``)."""
    found = _METHODS.search(message)
    if not found:
        return frozenset()
    names = set()
    for part in found.group(1).split(","):
        part = part.strip()
        first = re.match(r"[A-Za-z_][\w.]*", part)
        if first:
            names.add(first.group(0).rsplit(".", 1)[-1])
        before, arrow, after = part.partition("->")
        rest = after.split(None, 1)[1] if arrow and len(after.split(None, 1)) > 1 else ""
        names.update(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", before + " " + rest))
    return frozenset(names)


# transformed calls whose TF1 forms TFM101 moves to tf.compat.v1 (fine_in_tf2 knows their
# TF2 forms)
TRANSFORM_NOTES = {
    "tf.name_scope": "tf.name_scope(name, default_name, values) is TF1's form; TF2's tf.name_scope "
                     "takes one name (not None): use tf.compat.v1.name_scope for this call",
    "tf.device": "tf.device with a device function (not a device string) is TF1-only; use "
                 "tf.compat.v1.device for this call",
}
