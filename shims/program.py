"""GraphProgram: TF1 graph-building code run as TF2 functions, eagerly.

A TF1 program builds a graph (placeholders, variables, a train op) and then
drives it with ``sess.run(fetches, feed_dict)``. ``GraphProgram`` keeps the graph
code as it is, in a function whose parameters are the former placeholders, and
runs each distinct ``(fetches, feeds)`` combination as a ``tf.function`` step:

    def build(x, y_):
        W = tf.Variable(tf.zeros([6, 3]), name="W")
        loss = ...
        train_op = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(loss)
        return {"W": W, "loss": loss, "train_op": train_op}

    program = shims.GraphProgram(build, x=tf.TensorSpec([None, 6]), y_=tf.TensorSpec([None, 3]))
    _, loss = program.run(["train_op", "loss"], x=batch_x, y_=batch_y)   # numpy values
    program.save("ckpt/model", global_step=100)                          # TF1 names

What makes it behave like the TF1 graph:

- **Only what the fetches need runs.** Steps are traced without automatic control
  dependencies, so fetching ``accuracy`` does not also run the train op: exactly
  ``sess.run``'s pruning. A fetched op (a train op) runs; its value is ``None``.
- **Variables are created once, with their TF1 names** (``W``, ``dense/kernel``,
  ``W/Adam``, ``beta1_power``, ``global_step``, metric totals): raw ``tf.Variable``
  calls are keyed by their graph name, ``get_variable``/``tf.compat.v1.layers`` go
  through the TF1-style variable store. Every trace starts with fresh name scopes,
  so the same code gives the same names in every step function.
- **Collections are filled as in TF1** (global, trainable, local, metric
  variables), so ``optimizer.minimize(loss)`` without a ``var_list``,
  ``tf.compat.v1.trainable_variables()`` and ``global_variables()`` see the
  program's variables.
- **Checkpoints use TF1 names** (a ``tf.compat.v1.train.Saver`` over the global
  variables, in eager mode): checkpoints the TF1 program wrote restore, and what
  this writes restores into the TF1 graph.

Imports inside functions: tf_keras, Keras 3 and TensorFlow internals used by one code path each (the update hooks of the Keras generation loaded, eager tensor conversion), loaded when that path runs.
"""
from __future__ import annotations

import contextlib
import io
import re
import sys
import threading
import weakref
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple
import os

import numpy as np
import tensorflow as tf
from tensorflow.python.data.ops import dataset_ops, iterator_ops
from tensorflow.python.data.util import structure as _structure
from tensorflow.python.eager import context as _context
from tensorflow.python.framework import ops
from tensorflow.python.ops import gen_dataset_ops, gen_summary_ops
from tensorflow.python.ops import io_ops, resource_variable_ops, summary_ops_v2
from tensorflow.python.ops import control_flow_util as _flow_util
from tensorflow.python.ops import ref_variable as _ref_variable
from tensorflow.python.ops import variables as _variables
from tensorflow.python.ops import resource_variables_toggle as _toggle
from tensorflow.python.ops import variable_scope as vs
from tensorflow.python.training import checkpoint_utils as _checkpoint_utils
from tensorflow.python.training import slot_creator as _slot_creator

from shims import _replicas
from shims._store import VariableStore, building_layer

_GLOBAL = ops.GraphKeys.GLOBAL_VARIABLES
_TRAINABLE = ops.GraphKeys.TRAINABLE_VARIABLES
_LOCAL = ops.GraphKeys.LOCAL_VARIABLES


class Default:
    """A former ``placeholder_with_default``: fed when given, else ``value``."""

    def __init__(self, value, shape=None, dtype=None) -> None:
        self.value = tf.convert_to_tensor(value, dtype=dtype)
        shape = self.value.shape if shape is None else tf.TensorShape(shape)
        self.spec = tf.TensorSpec(shape, self.value.dtype)


def _spec(value):
    """The input signature of one parameter: a TensorSpec (or a nested structure of
    them, e.g. a features dict), a dtype, or a Default."""
    if isinstance(value, Default):
        return value.spec

    def leaf(item):
        if isinstance(item, tf.TypeSpec):
            return item
        if isinstance(item, tf.dtypes.DType):
            return tf.TensorSpec(None, item)
        raise TypeError(f"a parameter spec must be a tf.TensorSpec (or a structure of them), "
                        f"a dtype or shims.Default, not {type(item).__name__}")

    return tf.nest.map_structure(leaf, value)


class _State:
    """A GraphProgram's bookkeeping, kept out of tf.Module's attribute tracking."""


class _Building(threading.local):
    program: Optional["GraphProgram"] = None
    graph = None
    keys: set = set()  # variable names taken in the trace being built
    iterators: list = []  # (iterator, one-shot?) made in the trace being built, in order
    writers: int = 0  # summary writers made in the trace being built


_BUILDING = _Building()
_REPLICA_SCOPE = re.compile(r"^replica_\d+(/|$)")


def towers(ids) -> list:
    """The iterations of a TF1 tower loop (``for i in range(num_gpus):``) this replica runs:
    all of them, except in a program :meth:`GraphProgram.on_towers` running them as a
    strategy's replicas, where replica i runs tower ``ids[i]`` alone."""
    ids = list(ids)
    program = _BUILDING.program
    if program is None or not program.towers:
        return ids
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return ids
    if len(ids) != context.num_replicas_in_sync:
        raise ValueError(f"the tower loop runs {len(ids)} towers, but the program was put on "
                         f"{context.num_replicas_in_sync} (on_towers): give both the same count")
    return [ids[int(tf.get_static_value(context.replica_id_in_sync_group))]]


def _slot_naming(create, name_at: int):
    """A TF1 optimizer names a slot ``<primary's TF1 name>/<op name>`` (``W/Adam``,
    ``Variable_1/Adam_1``), under the variable scope it was called in. In the step graph every unnamed primary is ``Variable``, so
    while a program builds, the slot creator says whose slot it makes and the variable
    creator keys the slot by the primary's TF1 name."""
    def create_slot(primary, *args, **kwargs):
        if _BUILDING.graph is None:
            return create(primary, *args, **kwargs)
        name = kwargs["name"] if "name" in kwargs else args[name_at - 1]
        outer = getattr(_BUILDING, "slot", None)
        # TF1 made the slot in a scope named after the primary, inside the variable scope
        # the optimizer was called in (`with tf.variable_scope('train'): minimize(...)`
        # gives `train/<primary>/RMSProp`); a replica's own scope is no part of the name
        scope = _REPLICA_SCOPE.sub("", tf.compat.v1.get_variable_scope().name)
        _BUILDING.slot = (primary, name, scope)
        try:
            return create(primary, *args, **kwargs)
        finally:
            _BUILDING.slot = outer

    return create_slot


for _fn, _at in (("create_slot", 2), ("create_slot_with_initializer", 4), ("create_zeros_slot", 1)):
    setattr(_slot_creator, _fn, _slot_naming(getattr(_slot_creator, _fn), _at))


_BUILD_HOOKS: List[Callable[["GraphProgram"], None]] = []


def _init_from_checkpoint(original):
    """``tf.compat.v1.train.init_from_checkpoint`` while a program builds. TF1 replaced the
    variables' initializers with reads from the checkpoint, so the program's init run
    loaded them (BERT's fine-tuning starts this way from the pre-trained weights); a
    later restore of the program's own checkpoint still won. Here variables are
    initialized when created, so the assignments are resolved as TF1 resolved them
    (a variable, a TF1 name, a partitioned variable's parts, or ``"scope/": "scope/"``)
    over the variables created so far, and applied once the program is built, before a
    restore."""
    def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
        program = _BUILDING.program
        if program is None or ops.get_default_graph() is not _BUILDING.graph:
            return original(ckpt_dir_or_file, assignment_map)
        if not program._state.built:  # later traces find the same variables, already loaded
            program._checkpoint_initializers(ckpt_dir_or_file, assignment_map)
        return None

    return init_from_checkpoint


def _shared_iterator(make, one_shot: bool):
    """A TF1 graph has one iterator per ``make_*_iterator`` call, and every ``sess.run``
    reads it. Steps here are separate functions, so each would read a copy of its own (a
    train step and an eval step fetching the same batch stream would both start at the
    first batch). While a program builds, the iterator is the program's own: an eager
    iterator resource made once (the n-th iterator of every trace is the same one), which
    each step captures; the dataset each trace builds is bound to it by ``MakeIterator``,
    its initializer. A one-shot iterator is initialized once, when the program is built;
    an initializable one whenever its ``initializer`` is fetched, as in TF1."""
    def patched(dataset, *args, **kwargs):
        program = _BUILDING.program
        if program is None or ops.get_default_graph() is not _BUILDING.graph:
            return make(dataset, *args, **kwargs)
        return program._iterator(dataset, one_shot)

    return patched


