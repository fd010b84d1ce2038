"""TFM120: `tf.train.Server` of a TF1 cluster program -> `shims.cluster.Server` (no wait for ever)."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import SymbolRule

SERVER = "tf.train.Server"


class ClusterServer(SymbolRule):
    code = "TFM120"
    needle = (needles.TF1_IMPORT, needles.Needle(("Server",)))
    summary = "tf.train.Server of a cluster program: shims.cluster.Server, which stops instead of waiting for ever"
    fixable = True
    explanation = """
A TF1 cluster program (between-graph replication: `tf.train.ClusterSpec`, one
`tf.train.Server` per task, `replica_device_setter`, a session on `server.target`) keeps
running on its cluster in graph mode (TFM501). Its server is TF 2's `tf.distribute.Server`
with one addition: on TF 1.15 and TF 2 alike, a worker whose parameter server died waits
for it for ever inside a session call.
`shims.cluster.Server` stops such a task with one error line naming the lost task and the
last checkpoint the task wrote, exit status 1, once its main thread has been stuck while
that task refused connections for `TFM_LOST_TASK_SECONDS` (60); a cluster manager's restart
policy then resumes the job from the checkpoint. A task back in time (restarted) lets TF's
recovery go on, as on TF 1.15; `TFM_LOST_TASK_SECONDS=0` waits for ever, as TF 1.15 did.
Parameter servers are not watched: they serve until stopped, as on TF 1.15.
(A synchronous program, with `SyncReplicasOptimizer`, is converted instead: TFM501 makes
its server `shims.cluster.MultiWorker`, for `tf.distribute.MultiWorkerMirroredStrategy`.)
"""
    before = """
import tensorflow as tf

cluster = tf.train.ClusterSpec({"ps": ["ps0:2222"], "worker": ["worker0:2222", "worker1:2222"]})
server = tf.train.Server(cluster, job_name="worker", task_index=0)
"""
    after = """
import shims
import tensorflow as tf

cluster = tf.train.ClusterSpec({"ps": ["ps0:2222"], "worker": ["worker0:2222", "worker1:2222"]})
server = shims.cluster.Server(cluster, job_name="worker", task_index=0)
"""

    def check(self, node) -> None:
        name = self.ctx.v1(node) or ""
        if name != SERVER and not name.startswith(SERVER + "."):
            return  # (tf.train.ServerDef is TF2's too)
        while isinstance(node, cst.Attribute) and self.ctx.v1(node) != SERVER:
            node = node.value  # tf.train.Server.create_local_server(): the class is renamed
        if self.ctx.v1(node) != SERVER:
            return
        finding = self.report(node, f"{SERVER} is shims.cluster.Server: TF 2's tf.distribute.Server, stopping "
                                    "with an error instead of waiting for ever on a lost task")
        finding.replace(node, cst.parse_expression("shims.cluster.Server"))
        finding.add_import("import shims")
