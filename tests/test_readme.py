"""The README's rule table is generated from the rules, and its commands are the real ones."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_rule_table_is_current():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    table = re.search(r"<!-- rules:start -->\n(.*?)<!-- rules:end -->", readme, re.S).group(1)
    out = subprocess.run([sys.executable, "-m", "migrate", "rules", "--format", "markdown"],
                         capture_output=True, text=True, cwd=ROOT)
    assert table == out.stdout, "README rule table is stale: paste `tf-migrate rules --format markdown`"


def test_ci_runs_the_readme_test_command():
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    commands = re.findall(r"^    (python -m pip install .*)$", readme, re.M)
    assert len(commands) == 2, commands
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
    assert commands[1] in ci.splitlines()
