"""The native form of a program's ``tf.train.Saver``: a ``tf.train.Checkpoint``.

Read (pure): ``saver = tf.train.Saver()`` saved every variable made before it (the state,
the layers, the slots of the optimizers that minimized before it); it becomes a
``tf.train.Checkpoint`` of those objects, where the Saver was. Its saves with a global step
(``saver.save(sess, os.path.join(d, "model.ckpt"), global_step=step)``) are a
``tf.train.CheckpointManager``'s (the folder, the file name, ``max_to_keep``: TF1's file names
and its ``checkpoint`` state file, which ``tf.train.latest_checkpoint`` reads); a save
without one writes the path itself (``checkpoint.write``), as TF1 did; a restore is
``checkpoint.restore``.

The TF1 names of the saved variables (what the TF1 program's checkpoints hold) are written
into the name map against the object paths of the checkpoint, with the optimizer's slots
(Keras 3's positional layout), so ``tf-migrate ckpt convert --program`` turns a checkpoint
the TF1 program wrote into one the native program restores, its training state included.

Emit: the statements, as TF2 writes them.
"""
from __future__ import annotations

import json
from typing import Dict, List, Optional, Sequence, Tuple, Union

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of, source_identifiers, unused_name

from . import optimizers
from .model import Blocker, Layer, NativeProgram, Optimizer, Save, Saver
from .syntax import GET_VARIABLE_PARAMS, _arguments, _bound, _imported, _names_read

SAVE_PARAMS = ("sess", "save_path", "global_step", "latest_filename", "meta_graph_suffix",
               "write_meta_graph", "write_state", "strip_default_attrs", "save_debug_info")
RESTORE_PARAMS = ("sess", "save_path")
STATE_READERS = ("tf.train.latest_checkpoint", "tf.train.get_checkpoint_state")
# the slots of TF1's optimizers in the order Keras 3 keeps them per variable (its
# ``_variables`` list: iterations and the learning rate first), and how a value converts
KERAS_SLOTS = {"tf.train.AdamOptimizer": ("Adam", ("", "_1")),
               "tf.train.MomentumOptimizer": ("Momentum", ("",)),
               "tf.train.GradientDescentOptimizer": ("GradientDescent", ()),
               "tf.train.RMSPropOptimizer": ("RMSProp", ())}  # in blocks: see _rmsprop_layout


def saver(reader, stmt, key: str, call: cst.Call) -> Optional[str]:
    """``saver = tf.train.Saver()`` (``max_to_keep=`` at most, or every variable): what it
    saves is what is made before it. Why it is not written natively, else None."""
    if reader.saver is not None:
        return "two tf.train.Saver objects"
    max_to_keep = next((a.value for a in call.args if a.keyword is not None
                        and a.keyword.value == "max_to_keep"), None)
    tracked: List[Union[str, Layer, Optimizer]] = list(reader.state)
    tracked += [layer for layer, _ in reader.variables if isinstance(layer, Layer)]
    tracked += list(dict.fromkeys(t.optimizer for t in reader.trainings.values()))
    reader.saver = Saver(stmt, key, tuple(tracked), max_to_keep, None, None)
    return None


