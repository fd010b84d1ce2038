"""The rename tables are generated from TensorFlow's own, never typed by hand."""
import json
import os
import subprocess
import sys

import pytest

from migrate.codemod.tables import upgrade_tables

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_data_file_matches_the_generator(tf1_python):
    """Regenerated from TF 2.21's tables and signatures and TF 1.15's signatures, the data
    file is what is committed."""
    pytest.importorskip("tensorflow")
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    env["TF1_PYTHON"] = tf1_python
    out = subprocess.run([sys.executable, "-m", "migrate.data.generate", "--check"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, \
        "migrate/data/tf_upgrade_v2.json is stale: run python -m migrate.data.generate"


def test_tables_hold_what_the_rules_need():
    tables = upgrade_tables()
    assert tables["symbol_renames"]["tf.Session"] == "tf.compat.v1.Session"
    assert "tf.layers.dense" not in tables["symbol_renames"]  # TFM201's, not a rename
    assert tables["keyword_renames"]["tf.argmax"]["dimension"] == "axis"
    assert "tf.where" in tables["tf2_symbols_set"]  # valid TF2 too: renamed only in TF1 files
    assert "tf.Session" not in tables["tf2_symbols_set"]
    # TF 1.15's private paths of public objects: the Cookbook's `ops.reset_default_graph()`
    ops = tables["private_public"]["tensorflow.python.framework.ops"]
    assert ops["reset_default_graph"] == "tf.reset_default_graph" and ops["Graph"] == "tf.Graph"
    assert tables["private_public"]["tensorflow.python.client.session"]["Session"] == "tf.Session"
    from migrate.codemod.tables import PATH

    with open(PATH, encoding="utf-8") as handle:
        assert isinstance(json.load(handle), dict)  # plain data
