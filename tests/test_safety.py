"""Nothing is lost, nothing hangs, nothing escapes the target (issue #12's fault list).

Each test names the fault it pins down; the property-based tests at the end throw random
byte flips and truncations at sources, notebooks and cache entries."""
import ast
import base64
import glob
import json
import os
import stat
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfm_cli
from test_cli import _env, cli, start_cli, write

# a TF1 module the upgrade rewrites (the placeholder is also said to need graph mode)
TF1 = "import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\nsession = tf.Session()\n"

SOURCE = "import tensorflow as tf\n\nx = tf.placeholder(tf.float32)\ny = tf.layers.dense(x, 2)\n"


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"


def parses(path) -> bool:
    try:
        ast.parse(open(path, "rb").read())
        return True
    except SyntaxError:
        return False


@pytest.mark.parametrize("corrupt", ["!!!", "flip", "parses"])
def test_corrupted_cache_entry_is_never_written(tmp_path, cache, corrupt):
    """#1: a damaged cache entry is never used, even damage that still parses (a letter
    changed inside the code: only the entry's checksum can tell)."""
    f = write(tmp_path / "m.py", SOURCE)
    assert cli("upgrade", f, cache=cache).returncode in (0, 1)
    entries = [p for p in glob.glob(str(cache / "*" / "*.json"))]
    assert entries
    for entry in entries:
        data = json.load(open(entry))
        if corrupt == "!!!":
            data["new"] = "!!!"
        elif corrupt == "parses":
            raw = base64.b64decode(data["new"]).replace(b"placeholder", b"placeholdex")
            data["new"] = base64.b64encode(raw).decode()
        else:
            raw = bytearray(base64.b64decode(data["new"]))
            raw[raw.index(b"=")] = ord("(")  # still base64, no longer Python
            data["new"] = base64.b64encode(bytes(raw)).decode()
        json.dump(data, open(entry, "w"))
    out = cli("upgrade", f, "--write", cache=cache)
    assert out.returncode in (0, 1), out.stderr
    assert parses(f) and "tf.compat.v1.placeholder" in f.read_text()
    assert "placeholdex" not in f.read_text()


def test_outtree_that_is_the_input_folder_is_refused(tmp_path, cache):
    """#2: a file input whose --outtree is its own folder would replace it."""
    f = write(tmp_path / "in" / "m.py", SOURCE)
    os.chmod(f, 0o444)
    out = cli("upgrade", f, "--outtree", tmp_path / "in", cache=cache)
    assert out.returncode == 2 and "would replace the input" in out.stderr
    assert f.read_text() == SOURCE


def test_a_native_parser_crash_costs_one_file(tmp_path, cache):
    """#3: ~1500 nested parentheses crashed libcst's native parser (SIGSEGV). CPython
    refuses them too, and is now asked first (#30): an error line in its words for that
    file, at once, and the other files are still written."""
    deep = write(tmp_path / "deep.py", "import tensorflow as tf\nx = " + "(" * 1500 + "a" + ")" * 1500 + "\n")
    files = [write(tmp_path / f"ok{i}.py", TF1) for i in range(9)]
    before = deep.read_text()
    out = cli("upgrade", tmp_path, "--write", "-j", "2", cache=cache)
    assert out.returncode == 2
    assert "deep.py: error: not valid Python 3 (line 2, column 205): too many nested parentheses" \
        in out.stdout + out.stderr
    assert deep.read_text() == before
    assert all("tf.compat.v1.placeholder" in f.read_text() for f in files)


def test_fifo_named_py_is_skipped_without_blocking(tmp_path, cache):
    """#4: a FIFO named *.py never blocks lint or upgrade."""
    os.mkfifo(tmp_path / "pipe.py")
    write(tmp_path / "m.py", TF1)
    start = time.monotonic()
    out = cli("lint", tmp_path, cache=cache)
    assert time.monotonic() - start < 60
    assert out.returncode == 2 and "not a regular file" in out.stdout + out.stderr


def test_outtree_symlinks_are_not_followed(tmp_path, cache):
    """#8: a link inside --outtree pointing elsewhere is never written through."""
    write(tmp_path / "src" / "pkg" / "m.py", SOURCE)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    os.symlink(elsewhere, tmp_path / "out" / "pkg")
    out = cli("upgrade", tmp_path / "src", "--outtree", tmp_path / "out", cache=cache)
    assert out.returncode == 2 and "symbolic link in the output tree" in out.stdout + out.stderr
    assert os.listdir(elsewhere) == []


