"""``tf-migrate verify``: options and printing; the work is ``migrate.verify``'s.

Imports inside functions: the verifier and rich load when the command runs, so ``--help`` starts fast.
"""
from __future__ import annotations

import ast
import json
import sys
import time
from typing import List, Optional

import typer

from migrate.commands import check_format, fail, needs_tf
from migrate.commands import console as stdout_console


def verify(
    legacy: str = typer.Argument(..., metavar="LEGACY",
        help="The TF1 code: path.py:function or module:function."),
    migrated: str = typer.Argument(..., metavar="MIGRATED", help="The migrated code: a function (run through "
                                   "shims.legacy_layer) or a zero-argument Keras factory."),
    inputs: Optional[List[str]] = typer.Option(None, "--input", metavar="NAME:SHAPE:DTYPE",
        help="NAME:SHAPE:DTYPE, e.g. ids:2x7:int32 "
                                               "(ints may add :LOW:HIGH); once per input, in order."),
    grads: bool = typer.Option(False, "--grads", help="Also compare gradients of sum(outputs)."),
    rtol: float = typer.Option(1e-5, "--rtol", metavar="RTOL", help="Relative tolerance."),
    atol: float = typer.Option(1e-5, "--atol", metavar="ATOL", help="Absolute tolerance."),
    seed: int = typer.Option(0, "--seed", metavar="N", help="Seed of the random inputs."),
    kwarg: Optional[List[str]] = typer.Option(None, "--arg", metavar="NAME=VALUE",
        help="NAME=PYTHON_LITERAL passed to both."),
    fmt: str = typer.Option("text", "--format", metavar="FORMAT", help="text or json."),
    keep: Optional[str] = typer.Option(None, "--workdir", metavar="DIR",
        help="Keep checkpoints and arrays here."),
    prelude: Optional[str] = typer.Option(None, "--prelude", metavar="FILE",
        help="Python file run before LEGACY in "
                                          "the TF1 run only (stand-ins for tf.contrib)."),
    program: bool = typer.Option(False, "--program", help="LEGACY and MIGRATED are whole programs "
                                 "(file.py): compare their training trajectories."),
    program_args: Optional[List[str]] = typer.Option(None, "--program-arg", metavar="ARG",
        help="An argument for both programs (sys.argv[1:], in order); {out} in it is a "
             "folder of each run's own."),
    tf1_python: Optional[str] = typer.Option(None, "--tf1-python", metavar="PATH",
        help="Run LEGACY in this TF 1.x interpreter (default: TF 2's compat.v1 graph mode, "
             "which is not TF1)."),
    cwd: Optional[str] = typer.Option(None, "--cwd", metavar="DIR",
        help="--program: LEGACY's working directory (default: here if LEGACY is below it, "
             "else its folder)."),
    migrated_cwd: Optional[str] = typer.Option(None, "--migrated-cwd", metavar="DIR",
        help="--program: MIGRATED's working directory (default: the same place in the "
             "migrated tree)."),
    repeat: int = typer.Option(1, "--repeat", metavar="N",
        help="--program: run LEGACY N times and say where TF1 itself is not deterministic."),
    nudge: bool = typer.Option(False, "--nudge", help="--program: run LEGACY once more from initial values "
                               "one ulp apart; where TF1 itself moves, compare within ten times that."),
    tf1_cache: Optional[str] = typer.Option(None, "--tf1-cache", metavar="DIR",
        help="--program: keep LEGACY's real-TF1 results here, keyed by its source, "
             "arguments, folder and interpreter (data files are not in the key)."),
    plot: Optional[str] = typer.Option(None, "--plot", metavar="FILE",
        help="--program: draw both trajectories (.svg, .html, or .png with matplotlib)."),
    timeout: float = typer.Option(1800, "--timeout", metavar="SECONDS",
        help="Stop a run (each side) that takes longer."),
    memory: Optional[str] = typer.Option(None, "--memory", metavar="SIZE",
        help="Stop a run (each side) whose memory grows past SIZE, such as 8G (default: "
             "three quarters of this machine's memory)."),
) -> None:
    """Run LEGACY in TF1 graph mode and MIGRATED in TF2 eager mode on the same inputs and checkpoint.

    With --program: run two whole programs as `python FILE ARGS...` from the same initial
    values (LEGACY on real TF1 with --tf1-python) and compare every number they print,
    TensorFlow's step log lines and their final variables."""
    check_format(fmt, ("text", "json"))
    memory_limit = _limits(timeout, memory)
    if program and (inputs or grads or kwarg):
        fail("--program compares whole programs: --input, --grads and --arg do not apply")
    if program and prelude:
        fail("--prelude does not apply to --program: run the TF1 program on real TF1 with --tf1-python")
    if not program and not inputs:
        fail("verify needs --input for each input of the function (or --program for whole programs)")
    needs_tf()
    from migrate.verify import parse_input
    from migrate.verify import verify as verify_function
    from migrate.verify.program import verify_program

    if program:
        report = _running(lambda: verify_program(
            legacy, migrated, list(program_args or ()), rtol, atol, keep, timeout, tf1_python, cwd,
            migrated_cwd, repeat, tf1_cache, plot, memory_limit, nudge))
    else:
        report = _running(lambda: verify_function(
            legacy, migrated, [parse_input(text) for text in inputs], grads, rtol, atol, seed,
            _literals(kwarg), keep, prelude, tf1_python, timeout, memory_limit))
    if fmt == "json":
        typer.echo(json.dumps(report, indent=2))
    else:
        (_print_program_report if program else _print_verify)(report)
    raise typer.Exit(0 if report["ok"] else 1)


