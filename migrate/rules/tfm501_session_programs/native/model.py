"""The program model of the native form: what a Session program is once read, immutable.

``read`` turns a planned program (the statements around its session and the
:class:`~..plan.Plan`) into a :class:`NativeProgram`, or into a :class:`Blocker` naming why
the native form is not proven for it (the program then converts through
``shims.GraphProgram``); ``emit`` writes a :class:`NativeProgram` as TF2 code. Nodes are the
original ones; keys name graph values as the program does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple, Union

import libcst as cst


@dataclass(frozen=True)
class Blocker:
    """Why a program is not written natively (it converts through shims.GraphProgram)."""
    reason: str


@dataclass(frozen=True)
class Optimizer:
    """A TF1 optimizer and the TF2 one that replaces it where it is made."""
    stmt: cst.SimpleStatementLine  # the statement that makes it (inline: the minimize statement)
    call: cst.Call                 # the TF1 constructor call
    tf1_name: str                  # "tf.train.AdamOptimizer"
    keras: Optional[str]           # the Keras class proven equal, else None: the TF1 one is kept
    why_kept: str                  # why the TF1 optimizer is kept (when ``keras`` is None)


@dataclass(frozen=True)
class Layer:
    """``tf.layers.dense(x, units, ...)`` (a conv, a pooling, flatten) in the graph code: one Keras layer made once (with
    TF1's layer name, so its variables keep TF1's names), called where the call was."""
    call: cst.Call
    keras: str                     # "Dense"
    name: str                      # TF1's layer name ("hidden", "dense_1")
    named: bool                    # the TF1 call gave name= itself
    function: str                  # TF1's function ("dense", "max_pooling2d")
    makes: str                     # what the layer object is named after (``pool1``: pool1_layer)
    scope: str = ""                # TF1's variable scopes around it ("Generator")
    owner: Optional[str] = None    # the module function whose body calls it (made before it)
    regularized: bool = False      # given kernel_regularizer= / bias_regularizer= (its ``.losses``)

    @property
    def scoped(self) -> str:
        """TF1's name of the layer's variable scope: ``Generator/dense`` (its variables'
        names below it)."""
        return f"{self.scope}/{self.name}" if self.scope else self.name


@dataclass(frozen=True)
class LayerFunction:
    """A module function the graph calls whose body makes layers (a model, a GAN's
    generator): its layers are made once, before it, and its calls share them, as TF1's
    first call made them and its variable scopes reused them in the later calls; those
    scopes become name scopes (the layers' variables keep TF1's names)."""
    func: cst.FunctionDef
    layers: Tuple[Layer, ...]
    scopes: Tuple[cst.WithItem, ...]       # ``tf.variable_scope("Generator", reuse=reuse)``
    reuses: Tuple[cst.If, ...]             # ``if reuse: scope.reuse_variables()``: they go


@dataclass(frozen=True)
class RegularizationRead:
    """``tf.losses.get_regularization_loss()`` (``total``), ``get_regularization_losses()`` or
    ``tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)``: the losses of the regularized
    layers made before it, as TF1's collection held them then (``layer.losses``)."""
    call: cst.Call
    total: bool
    layers: Tuple[Layer, ...]


@dataclass(frozen=True)
class Computed:
    """A statement that computes graph values: it moves into the steps that need it."""
    stmt: cst.SimpleStatementLine
    binds: Tuple[str, ...]
    reads: Tuple[str, ...]            # (a layer call's arguments aside: its layer is made once)
    # the variable scopes of the graph around it where it calls layers (``policy``): a step
    # calls them in name scopes of those names, so their variables get TF1's names
    scope: str = ""


@dataclass(frozen=True)
class Training:
    """``train_op = optimizer.minimize(loss, var_list=..., global_step=...)``."""
    key: str
    stmt: cst.SimpleStatementLine
    loss: str
    optimizer: Optimizer
    # what it trains: TF1's var_list, else every trainable variable (a layer: its variables)
    variables: Tuple[Union[str, "Layer"], ...]
    global_step: Optional[str]        # a state variable minimize increments
    scope: str = ""                   # the name scopes minimize ran in (TF1's ``train/beta1_power``)
    negated: bool = False             # ``minimize(-loss)``: the gradients of ``-loss``
    # minimize written out (``gradients.py``): what compute_gradients bound (the pairs, made
    # from the tape's gradients) and what apply_gradients was given
    pairs: Optional[str] = None
    applied: Optional[cst.BaseExpression] = None
    # ``tf.gradients(loss, tvars)`` the script took itself (written ``tape.gradient``); then
    # ``pairs`` is the first name its statement binds
    taped: Optional[cst.Call] = None


