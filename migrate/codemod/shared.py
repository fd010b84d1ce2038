"""Helpers several rules share (one module, so that no rule imports another rule)."""
import re
from typing import Callable, Optional, Set

import libcst as cst

from migrate.codemod.cstutil import nodes_of
from migrate.codemod.keras_weights import is_keras_class
from migrate.codemod.resolver import dotted

# -- Keras methods (TFM301, TFM302, TFM303, TFM304) -------------------------------
CALL_METHODS = {"call", "__call__"}


def owner_method(ctx):
    """(class, method) when the current node sits directly in a method of a Keras class."""
    func = ctx.enclosing(cst.FunctionDef)
    if func is None:
        return None, None
    stack = ctx.stack
    index = stack.index(func)
    # the method's parent chain: ClassDef -> IndentedBlock -> FunctionDef
    if index < 2 or not isinstance(stack[index - 2], cst.ClassDef):
        return None, None
    classdef = stack[index - 2]
    if not is_keras_class(ctx, classdef):
        return None, None
    return classdef, func


def self_name(func: cst.FunctionDef):
    params = func.params.params
    return params[0].name.value if params else None


# -- TensorFlow's tables (TFM102, TFM103) ----------------------------------------
REMOVED = re.compile(r"`(\w+)` has been removed from .*?The '(\w+)' \w+ will be used by default")


def removed_parameter(tables, name):
    """(parameter, the value TF2 always uses) when TensorFlow's tables say TF2 removed a
    parameter of ``name`` (embedding lookups' ``partition_strategy``: 'div')."""
    match = REMOVED.search(tables["function_warnings"].get(name or "", ""))
    return (match.group(1), match.group(2)) if match else None


# -- calls TF2 still accepts unchanged (TFM101, TFM103) ----------------------------
STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)


def fine_in_tf2(name: str, node: cst.Call) -> bool:
    """Calls of a transformed function in the form TF2 still accepts unchanged:
    ``tf.name_scope("x")`` (one name), ``tf.device("/cpu:0")`` (a device string),
    ``tf.zeros_like(x)`` (no ``optimize``)."""
    args = node.args
    if name == "tf.nn.dropout":  # the transform is for TF1's keep_prob; rate= is TF2's
        return all(not a.star for a in args) and len(args) >= 2 and any(
            a.keyword is not None and a.keyword.value == "rate" for a in args) and not any(
            a.keyword is not None and a.keyword.value == "keep_prob" for a in args) and (
            args[1].keyword is not None)
    if name in ("tf.zeros_like", "tf.ones_like"):  # the transform is for TF1's `optimize`
        return all(not a.star for a in args) and len(args) <= 3 and not any(
            a.keyword is not None and a.keyword.value in ("optimize", "tensor") for a in args)
    if len(args) != 1 or args[0].keyword is not None or args[0].star:
        return False
    value = args[0].value
    if name == "tf.name_scope":
        return not (isinstance(value, cst.Name) and value.value == "None")
    if name == "tf.device":
        return isinstance(value, STRINGS)
    return False


# transformed functions whose TF1 calls rules carry out in TF2's own terms: TFM107 (dropout's
# keep_prob, softmax_cross_entropy_with_logits's labels, strings.split's SparseTensor),
# TFM101 (name_scope/device forms), TFM102 (zeros_like/ones_like's optimize, while_loop's
# order). The other functions of the ``compat_v1_keeps`` table move to tf.compat.v1 (TFM102).
CARRIED_OUT_IN_TF2 = frozenset({"tf.nn.dropout", "tf.nn.softmax_cross_entropy_with_logits",
                                "tf.strings.split", "tf.name_scope", "tf.device", "tf.zeros_like",
                                "tf.ones_like", "tf.while_loop"})


