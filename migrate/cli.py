"""The ``tf-migrate`` command line.

Heavy imports (libcst, tensorflow) happen inside the commands that need them,
so ``tf-migrate --version`` and ``--help`` start fast and the codemod commands
never import tensorflow.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from typing import List, Optional, Tuple

import typer

from migrate import __version__
from migrate.codemod.output import is_error

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
ckpt_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                       help="List, compare and convert checkpoints (needs tf-migrate[tf]).")
app.add_typer(ckpt_app, name="ckpt")

NAMES_FILE = "tf-migrate-names.json"
FORMATS = ("text", "json", "sarif")


def fail(message: str, code: int = 2) -> "typer.Exit":
    """Print one clear line on stderr and exit."""
    typer.echo(f"tf-migrate: error: {message}", err=True)
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"tf-migrate {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Show the version and exit.")) -> None:
    pass


# -- shared options ------------------------------------------------------------
def _split(values: Optional[List[str]]) -> List[str]:
    out: List[str] = []
    for v in values or ():
        out += [p.strip().upper() for p in v.split(",") if p.strip()]
    return out


CONFIG_KEYS = ("select", "ignore", "exclude")


def _load_config(paths: List[str]) -> dict:
    """``[tool.tf-migrate]`` of the nearest pyproject.toml above the first path. An
    unknown key is an error (a misspelt ``exclude`` would migrate what was excluded)."""
    import difflib
    import tomllib

    from migrate.safeio import describe, read_regular

    start = os.path.abspath(paths[0] if paths else ".")
    folder = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.lexists(candidate):
            try:
                data = tomllib.loads(read_regular(candidate).decode("utf-8"))
            except OSError as exc:
                fail(f"{candidate}: cannot read ({describe(exc)})")
            except UnicodeDecodeError:
                fail(f"{candidate}: not a TOML file (not UTF-8 text)")
            except tomllib.TOMLDecodeError as exc:
                fail(f"{candidate}: not valid TOML ({exc})")
            tool = data.get("tool", {})
            config = tool.get("tf-migrate", {}) if isinstance(tool, dict) else {}
            if not isinstance(config, dict):
                fail(f"{candidate}: [tool.tf-migrate] must be a table")
            for key in config:
                if key not in CONFIG_KEYS:
                    near = difflib.get_close_matches(key, CONFIG_KEYS, 1)
                    fail(f"{candidate}: [tool.tf-migrate] has no setting {key!r}"
                         + (f" (did you mean {near[0]!r}?)" if near else "")
                         + f"; the settings are {', '.join(CONFIG_KEYS)}")
            return config
        parent = os.path.dirname(folder)
        if parent == folder:
            return {}
        folder = parent


def _codes(select, ignore, config, lint_only, use_cache: bool = True) -> List[str]:
    from migrate.codemod.registry import rule_index, select_codes

    select = _split(select) or _split(_config_list(config, "select"))
    ignore = _split(ignore) + _split(_config_list(config, "ignore"))
    known = rule_index(use_cache)
    for prefix in select + ignore:
        if not any(code.startswith(prefix) for code in known):
            fail(f"no rule code starts with {prefix!r} (see `tf-migrate rules`)")
    return select_codes(select, ignore, lint_only=lint_only, use_cache=use_cache)


def _config_list(config: dict, key: str) -> List[str]:
    """A ``[tool.tf-migrate]`` list of strings; anything else is a usage error."""
    value = config.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        example = '["build/*", "*_pb2.py"]' if key == "exclude" else '["TFM1"]'
        fail(f"[tool.tf-migrate] {key} must be a list of strings, like {key} = {example}; "
             f"got {value!r}")
    return value


def _check_run_options(jobs: int, timeout: float, report: Optional[str]) -> None:
    """Usage errors are refused before any work."""
    if jobs < 0 or jobs > 256:
        fail(f"--jobs must be between 0 (all cores) and 256, not {jobs}")
    if not timeout > 0:
        fail(f"--timeout must be a positive number of seconds, not {timeout}")
    if report is not None:
        folder = os.path.dirname(os.path.abspath(report))
        if os.path.isdir(report):
            fail(f"--report {report} is a folder; give a file path")
        if not os.path.isdir(folder):
            fail(f"--report {report}: the folder {folder} does not exist")


def _check_format(fmt: str, allowed=FORMATS) -> None:
    if fmt not in allowed:
        fail(f"--format must be one of {', '.join(allowed)}, not {fmt!r}")


def _emit(fmt: str, reports, extra_errors, summary: dict, report_file: Optional[str],
          show_findings: bool = True, fixed_in=()) -> None:
    """Print the report. ``fixed_in``: paths written with their fixes; the text format
    then lists only what remains (the JSON and SARIF reports keep every finding)."""
    from migrate.codemod.output import as_json, as_sarif, error_line, error_rows, finding_rows, text_line

    findings = finding_rows(reports)
    errors = error_rows(reports, extra_errors)
    if report_file:
        _write_report(report_file, (as_json(findings, errors, summary) + "\n").encode())
    if fmt == "json":
        typer.echo(as_json(findings, errors, summary))
    elif fmt == "sarif":
        typer.echo(as_sarif(findings, errors))
    else:
        if show_findings:
            fixed = {os.path.abspath(p) for p in fixed_in}
            for row in findings:
                if not (row["fixable"] and os.path.abspath(row["path"]) in fixed):
                    typer.echo(text_line(row))
        for row in errors:
            typer.echo(error_line(row), err=True)
    typer.echo(summary_line(summary), err=True)


def _write_report(path: str, data: bytes) -> None:
    """A file is replaced whole (never left partial); a device or FIFO the user named
    (/dev/stdout) is written directly. A failure is one line and exit 2."""
    import stat as stat_module

    from migrate.codemod.files import atomic_write
    from migrate.safeio import describe

    try:
        st = os.stat(path) if os.path.exists(path) else None
        if st is not None and not stat_module.S_ISREG(st.st_mode):
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
        else:
            atomic_write(path, data)
    except OSError as exc:
        fail(f"--report {path}: cannot write ({describe(exc)})")


def _error_findings(reports) -> int:
    """Findings that are errors (code that fails, or means two things, on TF2): they are
    never fixable, so they are what is left after --write too."""
    return sum(1 for r in reports for f in r.findings if is_error(f["message"]))


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary_line(summary: dict) -> str:
    """``3 files scanned, 2 changed, 5 fixed, 1 remaining (1 fixable), 0 errors`` after
    --write; before it, ``2 would change, 6 findings (5 fixable)``."""
    parts = [f"{_count(summary['files'], 'file')} scanned"]
    if summary.get("written"):
        parts.append(f"{summary['changed']} changed")
        parts.append(f"{summary['fixed']} fixed")
        remaining = summary["findings"] - summary["fixed"]
        left_fixable = summary["fixable"] - summary["fixed"]
        notes = ([f"{left_fixable} fixable"] if left_fixable else []) + (
            [_count(summary["error_findings"], "error")] if summary.get("error_findings") else [])
        parts.append(f"{remaining} remaining" + (f" ({', '.join(notes)})" if notes else ""))
    else:
        if "changed" in summary:
            parts.append(f"{summary['changed']} would change")
        errors = summary.get("error_findings")
        parts.append(f"{_count(summary['findings'], 'finding')} ({summary['fixable']} fixable"
                     + (f", {_count(errors, 'error')}" if errors else "") + ")")
    parts.append(_count(summary["errors"], "run error"))
    return ", ".join(parts)


def _run(paths, codes, fix, jobs, no_cache, config, timeout=120.0):
    from migrate.codemod.files import discover
    from migrate.codemod.runner import run

    files, missing = discover(paths, _config_list(config, "exclude"))
    progress = sys.stderr.isatty()
    reports = run(files, codes, fix=fix, jobs=jobs, use_cache=not no_cache, progress=progress,
                  timeout=timeout)
    return files, missing, reports


# options upgrade and lint share
SELECT = typer.Option(None, "--select", metavar="CODE", help="Rule code prefixes to run (repeatable).")
IGNORE = typer.Option(None, "--ignore", metavar="CODE", help="Rule code prefixes to skip (repeatable).")
FORMAT = typer.Option("text", "--format", metavar="FORMAT", help="text, json or sarif.")
REPORT = typer.Option(None, "--report", metavar="FILE", help="Also write the JSON report here.")
JOBS = typer.Option(0, "--jobs", "-j", metavar="N", help="Worker processes (default: all cores).")
NO_CACHE = typer.Option(False, "--no-cache", help="Ignore and do not fill the cache.")


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
) -> None:
    """Migrate TF1 code: print a diff (default), --write in place, or --outtree DIR.

    Exit codes: 0 when nothing is left to do; 1 when findings remain (after --write:
    findings the rewrite did not fix) or, with --check, when a file would change;
    2 on errors (unparsable files, files that could not be written, bad usage)."""
    _check_format(fmt)
    _check_run_options(jobs, timeout, report)
    if check and (write or outtree):
        fail("--check only reports; it cannot be combined with --write or --outtree")
    config = _load_config(paths)
    codes = _codes(select, ignore, config, lint_only=False, use_cache=not no_cache)
    if outtree:
        write = True
        if os.path.lexists(outtree) and not os.path.isdir(outtree):
            fail(f"--outtree {outtree} exists and is not a folder")
        if os.path.islink(outtree):
            fail(f"--outtree {outtree} is a symbolic link; give a real folder")
        out_real = os.path.realpath(outtree)
        for p in paths:
            real = os.path.realpath(p)
            if os.path.isdir(p) and (out_real == real or out_real.startswith(real + os.sep)):
                fail(f"--outtree {outtree} is inside the input tree {p}; choose a folder outside it")
            if os.path.isfile(p) and os.path.realpath(os.path.dirname(real)) == out_real:
                fail(f"--outtree {outtree} is the folder of the input {p}: that would replace the "
                     "input; choose another folder")
    files, missing, reports = _run(paths, codes, True, jobs, no_cache, config, timeout)
    if not files and missing and len(missing) == len(paths):
        from migrate.codemod.output import shown

        for path, message in missing:
            typer.echo(f"tf-migrate: error: {shown(path)}: {message}", err=True)
        raise typer.Exit(2)
    changed = [r for r in reports if r.new is not None]
    write_errors = []
    if write:
        write_errors = _write_outputs(paths, reports, outtree)
    elif fmt == "text" and diff and not check:
        _print_diffs(changed)
    findings = sum(len(r.findings) for r in reports)
    fixable = sum(f["fixable"] for r in reports for f in r.findings)
    errors = missing + write_errors
    summary = {"files": len(files), "changed": len(changed), "written": bool(write),
               "findings": findings, "fixable": fixable, "error_findings": _error_findings(reports),
               "errors": len(errors) + sum(1 for r in reports if r.error)}
    if write:  # what was really written: a read-only or changed file was not
        failed = {os.path.abspath(path) for path, _ in write_errors}
        written = [r for r in changed if os.path.abspath(r.path) not in failed]
        summary["changed"] = len(written)
        summary["fixed"] = sum(f["fixable"] for r in written for f in r.findings)
    _emit(fmt, reports, errors, summary, report, fixed_in=[r.path for r in written] if write else ())
    if summary["errors"]:
        raise typer.Exit(2)
    if check:  # a pre-commit check: only what the tool would still change fails it
        raise typer.Exit(1 if changed else 0)
    left = findings - summary.get("fixed", fixable)
    if left and not exit_zero:
        raise typer.Exit(1)
    raise typer.Exit(0)


def _print_diffs(changed) -> None:
    from migrate.codemod.diff import unified
    from migrate.codemod.files import decode
    from migrate.codemod.output import shown

    for r in changed:
        with open(r.path, "rb") as handle:
            old = handle.read()
        try:
            old_text, new_text = decode(old).text, decode(r.new).text
        except Exception:
            continue
        lines = unified(old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
                        fromfile=f"a/{shown(r.path).lstrip('/')}",
                        tofile=f"b/{shown(r.path).lstrip('/')}")
        for line in lines:
            sys.stdout.write(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")


def _write_outputs(paths, reports, outtree) -> list:
    """Write changed files (in place or into outtree) and the name maps; returns errors.

    Nothing is written outside the target: in place, a file is replaced only if it still
    holds what was read (no lost updates) and never through a symbolic link; into
    ``outtree``, no path may go through a link, land on an input, or be claimed by two
    inputs. Special files and the tool's own temp files are never copied."""
    from migrate.codemod.files import Changed, atomic_write, replace_file
    from migrate.safeio import sweep_temps

    errors = []
    swept = set()

    def sweep(folder: str) -> None:  # what killed runs left where this run writes
        if folder not in swept:
            swept.add(folder)
            errors.extend(sweep_temps(folder))

    if outtree is None:
        for r in reports:
            sweep(os.path.dirname(os.path.abspath(r.path)))
    made = set()
    out_real = os.path.realpath(outtree) if outtree else None
    inputs_real = {os.path.realpath(r.path) for r in reports}

    def folder_for(path: str) -> None:
        folder = os.path.dirname(os.path.abspath(path))
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
            sweep(folder)

    def confined(dst: str) -> Optional[str]:
        """Why ``dst`` (inside outtree) may not be written, or None."""
        rel = os.path.relpath(os.path.abspath(dst), os.path.abspath(outtree))
        current = os.path.abspath(outtree)
        for part in rel.split(os.sep):
            current = os.path.join(current, part)
            if os.path.islink(current):
                return f"{current} is a symbolic link in the output tree; not followed"
        if os.path.realpath(dst) in inputs_real:
            return f"{dst} is an input file; not overwritten"
        real = os.path.realpath(dst)
        if not (real == out_real or real.startswith(out_real + os.sep)):
            return f"{dst} is outside the output tree"
        return None

    by_path = {r.path: r for r in reports}
    names_by_dir = {}

    def target_of(path: str, root: Optional[str]) -> str:
        if outtree is None:
            return path
        rel = os.path.relpath(path, root) if root else os.path.basename(path)
        return os.path.join(outtree, rel)

    plan = []  # (report, destination)
    for root in paths:
        if not os.path.exists(root):
            continue
        base = root if os.path.isdir(root) else None
        for r in reports:
            if base is None and r.path != root:
                continue
            if base is not None and not _under(r.path, base):
                continue
            plan.append((r, target_of(r.path, base)))
    claimed = {}
    for r, dst in plan:
        claimed.setdefault(os.path.abspath(dst), []).append(r.path)
    clashes = {dst for dst, owners in claimed.items() if len(set(owners)) > 1}
    for dst in sorted(clashes):
        for owner in sorted(set(claimed[dst])):
            errors.append((owner, f"{dst} is the output of {len(set(claimed[dst]))} inputs; "
                                  "none written (migrate them into separate folders)"))

    if outtree:  # mirror the input trees: non-Python files too
        for root in paths:
            if not os.path.isdir(root):
                continue
            for folder, dirs, names in os.walk(root):
                dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")
                           and not os.path.islink(os.path.join(folder, d))]
                for name in names:
                    src = os.path.join(folder, name)
                    if src in by_path or os.path.islink(src) or (
                            name.startswith(".tf-migrate-") and name.endswith(".tmp")):
                        continue
                    dst = target_of(src, root)
                    if not os.path.isfile(src):
                        errors.append((src, "not a regular file; not copied"))
                        continue
                    problem = confined(dst)
                    if problem:
                        errors.append((src, problem))
                        continue
                    try:
                        folder_for(dst)
                        shutil.copy2(src, dst)
                    except OSError as exc:
                        errors.append((src, f"cannot copy to {dst}: {exc.strerror or exc}"))

    for r, dst in plan:
        if os.path.abspath(dst) in clashes:
            continue
        try:
            if outtree is not None:
                problem = confined(dst)
                if problem:
                    errors.append((r.path, problem))
                    continue
            if r.new is not None:
                if outtree is None:
                    if os.path.islink(r.path):
                        errors.append((r.path, "is a symbolic link; not rewritten (migrate the "
                                               "file it points to)"))
                        continue
                    if _read_only(r.path):
                        errors.append((r.path, "file is read-only; not changed"))
                        continue
                    if r.raw is not None and _current(r.path) != r.raw:
                        errors.append((r.path, "changed since it was read; not written "
                                               "(run tf-migrate again)"))
                        continue
                if outtree is None:
                    try:
                        replace_file(r.path, r.new, r.raw)
                    except Changed:
                        errors.append((r.path, "changed since it was read; not written "
                                               "(run tf-migrate again)"))
                        continue
                else:
                    folder_for(dst)
                    atomic_write(dst, r.new, os.stat(r.path).st_mode & 0o7777)
            elif outtree is not None:
                folder_for(dst)
                shutil.copy2(r.path, dst)
        except OSError as exc:
            errors.append((r.path, f"cannot write {dst}: {exc.strerror or exc}"))
            continue
        if r.names and r.new is not None:
            names_by_dir.setdefault(os.path.dirname(os.path.abspath(dst)), {})[
                os.path.basename(dst)] = r.names
    for folder, files in names_by_dir.items():
        problem = _write_names(folder, files)
        if problem:
            errors.append(problem)
    return errors


