"""The command modules of the ``tf-migrate`` CLI (``migrate.cli`` assembles them): each
parses its options, calls the face it belongs to (``migrate.codemod``,
``migrate.checkpoints``, ``migrate.verify``) and prints. Helpers every command uses live
here. Heavy imports (libcst, numpy, tensorflow, rich) happen inside the commands, so
``--help`` and ``--version`` start fast and the codemod commands never import tensorflow.

Imports inside functions: as said above, so that starting the command stays fast.
"""
from __future__ import annotations

import importlib.util
import os
import sys

import typer


def fail(message: str, code: int = 2) -> "typer.Exit":
    """Print one clear line on stderr and exit."""
    typer.echo(f"tf-migrate: error: {message}", err=True)
    raise typer.Exit(code)


def check_format(fmt: str, allowed=("text", "json", "sarif")) -> None:
    if fmt not in allowed:
        fail(f"--format must be one of {', '.join(allowed)}, not {fmt!r}")


def console():
    """stdout's console: the terminal's width (or $COLUMNS); 200 columns into a pipe."""
    from rich.console import Console

    wide = not sys.stdout.isatty() and "COLUMNS" not in os.environ
    return Console(width=200 if wide else None)


def needs_tf() -> None:
    try:

        missing = [m for m in ("tensorflow", "tf_keras") if importlib.util.find_spec(m) is None]
    except (ImportError, ValueError):
        missing = ["tensorflow"]
    if missing:
        fail(f"this command needs {' and '.join(missing)}: pip install 'tf-migrate[tf]'")
