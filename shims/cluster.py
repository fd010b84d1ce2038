"""TF1 cluster programs (between-graph replication) on TF 2: ``tf.train.Server`` without the
wait for ever.

A program migrated from TF 1.15 that keeps its cluster (``tf.train.ClusterSpec``,
``replica_device_setter``, ``MonitoredTrainingSession(master=server.target)``) runs on TF 2's
``tf.distribute.Server`` as it ran on TF 1.15's, with one difference: on both, a worker whose
parameter server died waits for it for ever, inside a session call that never returns.
``Server`` here watches for that: when the program's main thread has not moved for
``TFM_LOST_TASK_SECONDS`` (60 unless set) while another task of the cluster refused
connections for as long, the task stops with one error line naming the lost task and the
last checkpoint this process wrote, and exit status 1, so a cluster manager's restart policy
starts the job again from that checkpoint. A task that comes back in time (restarted by the
manager) lets TF's own recovery go on, as in TF 1.15. ``TFM_LOST_TASK_SECONDS=0`` waits for
ever, as TF 1.15 did. A parameter server (``job_name "ps"``) is not watched: it serves until
it is stopped, as on TF 1.15.

A *synchronous* program (``tf.train.SyncReplicasOptimizer``) is converted instead (TFM501):
its ``tf.train.Server`` becomes ``MultiWorker``, which starts no server of its own and gives
the program ``tf.distribute.MultiWorkerMirroredStrategy`` over the cluster's workers
(``GraphProgram.on_workers``); its ``SyncReplicasOptimizer`` is the one here, whose
gradients the strategy averages across the workers every step. An *asynchronous* program in
the same form (no ``SyncReplicasOptimizer``) is converted too: its server becomes
``ParameterServers``, which gives the chief ``tf.distribute.ParameterServerStrategy`` and a
coordinator scheduling the program's steps on the workers
(``GraphProgram.on_parameter_servers``).

``tf_config_flag`` lets such a program take its cluster from ``TF_CONFIG``, as cluster
managers set it, where it took flags (``--ps_hosts``, ``--worker_hosts``, ``--job_name``,
``--task_index``): the migrated flags default to what ``TF_CONFIG`` says, and flags given on
the command line still win.
"""
from __future__ import annotations

import atexit
import ctypes
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import List, Optional, Tuple

import tensorflow as tf

from shims import _coordinated, _replicas

__all__ = ["CLUSTER_FLAGS", "MultiWorker", "ParameterServers", "Server", "SyncReplicasOptimizer",
           "lost_task_seconds", "tf_config_flag"]

DEFAULT_SECONDS = 60.0
_PROBE_SECONDS = 2.0  # how long one connection attempt may take


def lost_task_seconds() -> float:
    """``TFM_LOST_TASK_SECONDS``: how long a task may be both stuck and without another task
    before it stops (0: never, TF 1.15's wait)."""
    raw = os.environ.get("TFM_LOST_TASK_SECONDS", "")
    try:
        seconds = float(raw) if raw.strip() else DEFAULT_SECONDS
    except ValueError:
        raise ValueError(f"TFM_LOST_TASK_SECONDS={raw!r} is not a number of seconds") from None
    if seconds < 0 or seconds != seconds:
        raise ValueError(f"TFM_LOST_TASK_SECONDS={raw!r}: give 0 (wait for ever) or more seconds")
    return seconds