@dataclass(frozen=True)
class Copy:
    """``replace = [tf.assign(t, e) for t, e in zip(t_params, e_params)]`` (a target network
    updated from another, a soft update ``(1 - tau) * t + tau * e``): each variable of
    ``targets`` assigned its value, computed from the pair as written."""
    key: str
    stmt: cst.SimpleStatementLine
    targets: Tuple[Union[str, "Layer"], ...]   # the variables assigned (a layer: its variables)
    sources: Tuple[Union[str, "Layer"], ...]
    target: str                               # the loop's names: ``t``, ``e``
    source: str
    value: cst.BaseExpression                 # what each is assigned (``e``)


@dataclass(frozen=True)
class Summary:
    """``tf.summary.scalar("cost", cost)`` (histogram, image) in the graph."""
    stmt: cst.SimpleStatementLine
    call: cst.Call
    kind: str                         # "scalar", "histogram", "image"
    tag: str                          # TF1's tag: its name scopes, made unique
    reads: Tuple[str, ...]            # the graph names its data reads
    key: Optional[str]                # the name bound to it


@dataclass(frozen=True)
class Written:
    """Where a run's summaries went: ``writer.add_summary(s, step)``."""
    writer: str
    step: cst.BaseExpression
    adds: Tuple[cst.BaseStatement, ...]   # the add_summary statements (they go)
    inline: Optional[cst.Call] = None     # ``writer.add_summary(<the run>, step)``: the run's step call


#: a fetched item: a graph key, or an expression written in the run (``tf.argmax(logits, 1)``)
Item = Union[str, cst.BaseExpression]


@dataclass(frozen=True)
class Step:
    """A ``@tf.function`` step: what one kind of run computes."""
    name: str
    params: Tuple[str, ...]           # placeholders it is fed, in their order of creation
    returns: Tuple[Item, ...]         # what it returns (train ops return nothing)
    computed: Tuple[Computed, ...]    # the statements it needs, in the program's order
    trainings: Tuple[Training, ...]   # the train ops it runs (a GAN's two: disjoint variables)
    summaries: Tuple[Summary, ...] = ()  # what it writes (under ``writer.as_default(step=...)``)
    writer: Optional[str] = None
    step_param: str = "step"          # the parameter taking add_summary's step
    copies: Tuple[Copy, ...] = ()     # variable copies it runs (a run of them alone)


@dataclass(frozen=True)
class Run:
    """A run of the session (``sess.run``, ``t.eval``, ``op.run``) and the step it calls."""
    call: cst.Call
    step: Optional[Step]              # None: it reads variables only (``sess.run(W)``: W.numpy())
    shape: str                        # "single", "list", "tuple" or "dict" (the fetch as written)
    items: Tuple[Item, ...]           # the fetch's items as written
    keys: Tuple[Optional[str], ...]   # a dict fetch's keys (as code), else Nones
    feeds: Tuple[Tuple[str, cst.BaseExpression], ...]  # placeholder -> the value fed
    trains: Tuple[bool, ...]          # which items are train ops (the step returns the others)
    unpacked: Optional[cst.Assign]    # ``_, c = sess.run([train_op, loss])``: the assignment
    feed_name: Optional[str] = None   # ``feed_dict=feed``: a dict bound once, keyed by placeholders
    written: Optional[Written] = None  # its summaries' add_summary
    alone: bool = False               # a whole expression statement: its values go unread


@dataclass(frozen=True)
class Forward:
    """The statements several steps share (the model), written once as a plain function
    each of those steps calls where the first of them stood."""
    params: Tuple[str, ...]           # the placeholders they read, in their order of creation
    computed: Tuple[Computed, ...]    # the shared statements, in the program's order
    outputs: Tuple[str, ...]          # what the steps read of them afterwards


@dataclass(frozen=True)
class Saver:
    """``saver = tf.train.Saver()``: a ``tf.train.Checkpoint`` of what the Saver saved (the
    state, layers and optimizers made before it), and a ``CheckpointManager`` where its
    saves count checkpoints by a global step."""
    stmt: cst.SimpleStatementLine
    key: str                                   # the TF1 name of the Saver (``saver``)
    tracked: Tuple[Union[str, Layer, Optimizer], ...]  # state keys, layers, optimizers, in order
    max_to_keep: Optional[cst.BaseExpression]  # as TF1 was given it (None: TF1's 5)
    directory: Optional[cst.BaseExpression]    # the managed saves' folder (None: no managed save)
    checkpoint_name: Optional[cst.BaseExpression]  # their file name before ``-<step>``


@dataclass(frozen=True)
class Save:
    """``saver.save(sess, path[, global_step=g])`` or ``saver.restore(sess, path)``."""
    call: cst.Call
    kind: str                                  # "save" (a global step: the manager's), "write", "restore"
    path: cst.BaseExpression
    step: Optional[cst.BaseExpression]         # the global step given to a save