def _current(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _read_only(path: str) -> bool:
    """Not writable for us, or marked read-only by its owner (root ignores permissions)."""
    return not os.access(path, os.W_OK) or not os.stat(path).st_mode & 0o200


def _under(path: str, root: str) -> bool:
    rel = os.path.relpath(path, root)
    return rel != os.pardir and not rel.startswith(os.pardir + os.sep)


def _write_names(folder: str, files: dict) -> Optional[Tuple[str, str]]:
    """Merge this run's name maps into ``folder/tf-migrate-names.json``; an error row
    when the existing map cannot be read or the new one cannot be written."""
    from migrate.checkpoints.names import FORMAT, merge
    from migrate.codemod.files import atomic_write
    from migrate.safeio import describe, read_regular

    path = os.path.join(folder, NAMES_FILE)
    existing = None
    if os.path.lexists(path):
        try:
            existing = json.loads(read_regular(path).decode("utf-8"))
        except OSError as exc:
            return path, f"cannot read the name map ({describe(exc)}); left as it is"
        except ValueError:
            return path, ("not valid JSON, so not a name map written by tf-migrate; left as "
                          "it is (move it away to get a new one)")
    foreign = existing is not None and not (
        isinstance(existing, dict) and existing.get("format") == FORMAT
        and isinstance(existing.get("files", {}), dict))
    if foreign:
        return path, ("not a name map written by tf-migrate; left as it is "
                      "(move it away to get a new one)")
    data = merge(existing, files)
    try:
        atomic_write(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode())
    except OSError as exc:
        return path, f"cannot write the name map ({describe(exc)})"
    return None


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
) -> None:
    """Report tf.function and eager-mode pitfalls; never writes."""
    _check_format(fmt)
    _check_run_options(jobs, timeout, report)
    config = _load_config(paths)
    codes = _codes(select, ignore, config, lint_only=not select, use_cache=not no_cache)
    files, missing, reports = _run(paths, codes, False, jobs, no_cache, config, timeout)
    findings = sum(len(r.findings) for r in reports)
    summary = {"files": len(files), "findings": findings, "error_findings": _error_findings(reports),
               "fixable": sum(f["fixable"] for r in reports for f in r.findings),
               "errors": len(missing) + sum(1 for r in reports if r.error)}
    _emit(fmt, reports, missing, summary, report)
    if summary["errors"]:
        raise typer.Exit(2)
    raise typer.Exit(1 if findings and not exit_zero else 0)