class Server(tf.distribute.Server):
    """``tf.train.Server`` (TF 2's ``tf.distribute.Server``, the same arguments), whose task
    stops with an error when it would wait for ever on a lost task (see the module)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        seconds = lost_task_seconds()  # a bad value is an error before the server starts
        super().__init__(server_or_cluster_def, job_name=job_name, task_index=task_index,
                         protocol=protocol, config=config, start=start)
        definition = self.server_def
        own = (definition.job_name, definition.task_index)
        tasks = [(job.name, index, address) for job in definition.cluster.job
                 for index, address in sorted(job.tasks.items()) if (job.name, index) != own]
        if seconds and own[0] != "ps" and tasks:  # the graph the program builds (each thread
            graph = tf.compat.v1.get_default_graph()  # has its own default graph in TF 2)
            _Watch(tasks, seconds, threading.main_thread().ident, graph).start()



class _Task:
    """A task of a TF1 cluster, read from what made its ``tf.train.Server`` (a
    ``ClusterSpec``, dict or ``ServerDef``, the job name and task index): its cluster, its
    job and index, and the workers in TF1's order (the ``chief``/``master`` task first, as
    worker 0, then the ``worker`` tasks)."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None):
        kind = type(self).__name__
        if isinstance(server_or_cluster_def, tf.train.ServerDef):
            definition = server_or_cluster_def
            cluster = tf.train.ClusterSpec(definition.cluster)
            job_name = job_name or definition.job_name
            task_index = definition.task_index if task_index is None else task_index
            protocol = protocol or definition.protocol or None
        else:
            cluster = tf.train.ClusterSpec(server_or_cluster_def)
        jobs = cluster.jobs
        if job_name is None:
            if len(jobs) != 1:
                raise ValueError(f"{kind}: give job_name (the cluster has several jobs)")
            job_name = jobs[0]
        if job_name not in jobs:
            raise ValueError(f"{kind}: job {job_name!r} is not in the cluster ({', '.join(jobs)})")
        self.cluster_spec, self.job_name = cluster, job_name
        self.task_index = int(task_index or 0)
        self.protocol = protocol or "grpc"
        leaders = [job for job in ("chief", "master") if job in jobs]
        self.workers = [address for job in (*leaders, "worker") if job in jobs
                        for address in cluster.job_tasks(job)]
        tasks = cluster.job_tasks(job_name)
        if not 0 <= self.task_index < len(tasks):
            raise ValueError(f"{kind}: task {self.task_index} of job {job_name!r}, which has "
                             f"{len(tasks)} task(s)")
        self.address = tasks[self.task_index]
        self.worker_index = self.workers.index(self.address) \
            if job_name in (*leaders, "worker") else None

    @property
    def target(self) -> str:
        """The session target: this process (the strategy connects the tasks)."""
        return ""

    @property
    def is_chief(self) -> bool:
        """Worker 0 (the ``chief`` or ``master`` task, else ``worker`` 0) writes the checkpoints."""
        return self.worker_index == 0


