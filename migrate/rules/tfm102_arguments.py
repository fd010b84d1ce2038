"""TFM102: positional arguments whose order changed, and renamed/removed keywords."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import arg, code, join_args
from migrate.codemod.rule import Rule
from migrate.codemod.shared import CARRIED_OUT_IN_TF2, fine_in_tf2, removed_parameter
from migrate.codemod.signatures import (bind, call_keywords, readings, rewrite_target,
                                        tf1_keyword_evidence, tf1_signature, tf2_signature)
from migrate.codemod.tables import owned_by_rules, upgrade_tables


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
only in TF1 code: a file using TF1-only APIs, or a call passing a keyword only TF1 had
(`dim=`, `keep_dims=`). A keyword that TF2 removed is dropped only when tf_upgrade_v2
drops it; the finding names it.

Every rewritten call is bound against the target's real TF 2.21 signature (generated from
TensorFlow, like the tables): raw ops (`tf.train.sdca_fprint` -> `tf.raw_ops.SdcaFprint`)
take keywords only, so every argument gets its TF1 name; a keyword rename the target does
not accept is not made (`tf.summary.write` takes `tensor=`); a call that would still raise
TypeError (`tf.sparse_concat(ax, inp, concat_dim=c)` passes the axis twice) is an error
finding and is left as it is. contrib summaries get what tf_upgrade_v2's transforms give
them: the global step as `step=` where none was passed (contrib.summary's default), and
`record_if(True/False)` for `always_record_summaries`/`never_record_summaries`.

A TF1 call of a function tf_upgrade_v2 rewrites with a custom transform, whose
`tf.compat.v1` function keeps TF 1.15's signature (`tf.nn.erosion2d`, `dilation2d`,
`tf.image.extract_glimpse`, `fractional_max_pool`, `ctc_beam_search_decoder`; the list is
generated), calls that function as it was: TF2's `extract_glimpse` runs another op whose
glimpses differ from TF1's unless `centered` and `normalized` are both true.

A call of a name both TF1 and TF2 have, in a file with no TF1-only API, whose arguments
fill different parameters in TF1 and TF2 (`tf.nn.dropout(x, 0.5)`: keep_prob or rate;
`tf.boolean_mask(t, m, "n")`: name or axis) is decided by the call itself where only one
reading binds, and is otherwise an error finding naming both readings: never left silent.
"""
    before = """
import tensorflow as tf

idx = tf.argmax(logits, dimension=1)
mean = tf.reduce_mean(x, axis=0, keep_dims=True)
"""
    after = """
import tensorflow as tf

idx = tf.argmax(logits, axis=1)
mean = tf.reduce_mean(x, axis=0, keepdims=True)
"""

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.ctx.qualname(node.func)
        if not qualname or qualname.startswith("tensorflow.compat."):
            return
        old = self.ctx.v1(node.func)
        keywords = call_keywords(node)
        if not old or keywords is None:
            return  # *args/**kwargs: order unknowable, leave the call alone
        tables = upgrade_tables()
        # a TF1-only name or a TF1-only keyword in the call is proof; else the file decides
        tf1 = needles.tf1_only(old) or self.ctx.is_tf1_file() or tf1_keyword_evidence(old, keywords)
        if old in tables.get("compat_v1_keeps", ()) and self._kept_in_compat_v1(node, old, tf1, keywords):
            return
        # positional order: ambiguous (TF2 has its own) unless the call is TF1 code;
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
        if not tf1:
            reading = self._reading(node, old, keywords)
            if reading != "tf1":
                return  # TF2's reading (or both, as the error finding says)
            tf1 = True  # only TF1's signature binds this call: it is TF1 code
            order = order or tables["reorders"].get(old)
        target = self._target(old, tables)
        if target is not None and target.all_keyword_only and None in keywords:
            order = order or _tf1_order(old)  # raw ops: every argument by keyword
        plan, notes = _plan(node, order, renames, target, tables["arg_warnings"].get(old, {}))
        transform_notes, added = _transforms(old, tables, keywords)
        notes += transform_notes
        if target is not None and (notes or rewrite_target(old) != old):
            final = [k if step == "" else step for k, step in zip(keywords, plan) if step is not None]
            problem = bind(target, final + [keyword for keyword, _ in added]).problem
            if problem:
                self._invalid(node, old, problem)
                return
        if not notes:
            return
        finding = self.report(node, f"{old}: " + "; ".join(notes))
        extra = [arg(make(self.ctx, finding), keyword) for keyword, make in added]
        finding.replace(node, lambda updated: _apply(updated, plan, extra))

    def _kept_in_compat_v1(self, node, old, tf1, keywords) -> bool:
        """A TF1 call of a function tf_upgrade_v2 transforms whose tf.compat.v1 function
        keeps TF 1.15's signature and op (``tf.nn.erosion2d``'s rates, ``extract_glimpse``'s
        uniform_noise and TF1's glimpse offsets, ``fractional_max_pool``'s deterministic):
        it calls that function, arguments as they are. True when moved."""
        if old in CARRIED_OUT_IN_TF2 or fine_in_tf2(old, node):
            return False
        if not tf1:
            both = readings(old, keywords)
            if both is None or both.verdict != "tf1":
                return False  # TF2's call, or ambiguous (the usual path reports it)
        finding = self.report(node, f"{old} changed in TF2 (tf_upgrade_v2 rewrites its arguments "
                                    f"and TF2's op may differ); tf.compat.v1.{old[len('tf.'):]} is "
                                    "TF 1.15's function, called as before")
        finding.replace(node.func, self.ctx.tf(finding, "compat.v1." + old[len("tf."):]))
        return True

    def _target(self, old, tables):
        """TF 2.21's signature of the function this call ends up calling, when TensorFlow's
        rename decides it (names our own rules move elsewhere are checked by those rules)."""
        if owned_by_rules(old) and old not in tables["reorders"] and old not in tables["keyword_renames"]:
            return None
        return tf2_signature(rewrite_target(old))

    def _reading(self, node, old, keywords):
        """A call of a name TF1 and TF2 both have, in a file that shows no TF1 API, read both
        ways (``signatures.Readings.verdict``): where its arguments fill other parameters in
        TF1 than in TF2 (``tf.nn.dropout(x, 0.5)``: TF1's keep_prob, TF2's rate) and both
        readings bind, it is an error finding naming both."""
        both = readings(old, keywords)
        if both is None:
            return None
        if both.verdict == "differ":
            self.report(node, both.differ_message(old))
        return both.verdict

    def _invalid(self, node, old, problem) -> None:
        target = rewrite_target(old)
        self.report(node, f"error: {old}: this call cannot become a {target} call, which {problem} "
                          "(TypeError in TF2); fix its arguments by hand")