dataset_ops.DatasetV1._make_one_shot_iterator = _shared_iterator(
    dataset_ops.DatasetV1._make_one_shot_iterator, True)
dataset_ops.DatasetV1._make_initializable_iterator = _shared_iterator(
    dataset_ops.DatasetV1._make_initializable_iterator, False)
_checkpoint_utils._init_from_checkpoint = _init_from_checkpoint(_checkpoint_utils._init_from_checkpoint)


def _program_writers():
    """A TF1 graph made its summary writers once (``tf.contrib.summary.create_file_writer``,
    TPUEstimator host calls); TF2 makes one, eagerly, each time the code runs, and deletes
    it with its Python object. While a program builds, the n-th writer of every trace is
    the program's n-th writer: made and opened once (one event file, as in TF1), kept as
    long as the program, flushed by :meth:`GraphProgram.flush_summary_writers` (and
    closed with the program)."""
    make, open_file = gen_summary_ops.summary_writer, gen_summary_ops.create_summary_file_writer
    deleter = summary_ops_v2._ResourceSummaryWriter._set_up_resource_deleter

    def summary_writer(*args, **kwargs):
        program = _BUILDING.program
        if program is None or not tf.executing_eagerly():
            return make(*args, **kwargs)
        writers, n = program._state.writers, _BUILDING.writers
        _BUILDING.writers += 1
        if n == len(writers):
            handle = make(*args, **kwargs)
            writers.append(handle)
            program._state.writer_deleters.append(
                resource_variable_ops.EagerResourceDeleter(handle=handle, handle_device="cpu:0"))
        return writers[n]

    def create_summary_file_writer(writer, *args, **kwargs):
        program = _BUILDING.program
        if program is not None and any(writer is w for w in program._state.writers):
            if id(writer) in program._state.opened_writers:
                return None  # opened by an earlier trace
            program._state.opened_writers.add(id(writer))
        return open_file(writer, *args, **kwargs)

    def set_up_resource_deleter(writer):
        program = _BUILDING.program
        if program is not None and any(writer._resource is w for w in program._state.writers):
            return  # the program deletes it
        deleter(writer)

    gen_summary_ops.summary_writer = summary_writer
    gen_summary_ops.create_summary_file_writer = create_summary_file_writer
    summary_ops_v2._ResourceSummaryWriter._set_up_resource_deleter = set_up_resource_deleter


_program_writers()


_PROGRAMS: "weakref.WeakSet[GraphProgram]" = weakref.WeakSet()


def _op_name(key: str) -> str:
    """A parameter's name as an op name: ``self._X``'s parameter ``_X`` is ``X`` (an op
    name cannot start with ``_``)."""
    return key.lstrip("_") or "placeholder"


class SharedGraph:
    """The one graph a TF1 script built several objects into, handing each the same
    ``tf.Session`` (``m1 = Model(sess, "m1")``): a migrated script makes this in place of
    the Session and hands it on, and each object's program joins it
    (:meth:`GraphProgram.in_graph`), so their variables keep the names TF1's one graph gave
    them. Each program runs its own steps, and makes and initialises its variables
    when the object is made, as the script's initializer run did for all of them."""

    def __init__(self) -> None:
        self._programs: List["GraphProgram"] = []

    @property
    def programs(self) -> Tuple["GraphProgram", ...]:
        """The programs built into this graph, in the order they were made."""
        return tuple(self._programs)

    @property
    def variables(self) -> Tuple[tf.Variable, ...]:
        """Every program's variables, in the order TF1's graph made them."""
        return tuple(v for program in self._programs for v in program.variables)

    @property
    def graph(self) -> tf.Graph:
        """One ``tf.Graph`` holding every program's step graph built so far, as the TF1
        script's ``sess.graph`` held every object's ops when it handed it to a
        ``FileWriter`` for TensorBoard's graph view (a name two programs both use gets
        TF1's ``_1`` suffix in the second)."""
        graph = tf.Graph()
        with graph.as_default():
            for program in self._programs:
                tf.graph_util.import_graph_def(program.graph.as_graph_def(), name="")
        return graph

    def __repr__(self) -> str:
        return f"<shims.SharedGraph of {len(self._programs)} program(s)>"


def op_name(value) -> str:
    """``value.op.name`` (TF1's name of a variable or tensor's op), also for a program's
    eager variable, which has no op: its TF1 name (what TFM119 writes for ``v.op.name``)."""
    try:
        return value.op.name
    except AttributeError:
        if not isinstance(value, tf.Variable):
            raise
    for program in list(_PROGRAMS):
        key = program._state.key_of.get(id(value))
        if key is not None and program._by_name.get(key) is value:
            return key
    return _name(value)


def add_build_hook(hook: Callable[["GraphProgram"], None]) -> None:
    """Call ``hook(program)`` whenever a GraphProgram has just created its variables
    (``tf-migrate verify --program`` starts every program from the TF1 run's initial
    values this way)."""
    _BUILD_HOOKS.append(hook)


def _creator(next_creator, **kwargs):
    """The variable creator every program step runs under (see GraphProgram). A replica's
    thread inherits the calling thread's creators, so it can be on the stack twice: the
    inner one decides, the outer passes through."""
    program = _BUILDING.program
    if program is None or getattr(_BUILDING, "creating", False):
        return next_creator(**kwargs)
    _BUILDING.creating = True
    try:
        return program._create_variable(next_creator, kwargs)
    finally:
        _BUILDING.creating = False


def _update_op(graph, item) -> None:
    """Put an update (a tensor, an op, or what a variable's assign returns) in UPDATE_OPS."""
    op = item if isinstance(item, tf.Operation) else getattr(item, "op", None)
    if op is not None and getattr(op, "graph", None) is graph:
        graph.add_to_collection(ops.GraphKeys.UPDATE_OPS, op)


@contextlib.contextmanager
def _updates_to_collection(graph):
    """Keras layers' updates (batch-norm moving averages) land in UPDATE_OPS, as the TF1
    layers' did. A Keras layer runs its update ops inline, counting on a tf.function's
    automatic control dependencies; steps here have none (only what the fetches need
    runs), so without this a program's `control_dependencies(UPDATE_OPS)` would hold
    nothing and the moving averages would never move. Only the Keras generations this
    process has loaded are patched (a Keras 3 program never imports tf_keras)."""
    with contextlib.ExitStack() as stack:
        if "tf_keras" in sys.modules:
            stack.enter_context(_tf_keras_updates(graph))
        if "keras" in sys.modules:
            stack.enter_context(_keras3_updates(graph))
        yield


@contextlib.contextmanager
def _keras3_updates(graph):
    """Keras 3 layers assign their variables directly (``moving_mean.assign(...)``)."""
    from keras.src.backend.tensorflow.core import Variable

    original = Variable._direct_assign

    def _direct_assign(variable, value):
        if ops.get_default_graph() is not graph:
            return original(variable, value)
        _update_op(graph, variable._value.assign(tf.cast(value, variable._value.dtype)))
        return None

    Variable._direct_assign = _direct_assign
    try:
        from keras.src.layers.layer import Layer

        with _layer_builds(Layer, graph):
            yield
    finally:
        Variable._direct_assign = original


@contextlib.contextmanager
def _layer_builds(layer_class, graph):
    """Keep the name scope and variable scope each Keras layer is first built in, in this
    step graph (``_tf1_layer_key`` names its weights as TF1's ``tf.layers`` did), and put
    the regularization losses of each layer called there in REGULARIZATION_LOSSES."""
    original = layer_class._maybe_build

    def _maybe_build(layer, arg):
        if ops.get_default_graph() is not graph or layer.built:
            return original(layer, arg)
        builds = _BUILDING.__dict__.setdefault("keras_builds", [])
        # TF1's own layers (tf.compat.v1.layers: tf_keras' legacy layers) make their
        # variables in their variable scope, already TF1's names: None keeps them
        legacy = getattr(layer, "_keras_style", True) is False
        builds.append(None if legacy else (graph.get_name_scope(), tf.compat.v1.get_variable_scope().name,
                                           getattr(layer, "name", "")))
        try:
            return original(layer, arg)
        finally:
            builds.pop()

    call = layer_class.__call__

    def __call__(layer, *args, **kwargs):
        outputs = call(layer, *args, **kwargs)
        if ops.get_default_graph() is graph:
            _regularization_losses(graph, layer)
        return outputs

    layer_class._maybe_build, layer_class.__call__ = _maybe_build, __call__
    try:
        yield
    finally:
        layer_class._maybe_build, layer_class.__call__ = original, call


_REGULARIZED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # step graph -> layer ids


