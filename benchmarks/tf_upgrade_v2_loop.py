"""Run tf_upgrade_v2's upgrader over every .py file of a tree, one by one, in this process.

    python tf_upgrade_v2_loop.py CORPUS OUTDIR RESULT.json

Writes {"seconds", "files", "crashed"}: the time of the loop alone (TensorFlow's import
is not counted) and how many files tf_upgrade_v2 raised on.
"""
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
from tensorflow.tools.compatibility import ast_edits, tf_upgrade_v2  # noqa: E402

corpus, outdir, result = sys.argv[1:4]
upgrader = ast_edits.ASTCodeUpgrader(tf_upgrade_v2.TFAPIChangeSpec())
files = []
for folder, _, names in os.walk(corpus):
    files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".py")]
crashed = 0
start = time.perf_counter()
for path in files:
    target = os.path.join(outdir, os.path.relpath(path, corpus))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
        upgrader.process_file(path, target)
    except Exception:  # pasta's StopIteration on f-strings, among others
        crashed += 1
seconds = time.perf_counter() - start
json.dump({"seconds": seconds, "files": len(files), "crashed": crashed}, open(result, "w"))