# -- rules ---------------------------------------------------------------------
@app.command()
def rules(code: Optional[str] = typer.Argument(None, metavar="CODE", help="Explain one rule."),
          fmt: str = typer.Option("text", "--format", metavar="FORMAT",
              help="text, json or markdown.")) -> None:
    """List every rule, or explain one with its before/after example."""
    _check_format(fmt, ("text", "json", "markdown"))
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


# -- ckpt ----------------------------------------------------------------------
def _ckpt_call(fn):
    """Run a ckpt action; CkptError and a broken name map become one line and exit 2."""
    from migrate.checkpoints.ckpt import CkptError

    try:
        return fn()
    except CkptError as exc:
        fail(str(exc))
    except (OSError, ValueError, KeyError) as exc:
        fail(f"{type(exc).__name__}: {exc}")


def _needs_numpy() -> None:
    try:
        import numpy  # noqa: F401  (the ckpt commands use it anyway)
    except ImportError:
        fail("the ckpt commands need numpy: pip install 'tf-migrate[tf]' (or numpy)")


def _name_map(path: Optional[str]):
    from migrate.checkpoints.names import NameMap

    from migrate.safeio import describe

    if path and not os.path.lexists(path):
        fail(f"--map {path}: no such file")
    try:
        return NameMap.load(path)
    except OSError as exc:
        fail(f"--map {path}: cannot read ({describe(exc)})")
    except ValueError as exc:
        fail(f"--map {path}: not a name map ({exc})")


