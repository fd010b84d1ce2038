"""End to end on every sample: real TF 1.15 graph (tests/tf1_oracle.py) -> Saver checkpoint -> tf-migrate upgrade ->
TF2 eager load -> equal outputs and gradients -> ckpt compare ok -> verify ok."""
import json
import os
import re
import shutil

import pytest

import tfm_cli

pytest.importorskip("tensorflow")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(ROOT, "samples")
NAMES = sorted(d for d in os.listdir(SAMPLES) if os.path.isfile(os.path.join(SAMPLES, d, "sample.json")))


def cli(*args, **env):
    return tfm_cli.run(*args, env={"TF_CPP_MIN_LOG_LEVEL": "3", **env}, default_keras=False)


def test_there_are_five_samples():
    assert len(NAMES) >= 5


@pytest.mark.parametrize("name", NAMES)
def test_committed_migration_matches_the_tool(name, tmp_path):
    """samples/<name>/migrated/ is what `tf-migrate upgrade` produces today (no drift)."""
    out = cli("upgrade", os.path.join(SAMPLES, name, "legacy.py"), "--outtree", tmp_path, "--no-cache")
    assert out.returncode in (0, 1), out.stderr
    committed = os.path.join(SAMPLES, name, "migrated")
    for produced in sorted(os.listdir(tmp_path)):
        with open(tmp_path / produced) as a, open(os.path.join(committed, produced)) as b:
            assert a.read() == b.read(), f"{name}/migrated/{produced} is stale: rerun tf-migrate upgrade"
    assert sorted(os.listdir(tmp_path)) == sorted(os.listdir(committed))


@pytest.mark.parametrize("name", NAMES)
def test_end_to_end(name, tmp_path, tf1_python):
    folder = os.path.join(SAMPLES, name)
    spec = json.load(open(os.path.join(folder, "sample.json")))
    migrated = tmp_path / "migrated"
    out = cli("upgrade", os.path.join(folder, "legacy.py"), "--outtree", migrated, "--no-cache")
    assert out.returncode in (0, 1), out.stderr
    call = re.compile(r"\blayers\.[a-z_0-9]+\s*\(")  # a functional layer call, not prose
    left = [l for l in open(migrated / "legacy.py") if call.search(l)]
    assert not left, f"functional layers left: {left}"
    args = ["verify", f"{folder}/legacy.py:{spec['entry']}", f"{migrated}/legacy.py:{spec['entry']}",
            "--grads", "--format", "json", "--workdir", tmp_path / "work"]
    for text in spec["inputs"]:
        args += ["--input", text]
    result = cli(*args, "--tf1-python", tf1_python)  # the reference: real TF 1.15, tf.contrib and all
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert report["tf1_real"]
    assert report["ok"] and report["variables"]["legacy"] == report["variables"]["matched"] > 0
    assert report["gradients"] and all(g["ok"] for g in report["gradients"])
    names = migrated / "tf-migrate-names.json"
    compare = cli("ckpt", "compare", report["checkpoints"]["tf1"], report["checkpoints"]["tf2"],
                  "--format", "json", *(["--map", names] if names.exists() else []))
    assert compare.returncode == 0, compare.stdout[-2000:] + compare.stderr
    data = json.loads(compare.stdout)
    assert len(data["matched"]) == report["variables"]["legacy"]


def test_verify_catches_a_wrong_migration(tmp_path, tf1_python):
    folder = os.path.join(SAMPLES, "actor_critic")
    shutil.copytree(os.path.join(folder, "migrated"), tmp_path / "m")
    path = tmp_path / "m" / "legacy.py"
    path.write_text(path.read_text().replace("activation=tf.tanh", "activation=tf.nn.sigmoid"))
    temp = tmp_path / "tmp"
    temp.mkdir()
    result = cli("verify", f"{folder}/legacy.py:build", f"{path}:build", "--input", "state:4x6:float32",
                 "--input", "action:4x2:float32", "--format", "json", "--tf1-python", tf1_python,
                 TMPDIR=str(temp))
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert not report["outputs"][0]["eager"]["ok"] and report["outputs"][1]["eager"]["ok"]
    assert report["workdir"] is None and not os.listdir(temp)  # #12.23: no temp folder left


def test_verify_bad_arguments_exit_2(tmp_path):
    folder = os.path.join(SAMPLES, "actor_critic")
    bad_input = cli("verify", f"{folder}/legacy.py:build", f"{folder}/migrated/legacy.py:build",
                    "--input", "state:4-6:float32")
    assert bad_input.returncode == 2 and "NAME:SHAPE:DTYPE" in bad_input.stderr or "shape" in bad_input.stderr
    missing = cli("verify", f"{tmp_path}/nope.py:build", f"{folder}/migrated/legacy.py:build",
                  "--input", "state:4x6:float32")
    assert missing.returncode == 2 and "no such file" in missing.stderr
    failing = cli("verify", f"{folder}/legacy.py:build", f"{folder}/migrated/legacy.py:build",
                  "--input", "state:4x6:float32")  # the second input is missing
    assert failing.returncode == 2 and "failed" in failing.stderr and "Traceback" not in failing.stderr
