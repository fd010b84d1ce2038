"""The house rules, checked on the source: no rule imports another rule (their shared
helpers live in migrate/codemod/shared.py), and the engine's modules never import a rule."""
import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "migrate", "rules")


def imports(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno


RULE_FILES = sorted(f for f in os.listdir(RULES) if f.startswith("tfm") and f.endswith(".py"))


@pytest.mark.parametrize("name", RULE_FILES)
def test_no_rule_imports_another_rule(name):
    found = [f"line {line}: {module}" for module, line in imports(os.path.join(RULES, name))
             if module.startswith("migrate.rules")]
    assert not found, f"{name} imports a rule; move the helper to migrate/codemod/shared.py: {found}"


def test_engine_modules_do_not_import_rules():
    folder = os.path.join(ROOT, "migrate", "codemod")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            found = [m for m, _ in imports(os.path.join(folder, name))
                     if m.startswith("migrate.rules.")]
            assert not found, (name, found)
