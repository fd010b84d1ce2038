"""The rename tables are generated from TensorFlow's own, never typed by hand."""
import json

import pytest

from migrate.data import generate
from migrate.tables import upgrade_tables


def test_data_file_matches_the_generator():
    pytest.importorskip("tensorflow")
    with open(generate.TARGET, encoding="utf-8") as handle:
        committed = handle.read()
    assert committed == generate.render(generate.build()), \
        "migrate/data/tf_upgrade_v2.json is stale: run python -m migrate.data.generate"


def test_tables_hold_what_the_rules_need():
    tables = upgrade_tables()
    assert tables["symbol_renames"]["tf.Session"] == "tf.compat.v1.Session"
    assert "tf.layers.dense" not in tables["symbol_renames"]  # TFM201's, not a rename
    assert tables["keyword_renames"]["tf.argmax"]["dimension"] == "axis"
    assert json.dumps(tables)  # plain data
