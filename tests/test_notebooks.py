"""Notebooks as programs (#16): cells analysed together in order, every IPython form
round-trips, Colab's %tensorflow_version handled, SARIF pointing into the .ipynb file,
and a notebook of TF1 tutorial cells migrated and run cell by cell on TF 2.21 with the
numbers its TF1 run gave."""
import json
import os
import subprocess
import sys

import pytest

import tf1_oracle
from test_cli import cli, write


def notebook(*sources, layout=1):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": src.splitlines(keepends=True)} for src in sources]
    return json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3"}},
                       "nbformat": 4, "nbformat_minor": 5}, indent=layout) + "\n"


def sources(path):
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def test_names_bound_in_one_cell_resolve_in_later_ones(tmp_path, cache):
    f = write(tmp_path / "n.ipynb", notebook(
        "import numpy as np\nimport tensorflow as tf\n",
        "x = tf.placeholder(tf.float32, [None, 3])\nh = tf.layers.dense(x, 4)\n",
        "print(h.shape[1].value)\ntf.logging.info('done')\n"))
    report = cli("upgrade", f, "--format", "json", cache=cache)
    found = {(r["cell"], r["line"], r["code"]) for r in json.loads(report.stdout)["findings"]}
    assert {(2, 1, "TFM101"), (2, 2, "TFM201"), (3, 1, "TFM108"), (3, 2, "TFM101")} <= found
    assert cli("upgrade", f, "--write", cache=cache).returncode in (0, 1)
    cells = sources(f)
    assert cells[0] == "import numpy as np\nimport tensorflow as tf\n"
    assert "tf.compat.v1.placeholder" in cells[1] and "tf.keras.layers.Dense(4)" in cells[1]
    assert cells[2] == "print(tf.compat.dimension_value(h.shape[1]))\ntf.compat.v1.logging.info('done')\n"
    again = cli("upgrade", f, "--write", cache=cache)
    assert sources(f) == cells and "0 changed" in again.stdout + again.stderr


@pytest.mark.parametrize("layout", [1, None])  # a source list indented, or all on one JSON line
def test_the_diff_of_a_notebook_is_per_cell_source(tmp_path, cache, layout):
    """#59: the diff of a notebook was one of its JSON text, where a cell is one raw line;
    now one per changed cell, of its source lines, named as findings name cells."""
    f = write(tmp_path / "n.ipynb", notebook(
        "import numpy as np\nimport tensorflow as tf\n",
        "print('untouched')\n",
        "x = tf.placeholder(tf.float32, [None, 3])\nlabels = np.zeros(3, dtype=np.int)\ny = 2",
        layout=layout))
    out = cli("upgrade", f, cache=cache).stdout
    diff = [line for line in out.splitlines() if not line.startswith(str(f))]
    name = str(f).lstrip("/")
    assert diff == [f"--- a/{name}[cell 3]", f"+++ b/{name}[cell 3]", "@@ -1,3 +1,3 @@",
                    "-x = tf.placeholder(tf.float32, [None, 3])", "-labels = np.zeros(3, dtype=np.int)",
                    "+x = tf.compat.v1.placeholder(tf.float32, [None, 3])", "+labels = np.zeros(3, dtype=int)",
                    " y = 2"], out


def test_a_cell_python_3_refuses_is_an_error_and_nothing_is_written(tmp_path, cache):
    """A Python 2 cell (`print "saved"`) before TF1 cells: the notebook was migrated cell by
    cell, where the later cells lost the first cell's `import tensorflow as tf`, so their
    TF1 code was left as it was with no finding and exit 0. Now: one error naming the
    cell, a non-zero exit, the file unchanged."""
    text = notebook("import tensorflow as tf\n", 'print "saved"\n',
                    "x = tf.placeholder(tf.float32, [None, 3])\nwith tf.Session() as s:\n    pass\n")
    f = write(tmp_path / "n.ipynb", text)
    done = cli("upgrade", f, "--write", cache=cache)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "n.ipynb: error: cell 2: not valid Python 3 (line 1" in done.stdout + done.stderr
    assert f.read_text() == text