@pytest.mark.parametrize("index", ["{}", "[]", '{"TFM999": true}', '{"x": 1}'])
def test_a_bad_rules_index_is_not_trusted(tmp_path, cache, index):
    """#9: a corrupt cached rule index neither hides findings nor crashes."""
    f = write(tmp_path / "m.py", "import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    print(x)\n    return x\n")
    assert cli("lint", f, cache=cache).returncode == 1
    for path in glob.glob(str(cache / "rules-*.json")):
        open(path, "w").write(index)
    for extra in ((), ("--no-cache",)):
        out = cli("lint", f, *extra, cache=cache)
        assert out.returncode == 1 and "TFM401" in out.stdout, out.stdout + out.stderr


def test_a_file_changed_after_reading_is_not_overwritten(tmp_path):
    """#10: a file is replaced only if it still holds what was read."""
    from migrate.codemod.write import write_outputs
    from migrate.codemod.runner import FileReport

    f = write(tmp_path / "m.py", "edited by the user meanwhile\n")
    report = FileReport(str(f), new=b"x = 1\n", raw=b"what the run read\n")  # kept as its digest
    errors = write_outputs([str(f)], [report], None).errors
    assert errors and "changed since it was read" in errors[0][1]
    assert f.read_text() == "edited by the user meanwhile\n"


CONCURRENT_SOURCE = """import numpy as np
import tensorflow as tf


def net_{i}(x):
    with tf.variable_scope("net_{i}"):
        h = tf.layers.dense(x, {i}, activation=tf.nn.relu)
        return tf.cast(h, np.float)
"""


def test_concurrent_runs_lose_no_edit(tmp_path):
    """#54: three `upgrade --write` runs at once over one tree of 240 files, each with its
    own rules. The check that a file still holds what was read and the rename are one
    step (the folder's lock); a run that finds a file written by another migrates it
    again from what it holds. So every run's edit is in every file, and nobody errs.
    (Before: one run in three lost up to a third of its edits, silently.)"""
    tree = tmp_path / "tree"
    for i in range(240):
        write(tree / f"d{i % 3}" / f"m{i}.py", CONCURRENT_SOURCE.format(i=i + 1))
    selections = ("TFM101", "TFM201", "TFM122")
    runs = []
    for code in selections:
        runs.append(start_cli("upgrade", tree, "--select", code, "--write", "--no-cache", "-j", "1"))
        time.sleep(0.2)  # overlapping, not identical, write phases
    for code, run in zip(selections, runs):
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, f"{code}: {out}{err}"
        assert "240 changed" in err and "0 run errors" in err, f"{code}: {err}"
    for code in selections:  # nothing any run would still do: no edit was lost
        out = cli("upgrade", tree, "--select", code, "--check", "--no-cache")
        assert out.returncode == 0 and "0 would change" in out.stderr, f"{code}: {out.stdout}{out.stderr}"
    assert not list(tree.rglob(".tf-migrate-*")), "temp or lock files left behind"


def test_a_temp_folder_that_fills_up_costs_nothing(tmp_path):
    """#54: the run's spool (its results, in a temp file) cannot grow past 64 KiB, as when
    TMPDIR fills up: one warning, the rest stays in memory, and every file is written (it
    was a traceback, exit 1). The limit is the process's file size limit, so the writes of
    the migrated files, far smaller, are not limited."""
    import resource
    import signal
    import subprocess

    for i in range(300):
        write(tmp_path / "tree" / f"m{i}.py", CONCURRENT_SOURCE.format(i=i + 1))

    def small_files():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG, as ENOSPC would be, not a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))

    out = subprocess.run([*tfm_cli.COMMAND, "upgrade", str(tmp_path / "tree"), "--write", "--no-cache", "-j", "1"],
                         env=tfm_cli.environment(_env(), default_keras=False), capture_output=True, text=True,
                         timeout=300, preexec_fn=small_files)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "cannot write to the temp folder" in out.stderr and "Traceback" not in out.stderr
    assert "300 changed" in out.stderr and "0 run errors" in out.stderr, out.stderr
    assert "tf.compat.v1.variable_scope" in (tmp_path / "tree" / "m299.py").read_text()