@ckpt_app.command("ls")
def ckpt_ls(path: str = typer.Argument(..., metavar="CKPT",
    help="Checkpoint prefix, directory or .weights.h5."),
            fmt: str = typer.Option("text", "--format", metavar="FORMAT", help="text or json."),
            everything: bool = typer.Option(False, "--all", help="Include bookkeeping and slots."),
            check: bool = typer.Option(False, "--verify", help="Also read every tensor and check its "
                                       "CRC32C (without it: the data files' presence and sizes).")) -> None:
    """List variables: names, shapes, dtypes, sizes."""
    _check_format(fmt, ("text", "json"))
    _needs_numpy()
    from migrate.checkpoints.bundle import ITEMSIZE
    from migrate.checkpoints.ckpt import open_side, verify_side

    side = _ckpt_call(lambda: open_side(path, slots=everything, everything=everything))
    if check:
        _ckpt_call(lambda: verify_side(side))
    rows = []
    for key, (shape, dtype) in side.variables.items():
        if side.bundle is not None:
            size = side.bundle.nbytes(key)  # as stored (strings included)
        else:
            count = 1
            for dim in shape:
                count *= dim
            size = count * ITEMSIZE.get(dtype, 0)
        rows.append({"name": key, "shape": list(shape), "dtype": dtype, "bytes": size})
    if fmt == "json":
        typer.echo(json.dumps({"path": path, "kind": side.kind, "variables": rows}, indent=2))
        return
    _print_rows(f"{path} ({side.kind}, {len(rows)} variables)", ("name", "shape", "dtype", "bytes"),
                [(r["name"], str(tuple(r["shape"])), r["dtype"], f"{r['bytes']:,}") for r in rows],
                names=1, right=("bytes",))