IPYTHON = ("%matplotlib inline\n"
           "try:\n"
           "  %load_ext autoreload\n"
           "except Exception:\n"
           "  pass\n"
           "files = !ls\n"
           "?tf.layers\n"
           "tf.layers.dense?\n"
           "f(x)??\n"
           "a = 1  # why?\n"
           "doc = \"\"\"is this\n"
           "a question?\n"
           "\"\"\"\n"
           "!pip install foo\n")


def test_every_ipython_form_round_trips(tmp_path, cache):
    """Indented magics, shell escapes and their assignments, help syntax: the notebook
    used to be 'not valid Python 3' as a whole."""
    cells = ["import tensorflow as tf\n" + IPYTHON + "x = tf.placeholder(tf.float32)\n",
             "%%bash\necho tf.Session()\n"]
    f = write(tmp_path / "n.ipynb", notebook(*cells))
    out = cli("upgrade", f, "--write", cache=cache)
    assert out.returncode in (0, 1) and " 0 run errors" in out.stderr, out.stdout + out.stderr
    new = sources(f)
    assert new[0] == cells[0].replace("tf.placeholder", "tf.compat.v1.placeholder")
    assert new[1] == cells[1]


def test_a_comment_ending_in_a_question_mark_is_not_help_syntax(tmp_path, cache):
    """Hvass-Labs' tutorials comment their parameters (`use_relu=True): # Use ReLU?`): a
    line of a multi-line statement whose comment ends in `?` was taken for IPython's help
    syntax, masked, and the whole notebook refused as 'not valid Python 3'."""
    cell = ("def new_fc_layer(input,          # The previous layer.\n"
            "                 num_outputs,    # Num. outputs.\n"
            "                 use_relu=True): # Use Rectified Linear Unit (ReLU)?\n"
            "    layer = tf.layers.dense(input, num_outputs)\n"
            "    return tf.nn.relu(layer) if use_relu else layer\n")
    f = write(tmp_path / "n.ipynb", notebook("import tensorflow as tf\nx = tf.placeholder(tf.float32)\n", cell))
    out = cli("upgrade", f, "--write", cache=cache)
    assert out.returncode in (0, 1) and " 0 run errors" in out.stderr, out.stdout + out.stderr
    new = sources(f)
    assert "use_relu=True): # Use Rectified Linear Unit (ReLU)?\n" in new[1]
    assert "tf.layers.dense" not in new[1]  # migrated, not refused


def test_colab_tensorflow_version_is_removed_with_a_finding(tmp_path, cache):
    f = write(tmp_path / "n.ipynb", notebook(
        "try:\n  %tensorflow_version 1.x\nexcept Exception:\n  pass\n",
        "%tensorflow_version 1.x\nimport tensorflow as tf\n"))
    report = cli("upgrade", f, "--format", "json", cache=cache)
    found = [(r["cell"], r["line"], r["code"]) for r in json.loads(report.stdout)["findings"]]
    assert (1, 2, "TFM111") in found and (2, 1, "TFM111") in found
    cli("upgrade", f, "--write", cache=cache)
    assert sources(f) == ["try:\n  pass\nexcept Exception:\n  pass\n", "import tensorflow as tf\n"]


def test_sarif_points_at_the_line_of_the_ipynb_file(tmp_path, cache):
    """A code-scanning UI shows the .ipynb file: the region is that file's line, the
    cell and its own line are in the message and the properties."""
    f = write(tmp_path / "n.ipynb", notebook("import tensorflow as tf\n", "x = 1\ny = tf.placeholder(tf.float32)\n"))
    sarif = json.loads(cli("lint", f, "--select", "TFM101", "--format", "sarif", cache=cache).stdout
                       or cli("upgrade", f, "--format", "sarif", cache=cache).stdout)
    [result] = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TFM101"]
    line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert "tf.placeholder" in f.read_text().splitlines()[line - 1]
    assert result["properties"] == {"cell": 2, "cellLine": 2, "cellColumn": 5}
    assert result["message"]["text"].startswith("cell 2, line 2: ")


