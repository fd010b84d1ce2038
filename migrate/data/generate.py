"""Regenerate ``tf_upgrade_v2.json`` from TensorFlow's own upgrade tables.

    python -m migrate.data.generate          # rewrite the data file
    python -m migrate.data.generate --check  # exit 1 if the file is stale

Reads the installed ``tensorflow/tools/compatibility`` (renames_v2,
all_renames_v2, reorders_v2 and TFAPIChangeSpec of tf_upgrade_v2). Nothing in
the data file is typed by hand; our deliberate overrides live in the rules
(see ``OWNED_BY_RULES``) and are recorded here only as a list.
"""
from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "tf_upgrade_v2.json")
# handled by our own rules, never by the generic rename pass
OWNED_BY_RULES = ("tf.layers.", "tf.contrib.", "tf.enable_eager_execution", "tf.summary.")


def build() -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf
    from tensorflow.tools.compatibility import tf_upgrade_v2

    spec = tf_upgrade_v2.TFAPIChangeSpec()

    def text(value):
        return value[1] if isinstance(value, tuple) else str(value)

    def serious(value):  # INFO-level notes are not findings
        return not (isinstance(value, tuple) and value[0] == "INFO")

    return {
        "generated_from": f"tensorflow {tf.__version__} tools/compatibility",
        "owned_by_rules": list(OWNED_BY_RULES),
        "symbol_renames": dict(sorted(spec.symbol_renames.items())),
        "keyword_renames": {k: dict(sorted(v.items())) for k, v in sorted(spec.function_keyword_renames.items())},
        "reorders": dict(sorted((k, list(v)) for k, v in spec.function_reorders.items())),
        "function_warnings": {k: text(v) for k, v in sorted(spec.function_warnings.items())
                              if k.startswith("tf.") and serious(v)},
        "arg_warnings": {k: {a: text(m) for (a, _pos), m in sorted(v.items(), key=lambda i: str(i[0]))
                             if serious(m)}
                         for k, v in sorted(spec.function_arg_warnings.items()) if k.startswith("tf.")},
        "transformed": sorted(k for k in spec.function_transformers if k.startswith("tf.")),
    }


def render(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    fresh = render(build())
    if "--check" in argv:
        with open(TARGET, encoding="utf-8") as handle:
            stale = handle.read() != fresh
        print("stale: run python -m migrate.data.generate" if stale else "up to date")
        return 1 if stale else 0
    with open(TARGET, "w", encoding="utf-8") as handle:
        handle.write(fresh)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