def _console():
    """stdout's console: the terminal's width (or $COLUMNS); 200 columns into a pipe."""
    from rich.console import Console

    wide = not sys.stdout.isatty() and "COLUMNS" not in os.environ
    return Console(width=200 if wide else None)


def _print_rows(title: str, columns, rows, names: int, right=(), footer: Optional[str] = None) -> None:
    """A table when it fits the console; else one entry per block, names whole on their
    own lines and the other columns indented under them, so nothing is cut off at 80
    columns. ``names``: how many leading columns hold names."""
    from rich.table import Table

    console = _console()
    widths = [max([len(str(c))] + [len(str(r[i])) for r in rows]) for i, c in enumerate(columns)]
    if sum(widths) + 3 * len(columns) + 1 <= console.width:
        table = Table(title=title)
        for column in columns:
            table.add_column(column, justify="right" if column in right else "left", no_wrap=True)
        for row in rows:
            table.add_row(*map(str, row))
        console.print(table)
    else:
        console.print(title, soft_wrap=True, highlight=False)
        for row in rows:
            details = "  ".join(f"{c} {v}" for c, v in zip(columns[names:], row[names:]) if str(v))
            for i, name in enumerate(row[:names]):
                if str(name):  # the first name alone, the second as "-> name"
                    console.print(("  -> " if i else "") + str(name), soft_wrap=True, highlight=False)
            console.print(f"     {details}", soft_wrap=True, highlight=False)
    if footer:
        console.print(footer, soft_wrap=True, highlight=False)


