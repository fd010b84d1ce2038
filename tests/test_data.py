"""The rename tables are generated from TensorFlow's own, never typed by hand."""
import json
import os
import subprocess
import sys

import pytest

import tfm_cli

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


RESOLVE = """
import ast, json, sys
source = open(sys.argv[1]).read()
namespace = {}
exec("\\n".join(l for l in source.splitlines() if l.startswith(("import ", "from "))), namespace)
missing = []
for name in json.loads(sys.argv[2]):
    try:
        eval(name, namespace)
    except Exception:
        missing.append(name)
print(json.dumps(missing))
"""


@pytest.mark.slow
@pytest.mark.parametrize("keras", ["2", "3"])
def test_every_name_a_rename_writes_exists_in_tf_2_21(tmp_path, keras):
    """#59: no rewrite to a name TF 2.21 does not have (`tf.contrib.saved_model.
    save_keras_model` became `tf.compat.v1.keras.experimental.export_saved_model`, which
    exists in neither Keras; 12 such targets). Every TF1 name of TensorFlow's rename table,
    used once, is upgraded for each Keras target; each name the upgrade wrote in its place
    is evaluated on TF 2.21 with that Keras, after the migrated file's own imports."""
    import ast

    tables = upgrade_tables()
    names = sorted(k for k in tables["symbol_renames"] if k.startswith("tf."))
    source = tmp_path / "uses.py"
    source.write_text("import tensorflow as tf\n\n\ndef uses():\n    return [\n"
                      + "".join(f"        {n},\n" for n in names) + "    ]\n")
    done = tfm_cli.run("upgrade", source, "--outtree", tmp_path / "out", "--keras", keras, "--no-cache",
                       "--exit-zero", default_keras=False, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    migrated = tmp_path / "out" / "uses.py"
    listed = [n for n in ast.walk(ast.parse(migrated.read_text())) if isinstance(n, ast.List)][0].elts
    written = [ast.unparse(new) for old, new in zip(names, listed) if ast.unparse(new) != old]
    assert len(written) > 900, len(written)
    env = {k: v for k, v in os.environ.items() if k != "TF_USE_LEGACY_KERAS"}
    env.update({"TF_CPP_MIN_LOG_LEVEL": "3", **({"TF_USE_LEGACY_KERAS": "1"} if keras == "2" else {})})
    check = subprocess.run([sys.executable, "-c", RESOLVE, migrated, json.dumps(written)],
                           capture_output=True, text=True, timeout=600, env=env)
    assert check.returncode == 0, check.stderr[-2000:]
    assert json.loads(check.stdout.strip().splitlines()[-1]) == []
    assert "has no home in TF 2.21" in done.stdout