TUTORIAL = [
    "%matplotlib inline\nimport numpy as np\nimport tensorflow as tf\n",
    "rng = np.random.RandomState(0)\n"
    "data = rng.standard_normal((64, 5)).astype('float32')\n"
    "labels = (data.sum(axis=1) > 0).astype('int64')\n",
    "x = tf.placeholder(tf.float32, [None, 5])\n"
    "y = tf.placeholder(tf.int64, [None])\n"
    "w = tf.Variable(tf.zeros([5, 2]))\n"
    "b = tf.Variable(tf.zeros([2]))\n"
    "logits = tf.matmul(x, w) + b\n"
    "loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))\n"
    "train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)\n"
    "accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))\n",
    "sess = tf.Session()\nsess.run(tf.global_variables_initializer())\n",
    "for step in range(25):\n"
    "    batch = slice((step % 4) * 16, (step % 4 + 1) * 16)\n"
    "    _, l = sess.run([train, loss], feed_dict={x: data[batch], y: labels[batch]})\n"
    "    print('LOSS', step, l)\n",
    "print('ACCURACY', sess.run(accuracy, feed_dict={x: data, y: labels}))\n",
]

RUN_CELLS = r"""
import io, json, re, sys
cells = json.load(io.open(sys.argv[1], encoding="utf-8"))["cells"]
namespace = {"__name__": "__main__"}
for cell in cells:
    if cell["cell_type"] != "code":
        continue
    source = "".join(cell["source"])
    source = re.sub(r"(?m)^\s*%.*$", "", source)  # what IPython runs for %matplotlib: nothing here
    exec(compile(source, "<cell>", "exec"), namespace)
"""


def run_cells(path, mode):
    """The notebook's code cells run in order, on real TF 1.15 (``tf1``) or on TF 2.21 with
    the default Keras (``tf2``); the LOSS/ACCURACY lines they print."""
    if mode == "tf1":
        stdout = tf1_oracle.run(RUN_CELLS, path)
    else:
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        env.pop("TF_USE_LEGACY_KERAS", None)
        done = subprocess.run([sys.executable, "-c", RUN_CELLS, str(path)], capture_output=True,
                              text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        stdout = done.stdout
    return [line.split() for line in stdout.splitlines() if line.startswith(("LOSS", "ACCURACY"))]


def test_a_tutorial_notebook_runs_cell_by_cell_on_tf2(tmp_path, cache, tf1_python):
    """Placeholders, a Session and its loop spread over cells: migrated as one program
    (TFM501), then executed cell by cell on TF 2.21 with the default Keras; every loss
    and the accuracy equal the TF1 run of the original cells."""
    pytest.importorskip("tensorflow")
    original = write(tmp_path / "tf1.ipynb", notebook(*TUTORIAL))
    migrated = write(tmp_path / "tf2.ipynb", notebook(*TUTORIAL))
    out = cli("upgrade", migrated, "--write", cache=cache)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    text = "\n".join(sources(migrated))
    assert "Session" not in text and "placeholder" not in text and "feed_dict" not in text
    assert "%matplotlib inline" in sources(migrated)[0]
    want, got = run_cells(original, "tf1"), run_cells(migrated, "tf2")
    assert len(want) == 26 and len(got) == len(want)
    for (a, *va), (b, *vb) in zip(want, got):
        assert a == b and float(va[-1]) == pytest.approx(float(vb[-1]), rel=1e-5, abs=1e-6)
    assert cli("upgrade", migrated, "--write", cache=cache).returncode in (0, 1)
    assert "\n".join(sources(migrated)) == text  # a second run changes nothing