def _regularization_losses(graph, layer) -> None:
    """A Keras layer's weight regularization losses land in REGULARIZATION_LOSSES once per
    step graph, as TF1's ``tf.layers`` put them there when the layer made its variables
    (``tf.losses.get_regularization_loss()`` read them): a Keras layer computes them only
    when its ``losses`` are read. TF1's own layers (``tf.compat.v1.layers``) add theirs."""
    if getattr(layer, "_keras_style", True) is False or not layer.built:
        return
    done = _REGULARIZED.setdefault(graph, set())
    if id(layer) in done:
        return
    done.add(id(layer))
    callables = getattr(layer, "_callable_losses", None)
    if callables is not None:  # tf_keras: a regularizer per weight, called when read
        losses = [loss() for loss in callables]
    else:  # Keras 3: its regularizers over its own weights
        losses = [w.regularizer(getattr(w, "value", w)) for w in getattr(layer, "_trainable_variables", ())
                  if getattr(w, "regularizer", None) is not None]  # (TF1's take the tf.Variable)
    for loss in losses:
        if loss is not None:
            graph.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, loss)


@contextlib.contextmanager
def _tf_keras_updates(graph):
    """tf_keras layers report their updates through ``add_update``."""
    import tf_keras

    layer_class = tf_keras.layers.Layer
    original = layer_class.add_update

    def add_update(layer, updates):
        from tf_keras.src.engine import base_layer_utils

        if ops.get_default_graph() is not graph:
            return original(layer, updates)
        context = base_layer_utils.call_context()
        if context.in_keras_graph or context.frozen:
            return None
        for update in tf.nest.flatten(updates):
            result = update() if callable(update) else update
            for item in tf.nest.flatten(result):
                _update_op(graph, item)
        return None

    layer_class.add_update = add_update
    try:
        with _layer_builds(layer_class, graph):
            yield
    finally:
        layer_class.add_update = original


@contextlib.contextmanager
def _quiet(again: bool):
    """TF1 built the graph once, so what graph-building code prints (shapes, summaries)
    came out once; ``build`` is traced once per distinct step here, so the traces after
    the first print nothing (standard output and error both)."""
    if not again:
        yield
        return
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        yield


def _by_tf1_names(graph, key_of: Dict[int, str]) -> Callable:
    """``graph.get_collection(key, scope)`` matching the program's variables by their TF1
    names: ``tf.get_collection(GLOBAL_VARIABLES, scope="hidden[123]")`` found TF1's
    ``hidden1/kernel:0`` where a Keras layer called in ``tf.name_scope("dnn")`` names its
    variable ``dnn/hidden1/kernel:0`` (TF1's ``tf.layers`` ignored name scopes). Other
    items match by their own names, as TensorFlow matches them."""
    every = type(graph).get_collection

    def get_collection(name, scope=None):
        items = every(graph, name)
        if scope is None:
            return items
        regex = re.compile(scope)
        found = []
        for item in items:
            key = key_of.get(id(item))
            text = f"{key}:0" if key is not None else getattr(item, "name", None)
            if isinstance(text, str) and regex.match(text):
                found.append(item)
        return found

    return get_collection


def _python_object(value) -> bool:
    """Not a graph value nor a structure of them: an object ``build`` hands to the Python
    side of the program (a ``tf.train.Scaffold``, a ``tf.train.Saver`` over some of its
    variables)."""
    return isinstance(value, (tf.compat.v1.train.Scaffold, tf.compat.v1.train.Saver))


def _is_op(value) -> bool:
    return isinstance(value, tf.Operation)


@contextlib.contextmanager
def tf1_graph():
    """TF1 graph mode for one part of a program that otherwise runs eagerly (a section that
    ``tf.reset_default_graph()`` began and tf-migrate could not convert), as TF 1.15 ran it:
    a new default graph, like the one the reset gave TF1, seeded with the seed
    ``tf.compat.v1.set_random_seed`` set last (TF1's ``reset_default_graph();
    set_random_seed(s)`` seeded the graph the section then built; run eagerly, that call
    sets the process's seed). The block may reset the default graph itself (a
    hyper-parameter search building a graph per trial). Its variables are TF 1.15's (ref
    variables, ``tf.Variable(...)`` too, unless made with ``use_resource=True``):
    ``graph.get_tensor_by_name("hidden1/kernel:0")`` is the variable's value and
    ``hidden1/kernel/Assign`` its initializer, as TF1 code reads them, and ``tf.cond``
    builds TF1's control flow (a batch norm's moving averages are assigned in its branches).
    Eager again after the block. Yields the graph it starts with."""
    if not tf.executing_eagerly():  # already in graph mode: a graph of its own in it
        graph = tf.Graph()
        graph.seed = tf.compat.v1.get_default_graph().seed
        with graph.as_default():
            yield graph
        return
    seed = _context.global_seed()
    saved = (_toggle._DEFAULT_USE_RESOURCE, _flow_util.ENABLE_CONTROL_FLOW_V2,
             _variables.default_variable_creator_v2)
    _toggle._DEFAULT_USE_RESOURCE = _flow_util.ENABLE_CONTROL_FLOW_V2 = False
    _variables.default_variable_creator_v2 = _tf1_variable
    try:
        with _context.graph_mode():  # the process's default graph, as TF1's
            ops.reset_default_graph()
            graph = ops.get_default_graph()
            graph.seed = seed
            yield graph
    finally:
        (_toggle._DEFAULT_USE_RESOURCE, _flow_util.ENABLE_CONTROL_FLOW_V2,
         _variables.default_variable_creator_v2) = saved


def _tf1_variable(next_creator=None, **kwargs):
    """``tf.Variable(...)`` as TF 1.15's graph mode made it (``tf1_graph``)."""
    return _ref_variable.default_variable_creator(None, **kwargs)


def evaluated(value):
    """``value`` as ``Session.run`` returned it: its tensors (also in lists, tuples and dicts)
    as numpy. For TF1 code that ran TensorFlow on Python values alone
    (``sess.run(tf.argmax(labels, 1))``): eager TF2 has computed it already."""
    return _numpy(value)


