"""``tf.contrib.factorization``'s k-means: TF 1.15's ``KMeans`` graph builder.

TF 1.15's ``tf.contrib.factorization.KMeans`` moved into TensorFlow's core as
``tensorflow.python.ops.clustering_ops.KMeans`` (behind the removed
``tf.compat.v1.estimator.experimental.KMeans``), and TF 2.21 still has it, with the same
signature and ops (seeded here as TF 1.15 seeded them): ``training_graph()`` gives TF1's (all_scores, cluster_idx,
scores, cluster_centers_initialized, cluster_centers_var, init_op, training_op), for a
program in graph mode or in a ``shims.GraphProgram``. The other factorization models
(WALS, GMM) have no TF2 home.
"""
import tensorflow as tf
from tensorflow.python.framework import tensor as _tensor
from tensorflow.python.ops import clustering_ops as _clustering

COSINE_DISTANCE = _clustering.COSINE_DISTANCE
SQUARED_EUCLIDEAN_DISTANCE = _clustering.SQUARED_EUCLIDEAN_DISTANCE
RANDOM_INIT = _clustering.RANDOM_INIT
KMEANS_PLUS_PLUS_INIT = _clustering.KMEANS_PLUS_PLUS_INIT
KMC2_INIT = _clustering.KMC2_INIT



class KMeans(_clustering.KMeans):
    """TF 1.15's KMeans: TF 2.21's core copy, seeded as TF 1.15 seeded it (the
    initialization ops get ``random_seed`` itself; TF 2.21 passes the graph-level seed
    ``get_seed`` derives from it, which draws other initial centers)."""

    def __init__(self, inputs, num_clusters, initial_clusters=RANDOM_INIT,
                 distance_metric=SQUARED_EUCLIDEAN_DISTANCE, use_mini_batch=False,
                 mini_batch_steps_per_iteration=1, random_seed=0, kmeans_plus_plus_num_retries=2,
                 kmc2_chain_length=200):
        super().__init__(inputs, num_clusters, initial_clusters=initial_clusters,
                         distance_metric=distance_metric, use_mini_batch=use_mini_batch,
                         mini_batch_steps_per_iteration=mini_batch_steps_per_iteration,
                         random_seed=random_seed,
                         kmeans_plus_plus_num_retries=kmeans_plus_plus_num_retries,
                         kmc2_chain_length=kmc2_chain_length)
        self._seed = random_seed

    def training_graph(self):
        """TF 1.15's training graph. Its full-batch path compares two variables with ``==``
        (TF1: identity; TF2: an elementwise tensor), so it is built with TF1's equality."""
        equality = _tensor.Tensor._USE_EQUALITY
        tf.compat.v1.disable_tensor_equality()
        try:
            return super().training_graph()
        finally:
            if equality:
                tf.compat.v1.enable_tensor_equality()


__all__ = ["COSINE_DISTANCE", "KMC2_INIT", "KMEANS_PLUS_PLUS_INIT", "KMeans", "RANDOM_INIT",
           "SQUARED_EUCLIDEAN_DISTANCE"]
