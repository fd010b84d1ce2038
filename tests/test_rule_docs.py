"""Every rule's documented example is executed: ``tf-migrate rules CODE`` shows ``before``
and ``after``, and the rule, run alone, must turn the one into the other (a rule that only
reports: ``before`` gets a finding of it and ``after``, the fix a person makes, gets none).
A documented example that stops doing what it says fails here."""
import textwrap

import pytest

from migrate.codemod.engine import transform
from migrate.codemod.files import _mask, _unmask
from migrate.codemod.rule import all_rules

RULES = all_rules()


def example(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


def run(rule, source: str, folder=None):
    """The rule alone over a module, or over a notebook cell when the example has IPython
    lines (``%tensorflow_version 1.x``), as ``upgrade`` runs it on a notebook. A rule whose
    example reads other files of its project (``project``: TFM113's star import) runs on
    ``folder/example.py`` with them written beside it."""
    path = ""
    if getattr(rule, "project", None):
        for name, text in rule.project.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        path = str(folder / "example.py")
    masked, saved, token = _mask(source)
    outcome = transform(masked, [rule], path=path)
    new = outcome.new_source
    return (None if new is None else _unmask(new, saved, token)), outcome.findings


@pytest.mark.parametrize("code", sorted(RULES))
def test_documented_example_does_what_it_says(code, tmp_path):
    rule = RULES[code]
    before, after = example(rule.before), example(rule.after)
    assert before != after, "the example shows no change"
    new, findings = run(rule, before, tmp_path)
    assert any(f.code == code for f in findings), f"{code} finds nothing in its own example"
    if rule.fixable:
        assert new == after, f"{code}'s documented before does not become its documented after:\n{new}"
        again, left = run(rule, after, tmp_path)
        assert again is None and not any(f.fixable for f in left), "the documented after changes again"
    else:
        assert new is None, f"{code} is documented as report-only but changed the file"
        _, left = run(rule, after, tmp_path)
        assert not left, f"{code} still reports the documented fix: {[f.message for f in left]}"