class GraphProgram(tf.Module):
    """Run a TF1 graph-building function as TF2 step functions (see the module doc).

    ``build(**params)`` builds the graph and returns a mapping of names to graph
    values (tensors, variables, ops, or nested lists/tuples/dicts of them);
    ``params`` maps every parameter to a ``tf.TensorSpec`` (a former placeholder)
    or a :class:`Default` (a former ``placeholder_with_default``).
    """

    def __init__(self, build: Callable[..., Mapping[str, Any]], name: Optional[str] = None,
                 **params) -> None:
        given = name or getattr(build, "__name__", "").strip("_")
        # tf.Module names are identifiers: a lambda's "<lambda>" is not
        super().__init__(name=given if given.isidentifier() else "graph_program")
        self._build = build
        state = self._state = _State()  # untracked bookkeeping (tf.Module would wrap dicts)
        state.params = dict(params)
        state.specs = {key: _spec(value) for key, value in params.items()}
        state.store = VariableStore()
        state.collections = {}  # id(variable) -> its TF1 collections
        state.order = []        # variables in creation order
        state.key_of = {}       # id(variable) -> its TF1 name
        state.steps = {}        # (fetches, feeds) -> tf.function
        state.concrete = {}     # (fetches, feeds) -> its traced step (a _Step)
        state.ops = set()       # returned names whose value is an op (fetching gives None)
        state.built = False
        state.graph = None      # the graph of the first build (see as_default)
        state.trace_iterators = []  # (iterator, one-shot?) of the latest trace
        state.iterators = []    # the program's tf.data iterator resources, in creation order
        state.traced = False    # build has run once: later traces print nothing (see _quiet)
        state.from_checkpoint = []  # (variable, checkpoint file, tensor name, slice) to load at build
        state.savers = {}       # (max_to_keep, relative paths), or a name build returns -> its Saver
        state.writers = []      # summary writer resources, made once (see _program_writers)
        state.opened_writers = set()  # ids of those opened (their files exist)
        state.writer_deleters = []
        state.python_values = {}  # what the latest trace returned that is no graph value (a Scaffold)
        state.strategy = None   # a tf.distribute strategy whose replicas each run build (on_strategy)
        state.coordinated = None  # its steps scheduled on parameter servers' workers (on_parameter_servers)
        state.scale_loss = False  # TF1 Estimator's rule for v1 optimizers under a strategy
        state.loss_scaled = False  # a v1 optimizer divided the replicas' losses (the latest trace)
        state.shadows = {}      # id(on-read variable) -> (it, the plain variable saved for it)
        state.towers = 0        # a tower loop's count, when its towers are the replicas (on_towers)
        state.workers = None    # a synchronous cluster program's shims.cluster.MultiWorker (on_workers)
        state.shared = None     # the SharedGraph this program was built into (in_graph)
        # the variable scope the program was made in (`with tf.variable_scope("main"): dqn =
        # DQN(sess)`): TF1 built the object's graph there, so its variables are named in it
        state.scope = tf.compat.v1.get_variable_scope().name if tf.executing_eagerly() else ""
        state.graph_variables = {}  # returned name -> the variable it is (see assign)
        # TF1 name -> variable: the one tracked container (tf.train.Checkpoint sees it)
        self._by_name: Dict[str, tf.Variable] = {}
        _PROGRAMS.add(self)

    # -- variables ---------------------------------------------------------------
    @property
    def variables(self) -> Tuple[tf.Variable, ...]:
        """Every variable the graph created, in creation order (as TF1 listed them)."""
        self._ensure_built()
        return tuple(self._state.order)

    @property
    def trainable_variables(self) -> Tuple[tf.Variable, ...]:
        self._ensure_built()
        return tuple(v for v in self._state.order if _TRAINABLE in self._state.collections[id(v)])

    def global_variables(self) -> List[tf.Variable]:
        """The variables a TF1 ``tf.train.Saver()`` saves (no local/metric variables)."""
        self._ensure_built()
        return [v for v in self._state.order if _GLOBAL in self._state.collections[id(v)]]

    def variable(self, name: str) -> tf.Variable:
        """The variable with TF1 name ``name`` (``"dense/kernel"``, ``"W:0"`` works too)."""
        self._ensure_built()
        key = name[:-2] if name.endswith(":0") else name
        try:
            return self._by_name[key]
        except KeyError:
            raise KeyError(f"no variable named {name!r} in this program; it has: "
                           f"{', '.join(sorted(self._by_name)) or 'none'}") from None

    def _create_variable(self, next_creator, kwargs):
        collections = kwargs.get("collections")
        graph = ops.get_default_graph()
        key = None
        if graph is _BUILDING.graph:  # created in the step graph: key it by its TF1 name
            base = kwargs.get("name") or "Variable"
            layer = building_layer()
            if base.endswith("/"):  # an absolute scope name (what get_variable passes)
                key = base[:-1]
            elif layer is not None:  # a Keras 3 layer's weight: under the layer's TF1 name
                key = f"{layer}/{base.rsplit('/', 1)[-1]}"
            else:
                # a replica's copy of the build (see on_strategy) names its scope replica_<n>/
                scope = _REPLICA_SCOPE.sub("", graph.get_name_scope())
                key = _tf1_layer_key(f"{scope}/{base}" if scope else base)
            slot = getattr(_BUILDING, "slot", None)
            if slot is not None and id(slot[0]) in self._state.key_of:
                key = f"{self._state.key_of[id(slot[0])]}/{slot[1]}"
                key = f"{slot[2]}/{key}" if slot[2] else key
            # a name taken earlier in this trace gets TF1's suffix (two optimizers' beta1_power
            # are beta1_power and beta1_power_1), so they never share a variable
            taken = _BUILDING.keys
            if key in taken:
                stem, n = key, 1
                while f"{stem}_{n}" in taken:
                    n += 1
                key = f"{stem}_{n}"
            taken.add(key)
            existing = self._by_name.get(key)
            if existing is not None:
                return existing
        try:
            variable = next_creator(**kwargs)
        except tf.errors.InvalidArgumentError as exc:
            if "Could not satisfy device specification" not in str(exc):
                raise
            # TF1's allow_soft_placement: a variable pinned to a device this machine lacks
            # (a tower's /gpu:1 on a CPU machine) is made where TensorFlow places it
            with tf.device(None):
                variable = next_creator(**kwargs)
        if id(variable) not in self._state.collections:
            if key is None:  # made outside the step graph (the layer store, Keras): its own name
                key = _tf1_layer_key(_name(variable))
                stem, n = key, 1
                while key in self._by_name and self._by_name[key] is not variable:
                    key, n = f"{stem}_{n}", n + 1
            names = list(collections) if collections else [_GLOBAL]
            if variable.trainable and _TRAINABLE not in names:
                names.append(_TRAINABLE)
            self._state.collections[id(variable)] = tuple(names)
            self._state.order.append(variable)
            self._state.key_of[id(variable)] = key
            self._by_name[key] = variable
            self._register(_BUILDING.graph, variable)
        return variable

    def name_of(self, variable) -> str:
        """The TF1 name of one of the program's variables (what checkpoints use)."""
        return self._state.key_of[id(variable)]

    def _getter(self, getter, name, *args, **kwargs):
        """get_variable's collections (the TF1-style store drops them): a global step
        lands in GLOBAL_STEP, a metric total in LOCAL_VARIABLES, as in TF1. A variable a
        Keras layer made under its TF1 name (`tf.layers.conv2d(..., name="conv1")`, a Keras
        layer since TFM201) is found by ``get_variable`` under ``reuse=True``
        (`variable_scope("conv1", reuse=True): get_variable("kernel")`), as TF1's was."""
        try:
            variable = getter(name, *args, **kwargs)
        except ValueError:
            existing = self._by_name.get(name)
            shape = kwargs.get("shape")
            if existing is None or (shape is not None and not existing.shape.is_compatible_with(shape)):
                raise
            return existing
        collections = kwargs.get("collections")
        known = self._state.collections.get(id(variable))
        if collections and known is not None:
            names = list(collections)
            if kwargs.get("trainable", True) is not False and _TRAINABLE in known \
                    and _TRAINABLE not in names:
                names.append(_TRAINABLE)
            self._state.collections[id(variable)] = tuple(names)
            self._register(_BUILDING.graph, variable)
        return variable

    def _register(self, graph, variable) -> None:
        if graph is None:
            return
        for collection in self._state.collections[id(variable)]:
            if not any(v is variable for v in graph.get_collection(collection)):
                graph.add_to_collection(collection, variable)

    # -- tracing ----------------------------------------------------------------
    def _trace_build(self, fed: Dict[str, Any], quiet: bool = True) -> Mapping[str, Any]:
        """Run ``build`` in the current (step) graph: unfed parameters become graph
        inputs that fail only if a fetch needs them, as an unfed placeholder did."""
        graph = ops.get_default_graph()
        args = {}
        for key, spec in self._state.specs.items():
            if key in fed:
                args[key] = fed[key]
            elif isinstance(self._state.params[key], Default):
                args[key] = tf.constant(self._state.params[key].value)
            else:
                args[key] = tf.nest.map_structure(
                    lambda leaf: tf.compat.v1.placeholder(leaf.dtype, leaf.shape, name=_op_name(key)), spec)
        self._names_before_this(graph)
        scopes = ops.get_collection_ref(vs._VARSCOPESTORE_KEY)
        saved_scopes = list(scopes)
        scopes[:] = [vs._VariableScopeStore()]  # fresh TF1 name counters per trace
        outer = (_BUILDING.program, _BUILDING.graph, _BUILDING.keys, _BUILDING.iterators,
                 _BUILDING.writers)
        (_BUILDING.program, _BUILDING.graph, _BUILDING.keys, _BUILDING.iterators,
         _BUILDING.writers) = self, graph, self._taken_keys(), [], 0
        try:
            # a step graph shares the variable collections of the graph around it, so every
            # program would list every other program's variables (an Estimator's evaluate
            # would see its train() program's); each program has its own, as TF1's graphs did
            for collection in (_GLOBAL, _TRAINABLE, _LOCAL):
                graph.clear_collection(collection)
            for variable in self._state.order:  # what earlier traces created, as TF1 listed it
                self._register(graph, variable)
            graph.get_collection = _by_tf1_names(graph, self._state.key_of)
            with _updates_to_collection(graph), \
                    tf.variable_creator_scope(_creator), self._state.store.scope(), \
                    tf.compat.v1.variable_scope(self._state.scope or tf.compat.v1.get_variable_scope(),
                                                custom_getter=self._getter), \
                    _quiet(self._state.traced and quiet):
                values = self._build(**args)
            self._state.traced = True
        finally:
            self._state.trace_iterators = _BUILDING.iterators
            (_BUILDING.program, _BUILDING.graph, _BUILDING.keys, _BUILDING.iterators,
             _BUILDING.writers) = outer
            scopes[:] = saved_scopes
        if not isinstance(values, Mapping):
            raise TypeError(f"{getattr(self._build, '__name__', 'build')}() must return a mapping "
                            f"of names to graph values, not {type(values).__name__}")
        self._state.python_values = {k: v for k, v in values.items() if _python_object(v)}
        self._state.graph_variables = {k: v for k, v in values.items() if isinstance(v, tf.Variable)}
        return values

    def build_value(self, name: str):
        """A Python object ``build`` returned under ``name`` (a ``tf.train.Scaffold`` a
        monitored session is given), from its latest trace."""
        self._ensure_built()
        try:
            return self._state.python_values[name]
        except KeyError:
            raise KeyError(f"build returned no Python object named {name!r}") from None

    def _ensure_built(self) -> None:
        if not self._state.built:
            self.function(())  # a step fetching nothing creates every variable

    def function(self, fetches, feeds: Tuple[str, ...] = (), *,
                 reduce_loss: Optional[str] = None) -> Callable:
        """The ``tf.function`` step computing ``fetches`` from ``feeds`` (parameter
        names, passed positionally): one per distinct combination, traced once.
        ``reduce_loss``: see :meth:`run_replicas`."""
        feeds = tuple(feeds)
        unknown = [f for f in feeds if f not in self._state.specs]
        if unknown:
            raise KeyError(f"not a parameter of this program: {', '.join(unknown)} "
                           f"(parameters: {', '.join(self._state.specs) or 'none'})")
        key = (_freeze(fetches), feeds, reduce_loss)
        step = self._state.steps.get(key)
        if step is not None:
            return step
        specs = [self._state.specs[f] for f in feeds]
        coordinated = self._state.coordinated
        if coordinated is not None:
            step = self._state.steps[key] = coordinated.step(self, fetches, feeds, specs)
            if not self._state.built:
                self._state.graph = coordinated.build(step)  # creates the variables on the servers
                self._built()
            return step
        if self._state.strategy is not None:
            step = self._state.steps[key] = _replicas.replica_step(
                self, fetches, feeds, specs, reduce_loss, broadcast=bool(self.towers))
            if not self._state.built:
                self._state.graph = step.get_concrete_function().graph  # creates the variables
                self._built()
            return step

        def step_fn(*values):
            return self._fetched(fetches, dict(zip(feeds, values)))

        step = tf.function(step_fn, input_signature=specs, autograph=False,
                           experimental_attributes={"_disable_acd": True})
        self._state.steps[key] = step
        if not self._state.built:
            self._state.graph = step.get_concrete_function().graph  # creates the variables
            self._built()
        return step

    def _built(self) -> None:
        self._state.built = True
        self._load_checkpoint_initializers()
        self._start_one_shot_iterators()
        for hook in _BUILD_HOOKS:
            hook(self)

    # -- replicas ---------------------------------------------------------------
    def on_strategy(self, strategy, scale_loss: bool = False) -> "GraphProgram":
        """Run ``build`` once per replica of ``strategy`` (a ``tf.distribute``
        strategy over this machine's devices: ``MirroredStrategy``), as TF 1.15's
        ``call_for_each_replica`` did: the variables are the strategy's (mirrored, under
        their TF1 names), a v1 optimizer's ``apply_gradients`` sums the replicas'
        gradients, and :meth:`run_replicas` feeds each replica its own values.
        ``scale_loss``: TF 1.15 Estimator's rule (``train_distribute``): a v1 optimizer
        first divides each replica's loss by the number of replicas, so the gradients
        average. Call it before the program is built."""
        if self._state.built:
            raise RuntimeError("on_strategy() must come before the program is built")
        _replicas.check_strategy(strategy)
        self._state.strategy, self._state.scale_loss = strategy, bool(scale_loss)
        return self

    def on_towers(self, count: int, average: bool = True) -> "GraphProgram":
        """Run a TF1 multi-tower program's towers as the replicas of a
        ``tf.distribute.MirroredStrategy``: ``for i in shims.towers(range(count)):`` in
        ``build`` then runs, in replica i, only tower i, and the hand-written combination of
        the towers' gradients is the strategy's (``average``: each replica's loss is divided
        by ``count`` and the replicas' gradients summed, their mean, as a TF1
        ``average_gradients`` took it; else their sum). Every replica is fed the same
        values (the global batch, which each tower slices as in TF1) and :meth:`run`
        returns the last tower's values, as a TF1 name bound in the loop held the last
        tower's. The replicas are the first ``count`` GPUs, else ``count`` logical CPU
        devices; a machine with fewer runs every tower in one replica, as TF1's
        ``allow_soft_placement`` put them all on the devices it had. A name one tower alone
        builds (``if i == 0:``) is None in the other replicas; :meth:`run` reads it from
        the replica that built it. Call it before the program is built."""
        count = int(count)
        if count < 1:
            raise ValueError(f"on_towers: {count} towers (the tower loop's count must be at least 1)")
        devices = _replicas.tower_devices(count)
        self._state.towers = count
        if devices is not None:
            self.on_strategy(tf.distribute.MirroredStrategy(devices), scale_loss=average)
        return self

    def in_graph(self, shared: Optional["SharedGraph"]) -> "GraphProgram":
        """Build this program into ``shared``, the one TF1 graph several objects were
        handed (``Model(sess, "m1")``, ``Model(sess, "m2")`` over one Session; what TFM501
        writes for them): its variables are named as that graph named them (a name another
        program of ``shared`` took gets TF1's suffix, so a second Adam's ``beta1_power``
        is ``beta1_power_1``), and it is built now, in the order TF1 built the objects
        into the graph. ``None``: the program is its own graph."""
        if shared is None:
            return self
        if not isinstance(shared, SharedGraph):
            raise TypeError(f"in_graph: a shims.SharedGraph (what a migrated script hands its "
                            f"objects in place of its Session) or None, not {type(shared).__name__}; "
                            "a TF1 Session handed to a migrated object is not needed: hand it "
                            "shims.SharedGraph() or None")
        if self._state.built:
            raise ValueError("in_graph: call it before the program is built")
        self._state.shared = shared
        shared._programs.append(self)
        self._ensure_built()
        return self

    def _names_before_this(self, graph) -> None:
        """A program of a shared graph (see in_graph) is traced in a step graph of its own;
        TF1 built it into one graph after the programs made before it, so its name scopes
        were numbered after theirs (a second ``variable_scope('train')`` opened the name
        scope ``train_1``, where an Adam's ``tf.Variable`` beta powers live): the step graph
        starts from the names those programs' graphs used."""
        shared = self._state.shared
        if shared is None:
            return
        used = graph._names_in_use  # (TensorFlow's own counters of the names a graph has given)
        for program in shared._programs:
            if program is self:
                break
            for name, count in program._state.graph._names_in_use.items():
                used[name] = max(used.get(name, 0), count)

    def _taken_keys(self) -> set:
        """TF1 names other programs of the same shared graph took (see in_graph)."""
        shared = self._state.shared
        if shared is None:
            return set()
        return {key for program in shared._programs if program is not self for key in program._by_name}

    def on_workers(self, server) -> "GraphProgram":
        """Run a synchronous TF1 cluster program (``SyncReplicasOptimizer``) on
        ``server``'s ``MultiWorkerMirroredStrategy`` (``shims.cluster.MultiWorker``): each
        worker runs its steps on its own feeds, as TF1's did, and a v1 optimizer's gradients
        are averaged across the workers in every step (each worker's loss divided by their
        number, the gradients summed), as the chief's queue averaged them. One worker runs
        the program as it is. Call it before the program is built."""
        strategy = server.strategy()
        self._state.workers = server
        if strategy is not None:
            self.on_strategy(strategy, scale_loss=True)
        return self

    def on_parameter_servers(self, server) -> "GraphProgram":
        """Run an asynchronous TF1 cluster program (parameter servers, no
        ``SyncReplicasOptimizer``) on ``server``'s ``ParameterServerStrategy``
        (``shims.cluster.ParameterServers``). On the chief, the program's variables live on
        the parameter servers and each :meth:`run` is a step scheduled on a free worker,
        which applies its gradients there without waiting for the others, as TF1's workers
        did. Every other worker serves the chief's steps from here on: this call returns
        only on the chief (see ``shims.cluster.ParameterServers.serve``). Call it before
        the program is built."""
        if self._state.built:
            raise RuntimeError("on_parameter_servers() must come before the program is built")
        if not server.is_chief:
            server.serve()  # a worker: it runs the chief's steps until the chief ends
        self._state.coordinated = server.coordinated()
        return self

    @property
    def parameter_servers(self):
        """The chief's scheduling of this program's steps (``on_parameter_servers``), or None."""
        return self._state.coordinated

    @property
    def workers(self):
        """The ``shims.cluster.MultiWorker`` given to :meth:`on_workers`, or None."""
        return self._state.workers

    @property
    def towers(self) -> int:
        """The number of towers running as replicas (:meth:`on_towers`), else 0."""
        return self._state.towers if self._state.strategy is not None else 0

    @property
    def strategy(self):
        """The strategy given to :meth:`on_strategy`, or None."""
        return self._state.strategy

    @property
    def loss_scaled(self) -> bool:
        """Whether a v1 optimizer divided the replicas' losses in the latest trace
        (TF 1.15's Estimator then reported their mean as the loss, else their sum)."""
        return self._state.loss_scaled

    def run_replicas(self, fetches, feeds: Sequence[Mapping[str, Any]],
                     reduce_loss: Optional[str] = None) -> List[Any]:
        """One step of a program :meth:`on_strategy`: ``feeds[i]`` are the parameter
        values of this process's replica i (one mapping per local replica, the same names
        in each: every replica of a MirroredStrategy, this worker's of a multi-worker
        one); returns each one's fetched values, as :meth:`run` returns them.
        ``reduce_loss``: the key (in a dict of fetches) of a loss to report reduced across
        all replicas, as TF 1.15's Estimator did: their mean when a v1 optimizer divided
        each replica's loss (``scale_loss``), else their sum."""
        if self._state.strategy is None or self._state.towers:
            raise RuntimeError("run_replicas() is for a program on_strategy() (a tower program's "
                               "replicas all take the same feeds: use run())")
        outs = _replicas.run_replicas(self, fetches, feeds, reduce_loss)
        return [_unpack(out, fetches, self._state.ops) for out in outs]

    def _fetched(self, fetches, fed: Dict[str, Any], quiet: bool = True):
        """One trace of the build (a replica's copy runs in the replica's thread, whose
        prints the calling thread's ``_cross_replica`` handles) and its fetches."""
        graph_values = self._trace_build(fed, quiet)
        self._state.ops.update(k for k, v in graph_values.items() if _is_op(v))
        return _select(graph_values, fetches, self._state.ops, self._by_name)

    @contextlib.contextmanager
    def _cross_replica(self, graph):
        """The calling thread while the replicas run: what a ``merge_call`` creates there
        (an optimizer's slots) is the program's, as in a build; prints of later traces are
        dropped, as in ``_trace_build`` (the replicas' threads print to the same stream)."""
        outer = (_BUILDING.program, _BUILDING.graph, _BUILDING.keys)
        _BUILDING.program, _BUILDING.graph, _BUILDING.keys = self, graph, self._taken_keys()
        try:
            with tf.variable_creator_scope(_creator), self._state.store.scope(), \
                    _quiet(self._state.traced):
                yield
        finally:
            _BUILDING.program, _BUILDING.graph, _BUILDING.keys = outer

    def _checkpoint_initializers(self, ckpt_dir_or_file, assignment_map) -> None:
        """Resolve one ``init_from_checkpoint`` call as TF 1.15 did (its checks and errors),
        recording what to load (see ``_init_from_checkpoint``)."""
        ckpt_file = _checkpoint_utils._get_checkpoint_filename(ckpt_dir_or_file)
        if ckpt_file is None:
            raise ValueError(f"init_from_checkpoint: no checkpoint in {ckpt_dir_or_file}")
        shapes = _checkpoint_utils.load_checkpoint(ckpt_file).get_variable_to_shape_map()
        known = {self.name_of(v): v for v in self._state.order}  # created so far, by TF1 name
        pairs = assignment_map.items() if isinstance(assignment_map, Mapping) else assignment_map

        def parts(name):
            found, i = [], 0
            while f"{name}/part_{i}" in known:
                found.append(known[f"{name}/part_{i}"])
                i += 1
            return found or None

        def record(target, tensor_name):
            if tensor_name not in shapes:
                raise ValueError(f"Tensor {tensor_name} is not found in {ckpt_dir_or_file} "
                                 f"checkpoint {shapes}")
            if isinstance(target, (list, tuple)):
                for part in target:
                    self._state.from_checkpoint.append(
                        (part, ckpt_file, tensor_name, part._save_slice_info.spec))
                return
            if not target.shape.is_compatible_with(shapes[tensor_name]):
                raise ValueError(f"Shape of variable {target.name} ({target.shape}) doesn't match "
                                 f"with shape of tensor {tensor_name} ({shapes[tensor_name]}) "
                                 "from checkpoint reader.")
            self._state.from_checkpoint.append((target, ckpt_file, tensor_name, ""))

        for tensor_name, current in sorted(pairs, key=lambda pair: pair[0]):
            if isinstance(current, tf.Variable) or (
                    isinstance(current, list) and all(isinstance(v, tf.Variable) for v in current)):
                record(current, tensor_name)
                continue
            target = known[current] if current in known else parts(current)
            if target is not None:
                record(target, tensor_name)
                continue
            scope = current[:current.rindex("/")] if "/" in current else ""
            if not tensor_name.endswith("/"):
                raise ValueError(f"Assignment map with scope only name {scope} should map to scope "
                                 f"only {tensor_name}. Should be 'scope/': 'other_scope/'.")
            names = {n[:n.index("/part_")] if "/part_" in n else n for n in known
                     if not scope or n.startswith(scope + "/")}
            for name in sorted(names):
                full = name[len(scope):]
                if current != "/":
                    full = full[1:]
                if tensor_name != "/":
                    full = tensor_name + full
                full = full[:-1] if full.endswith("/") else full
                if full not in shapes:
                    raise ValueError(f"Tensor {full} ({name[len(scope) + 1:]} in {tensor_name}) is "
                                     f"not found in {ckpt_dir_or_file} checkpoint")
                record(known[name] if name in known else parts(name), full)

    def _load_checkpoint_initializers(self) -> None:
        """Load what ``init_from_checkpoint`` named: the variables' initial values."""
        for variable, ckpt_file, tensor_name, slice_spec in self._state.from_checkpoint:
            value = io_ops.restore_v2(ckpt_file, [tensor_name], [slice_spec],
                                      [variable.dtype.base_dtype])[0]
            variable.assign(value)
        self._state.from_checkpoint = []

    def flush_summary_writers(self) -> None:
        """Write out what the program's summary writers hold (TF1 did when its session
        ended: Estimator.train's end, a monitored session's close)."""
        for writer in self._state.writers:
            gen_summary_ops.flush_summary_writer(writer)

    @property
    def graph(self):
        """The graph of the program's step (a ``tf.Graph``), as TF1 code handed ``sess.graph``
        to a ``FileWriter`` for TensorBoard's graph view."""
        self._ensure_built()
        return self._state.graph

    def as_default(self):
        """The program's graph as the default graph, as TF1 code run between steps (a
        hook's ``before_run`` calling ``get_default_graph().get_tensor_by_name(...)``)
        found it; what such code fetches by name is found in every step."""
        self._ensure_built()
        return self._state.graph.as_default()

    def _iterator(self, dataset, one_shot: bool):
        """The program's n-th iterator, bound in this trace to ``dataset`` (see
        ``_shared_iterator``)."""
        n = len(_BUILDING.iterators)
        if n == len(self._state.iterators):  # the first trace: the resource is made once
            spec = dataset.element_spec
            with tf.init_scope():
                self._state.iterators.append(gen_dataset_ops.anonymous_iterator_v3(
                    output_types=_structure.get_flat_tensor_types(spec),
                    output_shapes=_structure.get_flat_tensor_shapes(spec)))
        handle = self._state.iterators[n]
        dataset = dataset._apply_debug_options()
        initializer = gen_dataset_ops.make_iterator(dataset._variant_tensor, handle)
        iterator = iterator_ops.Iterator(
            handle, initializer, dataset_ops.get_legacy_output_types(dataset),
            dataset_ops.get_legacy_output_shapes(dataset),
            dataset_ops.get_legacy_output_classes(dataset))
        _BUILDING.iterators.append((iterator, one_shot))
        return iterator

    def _start_one_shot_iterators(self) -> None:
        """One-shot iterators start at their dataset's first element, once per program."""
        if not any(one_shot for _, one_shot in self._state.trace_iterators):
            return

        def start():
            self._trace_build({})
            starts = [it.initializer for it, one_shot in self._state.trace_iterators if one_shot]
            with tf.control_dependencies(starts):
                return tf.constant(0)

        tf.function(start, autograph=False, experimental_attributes={"_disable_acd": True})()

    def run(self, fetches, /, **feeds):
        """``sess.run(fetches, feed_dict)``: fetches are names returned by ``build``
        (a name, or a list/tuple/dict of them); feeds are parameter values. Returns
        numpy values in the structure of ``fetches`` (``None`` for ops). A program
        :meth:`on_strategy` runs every replica on these feeds and returns the first
        replica's values (a hook reading a variable or a step counter); one
        :meth:`on_towers`, each value from the last replica that built it (the last
        tower's, or the one tower's that alone built it: None in the others)."""
        if self._state.strategy is not None and not self.towers:
            replicas = _replicas.local_replicas(self._state.strategy)
            return self.run_replicas(fetches, [feeds] * replicas)[0]
        names = tuple(feeds)
        if self._state.coordinated is not None:
            return self._scheduled(fetches, names, self._args(names, feeds))
        key = (_freeze(fetches), names)
        step = self._state.concrete.get(key)
        if step is None:  # the traced step itself: calling it skips tf.function's dispatch
            step = _Step(self.function(fetches, names).get_concrete_function())
            self._state.concrete[key] = step
        args = self._args(names, feeds)
        try:
            out = step(args)
        except (tf.errors.InvalidArgumentError, ValueError, TypeError):
            self._check_feeds(names, args)  # a wrongly shaped feed: said as TF1 says it
            raise
        if self.towers:  # one output per replica
            return _last_built([_unpack(o, fetches, self._state.ops) for o in out])
        return _unpack(out, fetches, self._state.ops)

    def _scheduled(self, fetches, names, args):
        """One step of a program :meth:`on_parameter_servers`, run by a worker: its values
        when the program reads any (the run waits for it), else None for each op."""
        step = self.function(fetches, names)
        ops = self._state.ops
        leaves = tf.nest.flatten(fetches)
        out = self._state.coordinated.run(step, args, wait=any(f not in ops for f in leaves))
        if out is None:
            return tf.nest.pack_sequence_as(fetches, [None] * len(leaves)) \
                if not isinstance(fetches, str) else None
        return _unpack(out, fetches, ops)

    def _args(self, names, feeds) -> list:
        """The fed values as the step's arguments (tensors of the parameters' dtypes)."""
        specs = self._state.specs
        args = []
        for n in names:
            value, spec = feeds[n], specs[n]
            if isinstance(spec, tf.TensorSpec):  # the common case, without tf.nest's cost
                if isinstance(value, np.ndarray) and value.dtype == spec.dtype.as_numpy_dtype:
                    args.append(_to_eager(value, spec.dtype))
                elif isinstance(value, (list, tuple)) and spec.dtype.is_numpy_compatible \
                        and spec.dtype != tf.string:
                    # nested Python lists (`[image] * batch_size`), read as TF1's session read
                    # them (np.asarray to the placeholder's dtype): four times faster than
                    # convert_to_tensor on a 100x784 batch
                    args.append(_to_eager(np.asarray(value, spec.dtype.as_numpy_dtype), spec.dtype))
                else:
                    args.append(value if isinstance(value, tf.Tensor) and value.dtype == spec.dtype
                                else tf.convert_to_tensor(value, spec.dtype))
            else:
                args.append(tf.nest.map_structure(
                    lambda v, leaf: tf.convert_to_tensor(v, leaf.dtype), value, spec))
        return args

    def assign(self, name: str, value):
        """``sess.run(tf.assign(v, value))`` or ``v.assign(value).eval()`` with a value of
        Python's (``tf.assign(lr, 0.01 * 0.97 ** epoch)``, ``last_epoch.assign(epoch + 1)``):
        the variable ``build`` returns as ``name`` takes the value, and its new value comes
        back as numpy, as the run gave it. (TF1 built a new op into the graph on each such
        run; here nothing is traced.)"""
        return self._assign(name, value, "assign")

    def assign_add(self, name: str, value):
        """``sess.run(tf.assign_add(v, value))`` with a value of Python's (see :meth:`assign`)."""
        return self._assign(name, value, "assign_add")

    def assign_sub(self, name: str, value):
        """``sess.run(tf.assign_sub(v, value))`` with a value of Python's (see :meth:`assign`)."""
        return self._assign(name, value, "assign_sub")

    def _assign(self, name: str, value, how: str):
        self._ensure_built()
        self._settle()
        variable = self._state.graph_variables.get(name)
        if variable is None:
            raise KeyError(f"{how}: {name!r} is not a variable the program's build returns "
                           f"(its variables: {', '.join(sorted(self._state.graph_variables)) or 'none'})")
        getattr(variable, how)(tf.convert_to_tensor(value, variable.dtype))
        return _numpy(variable.read_value())

    def _check_feeds(self, names, args) -> None:
        """TF1's error for a feed whose shape its placeholder cannot take (checked only
        after a step failed, so a right feed pays nothing)."""
        for n, arg in zip(names, args):
            spec = self._state.specs[n]
            for leaf, value in zip(tf.nest.flatten(spec), tf.nest.flatten(arg)):
                shape = getattr(value, "shape", None)
                if shape is not None and not leaf.shape.is_compatible_with(shape):
                    dims = ", ".join("?" if d is None else str(d) for d in leaf.shape.as_list()) \
                        if leaf.shape.rank is not None else "<unknown>"
                    raise ValueError(
                        f"Cannot feed value of shape {tuple(shape.as_list())} for {n!r}, which "
                        f"has shape ({dims}{',' if leaf.shape.rank == 1 else ''})") from None

    # -- checkpoints --------------------------------------------------------------
    def _saver(self, max_to_keep: int = 5, relative_paths: bool = False):
        """The program's Saver for these options: one object, kept, as a TF1 program kept
        its ``tf.train.Saver``, so ``max_to_keep`` counts every checkpoint it wrote (a
        Saver made per save knew only the one it wrote, and deleted none)."""
        key = (max_to_keep, relative_paths)
        saver = self._state.savers.get(key)
        if saver is None:
            saver = self._state.savers[key] = tf.compat.v1.train.Saver(
                var_list={self.name_of(v): _replicas.saveable(v, self._state.shadows)
                          for v in self.global_variables()},
                max_to_keep=max_to_keep, save_relative_paths=relative_paths)
        return saver

    def save(self, save_path: str, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False,
             save_debug_info=False, *, max_to_keep: int = 5, relative_paths: bool = False,
             saver: Optional[str] = None) -> str:
        """Write a TF1 name-based checkpoint: ``saver.save(sess, save_path, ...)`` in TF1,
        with TF1's ``Saver.save`` parameters (``save_path=``, ``write_meta_graph=False``, ...)
        but the session. ``max_to_keep`` is the Saver's. ``relative_paths``: the
        ``checkpoint`` file names it relative to its folder, as TF 1.15's Estimator and
        monitored sessions wrote it (a relative model_dir works). ``saver``: the name under
        which ``build`` returns a ``tf.train.Saver`` of its own (over some variables, or
        with options of its own), which writes the checkpoint instead, as TF1's did."""
        saver = self._saver(max_to_keep, relative_paths) if saver is None else self._built_saver(saver)
        self._before_save()
        return saver.save(None, save_path, global_step=global_step, latest_filename=latest_filename,
                          meta_graph_suffix=meta_graph_suffix, write_meta_graph=write_meta_graph,
                          write_state=write_state, strip_default_attrs=strip_default_attrs,
                          save_debug_info=save_debug_info)

    def _settle(self) -> None:
        """Every step scheduled on a worker has run (see on_parameter_servers)."""
        if self._state.coordinated is not None:
            self._state.coordinated.settle()

    def _built_saver(self, name: str):
        """The ``tf.train.Saver`` ``build`` returns as ``name`` (made over the program's
        variables; saving and restoring run eagerly). The first one is kept, as the TF1
        program kept its Saver: every trace makes another, and ``max_to_keep`` counts the
        checkpoints one Saver wrote."""
        saver = self._state.savers.get(name)
        if saver is None:
            self._ensure_built()
            built = self.build_value(name)
            if not isinstance(built, tf.compat.v1.train.Saver):
                raise TypeError(f"build returned {name!r} as a {type(built).__name__}, not a tf.train.Saver")
            saver = self._state.savers[name] = self._tf1_named(built)
        return saver

    def _tf1_named(self, built):
        """``built`` (a Saver the build made, in a step graph) remade eagerly over the same
        variables, a list of them named by their TF1 names (as TF1's Saver named them; a
        Keras layer's variable called in a ``tf.name_scope`` has another name of its own), with
        the same options."""
        var_list = built._var_list
        if var_list is None:  # `tf.train.Saver(keep_checkpoint_every_n_hours=1)`: every variable
            var_list = {self.name_of(v): v for v in self.global_variables()}
        elif not isinstance(var_list, Mapping):
            var_list = {self._state.key_of.get(id(v)) or op_name(v): v for v in var_list}
        return tf.compat.v1.train.Saver(
            var_list={k: _replicas.saveable(v, self._state.shadows) for k, v in var_list.items()},
            reshape=built._reshape, sharded=built._sharded, max_to_keep=built._max_to_keep,
            keep_checkpoint_every_n_hours=built._keep_checkpoint_every_n_hours,
            allow_empty=built._allow_empty, pad_step_number=built._pad_step_number,
            save_relative_paths=built._save_relative_paths, filename=built._filename)

    def _before_save(self) -> None:
        """What a Saver of this program is about to write is current (the steps scheduled
        on a cluster's workers have run; the values of variables synchronized on read,
        across a strategy's replicas)."""
        self._settle()
        _replicas.before_save(self._state.shadows)

    def restore(self, save_path: str, *, saver: Optional[str] = None) -> None:
        """Restore a TF1 name-based checkpoint (a file prefix or a directory):
        ``saver.restore(sess, save_path)`` in TF1. ``saver``: the name under which
        ``build`` returns a ``tf.train.Saver`` over some of its variables (``tf.train.Saver(
        reuse_vars_dict)``: the layers a model takes from another one), which restores
        those variables only, under the names its ``var_list`` gives them, as TF1's did;
        the others keep their values."""
        path = save_path
        if os.path.isdir(path):
            latest = tf.train.latest_checkpoint(path)
            if latest is None:
                raise FileNotFoundError(f"no checkpoint in {path}")
            path = latest
        self._settle()
        if saver is not None:
            self._built_saver(saver).restore(None, path)
        else:
            wanted = {self.name_of(v): v for v in self.global_variables()}
            present = dict(tf.train.list_variables(path))
            missing = sorted(n for n in wanted if n not in present)
            if missing:
                raise ValueError(f"checkpoint {path} does not hold {len(missing)} variable(s) of this "
                                 f"program: {', '.join(missing[:10])}"
                                 f"{' ...' if len(missing) > 10 else ''}")
            self._saver().restore(None, path)
        if self._state.strategy is not None:  # the Saver restored the first copies
            _replicas.after_restore(self.global_variables(), self._state.shadows)


