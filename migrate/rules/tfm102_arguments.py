"""TFM102: positional arguments whose order changed, and renamed/removed keywords."""
import re

import libcst as cst

from migrate.codemod.cstutil import arg, code
from migrate.codemod import needles
from migrate.codemod.rule import Rule
from migrate.codemod.tables import upgrade_tables


class ArgumentChanges(Rule):
    code = "TFM102"
    needle = needles.TF1_IMPORT
    summary = "argument order or keyword changed in TF2"
    fixable = True
    explanation = """
Some TF1 functions changed their argument order or keyword names in TF2. Positional
arguments are turned into keywords using the TF1 order, then keywords are renamed, both
from TensorFlow's own tables (reorders_v2, tf_upgrade_v2 keyword renames). Keywords TF2 no
longer accepts are renamed anywhere; positional arguments and keywords TF2 still accepts
only in files that use TF1-only APIs (TF2 code means TF2's order: `tf.nn.convolution` put
`strides` before `padding`). A keyword that
TF2 removed is dropped only when tf_upgrade_v2 drops it; the finding names it.
"""
    before = """
idx = tf.argmax(logits, dimension=1)
mean = tf.reduce_mean(x, axis=0, keep_dims=True)
"""
    after = """
idx = tf.argmax(logits, axis=1)
mean = tf.reduce_mean(x, axis=0, keepdims=True)
"""

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.ctx.qualname(node.func)
        if not qualname or qualname.startswith("tensorflow.compat."):
            return
        old = self.ctx.v1(node.func)
        tables = upgrade_tables()
        tf1 = needles.tf1_only(old) or self.ctx.is_tf1_file()  # a TF1-only name is proof
        # positional order: ambiguous (TF2 has its own) unless the file is TF1 code;
        # keywords TF2 still accepts: likewise; the other renamed keywords are TF1-only
        order = tables["reorders"].get(old) if tf1 else None
        ambiguous = set(tables["tf2_keywords"].get(old, ()))
        renames = {k: v for k, v in tables["keyword_renames"].get(old, {}).items()
                   if tf1 or k not in ambiguous}
        removed = removed_parameter(tables, old)
        if removed:
            param, default = removed
            value = _argument(node, param, tables["reorders"].get(old))
            if value is not None and not (isinstance(value, cst.SimpleString)
                                          and value.evaluated_value == default):
                # TF2's function has no such parameter and always does `default`:
                # the compat.v1 function keeps it, with TF1's argument order
                finding = self.report(node, f"{old}({param}={code(value)}): TF2's {old} has no "
                                            f"{param} (it always uses {default!r}); "
                                            f"tf.compat.v1 keeps it")
                finding.replace(node.func, self.ctx.tf(finding, "compat.v1." + old[len("tf."):]))
                return
            if value is not None:
                renames = {**renames, param: None}  # TF2's behaviour: the argument goes
                order = order or tables["reorders"].get(old)
        if not order and not renames:
            return
        plan, notes = [], []  # per argument: the keyword it gets, "" to keep it, None to drop it
        position = 0
        for a in node.args:
            if a.star:
                return  # *args/**kwargs: order unknowable, leave the call alone
            keyword = a.keyword.value if a.keyword else None
            if keyword is None:
                name = order[position] if order and position < len(order) else None
                position += 1
                if name is not None:
                    keyword = name
                    notes.append(f"argument {position} is now {name}=")
            if keyword is not None and keyword in renames:
                if renames[keyword] is None:
                    why = tables["arg_warnings"].get(old, {}).get(keyword)
                    notes.append(f"{keyword}= is gone in TF2 and was dropped"
                                 + (f" ({why.rstrip('.')})" if why else ""))
                    plan.append(None)
                    continue
                notes.append(f"{keyword}= is {renames[keyword]}= in TF2")
                keyword = renames[keyword]
            plan.append("" if keyword is None or (a.keyword and a.keyword.value == keyword) else keyword)
        if not notes:
            return
        self.report(node, f"{old}: " + "; ".join(notes)).replace(
            node, lambda updated: _apply(updated, plan))


def _apply(call: cst.Call, plan) -> cst.Call:
    args = []
    for step, a in zip(plan, call.args):
        if step is None:
            continue
        args.append(a if step == "" else arg(a.value, step).with_changes(comma=a.comma))
    if args:
        args[-1] = args[-1].with_changes(comma=call.args[-1].comma)
    return call.with_changes(args=args)


REMOVED = re.compile(r"`(\w+)` has been removed from .*?The '(\w+)' \w+ will be used by default")


def removed_parameter(tables, name):
    """(parameter, the value TF2 always uses) when TensorFlow's tables say TF2 removed a
    parameter of ``name`` (embedding lookups' ``partition_strategy``: 'div')."""
    match = REMOVED.search(tables["function_warnings"].get(name or "", ""))
    return (match.group(1), match.group(2)) if match else None


def _argument(call: cst.Call, param: str, order):
    """The expression ``call`` passes for ``param`` (by keyword, or by TF1 position)."""
    for index, a in enumerate(call.args):
        if a.star:
            return None
        if a.keyword is not None:
            if a.keyword.value == param:
                return a.value
        elif order and index < len(order) and order[index] == param:
            return a.value
    return None