@dataclass(frozen=True)
class NativeProgram:
    """A Session program as native TF2: state made once where it was, steps, runs."""
    dropped: Tuple[cst.BaseStatement, ...]     # placeholders, initializers, moved graph code
    seeds: Tuple[cst.SimpleStatementLine, ...]  # tf.set_random_seed(...): tf.random.set_seed
    placeholders: Tuple[Tuple[str, cst.Call], ...]  # the steps' parameters: TF1's dtype and shape
    optimizers: Tuple[Optimizer, ...]
    layers: Tuple[Layer, ...]
    get_variables: Tuple[cst.Call, ...]         # tf.get_variable(...): written as tf.Variable(...)
    variable_scopes: Tuple[cst.Call, ...]       # tf.variable_scope("s") of state: tf.name_scope("s")
    steps: Tuple[Step, ...]
    runs: Tuple[Run, ...]
    evaluated: Tuple[cst.Call, ...]             # sess.run of TensorFlow on Python values
    feed_literals: Tuple[cst.Dict, ...]         # dicts fed by name: their keys become strings
    removals: Tuple[cst.Call, ...]              # initializer runs, close()
    forward: Optional[Forward] = None           # the computation the steps share
    # where the definitions go: at the session (None), or for a session made before the
    # graph, before the first statement after the graph that runs something (its index)
    defined_at: Optional[int] = None
    saver: Optional[Saver] = None               # tf.train.Saver: a tf.train.Checkpoint
    saves: Tuple[Save, ...] = ()
    # a state variable's expression (``W1``, ``weights['h1']``) -> its TF1 name (``layer1/W1``):
    # what the name map pairs with the checkpoint's object paths
    tf1_names: Tuple[Tuple[str, str], ...] = ()
    # sess.run(v.assign(value)) of a Python value: (the run, the variable's key, assign /
    # assign_add / assign_sub, whether its value is read): v.assign(value) where it was
    assigns: Tuple[Tuple[cst.Call, str, str, bool], ...] = ()
    reopened: Tuple[cst.With, ...] = ()         # sessions reopened to restore: their bodies stay
    unscoped: Tuple[cst.With, ...] = ()         # a name scope left around an optimizer alone: unwrapped
    writers: Tuple[cst.SimpleStatementLine, ...] = ()  # FileWriters: tf.summary.create_file_writer
    graph_adds: Tuple[cst.BaseStatement, ...] = ()     # writer.add_graph(sess.graph): goes
    # tf.summary.FileWriter(logdir, sess.graph) alone: a step's graph written (tf.summary.graph)
    graph_writes: Tuple[cst.SimpleStatementLine, ...] = ()
    # graph values runs feed in place of what they compute (``self.a``): steps' parameters too, of a dtype
    overrides: Tuple[Tuple[str, str], ...] = ()
    # placeholders with a default (``defaults.Default``): steps' parameters with it
    defaults: Tuple[Tuple[str, object], ...] = ()
    # tf.train.get_or_create_global_step(): written as TF1's tf.Variable (state.GLOBAL_STEPS)
    global_steps: Tuple[cst.Call, ...] = ()
    # TF1's tf.losses written as TF2 computes them (losses.py): (the call, its TF1 name)
    losses: Tuple[Tuple[cst.Call, str], ...] = ()
    layer_functions: Tuple[LayerFunction, ...] = ()    # module functions making layers
    regularization: Tuple[RegularizationRead, ...] = ()  # reads of the layers' regularization losses
    regularizers: Tuple[Tuple[cst.Call, str], ...] = ()  # tf.contrib's (and its name): written as Keras'
    # the session's block's own binding of a state name (``b = (step % 8) * 32``): its nodes,
    # renamed (the graph's variable keeps the name)
    renames: Tuple[Tuple[cst.Name, str], ...] = ()
    # TF1 initializers bound once where they were (``w_init = tf.random_normal_initializer(...)``,
    # read by layers made from them): written as TF2's
    initializers: Tuple[cst.Call, ...] = ()
    # lists of collections only tf.get_variable read (``c_names = ["eval_net_params", ...]``):
    # (the statement binding one, the name), gone with them
    collection_lists: Tuple[Tuple[cst.BaseStatement, str], ...] = ()
    # ``tvars = tf.trainable_variables()`` tf.gradients reads: written ``tvars = [W, b]``
    listed: Tuple[Tuple[cst.BaseStatement, Tuple[str, ...]], ...] = ()
    # graph code updating variables by hand (``tf.assign(W, W - lr * d_W)``): W.assign(...)
    updates: Tuple[cst.Call, ...] = ()
    # the statements of such updates, what each binds (one whose name nothing reads: the updates
    # alone) and a variable one of its updates assigns and another reads (TF1 raced them), or ""
    update_statements: Tuple[Tuple[cst.BaseStatement, Tuple[str, ...], str], ...] = ()