def _to_eager(value: np.ndarray, dtype):
    """A numpy feed as an eager tensor, without convert_to_tensor's dispatch."""
    try:
        from tensorflow.python.eager import context
        from tensorflow.python.framework.constant_op import convert_to_eager_tensor
    except ImportError:  # another TensorFlow layout: the public way
        return tf.convert_to_tensor(value, dtype)
    return convert_to_eager_tensor(value, context.context(), dtype)


class _Step:
    """One traced step, called the way ``ConcreteFunction._call_flat`` calls it when no
    gradient tape records and execution is eager: straight to the runtime with the
    flat inputs and captures (what a Session's callable costs per ``run``). Any other
    situation, or a TensorFlow without these internals, takes the public call."""

    def __init__(self, concrete) -> None:
        self.concrete = concrete
        self.fast = None
        try:
            from tensorflow.python.eager import context, record

            atomic = concrete._inference_function
            self.fast = (context.context(), record, atomic.name, len(atomic.function_type.flat_outputs),
                         atomic.function_type.pack_output, list(concrete.captured_inputs))
        except (ImportError, AttributeError):
            pass

    def __call__(self, args):
        if self.fast is not None and all(isinstance(a, tf.Tensor) for a in args):
            ctx, record, name, outputs, pack, captured = self.fast
            if ctx.executing_eagerly() and not record.could_possibly_record():
                return pack(ctx.call_function(name, args + captured, outputs))
        call_flat = getattr(self.concrete, "_call_flat", None)
        if call_flat is not None and all(isinstance(a, tf.Tensor) for a in args):
            return call_flat(args, self.concrete.captured_inputs)  # no argument binding per step
        return self.concrete(*args)


