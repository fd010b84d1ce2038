"""TFM121: a TF1 cluster program's flags (`--ps_hosts`, `--job_name`, ...) default to TF_CONFIG."""
import re
from typing import List, Optional, Tuple

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import arg, call, code, string_value
from migrate.codemod.rule import Rule

# the flags TF 1.x's distributed guide gave each task (shims.cluster.CLUSTER_FLAGS)
CLUSTER_FLAGS = ("ps_hosts", "worker_hosts", "job_name", "task_index")
# what makes a file a cluster program's (and, on a second run, TFM120's shims.cluster.Server)
CLUSTER_CALLS = {"tf.train.ClusterSpec", "tf.train.Server", "tf.distribute.Server"}
DEFINES = ("DEFINE_string", "DEFINE_integer")
SHIM = "shims.cluster.tf_config_flag"


# TF1's form of a hosts flag: comma-separated host:port pairs (what TF_CONFIG's lists become)
HOSTS = re.compile(r"[^\s,\[\]'\"]+(,[^\s,\[\]'\"]+)*")


def _other_form(flag: str, default: Optional[cst.BaseExpression]) -> bool:
    """A hosts flag whose literal default is not TF1's ``host:port,host:port`` (a Python
    list the program evaluates, say): TF_CONFIG's hosts would not parse there."""
    text = string_value(default)
    return flag.endswith("_hosts") and bool(text) and HOSTS.fullmatch(text) is None


class ClusterFlags(Rule):
    code = "TFM121"
    needle = (needles.TF1_IMPORT, needles.Needle(CLUSTER_FLAGS))
    summary = "a cluster program's --ps_hosts/--worker_hosts/--job_name/--task_index default to TF_CONFIG"
    fixable = True
    explanation = """
TF 1.x's cluster programs (the distributed guide's form) learn their cluster from flags:
`--ps_hosts`, `--worker_hosts`, `--job_name`, `--task_index`. Cluster managers (Kubernetes
training operators, managed training services) describe it in `TF_CONFIG` instead. In a
file that builds a `tf.train.ClusterSpec` or `tf.train.Server`, those flags' defaults
become `shims.cluster.tf_config_flag(name, default)`: what `TF_CONFIG` says of this task
(its chief is worker 0, its workers follow, as those programs assumed), or the old default
where `TF_CONFIG` is not set. A flag given on the command line still wins, so the
program starts as before, or from `TF_CONFIG` alone. `tf.app.flags`/absl `DEFINE_*` and
argparse's `add_argument` are rewritten; flags made in a loop or another module are not,
and where a hosts flag's default has another form (a Python list the program evaluates), the
program's cluster flags stay as they are and that is reported.
"""
    before = """
import tensorflow as tf

tf.app.flags.DEFINE_string("ps_hosts", "", "comma-separated host:port pairs")
tf.app.flags.DEFINE_integer("task_index", 0, "index of the task within its job")
cluster = tf.train.ClusterSpec({"ps": tf.app.flags.FLAGS.ps_hosts.split(",")})
"""
    after = """
import shims
import tensorflow as tf

tf.app.flags.DEFINE_string("ps_hosts", shims.cluster.tf_config_flag("ps_hosts", ""), "comma-separated host:port pairs")
tf.app.flags.DEFINE_integer("task_index", shims.cluster.tf_config_flag("task_index", 0), "index of the task within its job")
cluster = tf.train.ClusterSpec({"ps": tf.app.flags.FLAGS.ps_hosts.split(",")})
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._cluster = False
        # (the call, the flag, the index of its default among the call's arguments or None)
        self._flags: List[Tuple[cst.Call, str, Optional[int]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        if self.ctx.v1(node.func) in CLUSTER_CALLS or code(node.func).startswith("shims.cluster."):
            self._cluster = True
        method = node.func.attr.value if isinstance(node.func, cst.Attribute) else \
            node.func.value if isinstance(node.func, cst.Name) else None
        if method in DEFINES and node.args and string_value(node.args[0].value) in CLUSTER_FLAGS:
            flag = string_value(node.args[0].value)
            at = next((i for i, a in enumerate(node.args) if a.keyword and a.keyword.value == "default"), None)
            if at is None and len(node.args) > 1 and node.args[1].keyword is None:
                at = 1
            if at is not None:
                self._flags.append((node, flag, at))
        elif method == "add_argument":
            names = [string_value(a.value) for a in node.args if a.keyword is None]
            flag = next((n[2:] for n in names if n and n[2:] in CLUSTER_FLAGS and n.startswith("--")), None)
            if flag is not None:
                at = next((i for i, a in enumerate(node.args) if a.keyword and a.keyword.value == "default"),
                          None)
                self._flags.append((node, flag, at))

    def leave_Module(self, node: cst.Module) -> None:
        if not self._cluster:
            return
        flags = [(call, flag, at, call.args[at].value if at is not None else None)
                 for call, flag, at in self._flags]
        odd = [(call, flag, default) for call, flag, _, default in flags if _other_form(flag, default)]
        for call, flag, default in odd:  # one cluster from two sources is worse than none
            self.report(call, f"--{flag}'s default {code(default)} is not TF 1.x's comma-separated "
                              "host:port list, so TF_CONFIG's hosts cannot go there and this program's "
                              "cluster flags stay as they are: pass them from TF_CONFIG in the task's "
                              "command (docs/distributed.md)")
        for call, flag, at, default in [] if odd else flags:
            if default is not None and code(default).startswith(SHIM):
                continue  # a second run
            finding = self.report(call, f"--{flag} of a TF1 cluster program defaults to what TF_CONFIG says "
                                        f"of this task ({SHIM}); a --{flag} given still wins")
            finding.add_import("import shims")
            finding.replace(call, lambda updated, flag=flag, at=at: _defaulted(updated, flag, at))


def _defaulted(node: cst.Call, flag: str, at: Optional[int]) -> cst.Call:
    """``node`` with its default (None for argparse's when it has none) read from TF_CONFIG."""
    args = list(node.args)
    old = args[at].value if at is not None else cst.Name("None")
    value = call(cst.parse_expression(SHIM), [arg(cst.SimpleString(f'"{flag}"')), arg(old)])
    if at is not None:
        args[at] = args[at].with_changes(value=value)
        return node.with_changes(args=args)
    if args[-1].comma is cst.MaybeSentinel.DEFAULT:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return node.with_changes(args=[*args, arg(value, "default")])