class MultiWorker(_Task):
    """The task of a synchronous TF1 cluster program (``SyncReplicasOptimizer``) on TF 2's
    ``tf.distribute.MultiWorkerMirroredStrategy``, made from what made its
    ``tf.train.Server`` (the same arguments: a ``ClusterSpec``, dict or ``ServerDef``, the
    job name and task index).

    TF1's workers computed gradients against variables held on parameter servers, and the
    chief's queue applied their average once every worker had sent one. Here every worker
    keeps a mirrored copy of the variables and the strategy averages the workers' gradients
    in each step (an all-reduce), so the result is the same and no parameter server is left
    with work: the workers are the cluster's ``chief``/``master`` task (first) and its
    ``worker`` tasks, in order, as TF1 numbered them; a ``ps`` task's :meth:`join` returns
    at once. The strategy starts this worker's own server, so none is started here."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        super().__init__(server_or_cluster_def, job_name, task_index, protocol)

    def join(self) -> None:
        """A parameter server's ``server.join()``: under the strategy the workers hold the
        variables, so it has nothing to serve and returns (its process ends, as TF1's
        ended when the job was stopped). A worker has no server to join."""
        if self.worker_index is not None:
            raise RuntimeError("MultiWorker.join(): this task is a worker of a "
                               "MultiWorkerMirroredStrategy program; it trains, it does not serve")
        sys.stderr.write(f"tf-migrate: /job:{self.job_name}/task:{self.task_index} has no work: the "
                         "program runs on tf.distribute.MultiWorkerMirroredStrategy, whose workers "
                         "keep the variables; this task ends\n")

    def strategy(self):
        """This worker's ``MultiWorkerMirroredStrategy`` over the cluster's workers (one
        replica per worker, on its first device, as a TF1 worker ran on its default device),
        made once per process; None with one worker (a plain program is the same)."""
        if self.worker_index is None:
            raise RuntimeError(f"MultiWorker.strategy(): /job:{self.job_name} is not a worker job")
        if len(self.workers) == 1:
            return None
        key = (tuple(self.workers), self.worker_index)
        if _STRATEGY.get("key") not in (None, key):
            raise RuntimeError("MultiWorker.strategy(): this process already joined another cluster")
        if "strategy" not in _STRATEGY:
            gpus = tf.config.list_physical_devices("GPU")
            if len(gpus) > 1:  # one replica per worker, as TF1's worker used its first GPU
                tf.config.set_visible_devices(gpus[:1], "GPU")
            resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
                tf.train.ClusterSpec({"worker": self.workers}), task_type="worker",
                task_id=self.worker_index, rpc_layer=self.protocol)
            _STRATEGY.update(key=key, strategy=tf.distribute.MultiWorkerMirroredStrategy(
                cluster_resolver=resolver))
        return _STRATEGY["strategy"]


_STRATEGY: dict = {}  # the process's MultiWorkerMirroredStrategy (TensorFlow allows one)

CHIEF_GONE_SECONDS = 3.0  # how long a worker waits for the chief's tasks to come back


class ParameterServers(_Task):
    """The task of an asynchronous TF1 cluster program (parameter servers, no
    ``SyncReplicasOptimizer``) on TF 2's ``tf.distribute.ParameterServerStrategy``, made
    from what made its ``tf.train.Server`` (the same arguments).

    TF1's workers each ran their own training loop against the variables on the parameter
    servers. In TF 2 one coordinator drives them: the chief (worker 0) runs the program's
    loop and schedules each step on a free worker (``GraphProgram.on_parameter_servers``);
    the variables stay on the parameter servers, and each step applies its gradients there
    without waiting for the others. So:

    - a ``ps`` task serves the variables (:meth:`join`, for ever, as TF1's did);
    - a worker other than the chief serves the chief's steps: its server starts here, and
      the program's ``on_parameter_servers`` does not return there; the task ends (exit
      status 0) once the chief's tasks are gone, as a TF1 worker ended with training;
    - the chief coordinates, and runs worker 0 beside itself (a child process serving the
      chief's own address, so the cluster keeps the workers it had).

    The loop's data are the chief's: each step takes the batch the chief's loop fed, where
    each TF1 worker fed its own."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        super().__init__(server_or_cluster_def, job_name, task_index, protocol)
        self.ps = list(self.cluster_spec.job_tasks("ps")) if "ps" in self.cluster_spec.jobs else []
        if not self.ps:
            raise ValueError("ParameterServers: the cluster has no ps job (a TF1 program with "
                             "replica_device_setter kept its variables on parameter servers)")
        self._server = None
        if start and (job_name == "ps" or not self.is_chief):
            self._start()

    def _tf2_cluster(self) -> dict:
        return {"ps": self.ps, "worker": self.workers}

    def _start(self) -> None:
        if self._server is None:
            job, index = ("ps", self.task_index) if self.job_name == "ps" else ("worker", self.worker_index)
            self._server = tf.distribute.Server(tf.train.ClusterSpec(self._tf2_cluster()), job_name=job,
                                                task_index=index, protocol=self.protocol, start=True)

    def join(self) -> None:
        """A parameter server's ``server.join()``: it serves the variables until it is
        stopped, as TF1's did. A worker serves the chief's steps (:meth:`serve`)."""
        if self.job_name != "ps":
            self.serve()
        self._start()
        self._server.join()

    def serve(self) -> None:
        """A worker other than the chief: run the steps the chief schedules, until the chief's
        tasks are gone (then this process ends, exit status 0)."""
        if self.job_name == "ps" or self.is_chief:
            raise RuntimeError(f"ParameterServers.serve(): /job:{self.job_name}/task:{self.task_index} "
                               "is not a worker the chief schedules steps on")
        self._start()
        sys.stderr.write(f"tf-migrate: /job:{self.job_name}/task:{self.task_index} runs the steps the "
                         "chief schedules (tf.distribute.ParameterServerStrategy) until the chief ends\n")
        sys.stderr.flush()
        seen, gone_since = False, None
        while True:
            time.sleep(0.5)
            if _reachable(self.workers[0]):
                seen, gone_since = True, None
                continue
            if seen:
                gone_since = gone_since or time.monotonic()
                if time.monotonic() - gone_since >= CHIEF_GONE_SECONDS:
                    sys.stderr.write(f"tf-migrate: the chief ({self.workers[0]}) has ended; "
                                     f"/job:{self.job_name}/task:{self.task_index} ends\n")
                    sys.stderr.flush()
                    os._exit(0)  # TensorFlow's server threads never return

    def coordinated(self):
        """The chief's ``ParameterServerStrategy`` and ``ClusterCoordinator`` over the
        cluster's parameter servers and workers (worker 0 started beside this process),
        made once per process."""
        if not self.is_chief:
            raise RuntimeError(f"ParameterServers.coordinated(): /job:{self.job_name}/task:"
                               f"{self.task_index} is not the chief")
        key = (tuple(self.ps), tuple(self.workers))
        if _COORDINATED.get("key") not in (None, key):
            raise RuntimeError("ParameterServers: this process already coordinates another cluster")
        if "coordinated" not in _COORDINATED:
            _worker_zero(self._tf2_cluster(), self.protocol)
            resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
                tf.train.ClusterSpec(self._tf2_cluster()), rpc_layer=self.protocol)
            handlers = list(logging.getLogger().handlers)
            strategy = tf.distribute.experimental.ParameterServerStrategy(resolver)
            coordinator = tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
            for handler in logging.getLogger().handlers[:]:
                if handler not in handlers:  # absl's basicConfig() as TF logged its connection:
                    logging.getLogger().removeHandler(handler)  # every TF log line came twice
            _COORDINATED.update(key=key, coordinated=_coordinated.Coordinated(
                strategy, coordinator, self.ps, self.workers))
        return _COORDINATED["coordinated"]