def _tf1_layer_key(name: str) -> str:
    """The TF1 name of a weight a Keras layer (tf_keras or Keras 3) made while built in a
    step (``name``: its own). Keras names a weight after the name scopes around the layer's
    call (``block1/fc/kernel`` under ``tf.name_scope("block1")``, ``tower_0/fc/kernel`` in a
    tower); TF1's ``tf.layers`` named it by variable scope (``fc/kernel``): the call's name
    scope gives way to the variable scope it was made in."""
    builds = _BUILDING.__dict__.get("keras_builds")
    if not builds or any(build is None for build in builds):
        return name
    scope, variable_scope, own = builds[0]  # the outermost layer being built (a cell's RNN)
    parent, _, last = _REPLICA_SCOPE.sub("", scope).rpartition("/")  # the call's name scope, the layer's
    if parent and not name.startswith(parent + "/"):
        return name
    rest = name[len(parent) + 1:] if parent else name
    if own and rest.startswith(last + "/") and re.fullmatch(re.escape(own) + r"_\d+", last):
        # the graph made the layer's name scope unique (Keras 3 opened ``dense_1`` for the
        # layer called before it): TF1 named the layer's variables after the layer's name
        rest = own + rest[len(last):]
    return f"{variable_scope}/{rest}" if variable_scope else rest


