"""``tensorflow.examples.tutorials.mnist.input_data`` for TF 2, which no longer ships it.

``read_data_sets(train_dir, one_hot=False, dtype=tf.float32, reshape=True,
validation_size=5000, seed=None, source_url=...)`` returns ``Datasets(train, validation,
test)`` whose ``DataSet`` objects have ``images``, ``labels``, ``num_examples``,
``epochs_completed`` and ``next_batch(batch_size, fake_data=False, shuffle=True)``,
with TF 1.x's behaviour: the same four IDX files in ``train_dir`` (downloaded from
``source_url`` when missing), images scaled to [0, 1] float32 and flattened to 784
values, the first ``validation_size`` training examples held out, one-hot labels as
float64, and batches drawn from numpy's global random state, shuffled once per epoch,
an epoch's tail joined to the next epoch's head (so a seeded program draws the batches
its TF1 version drew).

Imports inside functions: tensorflow is loaded when data is read, so importing the tutorial module is cheap.
"""
from __future__ import annotations

import collections
import gzip
import os
import shutil
import tempfile
import urllib.request

import numpy as np

DEFAULT_SOURCE_URL = "https://storage.googleapis.com/cvdf-datasets/mnist/"
FILES = {"train_images": "train-images-idx3-ubyte.gz", "train_labels": "train-labels-idx1-ubyte.gz",
         "test_images": "t10k-images-idx3-ubyte.gz", "test_labels": "t10k-labels-idx1-ubyte.gz"}
IMAGES_MAGIC, LABELS_MAGIC = 2051, 2049

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def _big_endian_u32(stream, count: int):
    return [int(v) for v in np.frombuffer(stream.read(4 * count), dtype=">u4")]


def _read_idx(path: str, magic: int):
    """The array in a gzipped IDX file (images: [n, rows, cols, 1] uint8; labels: [n])."""
    with gzip.open(path, "rb") as stream:
        found = _big_endian_u32(stream, 1)
        if not found or found[0] != magic:
            raise ValueError(f"Invalid magic number {found[0] if found else None} in MNIST file "
                             f"{os.path.basename(path)} (expected {magic})")
        dims = _big_endian_u32(stream, 3 if magic == IMAGES_MAGIC else 1)
        size = int(np.prod(dims))
        data = np.frombuffer(stream.read(size), dtype=np.uint8)
        if data.size != size:
            raise ValueError(f"MNIST file {os.path.basename(path)} is truncated")
    if magic == IMAGES_MAGIC:
        return data.reshape(dims[0], dims[1], dims[2], 1)
    return data


def dense_to_one_hot(labels_dense, num_classes=10):
    """Class labels to one-hot rows (float64, as TF 1.x returned them)."""
    labels_dense = np.asarray(labels_dense)
    one_hot = np.zeros((labels_dense.shape[0], num_classes))
    one_hot[np.arange(labels_dense.shape[0]), labels_dense.ravel()] = 1
    return one_hot


def _seeds(seed):
    """TF 1.x's (graph seed, op seed) for ``seed``: what DataSet seeded numpy with."""
    import tensorflow as tf

    return tf.compat.v1.get_seed(seed)


class DataSet:
    """One split: ``images``, ``labels``, ``next_batch``."""

    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=None, reshape=True,
                 seed=None):
        import tensorflow as tf

        first, second = _seeds(seed)
        np.random.seed(first if seed is None else second)  # TF 1.x seeded numpy's global state
        dtype = tf.as_dtype(dtype or tf.float32).base_dtype
        if dtype not in (tf.uint8, tf.float32):
            raise TypeError(f"Invalid image dtype {dtype!r}, expected uint8 or float32")
        self.fake_data, self.one_hot = fake_data, one_hot
        if fake_data:
            self._num_examples = 10000
        else:
            if images.shape[0] != labels.shape[0]:
                raise ValueError(f"images.shape: {images.shape} labels.shape: {labels.shape}")
            self._num_examples = images.shape[0]
            if reshape:
                if images.shape[3] != 1:
                    raise ValueError("reshape=True needs single-channel images")
                images = images.reshape(images.shape[0], images.shape[1] * images.shape[2])
            if dtype == tf.float32:
                images = np.multiply(images.astype(np.float32), 1.0 / 255.0)
        self._images, self._labels = images, labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def _shuffled(self):
        order = np.arange(self._num_examples)
        np.random.shuffle(order)
        self._images, self._labels = self._images[order], self._labels[order]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next ``batch_size`` examples of this epoch (a new epoch is reshuffled)."""
        if fake_data:
            image = [1] * 784
            label = [1] + [0] * 9 if self.one_hot else 0
            return [image] * batch_size, [label] * batch_size
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffled()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch = start + batch_size
            return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]
        # the epoch ends inside this batch: its tail, then the head of the next epoch
        self._epochs_completed += 1
        tail = self._images[start:], self._labels[start:]
        if shuffle:
            self._shuffled()
        self._index_in_epoch = batch_size - (self._num_examples - start)
        head = self._images[:self._index_in_epoch], self._labels[:self._index_in_epoch]
        return np.concatenate((tail[0], head[0]), axis=0), np.concatenate((tail[1], head[1]), axis=0)


def maybe_download(filename, work_directory, source_url):
    """``work_directory/filename``, downloaded from ``source_url`` first if missing
    (written to a temporary file and renamed, so a failed download leaves nothing)."""
    os.makedirs(work_directory, exist_ok=True)
    path = os.path.join(work_directory, filename)
    if not os.path.exists(path):
        handle, temp = tempfile.mkstemp(dir=work_directory, prefix=f".{filename}.")
        try:
            with os.fdopen(handle, "wb") as out, urllib.request.urlopen(source_url) as response:
                shutil.copyfileobj(response, out)
            os.replace(temp, path)
        except BaseException:
            os.unlink(temp)
            raise
    return path


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=None, reshape=True,
                   validation_size=5000, seed=None, source_url=DEFAULT_SOURCE_URL):
    """MNIST as ``Datasets(train, validation, test)``, read from ``train_dir``."""
    if fake_data:
        def fake():
            return DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype, seed=seed)

        return Datasets(train=fake(), validation=fake(), test=fake())
    source_url = source_url or DEFAULT_SOURCE_URL
    arrays = {}
    for key, filename in FILES.items():
        path = maybe_download(filename, train_dir, source_url + filename)
        arrays[key] = _read_idx(path, IMAGES_MAGIC if key.endswith("images") else LABELS_MAGIC)
    train_labels, test_labels = arrays["train_labels"], arrays["test_labels"]
    if one_hot:
        train_labels, test_labels = dense_to_one_hot(train_labels), dense_to_one_hot(test_labels)
    train_images = arrays["train_images"]
    if not 0 <= validation_size <= len(train_images):
        raise ValueError(f"Validation size should be between 0 and {len(train_images)}. "
                         f"Received: {validation_size}.")
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    # made in TF 1.x's order: each one seeds numpy's global state
    train = DataSet(train_images[validation_size:], train_labels[validation_size:], **options)
    validation = DataSet(train_images[:validation_size], train_labels[:validation_size], **options)
    test = DataSet(arrays["test_images"], test_labels, **options)
    return Datasets(train=train, validation=validation, test=test)


def load_mnist(train_dir="MNIST-data"):
    """TF 1.x's shortcut: ``read_data_sets(train_dir)``."""
    return read_data_sets(train_dir)
