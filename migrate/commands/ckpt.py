"""``tf-migrate ckpt ls|compare|convert``: options and printing; the work is
``migrate.checkpoints.ckpt``'s.

Imports inside functions: numpy, rich and the checkpoint readers load when a command runs, so ``--help`` starts fast.
"""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Optional

import typer

from migrate.commands import check_format, fail, needs_tf
from migrate.commands import console as stdout_console

app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                  help="List, compare and convert checkpoints (needs tf-migrate[tf]).")


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
    from migrate.safeio import describe, read_regular

    if path and not os.path.lexists(path):
        fail(f"--map {path}: no such file")
    try:
        return NameMap.load(path, read_regular)
    except OSError as exc:
        fail(f"--map {path}: cannot read ({describe(exc)})")
    except ValueError as exc:
        fail(f"--map {path}: not a name map ({exc})")


@app.command("ls")
def ckpt_ls(path: str = typer.Argument(..., metavar="CKPT",
    help="Checkpoint prefix, directory or .weights.h5."),
            fmt: str = typer.Option("text", "--format", metavar="FORMAT", help="text or json."),
            everything: bool = typer.Option(False, "--all", help="Include bookkeeping and slots."),
            check: bool = typer.Option(False, "--verify", help="Also read every tensor and check its "
                                       "CRC32C (without it: the data files' presence and sizes).")) -> None:
    """List variables: names, shapes, dtypes, sizes."""
    check_format(fmt, ("text", "json"))
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


def _print_rows(title: str, columns, rows, names: int, right=(), footer: Optional[str] = None) -> None:
    """A table when it fits the console; else one entry per block, names whole on their
    own lines and the other columns indented under them, so nothing is cut off at 80
    columns. ``names``: how many leading columns hold names."""
    from rich.table import Table

    console = stdout_console()
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


@app.command("compare")
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
    check_format(fmt, ("text", "json"))
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


@app.command("convert")
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
    program: Optional[str] = typer.Option(None, "--program", metavar="FILE",
        help="With --map: the migrated program (its file name in the map) whose "
             "tf.train.Checkpoint to write, optimizer state and step included."),
) -> None:
    """TF1 -> TF2 (a model's object layout with --model, a migrated program's checkpoint with
    --program, else a plain variable dict), or --to tf1."""
    needs_tf()
    from migrate.checkpoints.ckpt import convert, open_side
    from migrate.checkpoints.names import is_slot, is_tf1_slot
    from migrate.checkpoints.program import convert_program, program_entries, record_state

    if to not in ("tf1", "tf2"):
        fail("--to must be tf1 or tf2")
    if keras not in ("auto", "2", "3"):
        fail("--keras must be auto, 2 or 3")
    if program and (not name_map or model or to != "tf2"):
        fail("--program needs --map (the tf-migrate-names.json upgrade wrote), and neither --model nor --to tf1")
    mapping = _name_map(name_map)
    entries = _ckpt_call(lambda: program_entries(name_map, program)) if program else None
    side = _ckpt_call(lambda: open_side(old, slots=True, everything=True))
    layout = (lambda staged: convert_program(side, staged, entries)) if entries else None
    done = _ckpt_call(lambda: convert(side, out, to, model, mapping, name_map, keras, layout))
    kept = done.total - len(done.left_out)
    typer.echo(f"wrote {done.path}: {kept} of {done.total} tensors"
               + (f" (the Keras {done.keras} object layout)" if done.keras else "")
               + (f" (the checkpoint of {program})" if program else ""))
    if program:
        state, written = _ckpt_call(lambda: record_state(done.path))
        if written:
            typer.echo(f"wrote {state}: tf.train.latest_checkpoint of the folder is the conversion")
    if done.left_out:
        shown = ", ".join(done.left_out[:6]) + (f" and {len(done.left_out) - 6} more"
                                                if len(done.left_out) > 6 else "")
        why = ("the model has no variable for them" if model else
               "the program's checkpoint has no place for them" if program else "they have no TF1 name")
        if any(is_slot(k) or is_tf1_slot(k) or k.startswith("optimizer/") for k in done.left_out):
            why += "; the optimizer's state starts fresh"
        typer.echo(f"not converted ({why}): {shown}")
