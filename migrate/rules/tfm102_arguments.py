"""TFM102: positional arguments whose order changed, and renamed/removed keywords."""
import libcst as cst

from migrate.cstutil import arg
from migrate import needles
from migrate.rule import Rule
from migrate.tables import upgrade_tables


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
        tf1 = self.ctx.is_tf1_file()
        # positional order: ambiguous (TF2 has its own) unless the file is TF1 code;
        # keywords TF2 still accepts: likewise; the other renamed keywords are TF1-only
        order = tables["reorders"].get(old) if tf1 else None
        ambiguous = set(tables["tf2_keywords"].get(old, ()))
        renames = {k: v for k, v in tables["keyword_renames"].get(old, {}).items()
                   if tf1 or k not in ambiguous}
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
                    notes.append(f"{keyword}= is gone in TF2 and was dropped")
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
