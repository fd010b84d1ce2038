"""What a user installing the wheel gets: every module and data file of migrate/ and shims/.
(The package list was written out by hand and missed the native back end's package: an
install from a wheel failed at import.)"""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sources():
    for top in ("migrate", "shims"):
        for folder, dirs, names in os.walk(os.path.join(ROOT, top)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            for name in names:
                if name.endswith((".py", ".json")):
                    yield os.path.relpath(os.path.join(folder, name), ROOT).replace(os.sep, "/")


def test_the_wheel_holds_every_module_and_data_file(tmp_path):
    pytest.importorskip("setuptools")  # (the build backend pyproject.toml names)
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md"):
        shutil.copy(os.path.join(ROOT, name), source / name)
    for top in ("migrate", "shims"):
        shutil.copytree(os.path.join(ROOT, top), source / top, ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation",
                            "-w", str(tmp_path / "wheel"), "-q"], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "wheel").iterdir()
    with zipfile.ZipFile(wheel) as archive:
        held = set(archive.namelist())
    missing = sorted(set(_sources()) - held)
    assert not missing, missing