def test_a_slow_file_hits_the_time_limit(tmp_path, cache):
    """#11: one pathological file gets an error after --timeout; the others are written."""
    lines = "".join(f"y{i} = tf.layers.dense(x, {i})\n" for i in range(20000))  # valid, just long
    slow = write(tmp_path / "slow.py", f"import tensorflow as tf\nx = tf.placeholder(tf.float32)\n{lines}")
    ok = write(tmp_path / "ok.py", TF1)
    before = slow.read_text()
    start = time.monotonic()
    out = cli("upgrade", tmp_path, "--write", "--timeout", "2", cache=cache)
    assert time.monotonic() - start < 60
    assert out.returncode == 2 and "took longer than 2 s" in out.stdout + out.stderr
    assert slow.read_text() == before and "tf.compat.v1.placeholder" in ok.read_text()


def test_outputs_claimed_by_two_inputs_are_refused(tmp_path, cache):
    """#14: inputs mapping to one --outtree path overwrite nothing."""
    a = write(tmp_path / "a" / "m.py", SOURCE)
    b = write(tmp_path / "b" / "m.py", SOURCE)
    out = cli("upgrade", a, b, "--outtree", tmp_path / "out", cache=cache)
    assert out.returncode == 2 and "is the output of 2 inputs" in out.stdout + out.stderr
    assert not (tmp_path / "out" / "m.py").exists()


def test_dotdot_names_are_written(tmp_path, cache):
    """#15: `..x.py` is inside the tree."""
    write(tmp_path / "src" / "..x.py", SOURCE)
    out = cli("upgrade", tmp_path / "src", "--outtree", tmp_path / "out", cache=cache)
    assert out.returncode in (0, 1), out.stderr
    assert "tf.compat.v1.placeholder" in (tmp_path / "out" / "..x.py").read_text()


def test_in_tree_symlink_stays_a_link(tmp_path, cache):
    """#16: --write never replaces a symbolic link by a regular file."""
    real = write(tmp_path / "real.py", SOURCE)
    os.symlink("real.py", tmp_path / "link.py")
    out = cli("upgrade", tmp_path, "--write", cache=cache)
    assert out.returncode == 2 and "symbolic link" in out.stdout + out.stderr
    assert os.path.islink(tmp_path / "link.py") and "tf.compat.v1" in real.read_text()


@pytest.mark.parametrize("args,message", [
    (["-j", "100000"], "--jobs must be between"),
    (["--write", "--check"], "--check only reports"),
    (["--timeout", "0"], "--timeout must be"),
    (["--report", "MISSING/r.json"], "does not exist"),
    (["--report", "FOLDER"], "is a folder"),
    (["--outtree", "FILE"], "is not a folder"),
])
def test_usage_errors_are_one_line_before_any_work(tmp_path, cache, args, message):
    """#17, #21: bad flags get one error line and exit 2, and nothing is written."""
    f = write(tmp_path / "m.py", SOURCE)
    (tmp_path / "FOLDER").mkdir()
    write(tmp_path / "FILE", "not a folder\n")
    args = [a.replace("MISSING", str(tmp_path / "missing")).replace("FOLDER", str(tmp_path / "FOLDER"))
            .replace("FILE", str(tmp_path / "FILE")) for a in args]
    out = cli("upgrade", f, *args, cache=cache)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert f.read_text() == SOURCE


@pytest.mark.parametrize("value", ['exclude = "m.py"', "exclude = 5", "select = [1]"])
def test_malformed_config_values_are_usage_errors(tmp_path, cache, value):
    """#17, #21: config values of the wrong type are refused, not read character by character."""
    write(tmp_path / "pyproject.toml", f"[tool.tf-migrate]\n{value}\n")
    write(tmp_path / "m.py", SOURCE)
    out = cli("lint", tmp_path, cache=cache)
    assert out.returncode == 2 and "must be a list of strings" in out.stderr and "Traceback" not in out.stderr


