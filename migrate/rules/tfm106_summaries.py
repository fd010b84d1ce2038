"""TFM106: TF1 summaries stay TF1 (tf.compat.v1.summary, shims.summary.FileWriter), as one
system per file; files that already write TF2 summaries get the TF2 form."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import arg, join_args
from migrate.codemod.rule import SymbolRule
from migrate.codemod.tables import upgrade_tables

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

# in files that set up TF2 writers: what the TF1-only pieces become there
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


class Summaries(SymbolRule):
    code = "TFM106"
    needle = needles.SUMMARY
    summary = "TF1 summary op: TF2's tf.summary is another system (writer, step, tensorboard)"
    fixable = True
    explanation = """
TF1 summaries are one system: ops return a serialized Summary, `merge_all` collects them
and a `FileWriter` writes what a Session run returned. TF2's `tf.summary` is another one
(a default writer and step, and the `tensorboard` package: TF 2.21 raises
TBNotInstalledError on `tf.summary.scalar` without it, writer or not). Rewriting only some
calls to TF2 leaves a program that breaks, and a summary call in model code would make
the model fail where tensorboard is missing.

So a file keeps one system. Where the file uses TF1 summaries (a TF1-only piece such as
`merge_all`/`FileWriter`, TF1 keywords, or TF1 code around it), every `tf.summary`
name, calls and references alike, becomes `tf.compat.v1.summary`: those ops run in graph
mode, in functions (`shims.legacy_layer`, converted Session programs) and eagerly, with
no tensorboard. `FileWriter`, which TF2 refuses in eager code, becomes
`shims.summary.FileWriter`, the same writer without the refusal. A file that already
creates TF2 writers (`tf.summary.create_file_writer`) is TF2 summary code: calls with TF1
arguments get the TF2 form (keywords, `data=`, `collections=` dropped) and the TF1-only
pieces are reported with their TF2 replacement. Explicit `tf.compat.v1.summary` code is
left alone.
"""
    before = """
import tensorflow as tf

tf.summary.scalar("loss", loss)
merged = tf.summary.merge_all()
writer = tf.summary.FileWriter(logdir)
"""
    after = """
import shims
import tensorflow as tf

tf.compat.v1.summary.scalar("loss", loss)
merged = tf.compat.v1.summary.merge_all()
writer = shims.summary.FileWriter(logdir)
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._tf2 = None  # does the file write TF2 summaries (create_file_writer)?

    def check(self, node) -> None:
        ctx = self.ctx
        if (ctx.qualname(node) or "").startswith("tensorflow.compat."):
            return  # explicit compat.v1 (or v2) summaries: the user's choice, or ours
        name = ctx.v1(node)
        if not name or not name.startswith("tf.summary."):
            return
        op = name[len("tf.summary."):]
        head = op.split(".")[0]
        v1_only = f"tf.summary.{head}" in upgrade_tables()["symbol_renames"]
        if not (v1_only or head in OPS):
            return  # a TF2-only name (create_file_writer, experimental, ...)
        parent = ctx.parent()
        call = parent if isinstance(parent, cst.Call) and parent.func is node else None
        keywords = {a.keyword.value for a in call.args if a.keyword is not None} if call else set()
        if keywords & TF2_KEYWORDS:
            return  # already a TF2 summary call
        if self._tf2_writers():
            self._tf2_form(node, call, name, op, keywords, v1_only)
            return
        if not (v1_only or keywords & TF1_KEYWORDS or ctx.is_tf1_file()):
            return  # tf.summary.scalar(name, x) alone is valid TF2 too
        if op == "FileWriter":
            finding = self.report(node, "tf.summary.FileWriter is TF1's writer, which TF2 refuses in "
                                        "eager code; shims.summary.FileWriter is the same writer, "
                                        "working in graph mode and eagerly")
            finding.replace(node, cst.parse_expression("shims.summary.FileWriter"))
            finding.add_import("import shims")
            return
        finding = self.report(node, f"{name} stays a TF1 summary, as the rest of this file's: "
                                    f"tf.compat.v1.summary.{op} runs in graph mode, in functions "
                                    "and eagerly, without the tensorboard package")
        finding.replace(node, ctx.tf(finding, f"compat.v1.summary.{op}"))

    def _tf2_writers(self) -> bool:
        if self._tf2 is None:
            self._tf2 = "create_file_writer" in self.ctx.source
        return self._tf2

    def _tf2_form(self, node, call, name, op, keywords, v1_only) -> None:
        """A file writing TF2 summaries: TF1 calls become TF2 calls, TF1-only pieces are
        reported with their TF2 replacement."""
        if op in GRAPH_ONLY or v1_only:
            if op in GRAPH_ONLY:
                self.report(node, f"{name} is TF1-only, and this file writes TF2 summaries; "
                                  f"use {GRAPH_ONLY[op]}")
            return
        params = OPS.get(op)
        if call is None or params is None:
            return
        if not (keywords & TF1_KEYWORDS or self.ctx.is_tf1_file()):
            return  # name + data alone is valid TF2 too
        roles = []
        for index, a in enumerate(call.args):
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
        message = (f"{name} is a TF1 graph op; tf.summary.{op} records under the default writer "
                   "and step this file sets up (and needs the tensorboard package)")
        if dropped:
            message += "; collections= dropped (TF2 has no collections)"
        finding = self.report(call, message)
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
            return updated.with_changes(func=func, args=join_args(args))

        finding.replace(call, replace)
