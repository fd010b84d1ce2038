"""Fixture pairs: tests/fixtures/<CODE>/<case>.in.py -> <case>.out.py + <case>.findings.

Each case runs its folder's rule alone. ``<case>.out.py`` exists only when the
rule changes the file; ``<case>.findings`` lists ``LINE:COLUMN CODE message`` per finding
(the message is pinned too: it is what the user reads). A case named ``<name>.keras3``
runs for the Keras 3 target (``upgrade --keras 3``), one named ``<name>.shims`` writes
Session programs in the shims form (``upgrade --programs shims``), the others use the default.

    python tests/fixture_cases.py --update   # rewrite expectations (review the diff!)
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
sys.path.insert(0, os.path.dirname(HERE))

from migrate.codemod.engine import transform  # noqa: E402
from migrate.codemod.rule import all_rules  # noqa: E402
from migrate.codemod.target import Target  # noqa: E402


def cases():
    for code in sorted(os.listdir(FIXTURES)):
        folder = os.path.join(FIXTURES, code)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".in.py"):
                yield code, name[: -len(".in.py")], folder


def run(code, source, case=""):
    target = Target(keras=3) if case.endswith(".keras3") else \
        Target(programs="shims") if case.endswith(".shims") else Target()
    return transform(source, [all_rules()[code]], target=target)


def render_findings(findings):
    return "".join(f"{f.line}:{f.column} {f.code} {f.message}\n" for f in findings)


def update():
    for code, case, folder in cases():
        with open(os.path.join(folder, case + ".in.py"), encoding="utf-8") as handle:
            source = handle.read()
        outcome = run(code, source, case)
        out_path = os.path.join(folder, case + ".out.py")
        if outcome.new_source is not None:
            with open(out_path, "w", encoding="utf-8") as handle:
                handle.write(outcome.new_source)
        elif os.path.exists(out_path):
            os.unlink(out_path)
        with open(os.path.join(folder, case + ".findings"), "w", encoding="utf-8") as handle:
            handle.write(render_findings(outcome.findings))
        print(f"{code}/{case}: {len(outcome.findings)} findings, "
              f"{'changed' if outcome.new_source else 'unchanged'}")


if __name__ == "__main__":
    if "--update" in sys.argv:
        update()
