"""A GraphProgram's steps on TF 2's ``ParameterServerStrategy`` (``GraphProgram.on_parameter_servers``).

An asynchronous TF1 cluster program ran one training loop per worker against variables held
on the parameter servers; each worker applied its own gradients as soon as it had them.
TF 2's form of that is one coordinator (the chief) scheduling steps on the workers
(``ClusterCoordinator.schedule``): the variables live on the parameter servers, a step runs
on whichever worker is free, and it applies its gradients there, without waiting for the
others. A step here is the program's build run by ``strategy.run`` in a ``tf.function``
(the v1 optimizer's ``apply_gradients`` updates the variables on their parameter servers).

A run whose values the program reads waits for its step; a run fetching only ops (the
train op) does not, so every worker has a step to run. At most one step per worker is in
flight, as each TF1 worker had one, so a loop stopped by the global step
(``StopAtStepHook``) ends at most a step per worker past it, as TF1's workers did.

A lost worker costs at most its step in flight. The coordinator sends the steps it had not
begun to the others; a step it finished but whose values died with it (they are copied
from the worker when read) is run again on another worker when the program reads them,
and dropped when it does not (an asynchronous TF1 worker's step died with it too). Only an
error TensorFlow's coordinator attributes to a parameter server (``/job:ps``) stops the
program: the variables it held are gone.

Nothing here imports ``shims.program``: the program hands itself in.
"""
from __future__ import annotations

import collections
import re
from typing import Any, Callable, Sequence

import tensorflow as tf

from shims import _replicas


class Coordinated:
    """The strategy, its coordinator and the steps in flight of one program; ``ps``: the
    parameter servers' addresses, ``workers``: the workers'."""

    def __init__(self, strategy, coordinator, ps: Sequence[str], workers: Sequence[str]) -> None:
        self.strategy, self.coordinator = strategy, coordinator
        self.ps, self.workers = list(ps), list(workers)
        self._in_flight: collections.deque = collections.deque()

    def step(self, program, fetches, feeds, specs) -> Callable:
        """The ``tf.function`` of one ``(fetches, feeds)`` combination, scheduled on a worker."""
        strategy = self.strategy

        def step_fn(*values):
            graph = tf.compat.v1.get_default_graph()
            with strategy.scope(), program._cross_replica(graph):
                return strategy.run(lambda *args: program._fetched(fetches, dict(zip(feeds, args)), False),
                                    args=values)

        return tf.function(step_fn, input_signature=list(specs), autograph=False,
                           experimental_attributes={"_disable_acd": True})

    def build(self, step) -> Any:
        """The first trace, on the coordinator under the strategy: it creates the program's
        variables on the parameter servers (round robin, as ``replica_device_setter`` placed
        them)."""
        with self.strategy.scope():
            return step.get_concrete_function().graph

    def run(self, step, args: Sequence[Any], wait: bool) -> Any:
        """Schedule one step; its values (numpy) when ``wait``, else None once at most one
        step per worker is in flight."""
        for _ in range(self._tries()):
            remote = self._schedule(step, args)
            if not wait:
                self._in_flight.append(remote)
                while len(self._in_flight) >= len(self.workers):
                    self._fetch(self._in_flight.popleft())
                return None
            try:
                return remote.fetch()
            except _replicas.LOST_WORKER_ERRORS as error:  # its values died with the worker
                self._worker_lost(error, "its step runs again on another worker")
        raise RuntimeError(f"no worker of the cluster ({', '.join(self.workers)}) could run a step: "
                           "every one was lost")

    def settle(self) -> None:
        """Every scheduled step has run (before a checkpoint is written or read, a variable
        assigned, or values compared)."""
        while self._in_flight:
            self._fetch(self._in_flight.popleft())
        for _ in range(self._tries()):
            try:
                self.coordinator.join()
                return
            except _replicas.LOST_WORKER_ERRORS as error:
                self._worker_lost(error, "its step in flight is dropped, as a TF1 worker's died with it")
        self.coordinator.join()

    def _tries(self) -> int:
        return 2 * len(self.workers) + 2

    def _schedule(self, step, args: Sequence[Any]) -> Any:
        for _ in range(self._tries()):
            try:
                return self.coordinator.schedule(step, args=tuple(args))
            except _replicas.LOST_WORKER_ERRORS as error:  # a lost worker's error, raised once
                self._worker_lost(error, "the step is scheduled again")
        return self.coordinator.schedule(step, args=tuple(args))

    def _fetch(self, remote) -> None:
        """Wait for a step whose values nobody reads; one lost with its worker is dropped."""
        try:
            remote.fetch()
        except _replicas.LOST_WORKER_ERRORS as error:
            self._worker_lost(error, "its step in flight is dropped, as a TF1 worker's died with it")

    def _worker_lost(self, error, then: str) -> None:
        """Go on without a lost worker's step, or raise ``error`` when a parameter server
        was lost. The coordinator keeps the first failure to raise it once more (and cancel
        what waits in its queue then): that is taken here too, so the next step runs."""
        if parameter_server_failure(error):
            raise error
        tf.get_logger().warning("a worker of the cluster was lost (%s: %s); the other workers go "
                                "on: %s", type(error).__name__,
                                (str(error).strip().splitlines() or [""])[0][:200], then)
        try:
            self.coordinator.done()
        except _replicas.LOST_WORKER_ERRORS as pending:
            if parameter_server_failure(pending):
                raise pending from None


def parameter_server_failure(error) -> bool:
    """What TensorFlow's coordinator counts as a parameter server's failure: its
    ``PSUnavailableError``, or an error a parameter server's RPC gave (``/job:ps``)."""
    return type(error).__name__ == "PSUnavailableError" or "/job:ps" in str(error)


def server_lost(error, coordinated: Coordinated, checkpoint_dir: str, runner: str) -> RuntimeError:
    """One clear error when a parameter server was lost (the coordinator cannot go on
    without the variables it held; a lost worker's steps go to the others instead): which
    task, and the checkpoint the restarted job resumes from."""
    text = str(error)
    found = re.search(r"/job:ps/replica:\d+/task:(\d+)", text)
    index = int(found.group(1)) if found else None
    task = (f"/job:ps/task:{index} at {coordinated.ps[index]}"
            if index is not None and index < len(coordinated.ps) else "a parameter server")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    detail = (lines or [type(error).__name__])[0][:200]
    resume = _replicas.resume_from(checkpoint_dir, "the job resumes when it is started again")
    return RuntimeError(f"{runner}: {task} stopped during training ({type(error).__name__}: {detail}); "
                        f"the variables it held are lost; restart the job: {resume}")
