"""TF1 summaries on TF2 without TensorBoard.

Migrated TF1 summary code keeps ``tf.compat.v1.summary`` (``scalar``, ``histogram``,
``merge_all``, ...): those ops produce the serialized ``Summary`` TF1 wrote, in graph mode,
inside functions and eagerly, and need no ``tensorboard`` package (TF 2.21's TF2 summary
ops raise ``TBNotInstalledError`` without it, even with no writer). What TF2 refuses
eagerly is the writer: ``tf.compat.v1.summary.FileWriter`` raises "not compatible with
eager execution". :class:`FileWriter` is that class without the refusal: the same event
files, from graph mode or from eager code such as a converted Session loop.
"""
from __future__ import annotations

import numpy as np
import tensorflow as tf
from tensorflow.python.summary.writer.event_file_writer import EventFileWriter
from tensorflow.python.summary.writer.writer import SummaryToEventTransformer

__all__ = ["FileWriter"]


class FileWriter(tf.compat.v1.summary.FileWriter):
    """``tf.compat.v1.summary.FileWriter`` that also works eagerly (same arguments)."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None,
                 filename_suffix=None, session=None):
        if session is not None:
            raise ValueError("FileWriter(session=...) wrote through a TF1 Session's summary "
                             "writer resource; pass logdir only")
        event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        SummaryToEventTransformer.__init__(self, event_writer, graph, graph_def)

    def add_summary(self, summary, global_step=None):
        """``summary``: a ``Summary`` proto or its serialized bytes (what running a
        summary op returns; a string tensor or numpy bytes work too)."""
        if tf.is_tensor(summary):
            summary = summary.numpy()
        if isinstance(summary, np.ndarray):
            summary = summary.item()
        if global_step is not None:
            global_step = int(np.asarray(global_step))
        super().add_summary(summary, global_step)
