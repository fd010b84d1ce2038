"""TFM106: TF1 summary ops -> TF2 summaries."""
import libcst as cst

from migrate import needles
from migrate.cstutil import arg
from migrate.rule import Rule

# TF1 parameters after `name` -> whether TF2 has them (as keywords)
OPS = {
    "scalar": ["tensor", "collections", "family"],
    "histogram": ["values", "collections", "family"],
    "image": ["tensor", "max_outputs", "collections", "family"],
    "audio": ["tensor", "sample_rate", "max_outputs", "collections", "family"],
    "text": ["tensor", "collections"],
}
DATA = {"tensor", "values"}
TF2_KEYWORDS = {"data", "step", "description", "buckets", "encoding"}
TF1_KEYWORDS = {"tensor", "values", "collections", "family"}

GRAPH_ONLY = {
    "merge_all": "tf.summary.create_file_writer(logdir) and `with writer.as_default(step=step):` "
                 "around the tf.summary calls",
    "merge": "writing each summary under a default writer",
    "FileWriter": "tf.summary.create_file_writer(logdir)",
    "FileWriterCache": "tf.summary.create_file_writer(logdir)",
    "Summary": "tf.summary.scalar/... under a default writer",
    "tensor_summary": "tf.summary.write",
    "get_summary_description": "the description= argument of TF2 summaries",
}


class Summaries(Rule):
    code = "TFM106"
    needle = needles.SUMMARY
    summary = "TF1 summary op: graph-only in TF2"
    fixable = True
    explanation = """
TF1 summary ops returned a serialized Summary tensor collected by `merge_all` and written
by a `FileWriter`; run eagerly in TF2 they fail (measured on TF 2.21:
`tf.compat.v1.summary.image` raises "UnimplementedError: Attr bad_color has unhandled
type"). `tf.summary.scalar/histogram/image/audio/text` become the TF2 ops, which record
under a default writer and step (`with tf.summary.create_file_writer(logdir).as_default(
step=step):`) and do nothing without one. Arguments become keywords, since TF2 put `step`
third (`image(name, data, step, max_outputs)`), and `tensor=`/`values=` become `data=`.
`collections=` is dropped (TF2 has no collections) and named in the finding; `family=`
and the graph-only pieces (`merge_all`, `FileWriter`, ...) are reported with their TF2 form.
"""
    before = """
tf.summary.image("inputs", images, 4)
merged = tf.summary.merge_all()
"""
    after = """
tf.summary.image("inputs", data=images, max_outputs=4)
merged = tf.summary.merge_all()  # reported: use tf.summary.create_file_writer(...).as_default(step=...)
"""

    def visit_Call(self, node: cst.Call) -> None:
        name = self.ctx.v1(node.func)
        if not name or not name.startswith("tf.summary."):
            return
        op = name[len("tf.summary."):]
        if op in GRAPH_ONLY:
            self.report(node, f"{name} is TF1 graph-only; in TF2 use {GRAPH_ONLY[op]}")
            return
        params = OPS.get(op)
        if params is None:
            return
        keywords = {a.keyword.value for a in node.args if a.keyword is not None}
        if keywords & TF2_KEYWORDS:
            return  # already a TF2 summary call
        compat = (self.ctx.qualname(node.func) or "").startswith("tensorflow.compat.v1.")
        if not (compat or keywords & TF1_KEYWORDS or self.ctx.is_tf1_file()):
            return  # name + data alone is valid TF2 too
        roles = []
        for index, a in enumerate(node.args):
            if a.star:
                self.report(node, f"{name} with *args/**kwargs: port it to tf.summary.{op} by hand")
                return
            if a.keyword is not None:
                roles.append(a.keyword.value)
            elif index == 0:
                roles.append("name")
            elif index - 1 < len(params):
                roles.append(params[index - 1])
            else:
                return
        if "family" in roles:
            self.report(node, f"{name}(family=...): TF2 summaries have no family; put it in the "
                              "name (family/name) or use tf.name_scope")
            return
        dropped = [r for r in roles if r == "collections"]
        message = (f"{name} is a TF1 graph op; tf.summary.{op} records under a default writer "
                   "and step (tf.summary.create_file_writer(...).as_default(step=...))")
        if dropped:
            message += "; collections= dropped (TF2 has no collections)"
        finding = self.report(node, message)
        func = self.ctx.tf(finding, f"summary.{op}")

        def replace(updated: cst.Call) -> cst.Call:
            args = []
            for role, a in zip(roles, updated.args):
                if role == "collections":
                    continue
                if role == "name" and a.keyword is None:
                    args.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
                else:
                    args.append(arg(a.value, "data" if role in DATA else role))
            commas = [x.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                      for x in args[:-1]] + args[-1:]
            return updated.with_changes(func=func, args=commas)

        finding.replace(node, replace)
