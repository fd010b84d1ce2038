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
            rows.append({"path": report.path, **f.to_json(),
                         "severity": "error" if f.is_error else "warning"})
    return rows


def summarize(files, reports, errors, write: bool = False, written=None) -> dict:
    """The run's numbers (the JSON report's ``summary``). ``written``: with --write, the
    reports whose files were really written (a read-only or changed file was not)."""
    findings = [f for r in reports for f in r.findings]
    summary = {"files": len(files), "findings": len(findings),
               "fixable": sum(f.fixable for f in findings),
               "error_findings": sum(f.is_error for f in findings),
               "errors": len(errors) + sum(1 for r in reports if r.error)}
    if write is not None:
        changed = [r for r in reports if r.changed]
        summary.update(changed=len(changed), written=write)
        if write:
            summary["changed"] = len(written)
            summary["fixed"] = sum(f.fixable for r in written for f in r.findings)
    return summary


def count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_line(summary: dict) -> str:
    """``3 files scanned, 2 changed, 5 fixed, 1 remaining (1 fixable), 0 errors`` after
    --write; before it, ``2 would change, 6 findings (5 fixable)``."""
    parts = [f"{count(summary['files'], 'file')} scanned"]
    if summary.get("written"):
        parts.append(f"{summary['changed']} changed")
        parts.append(f"{summary['fixed']} fixed")
        remaining = summary["findings"] - summary["fixed"]
        left_fixable = summary["fixable"] - summary["fixed"]
        notes = ([f"{left_fixable} fixable"] if left_fixable else []) + (
            [count(summary["error_findings"], "error")] if summary.get("error_findings") else [])
        parts.append(f"{remaining} remaining" + (f" ({', '.join(notes)})" if notes else ""))
    else:
        if "changed" in summary:
            parts.append(f"{summary['changed']} would change")
        errors = summary.get("error_findings")
        parts.append(f"{count(summary['findings'], 'finding')} ({summary['fixable']} fixable"
                     + (f", {count(errors, 'error')}" if errors else "") + ")")
    parts.append(count(summary["errors"], "run error"))
    return ", ".join(parts)


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
    from migrate.codemod.rule import all_rules  # libcst: only for SARIF's rule texts

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
