"""The tf-migrate CLI through a real subprocess: modes, formats, exit codes, safety."""
import json
import os
import stat
import subprocess
import tempfile
import sys

import pytest

import tfm_cli

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TF1 = "import tensorflow as tf\n\nx = tf.to_float(3)\nsession = tf.Session()\n"  # fully fixable, runs on TF2
LINT_BAD = "import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    print(x)\n    return x\n"


def _env(cache=None, env=None):
    # without ``cache``: a fresh, empty cache of this call's own (nothing carried between calls)
    return {"TF_MIGRATE_CACHE_DIR": str(cache) if cache else tempfile.mkdtemp(), **(env or {})}


def cli(*args, cwd=None, cache=None, env=None):
    return tfm_cli.run(*args, cwd=cwd, env=_env(cache, env), default_keras=False, timeout=120)


def start_cli(*args, cache=None, env=None) -> subprocess.Popen:
    """The CLI started, not waited for (runs that overlap); read it with communicate()."""
    return tfm_cli.start(*args, env=_env(cache, env), default_keras=False)


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def write(path, text, mode="w", **kw):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, **kw) as handle:
        handle.write(text)
    return path


def test_version_and_rules():
    out = cli("--version")
    assert out.returncode == 0 and out.stdout.startswith("tf-migrate ")
    listing = cli("rules")
    assert listing.returncode == 0
    assert "TFM201 [*]" in listing.stdout and "TFM401" in listing.stdout
    explained = cli("rules", "TFM201")
    assert explained.returncode == 0 and "Before:" in explained.stdout and "After:" in explained.stdout
    assert cli("rules", "TFM999").returncode == 2


def test_diff_by_default_changes_nothing(tmp_path, cache):
    f = write(tmp_path / "model.py", TF1)
    out = cli("upgrade", f, "--no-cache")
    assert out.returncode == 0, out.stderr
    assert "+session = tf.compat.v1.Session()" in out.stdout
    assert f.read_text() == TF1
    assert "1 would change" in out.stderr


def test_write_in_place_and_check(tmp_path, cache):
    f = write(tmp_path / "model.py", TF1)
    assert cli("upgrade", f, "--check", cache=cache).returncode == 1
    out = cli("upgrade", f, "--write", cache=cache)
    assert out.returncode == 0, out.stderr
    assert "tf.compat.v1.Session()" in f.read_text()
    assert cli("upgrade", f, "--check", cache=cache).returncode == 0  # idempotent


def test_outtree_mirrors_the_tree(tmp_path, cache):
    src = tmp_path / "src"
    write(src / "pkg" / "model.py", TF1)
    write(src / "pkg" / "plain.py", "print('no tensorflow here')\n")
    write(src / "data" / "config.yaml", "a: 1\n")
    script = write(src / "run.py", "import tensorflow as tf\n")
    os.chmod(script, 0o755)
    out = cli("upgrade", src, "--outtree", tmp_path / "out", cache=cache)
    assert out.returncode == 0, out.stderr
    assert "tf.compat.v1.Session()" in (tmp_path / "out" / "pkg" / "model.py").read_text()
    assert (tmp_path / "out" / "pkg" / "plain.py").read_text() == "print('no tensorflow here')\n"
    assert (tmp_path / "out" / "data" / "config.yaml").read_text() == "a: 1\n"
    assert stat.S_IMODE(os.stat(tmp_path / "out" / "run.py").st_mode) == 0o755
    assert (src / "pkg" / "model.py").read_text() == TF1  # the input is untouched


def test_outtree_single_file_and_refusal_inside_input(tmp_path, cache):
    f = write(tmp_path / "a" / "legacy.py", TF1)
    assert cli("upgrade", f, "--outtree", tmp_path / "o", "--write", cache=cache).returncode == 0
    assert (tmp_path / "o" / "legacy.py").exists()
    refused = cli("upgrade", tmp_path / "a", "--outtree", tmp_path / "a" / "inside", cache=cache)
    assert refused.returncode == 2 and "inside the input tree" in refused.stderr


def test_json_report_contract(tmp_path, cache):
    f = write(tmp_path / "m.py", TF1 + "y = tf.zeros_like(p, optimize=False)  # reported only\n")
    out = cli("upgrade", f, "--format", "json", cache=cache)
    data = json.loads(out.stdout)
    assert set(data) == {"findings", "errors", "summary"}
    first = data["findings"][0]
    assert {"path", "line", "column", "code", "message", "fixable"} <= set(first)
    assert any(not x["fixable"] for x in data["findings"])
    assert out.returncode == 1  # an unfixable finding is left
    assert cli("upgrade", f, "--exit-zero", cache=cache).returncode == 0


