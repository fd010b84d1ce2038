"""TF1 optimizers and the Keras optimizers that compute the same updates.

Measured on TF 1.15.5 against TF 2.21 (Keras 3 and tf_keras), 50 steps, float32: these
Keras forms equal TF1's optimizer on dense gradients when every argument is given
explicitly (Adam's epsilon above all: Keras' default 1e-7 is not TF1's 1e-8). Where no
Keras form is equal, the TF1 optimizer (``tf.compat.v1.train``) is kept and applied in the
same GradientTape step, which equals TF 1.15 in every case measured; ``why_kept`` says why.
tests/test_native_programs.py proves each mapping against TF 1.15.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from migrate.codemod.cstutil import code, nodes_of

from .syntax import _names_read

# TF1 name -> (its parameters in order, the Keras class, TF1 parameter -> Keras keyword,
# Keras keywords that must be written although TF1 left them at its default)
KERAS_EQUAL: Dict[str, Tuple[Tuple[str, ...], str, Dict[str, str], Dict[str, str]]] = {
    "tf.train.GradientDescentOptimizer": (
        ("learning_rate", "use_locking", "name"), "SGD", {"learning_rate": "learning_rate"}, {}),
    "tf.train.MomentumOptimizer": (
        ("learning_rate", "momentum", "use_locking", "name", "use_nesterov"), "SGD",
        {"learning_rate": "learning_rate", "momentum": "momentum", "use_nesterov": "nesterov"}, {}),
    "tf.train.AdamOptimizer": (
        ("learning_rate", "beta1", "beta2", "epsilon", "use_locking", "name"), "Adam",
        {"learning_rate": "learning_rate", "beta1": "beta_1", "beta2": "beta_2", "epsilon": "epsilon"},
        {"learning_rate": "0.001", "epsilon": "1e-08"}),
    "tf.train.AdagradOptimizer": (
        ("learning_rate", "initial_accumulator_value", "use_locking", "name"), "Adagrad",
        {"learning_rate": "learning_rate", "initial_accumulator_value": "initial_accumulator_value"},
        {"initial_accumulator_value": "0.1", "epsilon": "0.0"}),
    "tf.train.AdadeltaOptimizer": (
        ("learning_rate", "rho", "epsilon", "use_locking", "name"), "Adadelta",
        {"learning_rate": "learning_rate", "rho": "rho", "epsilon": "epsilon"},
        {"learning_rate": "0.001", "epsilon": "1e-08"}),
    "tf.train.RMSPropOptimizer": (
        ("learning_rate", "decay", "momentum", "epsilon", "use_locking", "centered", "name"), "RMSprop",
        {"learning_rate": "learning_rate", "decay": "rho", "momentum": "momentum", "epsilon": "epsilon",
         "centered": "centered"},
        {"epsilon": "1e-10"}),
}
# Keras optimizers whose state starts where TF1's did only when set after it is built: TF1's
# RMSProp starts its mean square at 1, Keras' RMSprop at 0 (its ``_velocities``, in both
# Keras generations); measured equal to TF 1.15 so set (plain, momentum, centered)
STARTS_AT_ONE = {"RMSprop": "_velocities"}
IGNORED = {"use_locking", "name"}  # no effect on the values (Keras names its own variables)

KEPT = {
    "tf.train.FtrlOptimizer": "its Keras form is not proven equal here",
    "tf.train.ProximalGradientDescentOptimizer": "Keras has no proximal optimizer",
    "tf.train.ProximalAdagradOptimizer": "Keras has no proximal optimizer",
    "tf.train.AdagradDAOptimizer": "Keras has no dual-averaging Adagrad",
}
SPARSE = "its gradients are sparse (tf.gather, embedding lookups): TF1 updates only the batch's rows"


def arguments(call: cst.Call, params: Tuple[str, ...]) -> Optional[Dict[str, cst.BaseExpression]]:
    """The call's arguments by parameter name, or None where they cannot be read."""
    out: Dict[str, cst.BaseExpression] = {}
    for at, arg in enumerate(call.args):
        if arg.star:
            return None
        name = arg.keyword.value if arg.keyword else (params[at] if at < len(params) else None)
        if name is None or name not in params or name in out:
            return None
        out[name] = arg.value
    return out


def keras_form(tf1_name: str, call: cst.Call, sparse: bool) -> Tuple[Optional[str], str]:
    """(the Keras call that replaces the TF1 optimizer, or None; why the TF1 one is kept)."""
    entry = KERAS_EQUAL.get(tf1_name)
    if entry is None:
        return None, KEPT.get(tf1_name, "its Keras form is not proven equal here")
    if sparse and entry[1] != "SGD" or sparse and tf1_name == "tf.train.MomentumOptimizer":
        return None, SPARSE
    params, keras, renamed, explicit = entry
    given = arguments(call, params)
    if given is None:
        return None, "its arguments cannot be read (a *args or **kwargs)"
    parts: List[str] = []
    for name in params:
        if name in IGNORED or name not in renamed:
            continue
        if name in given:
            parts.append(f"{renamed[name]}={code(given[name])}")
        elif renamed[name] in explicit:
            parts.append(f"{renamed[name]}={explicit[renamed[name]]}")
    parts += [f"{k}={v}" for k, v in explicit.items() if k not in renamed.values()]
    return f"{keras}({', '.join(parts)})", ""


def started_at_one(tf1_name: str, keras: Optional[str]) -> Optional[str]:
    """The Keras optimizer's state TF1 started at 1 (its attribute), or None."""
    entry = KERAS_EQUAL.get(tf1_name)
    return STARTS_AT_ONE.get(entry[1]) if keras is not None and entry is not None else None


def set_as_tf1(name: str, attr: str, loop: str, tf: str) -> cst.BaseStatement:
    """``for velocity in optimizer._velocities: velocity.assign(tf.ones_like(velocity))``
    (after the step training with it was traced: Keras makes its state then)."""
    return cst.parse_statement(
        f"for {loop} in {name}.{attr}:  # TF1's RMSProp started its mean square at 1, Keras' at 0\n"
        f"    {loop}.assign({tf}.ones_like({loop}))\n")


#: ops gathering rows (an embedding lookup): the gradient of what they gather from is sparse
SPARSE_OPS = {"tf.gather", "tf.gather_nd", "tf.nn.embedding_lookup", "tf.nn.embedding_lookup_sparse"}


def sparse(reader, names) -> bool:
    """Whether what ``names`` need gathers rows of a variable (``tf.gather(W, ids)``,
    an embedding lookup): its gradient is sparse (a gather of a computed tensor is not,
    by the time it reaches a variable)."""
    for made in reader.slice(names):
        for call in nodes_of(made.stmt, (cst.Call,)):
            if reader.call_name(call) in SPARSE_OPS and (not call.args or any(
                    n in reader.state for n in _names_read(call.args[0].value, reader.self_name))
                    or call.args[0].keyword is not None and call.args[0].keyword.value != "params"):
                return True
    return False