def test_leftover_temp_files_are_not_copied_and_special_files_are_reported(tmp_path, cache):
    """#17, #18: a killed run's .tf-migrate-*.tmp is not mirrored into --outtree; a FIFO
    in the tree is an error line, not a traceback halfway through the copy."""
    write(tmp_path / "src" / "m.py", SOURCE)
    write(tmp_path / "src" / ".tf-migrate-abc.tmp", "half a file")
    os.mkfifo(tmp_path / "src" / "pipe")
    out = cli("upgrade", tmp_path / "src", "--outtree", tmp_path / "out", cache=cache)
    assert "Traceback" not in out.stderr and "not a regular file" in out.stdout + out.stderr
    assert not (tmp_path / "out" / ".tf-migrate-abc.tmp").exists()
    assert "tf.compat.v1" in (tmp_path / "out" / "m.py").read_text()


def test_cache_entries_are_private(tmp_path, cache):
    """#22: the cache holds copies of sources: readable by their owner only."""
    f = write(tmp_path / "m.py", SOURCE)
    cli("upgrade", f, cache=cache)
    entries = glob.glob(str(cache / "*" / "*.json"))
    assert entries and all(stat.S_IMODE(os.stat(e).st_mode) == 0o600 for e in entries)


# -- property-based: random damage never loses or corrupts a file --------------------------
SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
damage = st.tuples(st.sampled_from(["flip", "truncate", "insert"]), st.integers(0, 10 ** 6),
                   st.integers(0, 255))


def damaged(data: bytes, how) -> bytes:
    kind, where, value = how
    if not data:
        return data
    i = where % len(data)
    if kind == "flip":
        return data[:i] + bytes([data[i] ^ (value or 1)]) + data[i + 1:]
    if kind == "truncate":
        return data[:i]
    return data[:i] + bytes([value]) + data[i:]


def _run_one(path, use_cache=False, cache_dir=None):
    from migrate.codemod.registry import select_codes
    from migrate.codemod.runner import run, validate

    if cache_dir:
        os.environ["TF_MIGRATE_CACHE_DIR"] = str(cache_dir)
    [report] = run([str(path)], select_codes(), fix=True, jobs=1, use_cache=use_cache, timeout=60)
    raw = open(path, "rb").read()
    if report.new is not None:  # what would be written has been validated
        assert validate(str(path), raw, {"new": report.new, "findings": report.findings,
                                         "names": report.names, "error": report.error}) is None
    return report


@SETTINGS
@given(how=damage)
def test_damaged_sources_never_give_a_bad_rewrite(tmp_path, how):
    path = tmp_path / "m.py"
    path.write_bytes(damaged(SOURCE.encode() + b"\ns = tf.Session()\nz = tf.nn.relu(x)\n", how))
    report = _run_one(path)
    if report.new is not None:
        ast.parse(report.new)


@SETTINGS
@given(how=damage)
def test_damaged_notebooks_never_give_a_bad_rewrite(tmp_path, how):
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": ["import tensorflow as tf\n", "x = tf.placeholder(tf.float32)\n"]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_bytes(damaged(json.dumps(notebook).encode(), how))
    report = _run_one(path)
    if report.new is not None:
        assert len(json.loads(report.new)["cells"]) == 1


@SETTINGS
@given(how=damage)
def test_damaged_cache_entries_are_never_used(tmp_path, how):
    path = tmp_path / "m.py"
    path.write_text(SOURCE)
    cache_dir = tmp_path / "cache"
    _run_one(path, use_cache=True, cache_dir=cache_dir)
    for entry in glob.glob(str(cache_dir / "*" / "*.json")):
        with open(entry, "rb") as handle:
            data = handle.read()
        with open(entry, "wb") as handle:
            handle.write(damaged(data, how))
    report = _run_one(path, use_cache=True, cache_dir=cache_dir)
    assert report.error is None
    assert report.new is not None and b"tf.compat.v1.placeholder" in report.new


# a caller's script with no main guard: workers must not run it again
CALLER = """
import sys, threading, time
from migrate.codemod.registry import select_codes
from migrate.codemod.runner import _threads, run
if sys.argv[2] == "threads":
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
print("caller ran with", "threads" if _threads() > 1 else "one thread", flush=True)
files = sys.argv[3:]
for report in run(files, select_codes(), fix=True, jobs=2, use_cache=False, timeout=60):
    print(report.error, report.new.decode().count("compat.v1") if report.new else None)
"""


