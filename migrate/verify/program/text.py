"""The text form of a ``verify --program`` report: a table (one row per kind of printed
line, not per line), the verdict, and why it was reached.

Imports inside functions: rich, only when the text report is printed.
"""
from __future__ import annotations

import re

MOST_ROWS = 12


def _num(value) -> str:
    return "" if value is None else f"{value:.3g}"


def _why(item: dict, rtol: float, atol: float) -> str:
    first = item.get("first_difference")
    if item.get("problem"):
        return item["problem"]
    if not first:
        return ""
    allowed = atol + rtol * abs(first["tf1"])
    return (f"value {first['position']}: TF1 {first['tf1']:.7g}, migrated {first['migrated']:.7g} "
            f"(abs {first['abs']:.3g}, rel {first['rel']:.3g} > atol + rtol*|TF1| = {allowed:.3g})")


def _timing(report: dict) -> str:
    tf1 = report["timing"]["tf1"][0]
    new = report["timing"]["migrated"]
    if tf1["median_ms"] is None or new["median_ms"] is None:
        return "no timed run() calls"
    ratio = new["median_ms"] / tf1["median_ms"] if tf1["median_ms"] else float("inf")
    cached = " (TF1 from cache)" if tf1.get("cached") else ""
    return (f"TF1 {tf1['median_ms']:.3g} ms x {tf1['calls']}, migrated {new['median_ms']:.3g} ms x "
            f"{new['calls']} ({ratio:.2g}x){cached}")


def _memory(report: dict) -> str:
    tf1, new = report["timing"]["tf1"][0].get("peak_mb"), report["timing"]["migrated"].get("peak_mb")
    if not tf1 or not new:
        return ""
    return f"TF1 {tf1:.0f} MB, migrated {new:.0f} MB ({new / tf1:.2g}x), each process's peak RSS"


def render(report: dict, console) -> None:
    """The report as a table of checks, then notes and the verdict."""
    from rich.table import Table

    title = f"tf-migrate verify --program: {report['legacy']} -> {report['migrated']}"
    table = Table(title=title)
    for column in ("check", "result", "max abs", "max rel", "detail"):
        table.add_column(column, overflow="fold")
    _init_row(table, report["init"])
    _stream_rows(table, report)
    _variables_row(table, report["variables"])
    table.add_row("step time", "", "", "", "median run(): " + _timing(report))
    memory = _memory(report)
    if memory:
        table.add_row("peak memory", "", "", "", memory)
    console.print(table)
    _notes(report, console)


def _init_row(table, init: dict) -> None:
    if init["shared"]:
        detail = f"{init['migrated_loaded']} of {init['tf1_saved']} loaded"
        if init["not_used_by_migrated"]:
            detail += "; not used: " + ", ".join(init["not_used_by_migrated"][:4])
        table.add_row("initial values", "shared", "", "", detail)
    else:
        table.add_row("initial values", "own", "", "",
                      "the runs started from their own values (no TF1 initializer or restore seen, "
                      "or nothing to load them into)")


def _stream_rows(table, report: dict) -> None:
    """One row per kind of printed line (numbers masked), at most MOST_ROWS."""
    rtol, atol = report["rtol"], report["atol"]
    rows = 0
    for name, stream in report["streams"].items():
        for kind in stream["kinds"]:
            rows += 1
            if rows > MOST_ROWS:
                continue
            bad = kind["first_difference"]
            detail = f"{kind['lines']} lines, {kind['numbers']} numbers"
            if bad:
                detail = (f"line {bad['line']}: {_why(bad, rtol, atol)}; {kind['different']} of "
                          f"{kind['lines']} lines differ")
            elif kind["tf1_not_deterministic"]:
                detail += "; TF1 itself varies here"
            shown = re.sub(r"#(?: #)+", lambda m: f"#×{m.group(0).count('#')}", kind["template"])
            table.add_row(f"{name} {shown[:60]}", "ok" if not bad else "DIFFERENT",
                          _num(kind["max_abs"]), _num(kind["max_rel"]), detail)
    if rows > MOST_ROWS:
        table.add_row(f"... {rows - MOST_ROWS} more kinds of line", "", "", "", "--format json lists all")