_COORDINATED: dict = {}  # the chief's strategy and coordinator (one per process)


def _worker_zero(cluster: dict, protocol: str) -> None:
    """Worker 0's server, in a child process of the chief that ends with it (the chief's own
    process is the coordinator, which TensorFlow does not let serve as a worker too)."""
    code = ("import json, os, sys\n"
            "os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')\n"
            "import tensorflow as tf\n"
            "cluster, protocol = json.loads(sys.argv[1]), sys.argv[2]\n"
            "tf.distribute.Server(tf.train.ClusterSpec(cluster), job_name='worker', task_index=0,\n"
            "                     protocol=protocol, start=True).join()\n")
    child = subprocess.Popen([sys.executable, "-c", code, json.dumps(cluster), protocol],
                             stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
    atexit.register(_end, child)


def _die_with_parent() -> None:
    """In the child: SIGKILL when the parent dies (Linux), so worker 0 never outlives the chief."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # elsewhere atexit ends it


def _end(child) -> None:
    if child.poll() is None:
        child.kill()
        child.wait()


class SyncReplicasOptimizer(_replicas.WrappedOptimizer):
    """TF1's ``tf.train.SyncReplicasOptimizer`` in a program on ``MultiWorker``'s strategy:
    the wrapped v1 optimizer computes and applies the gradients, which the strategy
    averages across the workers in every step (TF1 averaged ``replicas_to_aggregate``
    workers' gradients in the chief's queue). Backup workers (``replicas_to_aggregate``
    below ``total_num_replicas``: each step took the first gradients to arrive) have no
    such form and are refused, as is a count other than the strategy's workers.
    :meth:`make_session_run_hook` gives a hook with nothing to do (no queues, no tokens)."""

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        super().__init__(opt, name)
        total = replicas_to_aggregate if total_num_replicas is None else total_num_replicas
        if replicas_to_aggregate != total:
            raise NotImplementedError(
                f"SyncReplicasOptimizer: {replicas_to_aggregate} of {total} replicas aggregated "
                "(backup workers) has no tf.distribute form; aggregate every replica")
        if variable_averages is not None or variables_to_average:
            raise NotImplementedError("SyncReplicasOptimizer: variable_averages has no "
                                      "tf.distribute form; keep the moving averages in the model")
        self._replicas = int(replicas_to_aggregate)

    def _check_replicas(self) -> None:
        strategy = tf.distribute.get_strategy()
        running = strategy.num_replicas_in_sync if tf.distribute.has_strategy() else 1
        if running != self._replicas:
            raise ValueError(f"SyncReplicasOptimizer: replicas_to_aggregate={self._replicas}, but "
                             f"the program runs on {running} worker(s): give it the number of workers")

    def compute_gradients(self, *args, **kwargs):
        self._check_replicas()
        return super().compute_gradients(*args, **kwargs)

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """TF1's hook started the chief's queue runner and filled the token queue: nothing
        of that exists here."""
        return tf.compat.v1.train.SessionRunHook()


def _reachable(address: str) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_SECONDS):
            return True
    except (OSError, ValueError):
        return False


def _last_checkpoint(graph) -> Optional[str]:
    """The newest checkpoint a saver of ``graph`` (a monitored session's) wrote in this process."""
    try:
        savers = graph.get_collection(tf.compat.v1.GraphKeys.SAVERS)
    except Exception:  # the graph is being changed by the main thread: say nothing
        return None
    written = [path for saver in savers for path in getattr(saver, "last_checkpoints", ())]
    return written[-1] if written else None


class _Watch(threading.Thread):
    """Stops the process when its main thread has been stuck (the same frame at the same
    instruction) while another task refused connections, both for ``seconds``."""

    def __init__(self, tasks: List[Tuple[str, int, str]], seconds: float, main: Optional[int], graph):
        super().__init__(name="tf-migrate lost-task watch", daemon=True)
        self._tasks, self._seconds, self._main, self._graph = tasks, seconds, main, graph
        self._interval = min(1.0, seconds / 4)

    def run(self) -> None:
        held, still_since = None, time.monotonic()  # held: keeps the frame's id from reuse
        down_since = {}
        while True:
            time.sleep(self._interval)
            now = time.monotonic()
            frame = sys._current_frames().get(self._main)
            if frame is None:
                return  # the main thread has ended
            if held is None or frame is not held[0] or frame.f_lasti != held[1]:
                held, still_since, down_since = (frame, frame.f_lasti), now, {}
                continue
            if now - still_since < self._interval * 2:
                continue  # probe only a main thread that waits
            for task in self._tasks:  # (a task is down since after the thread got stuck)
                if _reachable(task[2]):
                    down_since.pop(task, None)
                else:
                    down_since.setdefault(task, time.monotonic())
            lost = [task for task, since in down_since.items() if now - since >= self._seconds]
            if lost:
                self._stop(lost, now - still_since)

    def _stop(self, lost, waited: float) -> None:
        names = ", ".join(f"/job:{job}/task:{index} ({address})" for job, index, address in lost)
        checkpoint = _last_checkpoint(self._graph)
        resume = (f"the last checkpoint this task wrote is {checkpoint}" if checkpoint
                  else "the job resumes from the chief's last checkpoint")
        message = (f"tf-migrate: this task has waited {waited:.0f} s on {names}, which no longer accepts "
                   f"connections: stopping instead of waiting for ever (TFM_LOST_TASK_SECONDS="
                   f"{self._seconds:g}); restart the job: {resume}\n")
        try:
            sys.stdout.flush()  # what the program printed, then the reason
            sys.stderr.write(message)
            sys.stderr.flush()
        except Exception:  # a closed stream: the exit status still says it
            pass
        os._exit(1)


# the flags TF 1.x's distributed guide gave every task of a cluster program, and what a
# cluster manager's TF_CONFIG says of each (its chief, or master, is worker 0 there)
CLUSTER_FLAGS = ("ps_hosts", "worker_hosts", "job_name", "task_index")


def tf_config_flag(name: str, default):
    """The default of a TF1 cluster program's flag ``name`` (``--ps_hosts``,
    ``--worker_hosts``, ``--job_name``, ``--task_index``) from ``TF_CONFIG``, as Kubernetes
    training operators and managed training services set it; ``default`` when
    ``TF_CONFIG`` is not set. A flag given on the command line still wins. TF_CONFIG's
    ``chief`` (or ``master``) task is worker 0, its workers follow; a ``ps`` task is job
    ``ps``; any other task type (an ``evaluator``) keeps its type as the job name."""
    if name not in CLUSTER_FLAGS:
        raise ValueError(f"tf_config_flag: {name!r} is not one of {', '.join(CLUSTER_FLAGS)}")
    raw = os.environ.get("TF_CONFIG", "").strip()
    if not raw:
        return default
    try:
        config = json.loads(raw)
        cluster, task = config.get("cluster") or {}, config.get("task") or {}
        leaders = list(cluster.get("chief", ())) + list(cluster.get("master", ()))
        kind, index = task.get("type"), int(task.get("index", 0))
    except (ValueError, TypeError, AttributeError) as exc:
        raise ValueError(f"TF_CONFIG is not a cluster description ({exc}): {raw[:200]}") from None
    if not cluster or kind is None:
        return default  # a TF_CONFIG without a cluster or a task says nothing of this task
    if name == "ps_hosts":
        return ",".join(cluster.get("ps", ()))
    if name == "worker_hosts":
        return ",".join(leaders + list(cluster.get("worker", ())))
    if name == "job_name":
        return "worker" if kind in ("chief", "master") else kind
    return index + len(leaders) if kind == "worker" else index
