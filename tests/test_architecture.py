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


# a rule is a file (tfm101_*.py) or, once it grows stages, a package (tfm501_*/) whose
# files may import each other, and nothing of another rule
RULE_FILES = sorted([f for f in os.listdir(RULES) if f.startswith("tfm") and f.endswith(".py")] +
                    [os.path.join(d, f) for d in os.listdir(RULES) if d.startswith("tfm")
                     and os.path.isdir(os.path.join(RULES, d))
                     for f in os.listdir(os.path.join(RULES, d)) if f.endswith(".py")])


@pytest.mark.parametrize("name", RULE_FILES)
def test_no_rule_imports_another_rule(name):
    own = "migrate.rules." + name.split(os.sep)[0] if os.sep in name else None
    found = [f"line {line}: {module}" for module, line in imports(os.path.join(RULES, name))
             if module.startswith("migrate.rules") and not (own and module.startswith(own))]
    assert not found, f"{name} imports a rule; move the helper to migrate/codemod/shared.py: {found}"


def test_a_rule_package_shows_its_stages():
    """TFM501 grew past one file: its stages are files of their own, none of them a
    function over 120 lines."""
    folder = os.path.join(RULES, "tfm501_session_programs")
    assert {"__init__.py", "detect.py", "plan.py", "convert.py", "graph_mode.py"} <= set(os.listdir(folder))
    for name in os.listdir(folder):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
            long = [(n.name, n.end_lineno - n.lineno + 1) for n in ast.walk(tree)
                    if isinstance(n, ast.FunctionDef) and n.end_lineno - n.lineno + 1 > 120]
            assert not long, (name, long)


def test_engine_modules_do_not_import_rules():
    folder = os.path.join(ROOT, "migrate", "codemod")
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            found = [m for m, _ in imports(os.path.join(folder, name))
                     if m.startswith("migrate.rules.")]
            assert not found, (name, found)
