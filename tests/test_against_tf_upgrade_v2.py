"""The anchor: on the same TF1 sources, every symbol tf_upgrade_v2 renames we rename too,
or we do deliberately better (listed below with the reason)."""
import ast
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from migrate.codemod.engine import transform
from migrate.codemod.rule import all_rules

TF1_SOURCES = {
    "graph_training.py": """
        import tensorflow as tf

        x = tf.placeholder(tf.float32, [None, 10])
        y = tf.placeholder(tf.int64, [None])
        with tf.variable_scope("model", reuse=tf.AUTO_REUSE):
            w = tf.get_variable("w", [10, 3], initializer=tf.truncated_normal_initializer(stddev=0.1))
            b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
        logits = tf.matmul(x, w) + b
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        loss += tf.losses.get_regularization_loss()
        accuracy = tf.reduce_mean(tf.to_float(tf.equal(tf.argmax(logits, dimension=1), y)))
        step = tf.train.get_or_create_global_step()
        train = tf.train.AdamOptimizer(1e-3).minimize(loss, global_step=step)
        saver = tf.train.Saver(max_to_keep=3)
        init = tf.global_variables_initializer()
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as session:
            session.run(init)
            tf.logging.info("start")
        """,
    "ops.py": """
        import tensorflow as tf

        def preprocess(image, keep_prob):
            image = tf.image.resize_bilinear(image, [32, 32])
            image = tf.random_crop(image, [24, 24, 3])
            noise = tf.random_normal(tf.shape(image), stddev=0.1)
            mask = tf.nn.dropout(noise, keep_prob)
            total = tf.reduce_sum(image, axis=[1, 2], keep_dims=True)
            flat = tf.layers.flatten(image)
            return tf.log(total + 1.0) * mask, tf.to_int32(flat), tf.assert_positive(total)
        """,
}

# what tf_upgrade_v2 writes that we deliberately write differently
BETTER = {
    "tf.compat.v1.layers.flatten": "TFM201: a Keras layer object created once, not a compat.v1 call",
    "tf.layers.flatten": "TFM201 (tf_upgrade_v2 leaves tf.layers as it is)",
    "tf.cast": "tf.to_float/to_int32 go to tf.compat.v1.to_float/... (the same op)",
    "tf.int32": "only appears in tf_upgrade_v2's tf.cast(..., dtype=tf.int32) for tf.to_int32",
    "tf.image.resize": "resize_bilinear -> tf.compat.v1.image.resize_bilinear keeps TF1's pixel "
                       "alignment; tf.image.resize uses half-pixel centers and changes outputs",
    "tf.image.ResizeMethod": "see tf.image.resize",
}


def dotted_names(source: str) -> set:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            parts = []
            while isinstance(node, ast.Attribute):
                parts.append(node.attr)
                node = node.value
            if isinstance(node, ast.Name) and node.id == "tf":
                names.add(".".join(["tf", *reversed(parts)]))
    return names


def run_tf_upgrade_v2(source: str, tmp_path) -> str:
    exe = shutil.which("tf_upgrade_v2") or os.path.join(os.path.dirname(sys.executable), "tf_upgrade_v2")
    if not os.path.exists(exe):
        pytest.skip("tf_upgrade_v2 is not installed")
    src, dst = tmp_path / "in.py", tmp_path / "out.py"
    src.write_text(source)
    subprocess.run([exe, "--infile", str(src), "--outfile", str(dst), "--reportfile", str(tmp_path / "r.txt")],
                   capture_output=True, text=True, timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    return dst.read_text()


@pytest.mark.parametrize("name", sorted(TF1_SOURCES))
def test_we_rename_what_tf_upgrade_v2_renames(name, tmp_path):
    pytest.importorskip("tensorflow")
    source = textwrap.dedent(TF1_SOURCES[name]).lstrip()
    theirs = run_tf_upgrade_v2(source, tmp_path)
    ours = transform(source, list(all_rules().values())).new_source
    assert ours is not None
    introduced = dotted_names(theirs) - dotted_names(source)
    assert introduced, "tf_upgrade_v2 renamed nothing: the comparison would prove nothing"
    missing = {n for n in introduced if n not in dotted_names(ours)
               and not any(n == b or n.startswith(b + ".") for b in BETTER)}
    # a rename of a module prefix shows up as its longest names; compare those
    missing = {n for n in missing if not any(o.startswith(n + ".") for o in dotted_names(ours))}
    assert not missing, f"tf_upgrade_v2 renames {sorted(missing)} but we do not"
    if "tf.layers." in source:  # what tf_upgrade_v2 leaves behind for eager TF2, we do not
        assert "layers.flatten(" in theirs and "layers.flatten(" not in ours