def _name(variable) -> str:
    name = variable.name
    return name[:-2] if name.endswith(":0") else name


def _freeze(fetches):
    if isinstance(fetches, str):
        return fetches
    if isinstance(fetches, Mapping):
        return ("dict", tuple((k, _freeze(v)) for k, v in fetches.items()))
    if isinstance(fetches, (list, tuple)):
        return (type(fetches).__name__, tuple(_freeze(v) for v in fetches))
    raise TypeError(f"fetches are names (strings) or lists/tuples/dicts of them, "
                    f"not {type(fetches).__name__}")


def _select(graph_values: Mapping[str, Any], fetches, op_names: set, variables=None):
    """The step's outputs: fetched tensors as they are, fetched ops as control
    outputs (a dummy value forcing them to run), fetched variables read once the fetched
    ops ran: TF1's variables were references, read when the run ended
    (``sess.run([train_op, global_step])`` gave the step after the update)."""
    def resolve(item):
        if isinstance(item, str):
            if item in graph_values:
                return graph_values[item]
            found = _by_graph_name(item, graph_values, variables)
            if _is_op(found):
                op_names.add(item)
            return found
        if isinstance(item, Mapping):
            return {k: resolve(v) for k, v in item.items()}
        return [resolve(v) for v in item]

    fetched = resolve(fetches)
    # what the run computes before its variables are read: fetched ops, fetched tensors, and
    # the assignment behind a fetched assign's result (`bump = tf.assign_add(step, 1)` gives
    # an unread variable whose op is the assignment): without it, reading `step` in the same
    # run raced the assignment
    ran = []
    for value in tf.nest.flatten(fetched, expand_composites=False):
        if _is_op(value) or isinstance(value, tf.Tensor):
            ran.append(value)
        elif isinstance(value, resource_variable_ops._UnreadVariable):
            ran.append(value.op)

    def convert(value):
        if _is_op(value):
            with tf.control_dependencies([value]):
                return tf.constant(0, name="op_ran")
        if isinstance(value, tf.Variable):
            with tf.control_dependencies(ran):
                return tf.identity(value)
        if isinstance(value, Mapping):
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):  # a tuple stays one, as Session.run kept it
            return _same_sequence(value, [convert(v) for v in value])
        return value

    return convert(fetched)