# -- shims.estimator (TFM105, TFM110) ---------------------------------------------
# what shims.estimator provides, by TF1 name prefix -> its name there
SUPPORTED = {
    "tf.estimator.Estimator": "Estimator",
    "tf.estimator.EstimatorSpec": "EstimatorSpec",
    "tf.estimator.ModeKeys": "ModeKeys",
    "tf.estimator.RunConfig": "RunConfig",
    "tf.estimator.TrainSpec": "TrainSpec",
    "tf.estimator.EvalSpec": "EvalSpec",
    "tf.estimator.train_and_evaluate": "train_and_evaluate",
    "tf.estimator.inputs.numpy_input_fn": "inputs.numpy_input_fn",
    "tf.estimator.SessionRunHook": "SessionRunHook",
    "tf.estimator.SessionRunArgs": "SessionRunArgs",
    "tf.estimator.LoggingTensorHook": "LoggingTensorHook",
    "tf.estimator.StopAtStepHook": "StopAtStepHook",
    "tf.estimator.CheckpointSaverHook": "CheckpointSaverHook",
    "tf.estimator.tpu.TPUEstimator": "TPUEstimator",
    "tf.estimator.tpu.TPUEstimatorSpec": "TPUEstimatorSpec",
    "tf.estimator.tpu.RunConfig": "RunConfig",
    "tf.estimator.tpu.TPUConfig": "TPUConfig",
    "tf.estimator.tpu.InputPipelineConfig": "InputPipelineConfig",
    "tf.contrib.tpu.TPUEstimator": "TPUEstimator",
    "tf.contrib.tpu.TPUEstimatorSpec": "TPUEstimatorSpec",
    "tf.contrib.tpu.RunConfig": "RunConfig",
    "tf.contrib.tpu.TPUConfig": "TPUConfig",
    "tf.contrib.tpu.InputPipelineConfig": "InputPipelineConfig",
    "tf.contrib.tpu.CrossShardOptimizer": "CrossShardOptimizer",
    "tf.tpu.CrossShardOptimizer": "CrossShardOptimizer",
    "tf.contrib.learn.ModeKeys": "ModeKeys",
    "tf.train.SessionRunHook": "SessionRunHook",
    "tf.train.SessionRunArgs": "SessionRunArgs",
    "tf.train.SessionRunContext": "SessionRunContext",
    "tf.train.ChiefSessionCreator": "ChiefSessionCreator",
    "tf.train.SessionRunValues": "SessionRunValues",
    "tf.train.LoggingTensorHook": "LoggingTensorHook",
    "tf.train.StopAtStepHook": "StopAtStepHook",
    "tf.train.CheckpointSaverHook": "CheckpointSaverHook",
    "tf.train.NanTensorHook": "NanTensorHook",
    "tf.train.NanLossDuringTrainingError": "NanLossDuringTrainingError",
    "tf.estimator.NanTensorHook": "NanTensorHook",
    "tf.estimator.NanLossDuringTrainingError": "NanLossDuringTrainingError",
    "tf.estimator.experimental.make_early_stopping_hook": "experimental.make_early_stopping_hook",
    "tf.contrib.estimator.make_early_stopping_hook": "experimental.make_early_stopping_hook",
    "tf.estimator.experimental.stop_if_higher_hook": "experimental.stop_if_higher_hook",
    "tf.contrib.estimator.stop_if_higher_hook": "experimental.stop_if_higher_hook",
    "tf.estimator.experimental.stop_if_lower_hook": "experimental.stop_if_lower_hook",
    "tf.contrib.estimator.stop_if_lower_hook": "experimental.stop_if_lower_hook",
    "tf.estimator.experimental.stop_if_no_decrease_hook": "experimental.stop_if_no_decrease_hook",
    "tf.contrib.estimator.stop_if_no_decrease_hook": "experimental.stop_if_no_decrease_hook",
    "tf.estimator.experimental.stop_if_no_increase_hook": "experimental.stop_if_no_increase_hook",
    "tf.contrib.estimator.stop_if_no_increase_hook": "experimental.stop_if_no_increase_hook",
}


def target(name: str) -> Optional[str]:
    """``shims.estimator.X...`` for a TF1 name shims.estimator provides, else None."""
    for prefix in sorted(SUPPORTED, key=len, reverse=True):
        if name == prefix or name.startswith(prefix + "."):
            return "estimator." + SUPPORTED[prefix] + name[len(prefix):]
    return None


# -- TF1 graph mode (TFM201, TFM501) ----------------------------------------------
# the calls that put the process in TF1 graph mode, as ctx.v1 names them
GRAPH_SWITCHES = {"tf.disable_v2_behavior", "tf.disable_eager_execution"}

# what runs on tf.keras or on tf_keras-only TF1 APIs (layers, RNN cells, tf-slim): a module
# migrated for Keras 2 that mentions it declares Keras 2 (engine), and one kept in graph
# mode needs shims to select it (TFM501)
_KERAS_USE = re.compile(r"\bkeras\b|\blayers\b|rnn_cell|contrib\.rnn|\bslim\b")


def uses_keras(source: str) -> bool:
    return _KERAS_USE.search(source) is not None


def is_graph_switch(ctx, stmt) -> bool:
    """``tf.compat.v1.disable_eager_execution()`` (or ``disable_v2_behavior()``) as a statement."""
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)
            and ctx.public_v1(stmt.body[0].value.func) in GRAPH_SWITCHES)