def saves(saver_: Saver, calls: Sequence[Tuple[cst.Call, str]], stmts, session_at: int,
          module: cst.Module, call_name) -> Union[Tuple[Saver, Tuple[Save, ...]], Blocker]:
    """The program's saves and restores; the Saver completed with its managed folder."""
    out: List[Save] = []
    managed: Optional[cst.BaseExpression] = None
    for call, kind in calls:
        args = _arguments(call, SAVE_PARAMS if kind == "save" else RESTORE_PARAMS)
        if args is None or "save_path" not in args:
            return Blocker(f"a saver.{kind}() whose arguments cannot be read")
        extra = sorted(set(args) - {"sess", "save_path", "global_step", "write_meta_graph"})
        if extra:
            return Blocker(f"saver.save()'s {extra[0]}=")
        path, step = args["save_path"], args.get("global_step")
        if kind == "save" and step is not None:
            if managed is not None and code(managed) != code(path):
                return Blocker("checkpoints saved at two paths")
            managed = path
            kind = "managed"
        elif kind == "save":
            kind = "write"
        out.append(Save(call, kind, path, step))
    if any(s.kind == "restore" for s in out) and not any(s.kind != "restore" for s in out):
        return Blocker("a restore of checkpoints the program does not write (TF1's, by name: "
                       "tf-migrate ckpt convert --program turns them into the native program's)")
    if any(s.kind == "write" for s in out) and any(
            call_name(c) in STATE_READERS for c in nodes_of(module, (cst.Call,))):
        return Blocker("a save without a global step in a program reading the checkpoint state "
                       "(TF1's Saver recorded it; a TF2 checkpoint written so is not)")
    # the Saver's name from its statement to the next that binds the name again (a later
    # program of the file may make a Saver of its own under the same name)
    at = next((i for i, s in enumerate(stmts) if s is saver_.stmt), session_at)
    end = next((i for i in range(at + 1, len(stmts)) if saver_.key in _bound([stmts[i]])), len(stmts))
    uses = [n for stmt in stmts[at:end] for n in nodes_of(stmt, (cst.Name,)) if n.value == saver_.key]
    ours = {id(n) for node in (saver_.stmt, *(s.call for s in out)) for n in nodes_of(node, (cst.Name,))}
    if any(id(n) not in ours for n in uses):
        return Blocker(f"the Saver {saver_.key!r} is used other than by its save() and restore()")
    if managed is None:
        return saver_, tuple(out)
    split = _split(managed, module)
    if split is None:
        return Blocker(f"a checkpoint path whose folder cannot be read ({code(managed)[:40]})")
    directory, name = split
    why = _bound_before(directory, saver_.stmt, stmts, session_at)
    if why:
        return Blocker(why)
    return Saver(saver_.stmt, saver_.key, saver_.tracked, saver_.max_to_keep, directory, name), tuple(out)


def reopened(reader, plan) -> Optional[str]:
    """``with tf.Session() as sess: sess.run(init); saver.restore(sess, path)`` after the
    program: TF1 initialised every variable again and restored the Saver's. Written natively
    (the block's body stays, the restore restores) where the Saver saves every variable the
    program has (state, layers, optimizers), so the restore undoes what initialising did.
    Why not, else None."""
    if not plan.reopened:
        return None
    saver_ = reader.saver
    tracked = set(map(_key, saver_.tracked)) if saver_ is not None else set()
    every = [*reader.state, *(layer for layer, _ in reader.variables if isinstance(layer, Layer)),
             *dict.fromkeys(t.optimizer for t in reader.trainings.values())]
    missing = [item for item in every if _key(item) not in tracked]
    if not missing:
        return None
    if saver_ is None:
        return "a second session"
    first = missing[0]
    what = repr(first) if isinstance(first, str) else f"the layer {first.name!r}" if isinstance(first, Layer) \
        else f"the {first.tf1_name.rsplit('.', 1)[-1]}'s slots"
    return f"a second session initialising {what} again, which its Saver (made before) does not restore"


