"""``tf.estimator.inputs``: input_fns over numpy arrays (TF 1.15's numpy_input_fn)."""
from __future__ import annotations

import numpy as np
import tensorflow as tf


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                   num_threads=1):
    """An input_fn yielding ``(features, labels)`` batches from numpy arrays (``x`` a dict
    or an array), ``num_epochs`` times (None: forever), shuffled if ``shuffle``."""
    if shuffle is None:
        raise ValueError("numpy_input_fn: shuffle must be given explicitly (True or False), "
                         "as in TF 1.x")
    if isinstance(x, dict):
        sizes = {len(np.asarray(v)) for v in x.values()}
    else:
        sizes = {len(np.asarray(x))}
    if y is not None:
        sizes.add(len(np.asarray(y) if not isinstance(y, dict) else next(iter(y.values()))))
    if len(sizes) != 1:
        raise ValueError(f"numpy_input_fn: x and y have different lengths: {sorted(sizes)}")

    def input_fn():
        data = (x, y) if y is not None else x
        dataset = tf.data.Dataset.from_tensor_slices(data)
        if shuffle:
            dataset = dataset.shuffle(queue_capacity)
        dataset = dataset.repeat(num_epochs) if num_epochs != 1 else dataset
        return dataset.batch(batch_size)

    return input_fn