@ckpt_app.command("compare")
def ckpt_compare(
    old: str = typer.Argument(..., metavar="OLD",
        help="The reference checkpoint (TF1 names, TF2 object paths or .h5)."),
    new: str = typer.Argument(..., metavar="NEW", help="The checkpoint to check against it."),
    name_map: Optional[str] = typer.Option(None, "--map", metavar="FILE",
        help="tf-migrate-names.json or regex rules."),
    rtol: float = typer.Option(0.0, "--rtol", metavar="RTOL", help="Relative tolerance."),
    atol: float = typer.Option(0.0, "--atol", metavar="ATOL", help="Absolute tolerance."),
    slots: bool = typer.Option(False, "--slots", help="Match optimizer slot variables too."),
    everything: bool = typer.Option(False, "--all", help="Include bookkeeping (save_counter, global_step)."),
    fmt: str = typer.Option("text", "--format", metavar="FORMAT", help="text or json."),
) -> None:
    """Prove no weight was lost or changed: exit 0 when every variable matches."""
    _check_format(fmt, ("text", "json"))
    _needs_numpy()
    from migrate.checkpoints.ckpt import compare, open_side

    mapping = _name_map(name_map)
    a = _ckpt_call(lambda: open_side(old, slots, everything))
    b = _ckpt_call(lambda: open_side(new, slots, everything))
    bar = _ckpt_progress() if sys.stderr.isatty() else None
    result = _ckpt_call(lambda: compare(a, b, mapping, rtol, atol, progress=bar))
    if fmt == "json":
        typer.echo(json.dumps(result, indent=2))
    else:
        _print_compare(result, a, b)
    raise typer.Exit(0 if result["ok"] else 1)


