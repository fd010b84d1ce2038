"""The house rules, checked on the source: no rule imports another rule (their shared
helpers live in migrate/codemod/shared.py), and the engine's modules never import a rule."""
import ast
import glob
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


def python_files(*folders):
    for folder in folders:
        for path in sorted(glob.glob(os.path.join(ROOT, folder, "**", "*.py"), recursive=True)):
            with open(path, encoding="utf-8") as handle:
                yield os.path.relpath(path, ROOT), handle.read()


def test_no_function_over_80_lines():
    long = [(name, f.name, f.end_lineno - f.lineno + 1) for name, source in python_files("migrate", "shims")
            for f in ast.walk(ast.parse(source)) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            and f.end_lineno - f.lineno + 1 > 80]
    assert not long, long


def test_the_cli_only_parses_and_prints():
    """The write policy, the run's planning and the report formats live in the codemod
    core; cli.py assembles the commands."""
    with open(os.path.join(ROOT, "migrate", "cli.py"), encoding="utf-8") as handle:
        source = handle.read()
    assert source.count("\n") < 400
    assert "shutil" not in source and "atomic_write" not in source and "tomllib" not in source


def test_the_runtime_does_not_import_the_tool():
    """shims is what migrated code imports: it must work without the migrate package."""
    found = [(name, module) for name, source in python_files("shims")
             for module, _ in imports(os.path.join(ROOT, name)) if module.split(".")[0] == "migrate"]
    assert not found, found


def test_a_function_level_import_says_why():
    """An import inside a function is either explained on its line (or the line above) or
    covered by the module docstring's "Imports inside functions" note."""
    hidden = []
    for name, source in python_files("migrate", "shims"):
        tree = ast.parse(source)
        if "imports inside functions" in (ast.get_docstring(tree) or "").lower():
            continue
        lines = source.splitlines()
        for f in ast.walk(tree):
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(f):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        here, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
                        if "#" not in here and not above.startswith("#"):
                            hidden.append(f"{name}:{node.lineno}")
    assert not hidden, f"{len(hidden)} unexplained function-level imports: {sorted(set(hidden))}"


def test_no_import_cycle():
    """Module-level imports of migrate/ and shims/ form no cycle (``from package import
    submodule`` depends on the submodule, not on the package's __init__)."""
    modules = {}
    for name, source in python_files("migrate", "shims"):
        module = name[:-3].replace(os.sep, ".")
        modules[module[:-9] if module.endswith(".__init__") else module] = ast.parse(source)
    graph = {}
    for module, tree in modules.items():
        deps = set()
        for node in tree.body:
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                subs = {f"{node.module}.{a.name}" for a in node.names} & set(modules)
                deps |= subs or {node.module}
                if len(subs) < len(node.names):
                    deps.add(node.module)
        graph[module] = {d for d in deps if d in modules and d != module}
    state, cycles = {}, []

    def visit(module, path):
        state[module] = "open"
        for dep in sorted(graph[module]):
            if state.get(dep) == "open":
                cycles.append(path[path.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, cycles