def _limits(timeout: float, memory: Optional[str]) -> int:
    """The memory limit of each run (bytes); a bad --timeout or --memory is a usage error."""
    from migrate.verify.limits import LimitError, default_memory, parse_memory

    if not timeout > 0:
        fail(f"--timeout must be a positive number of seconds, not {timeout:g}")
    try:
        return parse_memory(memory) if memory else default_memory()
    except LimitError as exc:
        fail(str(exc))


def _literals(items: Optional[List[str]]) -> dict:
    """``--arg NAME=PYTHON_LITERAL`` as keyword arguments."""

    from migrate.verify import VerifyError

    kwargs = {}
    for item in items or ():
        name, _, value = item.partition("=")
        try:
            kwargs[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            raise VerifyError(f"--arg {item!r}: the value must be a Python literal") from None
    return kwargs


def _running(run):
    """``run()`` under the spinner; a VerifyError is one line and exit 2."""
    from migrate.verify import VerifyError

    status = _verify_status()
    try:
        return run()
    except VerifyError as exc:
        fail(str(exc))
    finally:
        if status:
            status.stop()


def _verify_status():
    """On a terminal, a spinner on stderr naming the run in progress (each run imports
    TensorFlow and takes seconds); None into a pipe."""
    if not sys.stderr.isatty():
        return None

    from rich.console import Console

    import migrate.verify.models

    status = Console(stderr=True).status("verify: starting")
    started = time.monotonic()

    def progress(what: str) -> None:
        status.update(f"verify: the {what} run (started at {time.monotonic() - started:.0f} s)")

    migrate.verify.models.PROGRESS = progress
    status.start()
    return status


def _print_program_report(report: dict) -> None:
    from migrate.verify.program.text import render

    render(report, stdout_console())


def _print_verify(report: dict) -> None:
    from rich.table import Table

    console = stdout_console()
    mark = lambda ok: "ok" if ok else "DIFFERENT"  # noqa: E731
    rtol = report["rtol"]

    def why(d: dict) -> str:
        """A pass with a relative difference above rtol passed on atol: say so."""
        if d.get("ok") and d.get("max_rel", 0) > rtol and d.get("max_abs", 0) <= report["atol"]:
            return f"ok by atol: max abs {d['max_abs']:.3g} <= {report['atol']:g} (values near 0)"
        return ""

    v = report["variables"]
    table = Table(title=f"tf-migrate verify: {report['legacy']} -> {report['migrated']}")
    for column in ("check", "result", "max abs", "max rel", "detail"):
        table.add_column(column)
    detail = f"{v['legacy']} TF1, {v['migrated']} TF2, {v['matched']} loaded"
    for label in ("missing", "unexpected", "mismatched"):
        if v[label]:
            detail += f"; {label}: {', '.join(map(str, v[label][:4]))}"
    table.add_row("variables", mark(v["ok"]), "", "", detail)
    for o in report["outputs"]:
        for mode in ("eager", "traced"):
            d = o[mode]
            detail = "; ".join(t for t in ("tf.function" if mode == "traced" else "", why(d)) if t)
            table.add_row(f"{o['name']} ({mode})", mark(d["ok"]), f"{d['max_abs']:.3g}",
                          f"{d['max_rel']:.3g}", detail)
    r = report["regularization"]
    table.add_row("regularization loss", mark(r["ok"]), f"{abs(r['legacy'] - r['migrated']):.3g}", "",
                  f"{r['legacy']:.6g} vs {r['migrated']:.6g}")
    for g in report["gradients"]:
        table.add_row(f"grad {g['name']}", mark(g["ok"]), f"{g.get('max_abs', float('nan')):.3g}",
                      f"{g.get('max_rel', float('nan')):.3g}", g.get("problem", "") or why(g))
    console.print(table)
    if not report.get("tf1_real"):
        console.print("note: LEGACY ran on TF 2's compat.v1 graph mode, which is not TF1; pass "
                      "--tf1-python with a TF 1.x interpreter for the real thing")
    console.print(f"{'EQUIVALENT' if report['ok'] else 'NOT EQUIVALENT'} within rtol={report['rtol']}, "
                  f"atol={report['atol']} (a value passes when |a - b| <= atol + rtol * |a|)")
