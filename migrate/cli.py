"""The ``tf-migrate`` command line: it parses arguments and prints.

Planning a run (settings, rule codes) is ``migrate.codemod.config``'s, the run
``migrate.codemod.runner``'s, writing ``migrate.codemod.write``'s, the report formats
``migrate.codemod.output``'s; ``ckpt`` and ``verify`` live in ``migrate.commands``.
Heavy imports (libcst, tensorflow) happen inside the commands that need them, so
``tf-migrate --version`` and ``--help`` start fast and the codemod commands never
import tensorflow.

Imports inside functions: as said above, so that starting the command stays fast.
"""
from __future__ import annotations

import json
import os
import signal
import sys
from typing import List, Optional

import typer

from migrate import __version__
from migrate.codemod.config import UsageError
from migrate.commands import check_format, fail
from migrate.commands import ckpt as ckpt_commands
from migrate.commands.verify import verify as verify_command


def _metavar_only() -> None:
    """typer prints an argument's Python type after its metavar (``PATH... <list[str]>``);
    an argument with a metavar shows just that."""
    argument = getattr(getattr(typer, "core", None), "TyperArgument", None)
    original = getattr(argument, "display_type_rich", None)
    if original is None:
        return

    def display_type_rich(self, ctx):
        return None if self.metavar else original(self, ctx)

    argument.display_type_rich = display_type_rich


