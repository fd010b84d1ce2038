"""TF1 queue-runner input pipelines as tf.data, with TF 1.15's semantics.

A TF1 program read its input through queues filled by queue-runner threads::

    feature, label = tf.train.slice_input_producer([features, labels], shuffle=False)
    image = tf.image.per_image_standardization(feature)        # code run per element
    images, labels = tf.train.batch([image, label], batch_size=32)
    ...
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)

Queues do not exist in eager TF2. TFM118 rewrites such a pipeline into the tf.data
pipeline it stood for: the producer becomes a dataset of elements, the code run per
element a function mapped over it, and the batch a batched dataset read through one
iterator (shared by every step of a ``shims.GraphProgram``)::

    input_queue = shims.queues.slice_input_producer([features, labels], shuffle=False)


    def queue_element(feature, label):
        image = tf.image.per_image_standardization(feature)
        return image, label


    images, labels = shims.queues.batch(input_queue.map(queue_element), batch_size=32)

The functions take TF 1.15's arguments and keep its semantics: ``num_epochs`` epochs (None:
forever, batches spanning epochs), the whole input reshuffled every epoch when ``shuffle``,
``batch`` dropping the final partial batch unless ``allow_smaller_final_batch`` and raising
``OutOfRangeError`` at the end, ``enqueue_many`` inputs split into elements, ``dynamic_pad``
padding each batch to its longest element, a list of tensors given and a list returned (a
list of one tensor gives that tensor, as TF1's batch did).
Readers give TF1's ``(key, value)`` records: ``"file:line"`` keys for text lines,
``"file:offset"`` for TFRecords, ``"file:index"`` for fixed-length records, the file name
for whole files. Thread counts and capacities only tuned TF1's queues; orders that TF1
left to its threads or to an unseeded shuffle are not reproduced (nor were they in TF1).
"""
from __future__ import annotations

from typing import Any, Optional

import tensorflow as tf

__all__ = ["slice_input_producer", "string_input_producer", "dequeue", "batch", "shuffle_batch",
           "TextLineReader", "TFRecordReader", "FixedLengthRecordReader", "WholeFileReader"]


def _epochs(dataset: tf.data.Dataset, num_epochs, shuffle: bool, seed) -> tf.data.Dataset:
    """TF1's input_producer: every epoch the whole input, reshuffled when ``shuffle``."""
    if shuffle:
        dataset = dataset.shuffle(tf.maximum(dataset.cardinality(), 1), seed=seed,
                                  reshuffle_each_iteration=True)
    return dataset.repeat(num_epochs)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None) -> tf.data.Dataset:
    """``tf.train.slice_input_producer``: the rows of ``tensor_list``'s tensors, one
    element (a tuple, in ``tensor_list``'s order) per row."""
    del capacity, shared_name, name  # the queue's tuning: tf.data has no queue
    tensors = tuple(tf.convert_to_tensor(t) for t in tensor_list)
    if not tensors:
        raise ValueError("Expected at least one tensor in slice_input_producer().")
    return _epochs(tf.data.Dataset.from_tensor_slices(tensors), num_epochs, shuffle, seed)


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None) -> tf.data.Dataset:
    """``tf.train.string_input_producer``: the strings (file names) one by one."""
    del capacity, shared_name, name, cancel_op
    strings = tf.convert_to_tensor(string_tensor, tf.string)
    if strings.shape.rank != 1:
        raise ValueError(f"string_input_producer takes a 1-D string tensor, not shape {strings.shape}")
    if strings.shape[0] == 0:
        raise ValueError("string_input_producer requires a non-null input tensor")
    return _epochs(tf.data.Dataset.from_tensor_slices(strings), num_epochs, shuffle, seed)


def _read(dataset: tf.data.Dataset):
    """The next element, through one iterator: in a shims.GraphProgram every step reads it,
    as every sess.run read the queue. In a TF1 graph (a program kept in graph mode) a
    one-shot iterator cannot read a variable (``tf.train.match_filenames_once``'s file
    list): that pipeline's iterator starts when the program starts its queue runners, as
    TF1 started the queue's threads, once its variables were initialized."""
    try:
        iterator = tf.compat.v1.data.make_one_shot_iterator(dataset)
    except ValueError:  # a stateful capture, graph mode only
        iterator = tf.compat.v1.data.make_initializable_iterator(dataset)
        tf.compat.v1.add_to_collection(tf.compat.v1.GraphKeys.QUEUE_RUNNERS,
                                       _IteratorStart(iterator.initializer))
    return _as_list(iterator.get_next())


class _IteratorStart:
    """In the graph's queue runners: ``start_queue_runners(sess)`` (the program's own call,
    a monitored session's, a Supervisor's) initializes the iterator; no thread is needed."""

    def __init__(self, initializer) -> None:
        self.initializer = initializer

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        sess.run(self.initializer)
        return []


def _as_list(value: Any) -> Any:
    """TF1's batch returned a list for a list (or tuple) of tensors; tf.data gives tuples."""
    return list(value) if isinstance(value, tuple) else value


