"""Checkpoint reading, comparison and conversion (imports tensorflow lazily).

Each side of a comparison may be a TF1 name-based checkpoint prefix, a TF2
object-based prefix, a directory with a ``checkpoint`` file, or a Keras
``.weights.h5`` file. Tensors are read one at a time, never a whole checkpoint.

Imports inside functions: tensorflow, numpy and h5py are loaded by the action that needs them (``ls`` and ``compare`` never import tensorflow; ``convert`` runs it in a subprocess).
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from migrate.checkpoints.bundle import STREAM, Bundle, BundleError, Unsupported
from migrate.checkpoints.names import (
    NameMap,
    is_bookkeeping,
    is_global_step,
    is_slot,
    is_tf1_slot,
    match_names,
    tf1_name,
)
from migrate.safeio import describe, read_regular, sweep_temps, temp_prefix


class CkptError(Exception):
    """A checkpoint that is missing, corrupt or truncated (one line for the user)."""


def _tf():
    """Import tensorflow for a CLI command, without TF 2.21's start-up lines on stderr
    (absl prints them before any log level applies, so fd 2 is muted for the import)."""

    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        import tensorflow as tf
    except ImportError:
        tf = None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
    if tf is None:
        raise CkptError("this command needs TensorFlow: pip install 'tf-migrate[tf]'")
    return tf


@dataclass
class Converted:
    """What ``convert`` wrote, and every stored tensor of the input it did not carry over
    (a model layout holds no optimizer slots; TF1 names have no save counter)."""
    path: str
    keras: Optional[str] = None
    left_out: List[str] = field(default_factory=list)
    total: int = 0


@dataclass
class Side:
    path: str
    kind: str  # "tf1", "tf2" or "h5"
    variables: Dict[str, Tuple[tuple, str]] = field(default_factory=dict)  # key -> (shape, dtype)
    read: Callable[[str], object] = None
    skipped: List[str] = field(default_factory=list)
    everything: List[str] = field(default_factory=list)  # every stored key, skipped ones too
    steps: Dict[str, Tuple[tuple, str]] = field(default_factory=dict)  # global steps, held apart
    bundle: object = None  # a migrate.checkpoints.bundle.Bundle when read without TensorFlow

    @property
    def object_based(self) -> bool:
        return self.kind in ("tf2", "h5")


def _prefix(path: str) -> str:
    """A checkpoint prefix from a prefix or a directory with a ``checkpoint`` file."""

    if not os.path.isdir(path):
        return path

    state = os.path.join(path, "checkpoint")
    if not os.path.lexists(state):
        raise CkptError(f"{path}: a directory without a 'checkpoint' file naming a checkpoint")
    try:
        text = read_regular(state, 1 << 20).decode("utf-8")
    except OSError as exc:  # a FIFO is refused without blocking
        raise CkptError(f"{state}: cannot read ({describe(exc)})") from None
    except UnicodeDecodeError:
        raise CkptError(f"{state}: not a checkpoint state file (not text)") from None
    match = re.search(r'^model_checkpoint_path:\s*"([^"\n]*)"', text, re.M)
    if match is None:
        raise CkptError(f"{path}: a directory without a 'checkpoint' file naming a checkpoint")
    latest = match.group(1)
    return latest if os.path.isabs(latest) else os.path.join(path, latest)


def open_side(path: str, slots: bool = False, everything: bool = False) -> Side:
    if path.endswith(".h5") or path.endswith(".keras"):
        return _open_h5(path)
    prefix = _prefix(path)
    if not (os.path.exists(prefix + ".index") or os.path.exists(prefix)):
        raise CkptError(f"{path}: no such checkpoint (expected {prefix}.index)")

    bundle = None
    try:
        bundle = Bundle(prefix)
        bundle.check_files()
        entries, reader = bundle.entries, bundle.read
    except BundleError as exc:
        raise CkptError(f"{path}: cannot read checkpoint ({exc})") from None
    except Unsupported:  # compressed index, partitioned slices, ...: TensorFlow reads it
        bundle = None
        entries, reader = _tf_reader(path, prefix)
    kind = "tf2" if "_CHECKPOINTABLE_OBJECT_GRAPH" in entries else "tf1"
    side = Side(path, kind)
    side.everything = sorted(entries)
    for key in sorted(entries):
        if not everything and is_global_step(key):
            side.steps[key] = tuple(entries[key][0]), entries[key][1]
            side.skipped.append(key)
            continue
        if (not everything and is_bookkeeping(key)) or (not slots and _slot(key, kind)):
            side.skipped.append(key)
            continue
        shape, dtype = entries[key]
        side.variables[key] = (tuple(shape), dtype)

    def read(key: str):
        try:
            return reader(key)
        except BundleError as exc:
            raise CkptError(f"{path}: cannot read {key} ({exc})") from None
        except CkptError:
            raise
        except Exception as exc:
            raise CkptError(f"{path}: cannot read {key} ({str(exc).splitlines()[0]}); "
                            "the checkpoint data is truncated or corrupt") from None

    side.read = read
    side.bundle = bundle
    return side


def verify_side(side: Side, done=()) -> None:
    """Check every stored tensor not in ``done`` (CRC32C with the bundle reader, a full
    read with TensorFlow's): a comparison is only OK for checkpoints that load whole."""

    done = set(done)
    for key in side.everything:
        if key in done:
            continue
        if side.bundle is not None:
            try:
                side.bundle.verify(key)
            except BundleError as exc:
                raise CkptError(f"{side.path}: {exc}") from None
        else:
            side.read(key)


def _tf_reader(path: str, prefix: str):
    tf = _tf()
    try:
        reader = tf.train.load_checkpoint(prefix)
        shapes = reader.get_variable_to_shape_map()
        dtypes = reader.get_variable_to_dtype_map()
    except Exception as exc:  # tf raises several types for damaged files
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CkptError(f"{path}: cannot read checkpoint ({first})") from None
    return {k: (tuple(shapes[k]), dtypes[k].name) for k in shapes}, reader.get_tensor


def _slot(key: str, kind: str) -> bool:
    return is_slot(key) if kind == "tf2" else is_tf1_slot(key)


def _open_h5(path: str) -> Side:
    if not os.path.isfile(path):
        raise CkptError(f"{path}: no such file")
    try:
        import h5py
    except ImportError:
        raise CkptError("reading .h5 files needs h5py: pip install 'tf-migrate[tf]'") from None
    try:
        handle = h5py.File(path, "r")
    except Exception as exc:
        raise CkptError(f"{path}: not a readable HDF5 file ({exc})") from None
    side = Side(path, "h5")

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            side.variables[name] = (tuple(obj.shape), str(obj.dtype))

    handle.visititems(visit)
    side.read = lambda key: handle[key][()]
    return side


# -- compare -------------------------------------------------------------------------
def compare(old: Side, new: Side, name_map: NameMap, rtol: float = 0.0, atol: float = 0.0,
            progress: Optional[Callable[[int, int], None]] = None) -> dict:
    import numpy as np

    # a global step is bookkeeping, unless both sides have one: then the model owns it (a TF1
    # program's raw tf.Variable carried into TF2) and it is compared like any variable
    if old.steps and new.steps:
        for side in (old, new):
            side.variables.update(side.steps)
            side.skipped = [k for k in side.skipped if k not in side.steps]
            side.steps = {}
    pairs, missing, unexpected = match_names(old.variables, new.variables, new.object_based, name_map)
    matched, mismatched = [], []
    read_old, read_new = set(), set()
    buffers: List[bytearray] = []  # three streaming buffers, made once (page faults cost)
    for index, (okey, nkey, how) in enumerate(pairs):
        oshape, odtype = old.variables[okey]
        nshape, ndtype = new.variables[nkey]
        entry = {"old": okey, "new": nkey, "how": how, "shape": list(oshape), "dtype": odtype}
        if oshape != nshape or odtype != ndtype:
            entry.update(reason="shape/dtype", new_shape=list(nshape), new_dtype=ndtype)
            mismatched.append(entry)
            continue
        if old.bundle is not None and new.bundle is not None and odtype != "string" \
                and old.bundle.nbytes(okey) > STREAM:
            if not buffers:
                buffers.extend(bytearray(STREAM) for _ in range(3))
            same, max_abs, max_rel = _streamed(old, okey, new, nkey, rtol, atol, buffers)
        else:
            a, b = np.asarray(old.read(okey)), np.asarray(new.read(nkey))
            same, max_abs, max_rel = _difference(a, b, rtol, atol)
            del a, b
        read_old.add(okey)
        read_new.add(nkey)
        entry.update(max_abs=max_abs, max_rel=max_rel)
        (matched if same else mismatched).append(entry if same else dict(entry, reason="values"))
        if progress:
            progress(index + 1, len(pairs))
    verify_side(old, read_old)
    verify_side(new, read_new)
    ok = not (mismatched or missing or unexpected)
    return {"ok": ok, "old": old.path, "new": new.path, "matched": matched,
            "mismatched": mismatched, "missing": missing, "unexpected": unexpected}


CHUNK = 1 << 20  # elements compared at a time: memory stays near the two tensors


def _difference(a, b, rtol: float, atol: float):
    """(equal within tolerance, max abs difference, max relative difference), in chunks."""
    import numpy as np

    if a.shape != b.shape:
        return False, float("inf"), float("inf")
    if a.dtype.hasobject or b.dtype.hasobject:  # strings: equal or not
        return bool(np.array_equal(a, b)), 0.0, 0.0
    if a.dtype == b.dtype and _same_bytes(a, b):
        return True, 0.0, 0.0  # the common case, at memory speed
    fa, fb = a.reshape(-1), b.reshape(-1)
    if a.dtype.kind not in "fciub" and a.dtype.name != "bfloat16":
        return bool(np.array_equal(fa, fb)), 0.0, 0.0
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    same, max_abs, max_rel = True, 0.0, 0.0
    for start in range(0, fa.size, CHUNK):
        x = fa[start:start + CHUNK].astype(wide)
        y = fb[start:start + CHUNK].astype(wide)
        diff = np.abs(x - y)
        scale = np.abs(x)
        nan_same = np.isnan(x) & np.isnan(y) if a.dtype.kind in "fc" or a.dtype.name == "bfloat16" else False
        diff = np.where(nan_same, 0.0, diff)
        if diff.size:
            max_abs = max(max_abs, float(np.nanmax(diff)) if not np.all(np.isnan(diff)) else float("nan"))
            max_rel = max(max_rel, float(np.nanmax(diff / np.where(scale == 0, 1, scale))))
        if rtol or atol:
            same = same and bool(np.all(diff <= atol + rtol * scale))
        else:
            same = same and bool(np.all(diff == 0))
    return same, max_abs, max_rel


def _streamed(old: Side, okey: str, new: Side, nkey: str, rtol: float, atol: float,
              buffers: List[bytearray]):
    """Compare two bundle tensors chunk by chunk. A reader thread fills NEW's chunks into
    two buffers in turn (file reads release the GIL) while this thread reads OLD's and
    compares; a buffer goes back to the reader only once compared. Equal chunks cost one
    memcmp, and memory stays at three chunk buffers whatever the tensor's size. Both
    sides' CRC32Cs are checked once the last chunk is in."""

    import numpy as np

    dtype = old.bundle.numpy_dtype(okey)
    free: "queue.Queue" = queue.Queue()
    full: "queue.Queue" = queue.Queue()
    for buffer in buffers[1:]:
        free.put(buffer)
    failure: list = []

    def reader() -> None:
        try:
            for chunk in new.bundle.chunks(nkey, free.get):  # the two buffers in turn
                full.put((chunk, len(chunk)))
        except BaseException as exc:  # any failure must reach the main thread
            failure.append(exc)
        finally:
            full.put(None)

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    same, max_abs, max_rel = True, 0.0, 0.0
    try:
        for ca in old.bundle.chunks(okey, buffers[0]):
            item = full.get()
            if item is None:
                break
            buffer, n = item
            cb = buffer if n == len(buffer) else buffer[:n]
            if ca != cb:  # bytearray equality is one memcmp
                s, a, r = _difference(np.frombuffer(ca, dtype), np.frombuffer(cb, dtype), rtol, atol)
                same, max_abs, max_rel = same and s, max(max_abs, a), max(max_rel, r)
            free.put(buffer)
        else:
            if full.get() is not None:
                same = False  # NEW is longer (shapes matched, so this is corruption)
    except BundleError as exc:
        raise CkptError(f"{old.path}: {exc}") from None
    finally:
        free.put(None)
        free.put(None)
        thread.join()
    if failure:
        exc = failure[0]
        if isinstance(exc, BundleError):
            raise CkptError(f"{new.path}: {exc}")
        raise CkptError(f"{new.path}: cannot read {nkey} ({type(exc).__name__}: {exc})")
    return same, max_abs, max_rel


def _root(array):
    """The buffer an array (and the views on it) were made from."""
    base = array
    while getattr(base, "base", None) is not None:
        base = base.base
    return base


def _same_bytes(a, b) -> bool:
    import numpy as np

    ra, rb = _root(a), _root(b)
    if isinstance(ra, (bytes, bytearray)) and isinstance(rb, (bytes, bytearray)) and \
            a.nbytes == len(ra) and b.nbytes == len(rb):
        return ra == rb  # the bundle reader's buffers: one memcmp
    fa = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    fb = np.ascontiguousarray(b).reshape(-1).view(np.uint8)
    step = CHUNK * 8
    return all(np.array_equal(fa[i:i + step], fb[i:i + step]) for i in range(0, fa.size, step))


# -- convert -------------------------------------------------------------------------
OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"


def _convert_plain(old: Side, out: str) -> List[str]:
    """TF1 -> the guide's plain layout: ``tf.train.Checkpoint(vars={name: variable})``,
    every stored tensor (optimizer slots, global_step) carried over; returns what was not."""
    tf = _tf()
    keys = [k for k in old.everything if k != OBJECT_GRAPH]
    variables = {key: tf.Variable(old.read(key), name=key.replace("/", "_")) for key in keys}
    _write(tf.train.Checkpoint(vars=variables), out)
    return []


def convert_model(old: Side, out: str, model: str, map_path: Optional[str],
                  keras: str = "auto") -> Tuple[str, str, List[str]]:
    """TF1 -> the object layout of ``model``'s factory (``module:function`` or
    ``file.py:function``), built in a process of its own under the Keras generation
    ``keras`` selects: "3", "2" (tf_keras), or "auto", what the factory's own imports
    give (a file that imports shims first gets tf_keras, as the migrated code does).
    Returns (written prefix, the generation used, the stored tensors the model has no
    variable for: optimizer slots, global_step)."""

    env = dict(os.environ, TFM_CONVERT=json.dumps(
        {"model": model, "old": old.path, "out": os.path.abspath(out), "map": map_path}),
        TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    if keras == "3":
        env["TF_USE_LEGACY_KERAS"] = "0"
    elif keras == "2":
        env["TF_USE_LEGACY_KERAS"] = "1"
    from migrate.verify import failure_of, python_c

    child = "from migrate.checkpoints.model_child import main\nmain()\n"  # (model_child.py)
    done = subprocess.run(python_c(child), env=env, capture_output=True, text=True)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    try:
        answer = json.loads(last)
    except ValueError:
        message, where = failure_of(done.stderr)
        raise CkptError(f"--model {model} failed: {message or 'exit ' + str(done.returncode)}"
                        + (f" (at {where})" if where else "")) from None
    if "error" in answer:
        raise CkptError(answer["error"])
    return answer["path"], answer["keras"], answer["ignored"]


def _write(checkpoint, out: str) -> str:
    """Write with a save counter, so a plain ``Checkpoint(...).restore()`` matches every object."""
    checkpoint.save_counter.assign_add(1)
    return checkpoint.write(out)


def _input_files(side: Side) -> List[str]:
    """The real paths of the files ``side`` was read from."""
    if side.kind == "h5":
        return [os.path.realpath(side.path)]
    prefix = _prefix(side.path)
    folder = os.path.dirname(os.path.abspath(prefix))
    base = os.path.basename(prefix)
    found = [os.path.join(folder, n) for n in os.listdir(folder)
             if n == base + ".index" or n.startswith(base + ".data-")]
    return [os.path.realpath(p) for p in found]


def convert(old: Side, out: str, to: str = "tf2", model: Optional[str] = None,
            name_map: Optional[NameMap] = None, map_path: Optional[str] = None,
            keras: str = "auto", layout: Optional[Callable[[str], List[str]]] = None) -> Converted:
    """Write ``old`` converted to the prefix ``out``: TF1 -> TF2 (``model``'s object
    layout, else a plain variable dict) or, with ``to="tf1"``, TF2 -> TF1 names. ``old``
    should be opened with ``slots=True, everything=True``: the plain layout carries every
    stored tensor; what a conversion leaves out is listed in the returned record.
    ``layout(staged_prefix)``, when given, writes the TF2 checkpoint instead (a migrated
    program's own layout: ``program.convert_program``) and returns what it left out.

    Nothing is lost: an output that would overwrite the input is refused before any work,
    and the checkpoint is written into a private folder next to ``out`` and moved into
    place only once complete (data files first, the index last), so a full disk, a
    read-only folder or a kill leaves no partial checkpoint and no ``*_temp`` folder."""

    if to not in ("tf1", "tf2"):
        raise CkptError("--to must be tf1 or tf2")
    if to == "tf1" and old.kind != "tf2":
        raise CkptError(f"{old.path} is not a TF2 object-based checkpoint")
    out = os.path.abspath(out)
    folder, base = os.path.split(out)
    if not base or base.startswith("."):
        raise CkptError(f"{out}: give an output prefix such as {os.path.join(folder, 'model')}")
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise CkptError(f"cannot write {out}: {folder} is not a folder")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise CkptError(f"cannot write {out}: cannot make the folder {folder} "
                        f"({describe(exc)})") from None
    inputs = set(_input_files(old))
    if os.path.realpath(out + ".index") in inputs or any(
            os.path.realpath(p).startswith(os.path.realpath(out) + ".data-") for p in inputs):
        raise CkptError(f"{out} is the input checkpoint; write the conversion to another "
                        "prefix (the input is left as it is)")
    verify_side(old)  # a damaged input is named as such (TensorFlow's reader would blame the model)
    sweep_temps(folder)  # staging folders of killed runs
    try:
        stage = tempfile.mkdtemp(prefix=temp_prefix("ckpt"), suffix=".tmp", dir=folder)
    except OSError as exc:
        raise CkptError(f"cannot write {out}: {describe(exc)}") from None
    generation = None
    try:
        staged = os.path.join(stage, base)
        try:
            if to == "tf1":
                left_out = _convert_to_tf1(old, staged, name_map or NameMap.empty())
            elif layout is not None:
                left_out = layout(staged)
            elif model:
                _, generation, left_out = convert_model(old, staged, model, map_path, keras)
            else:
                left_out = _convert_plain(old, staged)
        except CkptError:
            raise
        except OSError as exc:
            raise CkptError(f"cannot write {out}: {describe(exc)}") from None
        except Exception as exc:  # TensorFlow's own errors: one line
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            if "No space left" in first:
                first = "no space left on the device"
            raise CkptError(f"cannot write {out}: {first}") from None
        made = sorted(os.listdir(stage), key=lambda n: (n.endswith(".index"), n))
        if not any(n.endswith(".index") for n in made):
            raise CkptError(f"cannot write {out}: TensorFlow wrote no index")
        try:
            for name in made:
                if name.startswith(base + "."):
                    os.replace(os.path.join(stage, name), os.path.join(folder, name))
        except OSError as exc:
            raise CkptError(f"cannot write {out}: {describe(exc)}") from None
        stored = [k for k in old.everything if k != OBJECT_GRAPH and not k.startswith("save_counter")]
        return Converted(out, generation, sorted(set(left_out) & set(stored)), len(stored))
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _convert_to_tf1(new: Side, out: str, name_map: NameMap) -> List[str]:
    """TF2 object checkpoint -> TF1 names (for inference stacks still on TF1), global_step
    included; returns what has no TF1 name (optimizer slots and counters, save_counter)."""
    tf = _tf()

    names, left_out = {}, []
    for key in new.everything:
        if key == OBJECT_GRAPH:
            continue
        if is_slot(key) or (is_bookkeeping(key) and not is_global_step(key)):
            left_out.append(key)
            continue
        name = name_map.to_old(tf1_name(key))
        if name in names:
            raise CkptError(f"two variables map to the TF1 name {name}: {names[name]} and {key}")
        names[name] = key
    with tf.Graph().as_default():
        variables = {n: tf.compat.v1.Variable(new.read(k), name=n.replace("/", "_"))
                     for n, k in names.items()}
        saver = tf.compat.v1.train.Saver(var_list=variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            saver.save(session, out, write_meta_graph=False, write_state=False)
    return left_out


def load_factory(spec: str) -> Callable[[], object]:
    """``package.module:function`` or ``path/to/file.py:function``."""

    target, _, attr = spec.rpartition(":")
    if not target or not attr:
        raise CkptError(f"--model {spec!r}: expected module:function or file.py:function")
    if target.endswith(".py"):
        if not os.path.isfile(target):
            raise CkptError(f"--model: no such file {target}")
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
        module_spec = importlib.util.spec_from_file_location("tf_migrate_model", target)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        sys.path.append(os.getcwd())  # after the standard library, never shadowing it
        module = importlib.import_module(target)
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise CkptError(f"--model: {target} has no callable {attr}")
    return factory