_metavar_only()
app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Move TensorFlow 1 code to TensorFlow 2 for real.")
app.add_typer(ckpt_commands.app, name="ckpt")
app.command()(verify_command)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tf-migrate {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Show the version and exit.")) -> None:
    pass


# -- planning a run --------------------------------------------------------------
def _plan(paths, select, ignore, lint_only: bool, no_cache: bool, jobs: int, timeout: float,
          report: Optional[str], fmt: str, keras: Optional[str] = None, programs: Optional[str] = None):
    """The settings, rule codes and target of a run; a usage problem is one line and exit 2."""
    from migrate.codemod.config import choose_codes, choose_target, load_config, run_problem

    check_format(fmt)
    problem = run_problem(jobs, timeout, report)
    if problem:
        fail(problem)
    try:
        config = load_config(paths)
        return config, choose_codes(select, ignore, config, lint_only=lint_only, use_cache=not no_cache), \
            choose_target(keras, config, programs)
    except UsageError as exc:
        fail(str(exc))


def _run(paths, codes, fix, jobs, no_cache, config, timeout=120.0, target=None):
    from migrate.codemod.config import config_list
    from migrate.codemod.files import discover
    from migrate.codemod.runner import run

    try:
        excluded = config_list(config, "exclude")
    except UsageError as exc:
        fail(str(exc))
    files, missing = discover(paths, excluded)
    options = {"target": target} if target is not None else {}
    reports = run(files, codes, fix=fix, jobs=jobs, use_cache=not no_cache,
                  progress=sys.stderr.isatty(), timeout=timeout, **options)
    return files, missing, reports


def _emit(fmt: str, reports, extra_errors, summary: dict, report_file: Optional[str],
          fixed_in=()) -> None:
    """Print the report. ``fixed_in``: paths written with their fixes; the text format
    then lists only what remains (the JSON and SARIF reports keep every finding)."""
    from migrate.codemod.output import (
        as_json,
        as_sarif,
        error_line,
        error_rows,
        finding_rows,
        summary_line,
        text_line,
    )
    from migrate.codemod.write import write_report
    from migrate.safeio import describe

    findings = finding_rows(reports)
    errors = error_rows(reports, extra_errors)
    if report_file:
        try:
            write_report(report_file, (as_json(findings, errors, summary) + "\n").encode())
        except OSError as exc:
            fail(f"--report {report_file}: cannot write ({describe(exc)})")
    if fmt == "json":
        typer.echo(as_json(findings, errors, summary))
    elif fmt == "sarif":
        typer.echo(as_sarif(findings, errors))
    else:
        fixed = {os.path.abspath(p) for p in fixed_in}
        for row in findings:
            if not (row["fixable"] and os.path.abspath(row["path"]) in fixed):
                typer.echo(text_line(row))
        for row in errors:
            typer.echo(error_line(row), err=True)
    typer.echo(summary_line(summary), err=True)


# options upgrade and lint share
SELECT = typer.Option(None, "--select", metavar="CODE", help="Rule code prefixes to run (repeatable).")
IGNORE = typer.Option(None, "--ignore", metavar="CODE", help="Rule code prefixes to skip (repeatable).")
FORMAT = typer.Option("text", "--format", metavar="FORMAT", help="text, json or sarif.")
REPORT = typer.Option(None, "--report", metavar="FILE", help="Also write the JSON report here.")
JOBS = typer.Option(0, "--jobs", "-j", metavar="N", help="Worker processes (default: all cores).")
NO_CACHE = typer.Option(False, "--no-cache", help="Ignore and do not fill the cache.")
KERAS = typer.Option(None, "--keras", metavar="2|3", help="The Keras of the migrated code: 2 (tf_keras, "
                     "TF 1.15's; the default) or 3 (the Keras TensorFlow ships).")
PROGRAMS = typer.Option(None, "--programs", metavar="native|shims", help="How Session programs are "
                        "written: native (tf.function steps with tf.GradientTape, where proven; the "
                        "default) or shims (shims.GraphProgram, the smallest diff).")


# -- upgrade -------------------------------------------------------------------
@app.command()
def upgrade(
    paths: List[str] = typer.Argument(..., metavar="PATH...",
        help="Files or directories (.py and .ipynb, recursive)."),
    write: bool = typer.Option(False, "--write", help="Rewrite files in place."),
    outtree: Optional[str] = typer.Option(None, "--outtree", metavar="DIR",
        help="Write the migrated tree here."),
    check: bool = typer.Option(False, "--check", help="Exit 1 if any file would change (and only "
                               "then: findings the tool only reports do not fail a check)."),
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
    fmt: str = FORMAT,
    report: Optional[str] = REPORT,
    diff: bool = typer.Option(True, "--diff/--no-diff", help="Print a unified diff (text format)."),
    jobs: int = JOBS,
    no_cache: bool = NO_CACHE,
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even if findings are left "
                                   "(errors still exit 2)."),
    timeout: float = typer.Option(120.0, "--timeout", metavar="SECONDS",
        help="Seconds one file may take; past that "
                                  "it gets an error and is left untouched."),
    keras: Optional[str] = KERAS,
    programs: Optional[str] = PROGRAMS,
) -> None:
    """Migrate TF1 code: print a diff (default), --write in place, or --outtree DIR.

    Exit codes: 0 when nothing is left to do; 1 when findings remain (after --write:
    findings the rewrite did not fix) or, with --check, when a file would change;
    2 on errors (unparsable files, files that could not be written, bad usage)."""
    config, codes, target = _plan(paths, select, ignore, False, no_cache, jobs, timeout, report, fmt, keras,
                                  programs)
    if check and (write or outtree):
        fail("--check only reports; it cannot be combined with --write or --outtree")
    if outtree:
        from migrate.codemod.write import outtree_problem

        write = True
        problem = outtree_problem(outtree, paths)
        if problem:
            fail(problem)
    files, missing, reports = _run(paths, codes, True, jobs, no_cache, config, timeout, target)
    if not files and missing and len(missing) == len(paths):
        from migrate.codemod.output import shown

        for path, message in missing:
            typer.echo(f"tf-migrate: error: {shown(path)}: {message}", err=True)
        raise typer.Exit(2)
    changed = [r for r in reports if r.changed]
    write_errors, written = [], []
    if write:
        from migrate.codemod.runner import run
        from migrate.codemod.write import write_outputs

        def redo(stale: List[str]):  # files another run (or the user) wrote meanwhile
            options = {"target": target} if target is not None else {}
            return run(stale, codes, fix=True, jobs=jobs, use_cache=not no_cache, timeout=timeout,
                       **options)

        outcome = write_outputs(paths, reports, outtree, redo)
        write_errors, reports = outcome.errors, outcome.reports
        changed = [r for r in reports if r.changed]
        failed = {os.path.abspath(path) for path, _ in write_errors}
        written = [r for r in changed if os.path.abspath(r.path) not in failed]
    elif fmt == "text" and diff and not check:
        _print_diffs(changed)
    from migrate.codemod.output import summarize

    summary = summarize(files, reports, missing + write_errors, write, written)
    _emit(fmt, reports, missing + write_errors, summary, report, fixed_in=[r.path for r in written])
    if summary["errors"]:
        raise typer.Exit(2)
    if check:  # a pre-commit check: only what the tool would still change fails it
        raise typer.Exit(1 if changed else 0)
    left = summary["findings"] - summary.get("fixed", summary["fixable"])
    raise typer.Exit(1 if left and not exit_zero else 0)