def _transforms(old, tables, keywords):
    """tf_upgrade_v2's data transforms of contrib summaries: a call with no step gets the
    global step (contrib.summary's default), ``always_record_summaries()`` /
    ``never_record_summaries()`` the condition ``record_if`` needs. Returns (notes, the
    arguments to add as (keyword, make(ctx, finding) -> expression))."""
    transform = tables.get("transforms", {}).get(old, {})
    function = transform.get("function")
    if function == "_add_summary_step_transformer":
        order = tables["reorders"].get(old, ())
        given = {k or (order[i] if i < len(order) else None) for i, k in enumerate(keywords)}
        if "step" in given:
            return [], []
        step = lambda ctx, finding: cst.Call(  # noqa: E731
            ctx.tf(finding, "compat.v1.train.get_or_create_global_step"), [])
        return ["no step: contrib.summary used the global step, now passed as step="], [("step", step)]
    if function == "_add_summary_recording_cond_transformer" and not keywords:
        condition = transform["cond"]
        return ([f"record_if needs its condition: {condition}"],
                [("condition", lambda ctx, finding: cst.Name(condition))])
    return [], []


def _tf1_order(old):
    signature = tf1_signature(old)
    return list(signature.positional) if signature else None


def _plan(node, order, renames, target, warnings):
    """Per argument: the keyword it gets, "" to keep it, None to drop it; and the notes."""
    plan, notes = [], []
    position = 0
    for a in node.args:
        keyword = a.keyword.value if a.keyword else None
        if keyword is None:
            name = order[position] if order and position < len(order) else None
            position += 1
            if name is not None:
                keyword = name
                notes.append(f"argument {position} is now {name}=")
        if keyword is not None and keyword in renames:
            new = renames[keyword]
            if new is None:
                why = warnings.get(keyword)
                notes.append(f"{keyword}= is gone in TF2 and was dropped"
                             + (f" ({why.rstrip('.')})" if why else ""))
                plan.append(None)
                continue
            if target is None or new in target.names or keyword not in target.names:
                notes.append(f"{keyword}= is {new}= in TF2")
                keyword = new
        plan.append("" if keyword is None or (a.keyword and a.keyword.value == keyword) else keyword)
    return plan, notes


def _apply(call: cst.Call, plan, added=()) -> cst.Call:
    args = []
    for step, a in zip(plan, call.args):
        if step is None:
            continue
        args.append(a if step == "" else arg(a.value, step).with_changes(comma=a.comma))
    if added:
        return call.with_changes(args=join_args([*args, *added]))
    if args:
        args[-1] = args[-1].with_changes(comma=call.args[-1].comma)
    return call.with_changes(args=args)


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
