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
        remote = self.coordinator.schedule(step, args=tuple(args))
        if wait:
            return remote.fetch()
        self._in_flight.append(remote)
        while len(self._in_flight) >= len(self.workers):
            self._in_flight.popleft().fetch()  # raises the step's error, if it failed
        return None

    def settle(self) -> None:
        """Every scheduled step has run (before a checkpoint is written or read, a variable
        assigned, or values compared)."""
        while self._in_flight:
            self._in_flight.popleft().fetch()
        self.coordinator.join()


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