def test_report_file_and_sarif(tmp_path, cache):
    f = write(tmp_path / "m.py", LINT_BAD)
    report = tmp_path / "report.json"
    out = cli("lint", f, "--report", report, cache=cache)
    assert out.returncode == 1
    assert "TFM401" in out.stdout  # text on the terminal
    assert json.loads(report.read_text())["findings"][0]["code"] == "TFM401"
    sarif = json.loads(cli("lint", f, "--format", "sarif", cache=cache).stdout)
    assert sarif["version"] == "2.1.0"
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "TFM401"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 6


def test_lint_exit_codes_and_select(tmp_path, cache):
    clean = write(tmp_path / "clean.py", "import tensorflow as tf\n\nx = tf.constant(1)\n")
    assert cli("lint", clean, cache=cache).returncode == 0
    bad = write(tmp_path / "bad.py", LINT_BAD)
    assert cli("lint", bad, cache=cache).returncode == 1
    assert cli("lint", bad, "--ignore", "TFM401", cache=cache).returncode == 0
    assert cli("lint", bad, "--select", "TFM9", cache=cache).returncode == 2  # unknown prefix


def test_never_writes_on_lint(tmp_path, cache):
    f = write(tmp_path / "m.py", TF1)
    cli("lint", f, cache=cache)
    assert f.read_text() == TF1


def test_pyproject_config_and_inline_suppression(tmp_path, cache):
    write(tmp_path / "pyproject.toml", '[tool.tf-migrate]\nignore = ["TFM401"]\nexclude = ["skipped"]\n')
    write(tmp_path / "src" / "a.py", LINT_BAD)
    write(tmp_path / "skipped" / "b.py", LINT_BAD.replace("print(x)", "x.numpy()"))
    assert cli("lint", tmp_path / "src", tmp_path / "skipped", cache=cache).returncode == 0
    write(tmp_path / "pyproject.toml", "[tool.tf-migrate]\n")
    write(tmp_path / "src" / "a.py", LINT_BAD.replace("print(x)", "print(x)  # tf-migrate: ignore[TFM401]"))
    assert cli("lint", tmp_path / "src", cache=cache).returncode == 0


# -- bad input: a clear one-line error, exit 2, nothing lost --------------------------
BAD_INPUTS = {
    "py2.py": (b"import tensorflow as tf\nprint 'hello'\n", "not valid Python 3"),
    "latin.py": ("import tensorflow as tf\nname = 'caf\u00e9'\n".encode("latin-1"), "cannot decode"),
    "binary.py": (b"tensorflow\x00\x01\x02\xff", "binary file"),
    "broken.ipynb": (b'{"cells": [ tensorflow', "not a valid notebook"),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_is_reported_and_left_untouched(tmp_path, cache, name):
    data, reason = BAD_INPUTS[name]
    f = write(tmp_path / name, data, "wb")
    before = f.read_bytes()
    out = cli("upgrade", f, "--write", cache=cache)
    assert out.returncode == 2
    assert reason in out.stderr
    errors = [line for line in out.stderr.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "Traceback" not in out.stderr
    assert f.read_bytes() == before


def test_missing_path(tmp_path, cache):
    out = cli("upgrade", tmp_path / "nope.py", cache=cache)
    assert out.returncode == 2 and "no such file" in out.stderr and "Traceback" not in out.stderr


def test_read_only_file_is_not_replaced(tmp_path, cache):
    f = write(tmp_path / "ro.py", TF1)
    os.chmod(f, 0o444)
    out = cli("upgrade", f, "--write", cache=cache)
    assert out.returncode == 2 and "read-only" in out.stderr
    assert f.read_text() == TF1


def test_a_bad_file_does_not_stop_the_others(tmp_path, cache):
    write(tmp_path / "bad.py", "import tensorflow as tf\nprint 'x'\n")
    good = write(tmp_path / "good.py", TF1)
    out = cli("upgrade", tmp_path, "--write", cache=cache)
    assert out.returncode == 2
    assert "tf.compat.v1.Session()" in good.read_text()


def test_encoding_bom_crlf_and_mode_kept(tmp_path, cache):
    source = "# -*- coding: latin-1 -*-\r\nimport tensorflow as tf\r\nname = 'caf\u00e9'\r\ns = tf.Session()\r\n"
    f = write(tmp_path / "latin.py", source.encode("latin-1"), "wb")
    os.chmod(f, 0o750)
    assert cli("upgrade", f, "--write", cache=cache).returncode == 0
    data = f.read_bytes()
    assert b"caf\xe9" in data and b"\r\ns = tf.compat.v1.Session()\r\n" in data
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o750
    bom = write(tmp_path / "bom.py", b"\xef\xbb\xbf" + TF1.encode(), "wb")
    assert cli("upgrade", bom, "--write", cache=cache).returncode == 0
    assert bom.read_bytes().startswith(b"\xef\xbb\xbfimport tensorflow")


def test_notebook_cells_and_magics(tmp_path, cache):
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["tf.Session() in prose\n"]},
            {"cell_type": "code", "metadata": {"keep": 1}, "execution_count": 3,
             "outputs": [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}],
             "source": ["%matplotlib inline\n", "import tensorflow as tf\n", "!pip list\n",
                        "s = tf.Session()"]},
            {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
             "source": ["%%bash\n", "echo tf.Session()\n"]},
        ],
        "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5,
    }
    f = write(tmp_path / "nb.ipynb", json.dumps(notebook, indent=1))
    out = cli("upgrade", f, "--write", cache=cache)
    assert out.returncode == 0, out.stderr
    result = json.loads(f.read_text())
    code = result["cells"][1]
    assert code["source"] == ["%matplotlib inline\n", "import tensorflow as tf\n", "!pip list\n",
                              "s = tf.compat.v1.Session()"]
    assert code["outputs"] == notebook["cells"][1]["outputs"] and code["metadata"] == {"keep": 1}
    assert result["cells"][0] == notebook["cells"][0]
    assert result["cells"][2]["source"] == notebook["cells"][2]["source"]


