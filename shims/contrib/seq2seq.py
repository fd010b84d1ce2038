"""``tf.contrib.seq2seq.sequence_loss`` (TF 1.15's), on TF 2: the weighted cross-entropy of
a sequence of logits that TF1's RNN tutorials and language models train on. The same
arguments, reductions and op names as TF 1.15's ``contrib/seq2seq/python/ops/loss.py``; it
runs in graph code (a ``shims.GraphProgram`` build) and eagerly. contrib.seq2seq's decoders
and attention have no TF 2 home here (tensorflow-addons' seq2seq is archived).
"""
from __future__ import annotations

import tensorflow as tf

__all__ = ["sequence_loss"]


def sequence_loss(logits, targets, weights, average_across_timesteps=True, average_across_batch=True,
                  sum_over_timesteps=False, sum_over_batch=False, softmax_loss_function=None, name=None):
    """Weighted cross-entropy of ``logits`` ``[batch, time, classes]`` against ``targets``
    ``[batch, time]``, reduced as TF 1.15 reduced it: by default the weighted mean per symbol
    (a scalar); averaged (or summed and divided by the non-zero weights) over the batch, the
    timesteps, both or neither (rank 0, 1 or 2)."""
    logits, targets, weights = (tf.convert_to_tensor(v) for v in (logits, targets, weights))
    if len(logits.get_shape()) != 3:
        raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
    if len(targets.get_shape()) != 2:
        raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
    if len(weights.get_shape()) != 2:
        raise ValueError("Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at same time.")
    with tf.name_scope(name or "sequence_loss"):
        num_classes = tf.shape(logits)[2]
        logits_flat = tf.reshape(logits, [-1, num_classes])
        flat_targets = tf.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=flat_targets, logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=flat_targets, logits=logits_flat)
        crossent *= tf.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return tf.math.divide_no_nan(tf.reduce_sum(crossent), tf.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            count = tf.cast(tf.math.count_nonzero(weights), crossent.dtype)
            return tf.math.divide_no_nan(tf.reduce_sum(crossent), count)
        crossent = tf.reshape(crossent, tf.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return tf.math.divide_no_nan(tf.reduce_sum(crossent, axis=axis), tf.reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            count = tf.cast(tf.math.count_nonzero(weights, axis=axis), dtype=crossent.dtype)
            return tf.math.divide_no_nan(tf.reduce_sum(crossent, axis=axis), count)
        return crossent