def _by_graph_name(name: str, graph_values, variables: Mapping[str, Any] = None):
    """A tensor (``"loss:0"``) or op (``"train_op"``) of the step graph, or a program
    variable (``"global_step:0"``, ``"w/read:0"``), by its TF1 name."""
    if variables:
        key = name[:-2] if name.endswith(":0") else name
        key = key[:-len("/read")] if key.endswith("/read") else key
        if key in variables:
            return variables[key]
    graph = ops.get_default_graph()
    try:
        if ":" in name:
            return graph.get_tensor_by_name(name)
        return graph.get_operation_by_name(name)
    except (KeyError, ValueError):
        raise KeyError(f"{name!r} is neither a value the program's build function returns "
                       f"({', '.join(graph_values)}) nor a tensor or op of its graph") from None


def _unpack(out, fetches, op_names):
    """Numpy values in the structure of ``fetches`` (ops give None)."""
    if isinstance(fetches, str):
        return None if fetches in op_names else _numpy(out)
    if isinstance(fetches, Mapping):
        return {k: _unpack(out[k], v, op_names) for k, v in fetches.items()}
    values = [_unpack(o, f, op_names) for o, f in zip(out, fetches)]
    return tuple(values) if isinstance(fetches, tuple) else values


def _last_built(outs: list):
    """Each fetched value from the last replica whose value is not None (a tower program's
    replicas: a name one tower alone built is None in the others)."""
    last = outs[-1]
    if isinstance(last, Mapping):
        return {k: _last_built([out[k] for out in outs]) for k in last}
    if isinstance(last, (list, tuple)):
        values = [_last_built([out[i] for out in outs]) for i in range(len(last))]
        return tuple(values) if isinstance(last, tuple) else values
    return next((out for out in reversed(outs) if out is not None), None)


def _same_sequence(value, items: list):
    """``items`` in ``value``'s kind of sequence: a list, a tuple, or its namedtuple."""
    if isinstance(value, list):
        return items
    return type(value)(*items) if hasattr(value, "_fields") else tuple(items)


def _numpy(value):
    """The fetched values as numpy, in the structure ``Session.run`` gave them: lists stay
    lists and tuples tuples (``compute_gradients``' (gradient, variable) pairs)."""
    if isinstance(value, Mapping):
        return {k: _numpy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return _same_sequence(value, [_numpy(v) for v in value])
    if hasattr(value, "numpy"):
        return value.numpy()
    return np.asarray(value) if value is not None else None