def _split(path: cst.BaseExpression, module: cst.Module) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``os.path.join(d, "model.ckpt")``, ``d + "/model.ckpt"`` or ``"d/model.ckpt"``: the
    folder and the file name (expressions); a name holding the path: its
    ``os.path.dirname`` and ``os.path.basename``; else None."""
    if isinstance(path, cst.Name):
        rebound = "os" in _bound(module.body) and "os" not in _imported(module)
        return None if rebound else (cst.parse_expression(f"os.path.dirname({path.value})"),
                                     cst.parse_expression(f"os.path.basename({path.value})"))
    split = _split_literal(path)
    return (split[0], cst.SimpleString(json.dumps(split[1]))) if split else None


def _split_literal(path: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, str]]:
    if isinstance(path, cst.SimpleString):
        folder, _, name = path.evaluated_value.rpartition("/")
        return (cst.SimpleString(json.dumps(folder or ".")), name) if name else None
    if isinstance(path, cst.Call) and code(path.func) == "os.path.join" and len(path.args) == 2 \
            and all(a.keyword is None and not a.star for a in path.args) \
            and isinstance(path.args[1].value, cst.SimpleString):
        name = path.args[1].value.evaluated_value
        return (path.args[0].value, name) if name and "/" not in name else None
    if isinstance(path, cst.BinaryOperation) and isinstance(path.operator, cst.Add) \
            and isinstance(path.right, cst.SimpleString) and not isinstance(path.left, cst.SimpleString):
        name = path.right.evaluated_value
        if name.startswith("/") and name.count("/") == 1 and len(name) > 1:
            return path.left, name[1:]
    return None


def _bound_before(directory, saver_stmt, stmts, session_at: int) -> Optional[str]:
    """The folder is computed where the Saver was (the manager is made there): no name it
    reads is bound there or after it (its value then is the one every save used; a name the
    program's statements never bind is a parameter or a global). Why not, else None."""
    at = next((i for i, s in enumerate(stmts) if s is saver_stmt), session_at)
    after = _bound(stmts[at:])
    for name in _names_read(directory):
        if name in after:
            return f"a checkpoint folder read from {name!r}, which is bound after the Saver"
    return None


# -- TF1's names ------------------------------------------------------------------------
def name_variables(reader, items) -> None:
    """Records the TF1 name of each ``(expression, call)`` made as state, as TF1's graph
    named it: ``name=`` (``Variable`` without one) under the enclosing name scopes
    (``tf.get_variable``: variable scopes), made unique as TF1 did (``Variable_1``;
    case-insensitively). A name not read (an expression, a helper's own) stops the record:
    the names after it could be counted wrong."""
    for expr, call in items:
        if reader.names_unsure:
            return
        name = _given_name(reader, call)
        if name is None:
            reader.names_unsure = True
            return
        unique, k = name, 0
        while unique.lower() in reader.taken_names:
            k += 1
            unique = f"{name}_{k}"
        reader.taken_names.add(unique.lower())
        reader.tf1_names[expr] = unique


def _given_name(reader, call) -> Optional[str]:
    if not isinstance(call, cst.Call):
        return None
    called = reader.call_name(call)
    if isinstance(call.func, cst.Name) and call.func.value in reader.module_functions:
        returns = list(nodes_of(reader.module_functions[call.func.value].body, (cst.Return,)))
        made = _arguments(returns[0].value, ("initial_value", "trainable", "collections", "validate_shape",
                                             "caching_device", "name")) \
            if len(returns) == 1 and isinstance(returns[0].value, cst.Call) else None
        if made is None or "name" in made:
            return None  # (a name given there is read from the helper's parameters: not known here)
        return "/".join([*reader.name_scopes, "Variable"])
    if called == "tf.get_variable":
        given = _arguments(call, GET_VARIABLE_PARAMS)
        scopes = reader.variable_scope_names
    else:
        given = _arguments(call, ("initial_value", "trainable", "collections", "validate_shape",
                                  "caching_device", "name"))
        scopes = reader.name_scopes
    if given is None:
        return None
    name = given.get("name")
    if name is None and called != "tf.get_variable":
        return "/".join([*scopes, "Variable"])
    if not isinstance(name, cst.SimpleString):
        return None
    return "/".join([*scopes, name.evaluated_value])


# -- the name map ------------------------------------------------------------------------
def names(program: NativeProgram, keywords_: Dict[object, str]) -> Tuple[Tuple[str, str], ...]:
    """TF1 name -> object path below the checkpoint, for what the checkpoint tracks: each
    variable of the state, each layer (its scope), the optimizer's slots (Keras 3 keeps them
    positionally; a Momentum slot is -lr times TF1's, Adam's step is read from
    ``beta1_power``: ``#scale=`` and ``#power=`` say so)."""
    saver_ = program.saver
    out: List[Tuple[str, str]] = []
    if saver_ is None:
        return ()
    tf1_names = dict(program.tf1_names)
    for item in saver_.tracked:
        if isinstance(item, str):
            for expr, name in tf1_names.items():
                if expr == item or expr.startswith(item + "["):
                    path = keywords_[_key(item)] if expr == item else \
                        f"{keywords_[_key(item)]}/{_element(expr[len(item):])}"
                    out.append((name, path))
        elif isinstance(item, Layer):
            out.append((item.scoped, keywords_[_key(item)]))
    optimizers = [o for o in saver_.tracked if isinstance(o, Optimizer)]
    if len(optimizers) == 1:
        out += _slots(program, optimizers[0], keywords_[_key(optimizers[0])], tf1_names)
    return tuple(out)


def _key(item) -> object:
    """How ``keywords`` keys a tracked item: a state key by itself, an object by identity."""
    return item if isinstance(item, str) else id(item)


def _element(subscript: str) -> str:
    """``['h1']`` -> ``h1``, ``[0]`` -> ``0`` (a dict's or list's child in a checkpoint)."""
    inner = subscript[1:-1]
    return inner[1:-1] if inner[:1] in "'\"" else inner


def _slots(program: NativeProgram, optimizer: Optimizer, path: str,
           tf1_names: Dict[str, str]) -> List[Tuple[str, str]]:
    """The Keras 3 optimizer's variables, from TF1's slots (one training, its variables named)."""
    trainings = [t for s in program.steps for t in s.trainings if t.optimizer.stmt is optimizer.stmt]
    made = KERAS_SLOTS.get(optimizer.tf1_name)
    if optimizer.keras is None or made is None or not trainings or "{" in trainings[0].scope:
        return []  # (a scope named when the program runs: TF1's names are not known here)
    variables: List[str] = []
    for variable in trainings[0].variables:
        if isinstance(variable, Layer):
            weights = ("kernel",) if _no_bias(variable) else ("kernel", "bias")
            variables += [f"{variable.scoped}/{w}" for w in weights]
        elif variable in tf1_names:
            variables.append(tf1_names[variable])
        else:
            return []
    slot, suffixes = made
    args = _arguments(optimizer.call, optimizers.KERAS_EQUAL[optimizer.tf1_name][0])
    if args is None:
        return []
    name = args.get("name")
    if name is not None:
        if not isinstance(name, cst.SimpleString):
            return []
        slot = name.evaluated_value
    if made[0] == "RMSProp":  # Keras keeps each kind of state as a block over the variables
        layout = _rmsprop_layout(args)
        return [(f"{variable}/{slot}{suffix}", f"{path}/_variables/{2 + block * len(variables) + at}"
                 if block is not None else "#not-kept")
                for at, variable in enumerate(variables) for suffix, block in layout or ()]
    out = []
    for at, variable in enumerate(variables):
        for k, suffix in enumerate(suffixes):
            target = f"{path}/_variables/{2 + at * len(suffixes) + k}"
            if made[0] == "Momentum":
                rate = _number(args.get("learning_rate"))
                if rate is None:
                    return []
                target += f"#scale={-rate!r}"
            out.append((f"{variable}/{slot}{suffix}", target))
    if made[0] == "Adam":
        beta1 = _number(args["beta1"]) if "beta1" in args else 0.9
        if beta1 is None:
            return []
        scope = trainings[0].scope
        out.append((f"{scope}/beta1_power" if scope else "beta1_power", f"{path}/_iterations#power={beta1!r}"))
    return out


def _rmsprop_layout(args) -> Optional[List[Tuple[str, Optional[int]]]]:
    """TF1's RMSProp slots (mean square, mean gradient where centered, momentum: RMSProp,
    RMSProp_1, ...) -> Keras' blocks (velocities, momentums where momentum > 0, average
    gradients where centered; at momentum 0 TF1's momentum slot holds the last update, which
    no later one reads: None, not kept); None where the arguments are not literals."""
    momentum = _number(args["momentum"]) if "momentum" in args else 0.0
    centered = code(args["centered"]) if "centered" in args else "False"
    if momentum is None or centered not in ("True", "False"):
        return None
    layout, centered = [("", 0)], centered == "True"
    layout.append(("_2" if centered else "_1", len(layout) if momentum else None))
    if centered:
        layout.append(("_1", len([b for _, b in layout if b is not None])))
    return layout


def _no_bias(layer: Layer) -> bool:
    return any(a.keyword is not None and a.keyword.value == "use_bias" and code(a.value) == "False"
               for a in layer.call.args)


def _number(expr) -> Optional[float]:
    if isinstance(expr, (cst.Float, cst.Integer)):
        return float(expr.evaluated_value)
    return None


# -- emit --------------------------------------------------------------------------------
def keywords(program: NativeProgram, made: Dict[int, str], layers: Dict[int, str]) -> Dict[object, str]:
    """What the checkpoint calls each object it tracks (see ``_key``): the Python name the
    program gives it."""
    out: Dict[object, str] = {}
    for item in program.saver.tracked if program.saver else ():
        if isinstance(item, str):
            out[_key(item)] = item
        elif isinstance(item, Layer):
            out[_key(item)] = layers[id(item)]
        else:
            out[_key(item)] = made[id(item.stmt)]
    return out


def emit(ctx, finding, program: NativeProgram, keywords_: Dict[object, str], tf: str) -> list:
    """The Saver's statement -> the checkpoint (and its manager); saves and restores -> theirs.
    Where the checkpoint tracks layers (made with the steps' definitions, after the graph), its
    statements go there: they are returned, for the definitions; else [] (they stand where the
    Saver was)."""
    saver_ = program.saver
    if saver_ is None:
        return []
    taken = source_identifiers(ctx)
    checkpoint = next((n for n in ("checkpoint", "ckpt") if n not in taken), None) \
        or unused_name("checkpoint", taken)
    manager = next((n for n in ("manager", "checkpoint_manager") if n not in taken), None) \
        or unused_name("manager", taken)
    tracked = ", ".join(f"{keywords_[_key(item)]}={keywords_[_key(item)]}" for item in saver_.tracked)
    lines = [cst.parse_statement(f"{checkpoint} = {tf}.train.Checkpoint({tracked})\n")]
    if saver_.directory is not None:
        keep = code(saver_.max_to_keep) if saver_.max_to_keep is not None else "5"
        lines.append(cst.parse_statement(
            f"{manager} = {tf}.train.CheckpointManager({checkpoint}, {code(saver_.directory)}, "
            f"max_to_keep={keep}, checkpoint_name={code(saver_.checkpoint_name)})\n"))
        if code(saver_.directory).startswith("os.path.dirname("):
            finding.add_import("import os")
    for save in program.saves:
        finding.replace(save.call, lambda updated, save=save: _call(save, updated, checkpoint, manager))
    if any(isinstance(item, Layer) for item in saver_.tracked):
        finding.remove(saver_.stmt)
        return lines
    lines[0] = lines[0].with_changes(leading_lines=saver_.stmt.leading_lines)
    finding.replace(saver_.stmt, lambda updated: cst.FlattenSentinel(lines))
    return []


def _call(save: Save, updated: cst.Call, checkpoint: str, manager: str) -> cst.Call:
    """``saver.save(sess, path, global_step=step)`` -> ``manager.save(checkpoint_number=step)``;
    ``saver.save(sess, path)`` -> ``checkpoint.write(path)``; ``saver.restore(sess, path)``
    -> ``checkpoint.restore(path)`` (the arguments as the fixes left them)."""
    args = _arguments(updated, SAVE_PARAMS if save.kind != "restore" else RESTORE_PARAMS)
    if save.kind == "managed":
        return cst.parse_expression(f"{manager}.save(checkpoint_number={code(args['global_step'])})")
    method = "write" if save.kind == "write" else "restore"
    return cst.Call(cst.parse_expression(f"{checkpoint}.{method}"), [cst.Arg(args["save_path"])])


__all__ = ["emit", "keywords", "names", "reopened", "saver", "saves"]
