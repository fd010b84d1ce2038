"""Report formats: text lines, the JSON contract, SARIF 2.1.0."""
from __future__ import annotations

import json
from typing import Dict, List, Sequence

from migrate import __version__


def is_error(message: str) -> bool:
    """An error finding: the code fails on TF2 as it stands, or means two things there."""
    return message.startswith("error:")


def finding_rows(reports) -> List[dict]:
    rows = []
    for report in reports:
        for f in report.findings:
            row = {"path": report.path, "line": f["line"], "column": f["column"],
                   "code": f["code"], "message": f["message"], "fixable": f["fixable"],
                   "severity": "error" if is_error(f["message"]) else "warning"}
            if "cell" in f:
                row["cell"] = f["cell"]
                if "file_line" in f:
                    row["file_line"] = f["file_line"]
            rows.append(row)
    return rows


def error_rows(reports, extra: Sequence = ()) -> List[dict]:
    rows = [{"path": p, "message": m} for p, m in extra]
    rows += [{"path": r.path, "message": r.error} for r in reports if r.error]
    return rows


def shown(path: str) -> str:
    """A path as one piece of one text line: control characters (a newline in a file
    name) are escaped, as ``ls -b`` shows them; JSON and SARIF keep the real path."""
    if path.isprintable():
        return path
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


def text_line(row: dict) -> str:
    path = shown(row["path"])
    where = f"{path}[cell {row['cell']}]" if "cell" in row else path
    mark = " [*]" if row["fixable"] else ""
    return f"{where}:{row['line']}:{row['column']}: {row['code']}{mark} {row['message']}"


def error_line(row: dict) -> str:
    return f"{shown(row['path'])}: error: {row['message']}"


def as_json(findings: List[dict], errors: List[dict], summary: Dict) -> str:
    return json.dumps({"findings": findings, "errors": errors, "summary": summary}, indent=2)


def as_sarif(findings: List[dict], errors: List[dict]) -> str:
    from migrate.codemod.rule import all_rules

    rules = all_rules()
    used = sorted({f["code"] for f in findings})
    results = []
    for f in findings:
        result = {
            "ruleId": f["code"],
            "level": f.get("severity", "warning"),
            "message": {"text": f["message"]},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f["path"]},
                "region": {"startLine": f["line"], "startColumn": f["column"]}}}],
        }
        if "cell" in f:  # a notebook: the line of the .ipynb file, the cell's own position kept
            region = result["locations"][0]["physicalLocation"]["region"]
            region["startLine"] = f.get("file_line", 1)
            del region["startColumn"]  # a column inside the JSON string would mislead
            result["message"]["text"] = f"cell {f['cell']}, line {f['line']}: {f['message']}"
            result["properties"] = {"cell": f["cell"], "cellLine": f["line"], "cellColumn": f["column"]}
        results.append(result)
    notifications = [{"level": "error", "message": {"text": f"{e['path']}: {e['message']}"}}
                     for e in errors]
    run = {
        "tool": {"driver": {
            "name": "tf-migrate", "version": __version__,
            "informationUri": "https://pypi.org/project/tf-migrate/",
            "rules": [{"id": c, "shortDescription": {"text": rules[c].summary},
                       "fullDescription": {"text": rules[c].explanation.strip() or rules[c].summary}}
                      for c in used if c in rules],
        }},
        "results": results,
        "invocations": [{"executionSuccessful": not errors,
                         "toolExecutionNotifications": notifications}],
    }
    return json.dumps({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0", "runs": [run]}, indent=2)
