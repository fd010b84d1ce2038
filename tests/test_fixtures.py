"""Every rule against its fixture pairs, with idempotence and re-parse checks."""
import os

import libcst as cst
import pytest

from fixture_cases import FIXTURES, cases, render_findings, run
from migrate.codemod.rule import all_rules

CASES = list(cases())


@pytest.mark.parametrize("code,case,folder", CASES, ids=[f"{c}/{n}" for c, n, _ in CASES])
def test_fixture(code, case, folder):
    with open(os.path.join(folder, case + ".in.py"), encoding="utf-8") as handle:
        source = handle.read()
    outcome = run(code, source, case)
    with open(os.path.join(folder, case + ".findings"), encoding="utf-8") as handle:
        assert render_findings(outcome.findings) == handle.read()
    out_path = os.path.join(folder, case + ".out.py")
    if os.path.exists(out_path):
        with open(out_path, encoding="utf-8") as handle:
            expected = handle.read()
        assert outcome.new_source == expected
        cst.parse_module(outcome.new_source)  # the output parses
        again = run(code, outcome.new_source, case)
        assert again.new_source is None, "a second run changed the file again"
        assert not any(f.fixable for f in again.findings), "fixable findings left after the fix"
    else:
        assert outcome.new_source is None


@pytest.mark.parametrize("code", sorted(all_rules()))
def test_every_rule_has_positive_and_negative_fixtures(code):
    folder = os.path.join(FIXTURES, code)
    assert os.path.isdir(folder), f"no fixtures for {code}"
    counts = []
    for name in os.listdir(folder):
        if name.endswith(".findings"):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                counts.append(sum(1 for line in handle if line.split()[1] == code))
    assert any(counts), f"{code}: no fixture where the rule fires"
    rule = all_rules()[code]
    assert rule.summary and rule.explanation.strip() and rule.before.strip() and rule.after.strip()


def test_every_fixture_folder_is_a_rule():
    assert set(os.listdir(FIXTURES)) <= set(all_rules())


def test_tfm501_names_every_blocker_at_once():
    """#25.2: fixing "a fetch that is not a graph name: model.loss" used to reveal only
    then "a feed_dict that is neither a dict literal nor a name bound once"."""
    with open(os.path.join(FIXTURES, "TFM501", "every_blocker_named.in.py"), encoding="utf-8") as handle:
        outcome = run("TFM501", handle.read())
    kept = [f.message for f in outcome.findings if "kept in TF1 graph mode" in f.message]
    assert len(kept) == 1
    for blocker in ("a fetch that is not a graph name: model.loss",
                    "a feed_dict that is neither a dict literal nor a name bound once",
                    "graph value 'loss' is used outside sess.run()"):
        assert blocker in kept[0]