def resets_graph(ctx, stmt) -> bool:
    """Is ``stmt`` a call of ``tf.reset_default_graph()``, or of a module function whose body
    calls it at its top level (``reset_graph()`` in many tutorials)? What follows builds a
    new graph: TF1 layer names, variable names and programs start again (TFM201, TFM501)."""
    call = _called(stmt)
    if call is None:
        return False
    if ctx.public_v1(call.func) == "tf.reset_default_graph":
        return True
    if ctx.facts.graph_resetters is None:  # by the name called: read once, wherever the walk is
        ctx.facts.graph_resetters = {
            f.name.value for f in ctx.module.body if isinstance(f, cst.FunctionDef)
            and isinstance(f.body, cst.IndentedBlock) and any(
                (c := _called(s)) is not None and isinstance(c.func, cst.Attribute)
                and c.func.attr.value == "reset_default_graph" for s in f.body.body)} \
            if "reset_default_graph" in ctx.source else set()
    return isinstance(call.func, cst.Name) and call.func.value in ctx.facts.graph_resetters


def graph_loop(ctx, stmt) -> bool:
    """A ``for``/``while`` loop whose body starts a new graph (``tf.reset_default_graph()``):
    each pass builds a graph of its own (a search's trials)."""
    return isinstance(stmt, (cst.For, cst.While)) and isinstance(stmt.body, cst.IndentedBlock) \
        and any(resets_graph(ctx, s) for s in stmt.body.body)


def _called(stmt) -> Optional[cst.Call]:
    """The call a statement of one expression makes (``f(x)``), else None."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 \
            and isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call):
        return stmt.body[0].value
    return None


TF1_GRAPH = "shims.tf1_graph"  # a block TFM501 keeps in TF1 graph mode on a graph of its own


def is_tf1_graph(node) -> bool:
    """``with shims.tf1_graph():``: its block is TF1 graph code (TFM501 put it there)."""
    return isinstance(node, cst.With) and any(
        isinstance(item.item, cst.Call) and dotted(item.item.func) == TF1_GRAPH for item in node.items)


def in_graph_mode(ctx) -> bool:
    """Does the code being visited run in TF1 graph mode: the module, or a block that
    encloses it (a function's body, an ``if`` or ``elif`` branch: TFM501 switches a program
    kept in graph mode on where it starts), switches graph mode on as a statement of its
    own, or is it under ``with shims.tf1_graph():`` (or in a function called there)? There
    TF1's functional layers are right as they are (their variables, UPDATE_OPS and dropout
    streams are TF1's); Keras objects are for eager code."""
    if ctx.facts.graph_mode is None:
        ctx.facts.graph_mode = any(is_graph_switch(ctx, s) for s in ctx.module.body)
    if ctx.facts.graph_mode:
        return True
    if ctx.facts.tf1_graph_calls is None:  # a module function called in such a block runs there
        ctx.facts.tf1_graph_calls = {
            call.func.value for block in nodes_of(ctx.module, cst.With) if is_tf1_graph(block)
            for call in nodes_of(block.body, cst.Call) if isinstance(call.func, cst.Name)} \
            if "tf1_graph" in ctx.source else set()
    return any(type(node) is cst.IndentedBlock and any(is_graph_switch(ctx, s) for s in node.body)
               or is_tf1_graph(node) or type(node) is cst.FunctionDef and node.name.value in ctx.facts.tf1_graph_calls
               for node in ctx.stack)


# -- TF1 Dataset iterator methods (TFM109 rewrites them, TFM501 reads them as graph code) --
# method -> the tf.compat.v1 function TF2 keeps for it
DATASET_ITERATOR_METHODS = {"make_one_shot_iterator": "compat.v1.data.make_one_shot_iterator",
                            "make_initializable_iterator": "compat.v1.data.make_initializable_iterator"}


# -- what a plain name holds (TFM108's dimensions, TFM119's variables) --------------
def loop_iterable(ctx, name: str) -> Optional[cst.BaseExpression]:
    """What ``name`` iterates over when it is the variable of an enclosing ``for`` or
    comprehension (the innermost one binding it), else None."""
    for ancestor in ctx.ancestors(cst.For, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp):
        loops = []
        if isinstance(ancestor, cst.For):
            loops.append(ancestor)
        else:
            comp = ancestor.for_in
            while comp is not None:
                loops.append(comp)
                comp = comp.inner_for_in
        for loop in loops:
            if isinstance(loop.target, cst.Name) and loop.target.value == name:
                return loop.iter
    return None


def names_bound_only_to(module: cst.Module, kind: Callable[[cst.BaseExpression], bool]) -> Set[str]:
    """Names every plain assignment of which is of ``kind`` (``shape = x.get_shape()``,
    ``tvars = tf.trainable_variables()``), with one walk of the module."""
    found: Set[str] = set()
    others: Set[str] = set()
    for node in nodes_of(module, cst.Assign):
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                (found if kind(node.value) else others).add(target.target.value)
    return found - others
