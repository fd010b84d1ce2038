"""TFM122 against the real thing: a data loader using numpy names TF 1.15's numpy had,
run as written on TF 1.15's interpreter (numpy 1.18), computes what its migration computes
on the numpy TF 2 runs on, which no longer has those names."""
import json
import os
import subprocess
import sys

import pytest

import tf1_oracle

LOADER = '''
import json
import numpy as np


def load(images, labels):
    labels = labels.astype(np.int)
    images = np.asarray(images, dtype=np.float_) / 255.0
    keep = np.ones(len(labels), dtype=np.bool8) & (labels < np.Inf)
    top = np.asscalar(labels[:1]) if False else labels[:1].item()
    return {"labels": labels.tolist(), "dtype": [labels.dtype.kind, images.dtype.name, keep.dtype.name],
            "images": images.round(6).tolist(), "keep": keep.tolist(), "top": top,
            "worst": float(-np.Inf), "nan": bool(np.isnan(np.NaN)), "unicode": np.unicode(7),
            "int0": np.dtype(np.int0).kind, "complex": np.complex_(1j).real}


print(json.dumps(load([[0, 51], [255, 102]], np.array([1.7, 2.2]))))
'''


@pytest.mark.slow
def test_a_migrated_loader_computes_on_todays_numpy_what_it_computed_on_tf_1_15s(tmp_path, tf1_python):
    want = json.loads(tf1_oracle.run(LOADER))
    source = tmp_path / "loader.py"
    source.write_text(LOADER)
    exe = os.path.join(os.path.dirname(sys.executable), "tf-migrate")
    out = subprocess.run([exe, "upgrade", str(source), "--write", "--no-cache"], capture_output=True,
                         text=True, timeout=300)
    # every name fixed but np.asscalar (numpy names no replacement): said, never run here
    assert out.returncode == 1 and out.stdout.count("TFM122") == 1, out.stdout + out.stderr
    assert "np.asscalar is gone" in out.stdout and "ndarray.item()" in out.stdout
    migrated = source.read_text()
    assert "np.int)" not in migrated and "np.float_" not in migrated and "np.Inf" not in migrated
    with pytest.raises(subprocess.CalledProcessError):  # as written, today's numpy refuses it
        subprocess.run([sys.executable, "-c", LOADER], check=True, capture_output=True, timeout=120)
    run = subprocess.run([sys.executable, str(source)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == want