@pytest.mark.parametrize("threads", ["threads", "one"])
def test_a_caller_with_threads_starts_fresh_workers(tmp_path, threads):
    """Forking a process that has threads (TensorFlow loaded, a test runner) let a worker
    die with signal 11 now and then; such a caller's workers are fresh interpreters,
    which never run the caller's script again."""

    import subprocess
    import sys

    files = [tmp_path / f"m{i}.py" for i in range(3)]
    for f in files:
        f.write_text(SOURCE)
    script = tmp_path / "caller.py"
    script.write_text(CALLER)
    out = subprocess.run([sys.executable, str(script), "-", threads] + [str(f) for f in files],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    said = "threads" if threads == "threads" else "one thread"
    assert out.stdout.splitlines() == [f"caller ran with {said}"] + ["None 1"] * 3, out.stdout


def test_utf16_sources_are_reported_not_skipped(tmp_path, cache):
    """#23: a UTF-16 file used to pass the prefilter silently."""
    f = tmp_path / "m.py"
    f.write_bytes("\ufeff".encode("utf-16-le") + SOURCE.encode("utf-16-le"))
    out = cli("upgrade", f, "--write", cache=cache)
    assert out.returncode == 2 and "UTF-16" in out.stdout + out.stderr


def test_a_user_comment_like_the_magic_mask_survives(tmp_path, cache):
    """#23: `# tf-migrate-magic:0` in a cell is the user's, not a masked magic."""
    cell = ["%matplotlib inline\n", "import tensorflow as tf\n", "# tf-migrate-magic:0\n",
            "x = tf.placeholder(tf.float32)\n"]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": cell}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    f = write(tmp_path / "n.ipynb", json.dumps(notebook))
    assert cli("upgrade", f, "--write", cache=cache).returncode in (0, 1)
    source = json.loads(f.read_text())["cells"][0]["source"]
    assert source[0] == "%matplotlib inline\n" and "# tf-migrate-magic:0\n" in source
    assert any("tf.compat.v1.placeholder" in line for line in source)


def test_a_cr_only_file_keeps_its_final_cr(tmp_path, cache):
    """#23: libcst drops the last CR of a file whose lines end in CR alone."""
    f = tmp_path / "m.py"
    f.write_bytes(SOURCE.replace("\n", "\r").encode())
    assert cli("upgrade", f, "--write", cache=cache).returncode in (0, 1)
    data = f.read_bytes()
    assert b"tf.compat.v1.placeholder" in data and data.endswith(b"\r") and b"\n" not in data


@pytest.mark.parametrize("style", [{"indent": 1, "ensure_ascii": False}, {"indent": 2}, {}])
def test_a_notebook_rewrite_changes_only_the_changed_cell(tmp_path, cache, style):
    """#23: the notebook's own JSON layout is kept; the diff is the changed lines."""
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Stößel\n"]},
             {"cell_type": "code", "metadata": {"tags": ["x]"]}, "outputs": [], "execution_count": 1,
              "source": SOURCE.splitlines(keepends=True)},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": []}]
    notebook = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4,
                "nbformat_minor": 5}
    before = json.dumps(notebook, **style) + "\n"
    f = write(tmp_path / "n.ipynb", before)
    assert cli("upgrade", f, "--write", cache=cache).returncode in (0, 1)
    after = f.read_text(encoding="utf-8")
    import difflib

    changed = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0,
                                                    lineterm="")
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed and all("tf." in line or "dense_layer" in line for line in changed), changed
    if style:  # one item per line: the lines around the cell are untouched
        assert before.splitlines()[:10] == after.splitlines()[:10]
        assert before.splitlines()[-12:] == after.splitlines()[-12:]
    migrated = json.loads(after)
    assert migrated["cells"][0] == cells[0] and migrated["cells"][2] == cells[2]
    assert "tf.compat.v1.placeholder" in "".join(migrated["cells"][1]["source"])