def _ckpt_progress():
    import time

    start = time.monotonic()
    state = {}

    def update(done: int, total: int) -> None:
        if "bar" not in state and time.monotonic() - start > 1.0 and done < total:
            from rich.console import Console
            from rich.progress import Progress

            state["bar"] = Progress(transient=True, console=Console(stderr=True))
            state["bar"].start()
            state["task"] = state["bar"].add_task("comparing", total=total)
        if "bar" in state:
            state["bar"].update(state["task"], completed=done)
            if done >= total:
                state["bar"].stop()

    return update


def _print_compare(result: dict, old, new) -> None:
    rows = []
    for m in result["matched"]:
        rows.append((m["old"], m["new"], f"ok ({m['how']})", str(tuple(m["shape"])),
                     f"{m['max_abs']:.3g}", f"{m['max_rel']:.3g}"))
    for m in result["mismatched"]:
        detail = (f"{tuple(m['shape'])} vs {tuple(m['new_shape'])} {m['dtype']}/{m['new_dtype']}"
                  if m["reason"] == "shape/dtype" else str(tuple(m["shape"])))
        rows.append((m["old"], m["new"], f"MISMATCH ({m['reason']})", detail,
                     f"{m.get('max_abs', 0):.3g}", f"{m.get('max_rel', 0):.3g}"))
    for key in result["missing"]:
        shape, dtype = old.variables[key]
        rows.append((key, "", "MISSING from new", f"{tuple(shape)} {dtype}", "", ""))
    for key in result["unexpected"]:
        shape, dtype = new.variables[key]
        rows.append(("", key, "UNEXPECTED in new", f"{tuple(shape)} {dtype}", "", ""))
    footer = (f"{len(result['matched'])} matched, {len(result['mismatched'])} mismatched, "
              f"{len(result['missing'])} missing, {len(result['unexpected'])} unexpected: "
              + ("OK" if result["ok"] else "DIFFERENT"))
    _print_rows(f"{result['old']} -> {result['new']}", ("old", "new", "status", "shape", "max abs", "max rel"),
                rows, names=2, footer=footer)