def _variables_row(table, variables: list) -> None:
    bad = [v for v in variables if not v["ok"]]
    detail = f"{len(variables)} compared by TF1 name"
    if bad:
        first = bad[0]
        what = (f"missing in the {first['missing']} run" if first.get("missing") else
                f"shapes {first['shape']}" if first.get("shape") else
                f"TF1 {first['worst']['tf1']:.7g}, migrated {first['worst']['migrated']:.7g} at index "
                f"{first['worst']['index']}" if first.get("worst") else "values differ")
        detail = f"{len(bad)} of {len(variables)} differ; {first['name']}: {what}"
    floats = [v for v in variables if v.get("max_abs") is not None]
    table.add_row("final variables", "ok" if not bad and variables else ("DIFFERENT" if bad else "none"),
                  _num(max((v["max_abs"] for v in floats), default=None)),
                  _num(max((v["max_rel"] for v in floats), default=None)), detail)


def _notes(report: dict, console) -> None:
    """What the table does not say: interpreters, TF1's own spread, extra lines, the verdict."""
    rtol, atol = report["rtol"], report["atol"]
    tf1, new = report["tf1"], report["migrated_run"]
    if report["timing"].get("hint"):
        console.print("speed: " + report["timing"]["hint"], markup=False)
    side = f"TensorFlow {tf1['tensorflow']} (Python {tf1['python']})"
    onednn = "" if new.get("onednn") is None else (
        ", oneDNN on (TF_ENABLE_ONEDNN_OPTS)" if new["onednn"] else
        ", oneDNN off, as TF 1.15 had none; TF_ENABLE_ONEDNN_OPTS=1 turns it on")
    console.print(f"TF1 run: {side}; migrated run: TensorFlow {new['tensorflow']} "
                  f"(Python {new['python']}{onednn})")
    if not tf1["real"]:
        console.print("note: the legacy side ran on TF 2's compat.v1 graph mode, which is not TF1 "
                      "(tf.contrib, tf.estimator and tensorflow.examples are missing there); "
                      "pass --tf1-python with a TF 1.x interpreter for the real thing")
    if report["repeat"]["runs"] > 1:
        n = report["repeat"]["tf1_lines_that_differed"]
        console.print(f"TF1 ran {report['repeat']['runs']} times: " + (
            "it printed the same numbers each time" if not n else
            f"{n} printed lines differed between its own runs (TF1 is not deterministic there; "
            "those lines pass within TF1's own spread)"))
    if report["repeat"].get("nudged"):
        n = report["repeat"]["tf1_lines_moved_by_one_ulp"]
        console.print("TF1 from initial values one ulp apart: " + (
            "it printed the same numbers (rounding does not grow in this program)" if not n else
            f"{n} printed lines moved (the program carries rounding that far; those lines, and "
            "final variables that moved, pass within ten times what TF1 moved)"))
    for name, stream in report["streams"].items():
        if stream["migrated_only"]:
            first = stream["migrated_only"][0]
            console.print(f"note: the migrated run {name} {stream['migrated_only_count']} line(s) TF1 did "
                          f"not, first at line {first['line']}: {first['text'][:80]!r}")
    if report["compared"] == 0:
        console.print("NOT verified: the TF1 program printed no numbers to compare")
        return
    first = report["first_difference"]
    if first:
        console.print(f"first difference: TF1 line {first['line']} {first['text'].strip()[:100]!r} -> "
                      + (f"migrated line {first['migrated_line']}: " if first["migrated_line"] else "")
                      + _why(first, rtol, atol))
    if report.get("plot"):
        console.print(f"plot: {report['plot']}")
    console.print(f"{'EQUIVALENT' if report['ok'] else 'NOT EQUIVALENT'} within rtol={rtol:g}, "
                  f"atol={atol:g} (a value passes when |TF1 - migrated| <= atol + rtol * |TF1|)")