def test_cache_gives_the_same_answer(tmp_path, cache):
    f = write(tmp_path / "m.py", TF1 + "y = tf.zeros_like(p, optimize=False)  # reported only\n")
    first = cli("upgrade", f, "--format", "json", cache=cache)
    assert any(cache.rglob("*.json")), "the cache was not filled"
    second = cli("upgrade", f, "--format", "json", cache=cache)
    assert json.loads(first.stdout) == json.loads(second.stdout)
    assert first.returncode == second.returncode == 1


def test_parallel_run_matches_serial(tmp_path, cache):
    for i in range(12):
        write(tmp_path / f"m{i}.py", TF1)
    serial = cli("upgrade", tmp_path, "--format", "json", "-j", "1", "--no-cache")
    parallel = cli("upgrade", tmp_path, "--format", "json", "-j", "2", "--no-cache")
    assert json.loads(serial.stdout) == json.loads(parallel.stdout)


def test_names_file_written_next_to_migrated_script(tmp_path, cache):
    f = write(tmp_path / "script.py", "import tensorflow as tf\n\nx = tf.ones([2, 3])\n"
              "with tf.variable_scope('head'):\n    y = tf.layers.dense(x, 2, name='out')\n")
    assert cli("upgrade", f, "--outtree", tmp_path / "o", cache=cache).returncode == 0
    names = json.loads((tmp_path / "o" / "tf-migrate-names.json").read_text())
    assert names["format"] == "tf-migrate-names/1"
    assert names["files"]["script.py"] == {"head/out": "out"}