@ckpt_app.command("convert")
def ckpt_convert(
    old: str = typer.Argument(..., metavar="CKPT", help="The checkpoint to convert."),
    out: str = typer.Argument(..., metavar="PREFIX", help="Output checkpoint prefix."),
    model: Optional[str] = typer.Option(None, "--model", metavar="MODULE:FUNCTION",
        help="module:factory (or file.py:factory) "
                                        "returning the built TF2 model."),
    name_map: Optional[str] = typer.Option(None, "--map", metavar="FILE",
        help="tf-migrate-names.json or regex rules."),
    to: str = typer.Option("tf2", "--to", metavar="tf2|tf1", help="tf2 (default) or tf1 (TF2 -> TF1 names)."),
    keras: str = typer.Option("auto", "--keras", metavar="auto|3|2",
        help="With --model: the Keras generation whose "
                              "object layout to write: 3, 2 (tf_keras), or auto (what the "
                              "factory's module gets, as the migrated code does)."),
) -> None:
    """TF1 -> TF2 (a model's object layout with --model, else a plain variable dict), or --to tf1."""
    _needs_tf()
    from migrate.checkpoints.ckpt import convert, open_side
    from migrate.checkpoints.names import is_slot, is_tf1_slot

    if to not in ("tf1", "tf2"):
        fail("--to must be tf1 or tf2")
    if keras not in ("auto", "2", "3"):
        fail("--keras must be auto, 2 or 3")
    mapping = _name_map(name_map)
    side = _ckpt_call(lambda: open_side(old, slots=True, everything=True))
    done = _ckpt_call(lambda: convert(side, out, to, model, mapping, name_map, keras))
    kept = done.total - len(done.left_out)
    typer.echo(f"wrote {done.path}: {kept} of {done.total} tensors"
               + (f" (the Keras {done.keras} object layout)" if done.keras else ""))
    if done.left_out:
        shown = ", ".join(done.left_out[:6]) + (f" and {len(done.left_out) - 6} more"
                                                if len(done.left_out) > 6 else "")
        why = "the model has no variable for them" if model else "they have no TF1 name"
        if any(is_slot(k) or is_tf1_slot(k) or k.startswith("optimizer/") for k in done.left_out):
            why += "; the optimizer's state starts fresh"
        typer.echo(f"not converted ({why}): {shown}")


# -- verify --------------------------------------------------------------------
@app.command()
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
    import ast

    _check_format(fmt, ("text", "json"))

    from migrate.verify import VerifyError, parse_input
    from migrate.verify import verify as run_verify

    from migrate.verify.limits import LimitError, default_memory, parse_memory

    if not timeout > 0:
        fail(f"--timeout must be a positive number of seconds, not {timeout:g}")
    try:
        memory_limit = parse_memory(memory) if memory else default_memory()
    except LimitError as exc:
        fail(str(exc))
    _needs_tf()
    status = _verify_status()
    try:
        if program:
            from migrate.verify.program import verify_program

            if inputs or grads or kwarg:
                fail("--program compares whole programs: --input, --grads and --arg do not apply")
            if prelude:
                fail("--prelude does not apply to --program: run the TF1 program on real TF1 "
                     "with --tf1-python")
            report = verify_program(legacy, migrated, list(program_args or ()), rtol, atol,
                                    keep, timeout, tf1_python, cwd, migrated_cwd, repeat,
                                    tf1_cache, plot, memory_limit)
            show = _print_program_report
        else:
            if not inputs:
                fail("verify needs --input for each input of the function "
                     "(or --program for whole programs)")
            specs = [parse_input(text) for text in inputs]
            kwargs = {}
            for item in kwarg or ():
                name, _, value = item.partition("=")
                try:
                    kwargs[name] = ast.literal_eval(value)
                except (ValueError, SyntaxError):
                    raise VerifyError(f"--arg {item!r}: the value must be a Python literal") from None
            report = run_verify(legacy, migrated, specs, grads, rtol, atol, seed, kwargs, keep, prelude,
                                tf1_python, timeout, memory_limit)
            show = _print_verify
    except VerifyError as exc:
        if status:
            status.stop()
        fail(str(exc))
    finally:
        if status:
            status.stop()
    if fmt == "json":
        typer.echo(json.dumps(report, indent=2))
    else:
        show(report)
    raise typer.Exit(0 if report["ok"] else 1)


def _verify_status():
    """On a terminal, a spinner on stderr naming the run in progress (each run imports
    TensorFlow and takes seconds); None into a pipe."""
    if not sys.stderr.isatty():
        return None
    import time

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

    render(report, _console())


def _print_verify(report: dict) -> None:
    from rich.table import Table

    console = _console()
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


def _needs_tf() -> None:
    try:
        import importlib.util

        missing = [m for m in ("tensorflow", "tf_keras") if importlib.util.find_spec(m) is None]
    except (ImportError, ValueError):
        missing = ["tensorflow"]
    if missing:
        fail(f"this command needs {' and '.join(missing)}: pip install 'tf-migrate[tf]'")


def _terminated(signum, frame) -> None:
    """SIGTERM unwinds like an interrupt: temp files are removed on the way out."""
    raise KeyboardInterrupt


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, _terminated)
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("tf-migrate: interrupted", err=True)
        sys.exit(130)