def _print_diffs(changed) -> None:
    """A unified diff per changed file; a notebook's is one per changed code cell, of its
    source lines (``a/nb.ipynb[cell 3]``, as findings name cells), not of the JSON that
    holds them."""
    from migrate.codemod.diff import unified
    from migrate.codemod.files import cell_sources, decode
    from migrate.codemod.output import shown

    for r in changed:
        with open(r.path, "rb") as handle:
            old = handle.read()
        new = r.new
        name = shown(r.path).lstrip("/")
        before = cell_sources(old) if r.path.endswith(".ipynb") else None
        after = cell_sources(new) if before is not None else None
        if before is not None and after is not None and before.keys() == after.keys():
            # (a cell's last line has no newline of its own: not worth a marker)
            parts = [(before[i] + "\n", after[i] + "\n", f"[cell {i + 1}]") for i in sorted(before)
                     if before[i] != after[i]]
        else:
            try:
                parts = [(decode(old).text, decode(new).text, "")]
            except Exception:
                continue
        for old_text, new_text, where in parts:
            lines = unified(old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                            fromfile=f"a/{name}{where}", tofile=f"b/{name}{where}")
            for line in lines:
                sys.stdout.write(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")


# -- lint ----------------------------------------------------------------------
@app.command()
def lint(
    paths: List[str] = typer.Argument(..., metavar="PATH...", help="Files or directories."),
    select: Optional[List[str]] = SELECT,
    ignore: Optional[List[str]] = IGNORE,
    fmt: str = FORMAT,
    report: Optional[str] = REPORT,
    jobs: int = JOBS,
    no_cache: bool = NO_CACHE,
    exit_zero: bool = typer.Option(False, "--exit-zero", help="Exit 0 even with findings."),
    timeout: float = typer.Option(120.0, "--timeout", metavar="SECONDS", help="Seconds one file may take."),
    keras: Optional[str] = KERAS,
) -> None:
    """Report tf.function and eager-mode pitfalls; never writes."""
    config, codes, target = _plan(paths, select, ignore, not select, no_cache, jobs, timeout, report, fmt, keras)
    files, missing, reports = _run(paths, codes, False, jobs, no_cache, config, timeout, target)
    from migrate.codemod.output import summarize

    summary = summarize(files, reports, missing, write=None)
    _emit(fmt, reports, missing, summary, report)
    if summary["errors"]:
        raise typer.Exit(2)
    raise typer.Exit(1 if summary["findings"] and not exit_zero else 0)


# -- rules ---------------------------------------------------------------------
@app.command()
def rules(code: Optional[str] = typer.Argument(None, metavar="CODE", help="Explain one rule."),
          fmt: str = typer.Option("text", "--format", metavar="FORMAT",
              help="text, json or markdown.")) -> None:
    """List every rule, or explain one with its before/after example."""
    check_format(fmt, ("text", "json", "markdown"))
    from migrate.codemod.rule import all_rules

    registry = all_rules()
    if code:
        rule = registry.get(code.upper())
        if rule is None:
            fail(f"unknown rule {code!r} (see `tf-migrate rules`)")
        typer.echo(f"{rule.code}{' [*]' if rule.fixable else ''}: {rule.summary}\n")
        typer.echo(rule.explanation.strip() + "\n")
        if rule.before:
            typer.echo("Before:\n" + _indent(rule.before) + "\nAfter:\n" + _indent(rule.after))
        raise typer.Exit(0)
    if fmt == "json":
        typer.echo(json.dumps([{"code": r.code, "summary": r.summary, "fixable": r.fixable,
                                "lint": r.lint} for r in registry.values()], indent=2))
    elif fmt == "markdown":
        typer.echo("| code | fixes | lint | summary |\n|---|---|---|---|")
        for r in registry.values():
            typer.echo(f"| {r.code} | {'yes' if r.fixable else ''} | {'yes' if r.lint else ''} "
                       f"| {r.summary} |")
    else:
        for r in registry.values():
            typer.echo(f"{r.code} {'[*]' if r.fixable else '   '} {r.summary}")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.strip("\n").splitlines())


def _terminated(signum, frame) -> None:
    """SIGTERM unwinds like an interrupt: temp files are removed on the way out."""
    raise KeyboardInterrupt


def main() -> None:
    signal.signal(signal.SIGTERM, _terminated)
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("tf-migrate: interrupted", err=True)
        sys.exit(130)
