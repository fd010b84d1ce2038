"""TF 1.15's chief ``CheckpointSaverHook`` for the runtimes that train a GraphProgram
(``shims.estimator``'s ``train()``, ``shims.MonitoredTrainingSession``).

A checkpoint of the state a run starts from, then every ``every_steps`` steps (else every
``every_secs`` seconds), and at the end if the last step was not saved: TF1 name-based
``model.ckpt-<step>`` files in ``directory``, which the ``checkpoint`` file names relative
to itself, as TF 1.15 wrote them. Saving listeners (TF1's ``CheckpointSaverListener``
protocol, session ``None``) run around each save; one returning True from ``after_save``
asks the run to stop.
"""
from __future__ import annotations

import os
import time
from typing import Iterable, Optional

import tensorflow as tf


class CheckpointSaver:
    def __init__(self, program, directory: str, start: int, every_steps: Optional[int] = None,
                 every_secs: Optional[float] = None, max_to_keep: int = 5,
                 listeners: Optional[Iterable] = None, chief: bool = True) -> None:
        self._program = program
        self._chief = chief  # a multi-worker job's other workers write nothing
        self._prefix = os.path.join(directory, "model.ckpt")
        self._every_steps = every_steps or None
        self._every_secs = every_secs if not self._every_steps else None
        self._saver = program._saver(max_to_keep, relative_paths=True)
        # TF1's session manager handed the checkpoints already in the folder to the saver
        # (recover_last_checkpoints), so max_to_keep counts them too: a resumed run deletes
        # the oldest, the previous runs' included
        state = tf.train.get_checkpoint_state(directory)
        if state is not None:
            self._saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))
        self._listeners = list(listeners or ())
        self._last_step, self._last_time = start, time.time()
        for listener in self._listeners:
            listener.begin()
        self._save(start)  # TF1 saves the state a run starts from (listeners skip it)

    def _save(self, step: int) -> bool:
        if not self._chief:
            self._last_step, self._last_time = step, time.time()
            return False
        if self._program.parameter_servers is not None:  # the steps in flight have run: the
            self._program._settle()                      # checkpoint is named by the step its
            step = int(self._program.variable("global_step").numpy())  # variables are at
        for listener in self._listeners:
            listener.before_save(None, step)
        os.makedirs(os.path.dirname(self._prefix), exist_ok=True)
        self._program._before_save()
        self._saver.save(None, self._prefix, global_step=step)
        self._last_step, self._last_time = step, time.time()
        stop = False
        for listener in self._listeners:
            stop = bool(listener.after_save(None, step)) or stop
        return stop

    def after_step(self, step: int) -> bool:
        """Saves when the schedule says so; True when a listener asks to stop."""
        if (self._every_steps and step - self._last_step >= self._every_steps) or \
                (self._every_secs and time.time() - self._last_time >= self._every_secs):
            return self._save(step)
        return False

    def end(self, step: int) -> None:
        if step != self._last_step:
            self._save(step)
        for listener in self._listeners:
            listener.end(None, step)