def test_hard_links_and_owner_are_kept(tmp_path, cache):
    """#22: --write used to replace the file (new inode: links detached, owner changed
    when run as root)."""
    f = write(tmp_path / "m.py", SOURCE)
    link = tmp_path / "other_name.py"
    os.link(f, link)
    assert cli("upgrade", f, "--write", cache=cache).returncode in (0, 1)
    assert os.stat(f).st_ino == os.stat(link).st_ino and os.stat(f).st_nlink == 2
    assert b"tf.compat.v1.placeholder" in link.read_bytes()
    assert not glob.glob(str(tmp_path / ".tf-migrate-*"))
    if os.geteuid() == 0:  # as root: a file owned by someone else keeps its owner
        g = write(tmp_path / "owned.py", SOURCE)
        os.chown(g, 4321, 4321)
        assert cli("upgrade", g, "--write", cache=cache).returncode in (0, 1)
        assert (os.stat(g).st_uid, os.stat(g).st_gid) == (4321, 4321)
        assert b"tf.compat.v1.placeholder" in g.read_bytes()


def test_an_unreadable_folder_is_reported(tmp_path, cache):
    """#13: an unreadable folder used to be skipped silently (exit 0, 0 files). Made
    unreadable in a way root cannot read either: a path longer than PATH_MAX."""
    write(tmp_path / "src" / "ok.py", SOURCE)
    here = os.getcwd()
    try:
        os.chdir(tmp_path / "src")
        for _ in range(20):  # 20 x 250 characters: scandir fails with ENAMETOOLONG
            os.mkdir("d" * 250)
            os.chdir("d" * 250)
        with open("m.py", "w") as handle:
            handle.write(SOURCE)
    finally:
        os.chdir(here)
    out = cli("lint", tmp_path / "src", cache=cache)
    assert out.returncode == 2 and "cannot read folder" in out.stdout + out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("content,message", [
    ("{bad", "not a name map"),
    ('{"rules": [{"pattern": "(", "replace": "x"}]}', "unterminated subpattern"),
    ('{"rules": [{"pattern": "a", "replace": 5}]}', "replace must be a string"),
    ("[]", "must be a JSON object"),
])
def test_a_bad_name_map_is_one_error_line(tmp_path, content, message):
    """#17: a broken tf-migrate-names.json or --map regex used to give a traceback."""
    pytest.importorskip("numpy")
    names = write(tmp_path / "tf-migrate-names.json", content)
    out = cli("ckpt", "compare", tmp_path / "nope", tmp_path / "nope", "--map", names)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_verify_usage_errors_are_one_line(tmp_path):
    """#17, #22: a huge --input, a --workdir that is a file; and a json.py in the current
    folder is never imported instead of the standard library's."""
    f = write(tmp_path / "f.py", "def f(x):\n    return x\n")
    huge = cli("verify", f"{f}:f", f"{f}:f", "--input", "x:100000x100000:float32")
    assert huge.returncode == 2 and "elements" in huge.stderr and "Traceback" not in huge.stderr
    work = write(tmp_path / "wd", "")
    as_file = cli("verify", f"{f}:f", f"{f}:f", "--input", "x:2:float32", "--workdir", work)
    assert as_file.returncode == 2 and "not a directory" in as_file.stderr
    write(tmp_path / "json.py", "raise SystemExit('the json.py of the current folder ran')\n")
    ran = cli("verify", f"{f}:f", f"{f}:f", "--input", "x:2:float32", cwd=tmp_path)
    assert "json.py" not in ran.stderr and "No variables" in ran.stderr


def test_verify_failures_name_the_real_exception():
    """#16: a Keras-wrapped error used to surface as its last line
    ('• kwargs=<class 'inspect._empty'>')."""
    from migrate.verify import failure_of

    stderr = """W0000 00:00:1 cpu_feature_guard.cc:227] This TensorFlow binary is optimized
Traceback (most recent call last):
  File "<string>", line 80, in <module>
  File "/home/u/proj/model.py", line 12, in build
    y = layer(x)
  File "/usr/lib/python3.11/site-packages/keras/src/utils/traceback_utils.py", line 122, in error_handler
    raise e.with_traceback(filtered_tb) from None
  File "/home/u/proj/model.py", line 30, in call
    with tf.variable_scope("x"):
TypeError: Exception encountered when calling Encoder.call().

module 'tensorflow' has no attribute 'variable_scope'

Arguments received by Encoder.call():
  \u2022 kwargs=<class 'inspect._empty'>
"""
    assert failure_of(stderr) == ("TypeError: module 'tensorflow' has no attribute 'variable_scope'",
                                  "/home/u/proj/model.py:30 in call")
    assert failure_of("noise\nValueError: plain\n") == ("ValueError: plain", None)
