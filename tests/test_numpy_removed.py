"""TFM122 against the real thing: a data loader using numpy names TF 1.15's numpy had,
run as written on TF 1.15's interpreter (numpy 1.18), computes what its migration computes
on the numpy TF 2 runs on, which no longer has those names."""
import json
import subprocess
import sys

import pytest

import tf1_oracle
import tfm_cli

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


def _upgrade(source):
    return tfm_cli.run("upgrade", source, "--write", "--no-cache", default_keras=False, timeout=300)


def _same_as_tf1(program, source, want):
    """``program`` as written fails on today's numpy; its migration at ``source`` prints ``want``."""
    with pytest.raises(subprocess.CalledProcessError):  # as written, today's numpy refuses it
        subprocess.run([sys.executable, "-c", program], check=True, capture_output=True, timeout=120)
    run = subprocess.run([sys.executable, str(source)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout) == want


@pytest.mark.slow
def test_a_migrated_loader_computes_on_todays_numpy_what_it_computed_on_tf_1_15s(tmp_path, tf1_python):
    want = json.loads(tf1_oracle.run(LOADER))
    source = tmp_path / "loader.py"
    source.write_text(LOADER)
    out = _upgrade(source)
    # every name fixed but np.asscalar (numpy names no replacement): said, never run here
    assert out.returncode == 1 and out.stdout.count("TFM122") == 1, out.stdout + out.stderr
    assert "np.asscalar is gone" in out.stdout and "ndarray.item()" in out.stdout
    migrated = source.read_text()
    assert "np.int)" not in migrated and "np.float_" not in migrated and "np.Inf" not in migrated
    _same_as_tf1(LOADER, source, want)


KEYWORDS = '''
import json
import numpy as np

values = np.arange(12, dtype=np.float64) ** 1.5
grid = np.reshape(values, newshape=(-1, 3), order="F")
low = np.percentile(values, 10, interpolation="lower")
high = np.nanquantile(values, 0.9, interpolation="higher")
both = np.corrcoef(grid[:, 0], grid[:, 1], bias=1, ddof=0)
print(json.dumps({"grid": grid.round(6).tolist(), "low": float(low), "high": float(high),
                  "both": both.round(6).tolist()}))
'''


@pytest.mark.slow
def test_keywords_numpy_removed_compute_what_they_computed_on_tf_1_15s_numpy(tmp_path, tf1_python):
    """#59: `np.reshape(a, newshape=...)` broke two GAN tutorials after migration. Renamed
    keywords (newshape -> shape, interpolation -> method) and ones numpy 1.18 documented as
    having no effect (corrcoef's bias, ddof: dropped) compute on today's numpy what the
    original computed on TF 1.15's numpy 1.18."""
    want = json.loads(tf1_oracle.run(KEYWORDS))
    source = tmp_path / "stats.py"
    source.write_text(KEYWORDS)
    out = _upgrade(source)
    assert out.returncode == 0 and "0 remaining" in out.stderr, out.stdout + out.stderr
    _same_as_tf1(KEYWORDS, source, want)