def test_codemod_never_imports_tensorflow():
    code = ("import sys, migrate.cli, migrate.codemod.engine, migrate.codemod.runner\n"
            "from migrate.codemod.rule import all_rules\nall_rules()\n"
            "assert 'tensorflow' not in sys.modules and 'keras' not in sys.modules, 'tf imported'\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr


BLOCKER = '''
import sys
BLOCKED = {"tensorflow", "tf_keras", "keras", "numpy"}
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Blocker())
'''


def test_without_tensorflow_or_numpy(tmp_path, cache):
    """The codemod works with TensorFlow absent; the other commands say what to install."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(BLOCKER)
    env = {"PYTHONPATH": str(tmp_path / "site")}
    f = write(tmp_path / "m.py", TF1)
    upgraded = cli("upgrade", f, "--write", cache=cache, env=env)
    assert upgraded.returncode == 0, upgraded.stderr
    assert "tf.compat.v1.Session()" in f.read_text()
    for args in (["ckpt", "ls", tmp_path / "x"],
                 ["verify", f"{f}:build", f"{f}:build", "--input", "x:1:float32"],
                 ["ckpt", "convert", tmp_path / "x", tmp_path / "y"]):
        out = cli(*args, cache=cache, env=env)
        assert out.returncode == 2, out.stderr
        assert "pip install" in out.stderr and "Traceback" not in out.stderr
        assert len([l for l in out.stderr.splitlines() if l.strip()]) == 1


def test_symlinks_out_of_the_tree_are_not_followed(tmp_path, cache):
    outside = write(tmp_path / "outside" / "secret.py", TF1)
    tree = tmp_path / "tree"
    write(tree / "inside.py", TF1)
    os.symlink(outside, tree / "link.py")
    os.symlink(tmp_path / "outside", tree / "linked_dir")
    out = cli("upgrade", tree, "--write", cache=cache)
    assert out.returncode == 0, out.stderr
    assert "tf.compat.v1.Session()" in (tree / "inside.py").read_text()
    assert outside.read_text() == TF1  # never rewritten through a link
    assert "1 file scanned" in out.stderr


def test_summary_after_write_and_check_exit_codes(tmp_path, cache):
    """#16: after --write the summary says what was fixed and what remains, the text lists
    only what remains, a read-only file is not counted as changed, and --check fails only
    on what the tool would still change (not on report-only findings)."""
    fixable = write(tmp_path / "a.py", TF1)
    locked = write(tmp_path / "b.py", TF1)
    os.chmod(locked, 0o444)
    out = cli("upgrade", fixable, locked, "--write", cache=cache)
    assert "2 files scanned, 1 changed, " in out.stderr and " remaining" in out.stderr
    assert f"{fixable}:" not in out.stdout  # its findings were fixed: not listed again
    assert out.returncode == 2  # the read-only file is an error
    clean = write(tmp_path / "c.py", LINT_BAD)  # a print in a tf.function: reported, not fixed
    checked = cli("upgrade", clean, "--check", cache=cache)
    assert checked.returncode == 0, checked.stdout + checked.stderr  # a report-only finding
    assert cli("upgrade", write(tmp_path / "d.py", TF1), "--check", cache=cache).returncode == 1


def test_help_shows_metavars_not_python_types():
    for command in (["upgrade"], ["lint"], ["verify"], ["ckpt", "compare"], ["ckpt", "convert"]):
        out = cli(*command, "--help", env={"COLUMNS": "100"})
        assert out.returncode == 0 and "<str>" not in out.stdout and "list[str]" not in out.stdout, out.stdout


def test_verify_text_explains_a_pass_on_atol(capsys):
    """#16: `max rel 10.6` marked ok used to come with no word of why."""
    from migrate.commands.verify import _print_verify

    close = {"ok": True, "max_abs": 2e-7, "max_rel": 10.6}
    report = {"ok": True, "legacy": "a.py:f", "migrated": "b.py:f", "rtol": 1e-5, "atol": 1e-5,
              "variables": {"ok": True, "legacy": 2, "migrated": 2, "matched": 2, "missing": [],
                            "unexpected": [], "mismatched": []},
              "outputs": [{"name": "output0", "eager": close, "traced": close}],
              "regularization": {"ok": True, "legacy": 0.0, "migrated": 0.0}, "gradients": []}
    _print_verify(report)
    out = capsys.readouterr().out
    assert "ok by atol" in out and "|a - b| <= atol + rtol * |a|" in out


def test_name_map_pairs_every_unnamed_layer(tmp_path, cache):
    """#16: three unnamed tf.layers.dense calls used to map only `dense`, to the last one."""
    f = write(tmp_path / "m.py", "import tensorflow as tf\n\nx = tf.placeholder(tf.float32, [None, 3])\n"
                                 "h = tf.layers.dense(x, 4)\nh = tf.layers.dense(h, 4)\nout = tf.layers.dense(h, 2)\n")
    assert cli("upgrade", f, "--write", cache=cache).returncode in (0, 1)
    names = json.loads((tmp_path / "tf-migrate-names.json").read_text())["files"]["m.py"]
    assert names == {"dense": "dense_layer", "dense_1": "dense_layer_1", "dense_2": "dense_layer_2"}
    text = f.read_text()
    assert text.index("dense_layer = ") < text.index("dense_layer_1 = ") < text.index("dense_layer_2 = ")


def test_a_parse_error_is_cpythons_one_line(tmp_path, cache):
    f = write(tmp_path / "m.py", "import tensorflow as tf\nx = (1,\ny = tf.placeholder(tf.float32)\n")
    out = cli("upgrade", f, cache=cache)
    assert out.returncode == 2
    assert "not valid Python 3 (line 2, column 5): '(' was never closed" in out.stderr
    assert "expected one of" not in out.stderr


def test_verify_shows_which_run_is_going_on_a_terminal(tmp_path):
    """#16: verify used to be silent for 15-25 s on a terminal."""
    import shlex
    import shutil

    if shutil.which("script") is None:
        pytest.skip("needs util-linux `script` for a pseudo-terminal")
    f = write(tmp_path / "f.py", "def f(x):\n    return x\n")
    command = " ".join(map(shlex.quote, [*tfm_cli.COMMAND, "verify", f"{f}:f", f"{f}:f", "--input", "x:2:float32"]))
    done = subprocess.run(["script", "-qec", command, "/dev/null"], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", COLUMNS="100"))
    assert "verify: the legacy (TF2 compat.v1 graph) run (started at 0 s)" in done.stdout
    assert "No variables to save" in done.stdout  # then the one error line
