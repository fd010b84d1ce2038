"""A BERT-like encoder in the style of google-research/bert's modeling.py:
get_variable embedding tables, tf.contrib.layers.layer_norm, attention and
feed-forward dense layers in variable scopes, a `default_name` top scope, and
shape helpers that lean on graph-only tensor attributes."""
import shims.keras2
import tensorflow as tf


def get_shape_list(tensor, name=None):
    """Static dimensions where known, dynamic ones elsewhere (as BERT does)."""
    if name is None:
        name = tensor.name  # graph-only: undefined for eager tensors
    shape = tensor.shape.as_list()
    dynamic = tf.shape(tensor)
    return [dim if dim is not None else dynamic[i] for i, dim in enumerate(shape)]


def layer_norm(x, name=None):
    return shims.contrib.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1, scope=name)


def attention_layer(x, hidden, heads):
    batch, length, _ = get_shape_list(x)
    size = hidden // heads

    def heads_first(t):
        t = tf.reshape(t, [batch, length, heads, size])
        return tf.transpose(t, [0, 2, 1, 3])

    init = tf.compat.v1.truncated_normal_initializer(stddev=0.02)
    q = shims.get_or_create_layer("query", lambda: tf.keras.layers.Dense(hidden, kernel_initializer=init, name="query"))(x)
    k = shims.get_or_create_layer("key", lambda: tf.keras.layers.Dense(hidden, kernel_initializer=init, name="key"))(x)
    v = shims.get_or_create_layer("value", lambda: tf.keras.layers.Dense(hidden, kernel_initializer=init, name="value"))(x)
    scores = tf.matmul(heads_first(q), heads_first(k), transpose_b=True)
    probs = tf.nn.softmax(scores * (1.0 / size ** 0.5))
    context = tf.transpose(tf.matmul(probs, heads_first(v)), [0, 2, 1, 3])
    return tf.reshape(context, [batch, length, hidden])


def build(input_ids, vocab=100, hidden=32, heads=4, layers=2, max_length=16):
    with tf.compat.v1.variable_scope(None, default_name="bert"):
        with tf.compat.v1.variable_scope("embeddings"):
            table = tf.compat.v1.get_variable("word_embeddings", [vocab, hidden],
                                    initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.02))
            positions = tf.compat.v1.get_variable("position_embeddings", [max_length, hidden],
                                        initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.02))
            length = get_shape_list(input_ids)[1]
            x = tf.nn.embedding_lookup(table, input_ids) + positions[:length]
            x = layer_norm(x)
        for i in range(layers):
            with tf.compat.v1.variable_scope("layer_%d" % i):
                with tf.compat.v1.variable_scope("attention"):
                    with tf.compat.v1.variable_scope("self"):
                        context = attention_layer(x, hidden, heads)
                    with tf.compat.v1.variable_scope("output"):
                        x = layer_norm(x + shims.get_or_create_layer("dense", lambda: tf.keras.layers.Dense(hidden, name="dense"))(context))
                with tf.compat.v1.variable_scope("intermediate"):
                    h = shims.get_or_create_layer("dense", lambda: tf.keras.layers.Dense(hidden * 4, activation=tf.nn.relu, name="dense"))(x)
                with tf.compat.v1.variable_scope("output"):
                    x = layer_norm(x + shims.get_or_create_layer("dense", lambda: tf.keras.layers.Dense(hidden, name="dense"))(h))
        with tf.compat.v1.variable_scope("pooler"):
            return shims.get_or_create_layer("dense", lambda: tf.keras.layers.Dense(hidden, activation=tf.tanh, name="dense"))(x[:, 0])