def _batched(dataset: tf.data.Dataset, batch_size, enqueue_many: bool, dynamic_pad: bool,
             allow_smaller_final_batch: bool, shuffle: Optional[tuple] = None):
    if not isinstance(dataset, tf.data.Dataset):
        raise TypeError("shims.queues batches a tf.data.Dataset (the element pipeline TFM118 "
                        f"writes), not {type(dataset).__name__}")
    if enqueue_many:  # each input element was already a batch of examples
        dataset = dataset.unbatch()
    if shuffle is not None:
        capacity, seed = shuffle
        dataset = dataset.shuffle(capacity, seed=seed)
    drop = not allow_smaller_final_batch
    dataset = dataset.padded_batch(batch_size, drop_remainder=drop) if dynamic_pad else \
        dataset.batch(batch_size, drop_remainder=drop)
    # TF1 filled the batch queue in the background (up to its capacity): so does the prefetch
    out = _read(dataset.prefetch(1))
    return out[0] if isinstance(out, list) and len(out) == 1 else out  # TF1: one tensor in, one out


def dequeue(elements: tf.data.Dataset):
    """The next element per run (TF1's queue read without a batch: a reader's ``(key,
    value)`` or a slice producer's row), read through one iterator."""
    if not isinstance(elements, tf.data.Dataset):
        raise TypeError(f"shims.queues.dequeue reads a tf.data.Dataset, not {type(elements).__name__}")
    return _read(elements.prefetch(1))


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """``tf.train.batch`` over the element pipeline ``tensors`` (a tf.data.Dataset)."""
    del num_threads, capacity, shapes, shared_name, name
    return _batched(tensors, batch_size, enqueue_many, dynamic_pad, allow_smaller_final_batch)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """``tf.train.shuffle_batch``: elements drawn at random from a buffer of ``capacity``
    (TF1's RandomShuffleQueue; the order is another draw than TF1's)."""
    del num_threads, shapes, shared_name, name, min_after_dequeue
    return _batched(tensors, batch_size, enqueue_many, False, allow_smaller_final_batch,
                    shuffle=(capacity, seed))


class _Reader:
    """A TF1 reader: ``read(queue)`` gives the ``(key, value)`` records of every file the
    queue (a dataset of file names) yields, in order."""

    def read(self, queue: tf.data.Dataset) -> tf.data.Dataset:
        if not isinstance(queue, tf.data.Dataset):
            raise TypeError("a shims.queues reader reads a file-name dataset "
                            f"(shims.queues.string_input_producer), not {type(queue).__name__}")
        return queue.flat_map(self._records)

    def _records(self, filename) -> tf.data.Dataset:
        raise NotImplementedError


def _keyed(filename, dataset: tf.data.Dataset, first: int = 0):
    """``"file:<n>"`` keys, n counting from ``first``."""
    return dataset.enumerate(first).map(
        lambda n, value: (tf.strings.join([filename, tf.strings.as_string(n)], ":"), value))


class TextLineReader(_Reader):
    """``tf.TextLineReader``: one record per line, keyed ``file:<line number>`` (counted
    from 1, skipped header lines included)."""

    def __init__(self, skip_header_lines=None, name=None) -> None:
        self.skip = int(skip_header_lines or 0)

    def _records(self, filename):
        return _keyed(filename, tf.data.TextLineDataset(filename).skip(self.skip), self.skip + 1)


class TFRecordReader(_Reader):
    """``tf.TFRecordReader``: one record per TFRecord, keyed ``file:<byte offset>``."""

    def __init__(self, name=None, options=None) -> None:
        kind = getattr(options, "compression_type", None)
        # TF1's TFRecordCompressionType: 0 none, 1 zlib, 2 gzip
        self.compression = {None: "", 0: "", 1: "ZLIB", 2: "GZIP"}.get(kind, kind) or ""

    def _records(self, filename):
        records = tf.data.TFRecordDataset(filename, compression_type=self.compression)
        # a record takes its length (8 bytes), two CRCs (4 each) and its data
        return records.scan(tf.constant(0, tf.int64), lambda offset, value: (
            offset + 16 + tf.cast(tf.strings.length(value), tf.int64),
            (tf.strings.join([filename, tf.strings.as_string(offset)], ":"), value)))


class FixedLengthRecordReader(_Reader):
    """``tf.FixedLengthRecordReader``: records of ``record_bytes``, keyed ``file:<index>``."""

    def __init__(self, record_bytes, header_bytes=None, footer_bytes=None, hop_bytes=None,
                 name=None, encoding=None) -> None:
        if hop_bytes:
            raise NotImplementedError("FixedLengthRecordReader(hop_bytes=...) has no tf.data form")
        self.args = (record_bytes, header_bytes, footer_bytes)
        self.compression = encoding or ""

    def _records(self, filename):
        record_bytes, header_bytes, footer_bytes = self.args
        return _keyed(filename, tf.data.FixedLengthRecordDataset(
            filename, record_bytes, header_bytes, footer_bytes, compression_type=self.compression))


class WholeFileReader(_Reader):
    """``tf.WholeFileReader``: one record per file, keyed by its name."""

    def __init__(self, name=None) -> None:
        pass

    def _records(self, filename):
        return tf.data.Dataset.from_tensors((filename, tf.io.read_file(filename)))
