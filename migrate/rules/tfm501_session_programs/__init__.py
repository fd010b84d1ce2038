"""TFM501: graph-then-Session programs -> eager TF2 (native tf.function steps where proven,
else shims.GraphProgram).

The rule works in stages, one file each: ``detect`` finds programs (``sections`` cuts a
block where it resets the default graph, and keeps the sections that stay), ``plan`` reads one
into a :class:`~.plan.Plan` (or says what blocks it; ``handed`` reads objects handed
their script's session, ``evaluations`` sessions that only evaluate, ``objects`` model
objects a script runs, ``names`` graph values made
by and handed to the module's functions), ``convert`` rewrites it (and
``towers`` puts a multi-GPU tower loop on a MirroredStrategy's replicas, ``workers`` a
cluster program on MultiWorkerMirroredStrategy or ParameterServerStrategy), and
``graph_mode`` keeps what cannot be converted running in TF1 graph mode; ``syntax`` holds
the names and node readers they share; ``built`` keeps in graph mode a program whose graph
code read a value bound again before it runs. ``native`` writes a planned program as TF2 code
(its program model, a reader returning it or a blocker, an emitter); ``convert`` writes
the programs it does not cover, and every program with ``--programs shims``."""
from __future__ import annotations

from typing import List, Set

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Finding, Rule

from .convert import Converter
from .detect import Detect
from .evaluations import Evaluations
from .graph_mode import KEPT, SWITCHES, GraphMode, _makes_default
from .handed import Handed
from .names import Names
from .objects import Objects
from .plan import Planner
from .sections import Sections
from .syntax import PLACEHOLDERS, reset_collect_cache
from .towers import Towers
from .workers import Workers


class SessionPrograms(Detect, Sections, Handed, Evaluations, Objects, Names, Planner, Converter, Towers, Workers, GraphMode, Rule):
    code = "TFM501"
    needle = needles.GRAPH_PROGRAM
    tf1_only = True
    summary = "a graph driven by a Session: becomes eager TF2 (native tf.function steps where proven)"
    fixable = True
    explanation = """
A TF1 program builds a graph (placeholders, variables, a train op) and drives it with
`sess.run(fetches, feed_dict)`. In TF2 that crashes at the first placeholder. This rule
converts the program, in a module or a function body, to eager TF2.

Native TF2 (the default, where the form is proven): the variables (`tf.Variable`, dicts and
lists of them, a module function returning one) are made once, where they were; each
`tf.layers.dense`, convolution, pooling and `flatten` of the graph code becomes one Keras
layer made once with TF1's layer name (its variables keep TF1's names) and called where
the call was; each kind
of run becomes a `@tf.function` step whose parameters are the placeholders it is fed
(their dtypes and shapes its `input_signature`, so values convert as TF1 converted a feed)
and whose body is the graph code its fetches need; a train op's step computes the loss
under `tf.GradientTape` and applies the gradients of the variables `minimize` trained
(`var_list`, `trainable=False` and `global_step` honoured) with the Keras optimizer
measured equal to the TF1 one (GradientDescent -> `SGD`, Momentum -> `SGD(momentum=...)`,
Adam -> `Adam(epsilon=1e-08)`, Adagrad, Adadelta, RMSProp -> `RMSprop(epsilon=1e-10)` with
its mean square set to TF1's start, 1; dense gradients), else with the TF1 optimizer
itself, the finding saying why (sparse gradients, Ftrl, ...). `sess.run(...)` becomes the step's call, its results `.numpy()` as
`sess.run` gave them; `sess.run(W)` of a variable is `W.numpy()`. The graph code must be
TensorFlow's or this module's own functions (read to the end): `get_variable` and scopes,
other layers, summaries, savers, queues, collections, a class owning the session, code of
other modules, and a session block rebinding a name the graph reads keep the GraphProgram
form below, and the finding names the first such thing. `--programs shims` writes every
program that form.

The GraphProgram form:

- the graph-building statements move into a function whose parameters are the former
  placeholders (their dtype and shape become `tf.TensorSpec`s, a
  `placeholder_with_default` becomes `shims.Default`);
- `shims.GraphProgram` runs that function as `tf.function` steps, one per distinct
  `(fetches, feeds)`, with `sess.run`'s semantics: only what the fetches need runs,
  variables are created once with their TF1 names, TF1 optimizers apply their updates
  with the same math and slot names;
- `sess.run(fetches, feed_dict={x: a})` becomes `program.run(fetches, x=a)` (numpy values
  in the same structure), initializer runs and `sess.close()` disappear, a TF1 `Saver`'s
  `save`/`restore` become the program's (TF1-named checkpoints, so old ones load), and
  `sess.run(tf.assign(lr, <a Python value>))` becomes `program.assign("lr", ...)`.

- a program that owns its graph (`g = tf.Graph()`, `with g.as_default():`,
  `tf.Session(graph=g)`, also as `self.graph`) loses the graph and its block; functions
  the session is passed to (`train(sess, steps)`) get the program in its place; a new
  session that first restores the Saver's checkpoint continues on the program.
- placeholders made by a function (`x, y = placeholder_inputs(batch_size)`, TensorFlow's
  feed tutorial) are parameters like the others, their specs read with the call's
  arguments (the function goes when nothing else calls it); graph values handed to
  functions that use them only as feed-dict keys or fetches of the session (`do_eval(sess,
  eval_correct, x, y, data)`, `feed_dict = fill_feed_dict(data, x, y)`, also functions
  running the script's global session) are handed as their graph names, and the feed
  dicts such functions make are fed as they are (`program.run(eval_correct, **feed_dict)`).
- objects handed the script's session (`m1 = Model(sess, "m1")`, the class keeping
  `self.sess = sess` and building its graph in a method `__init__` calls) each get a
  program joined to the graph they are handed (`.in_graph(self.sess)`); the script's
  session becomes `shims.SharedGraph()`, which keeps TF1's one-graph variable names.
- a model object the script runs (`model = Model(...)`, the class keeping placeholders and
  results as attributes, then `sess.run(model.loss, {model.x: x})`) gets its own
  `self.program`, and the runs become `model.program.run("loss", x=x)`.
- a multi-GPU tower loop (`for i in range(num_gpus): with tf.device('/gpu:%d' % i): ...`,
  each tower's `compute_gradients` collected, averaged or summed by a function of the
  module, then applied) runs one tower per `tf.distribute.MirroredStrategy` replica:
  `for i in shims.towers(range(num_gpus)):` without the tower's device scope, and the
  program `.on_towers(num_gpus)`, where the strategy combines the replicas' gradients as
  the function did. A loop that collects anything else of every tower keeps all towers in
  one graph (which TF 2 runs as TF1 did).
- a synchronous program on a TF1 cluster (`tf.train.Server`, `replica_device_setter`,
  `SyncReplicasOptimizer`, `MonitoredTrainingSession(master=server.target)`) runs on
  `tf.distribute.MultiWorkerMirroredStrategy`: its server is `shims.cluster.MultiWorker`
  (the same arguments; a parameter server's `join()` returns, it has nothing to hold), the
  program `.on_workers(server)`, the device setter's scope and the optimizer's hook go, and
  `shims.cluster.SyncReplicasOptimizer` lets the strategy average the workers' gradients
  every step, as the chief's queue did. An asynchronous one (no `SyncReplicasOptimizer`)
  runs on `tf.distribute.ParameterServerStrategy`: its server is
  `shims.cluster.ParameterServers`, the program `.on_parameter_servers(server)`; the
  chief schedules each step on a free worker, the variables stay on the parameter servers,
  and the other workers serve the chief's steps. Other cluster programs (backup workers,
  TF1's queues and tokens used by hand, graph code only the chief builds) keep running on
  their cluster in graph mode.

- a block that starts a new graph with `tf.reset_default_graph()` (or a function of the
  module calling it: `reset_graph()`), as notebooks and scripts running one experiment
  after another do, rebinding the same names: each section is a program of its own
  (`build_graph`, `build_graph_1`, ...), as is the body of a loop each pass of which
  starts a new graph (a search's trials). A section that stays in graph mode beside
  converted ones, or only builds a graph, runs under `with shims.tf1_graph():` (a new
  graph, TF 1.15's variables), not under the global switch, which would stop the converted
  sections running eagerly.
- a block whose sessions only evaluate TensorFlow on Python values
  (`print(sess.run(tf.nn.relu([-3., 3., 10.])))`, the first chapters of tutorials and
  cookbooks) has no graph to build: the sessions go and each run becomes
  `shims.evaluated(...)`, computed where it stands (not when the block makes variables,
  placeholders, optimizers, summaries or random draws, or evaluates a tensor another way).

Where the conversion cannot be proven (a fetch or feed that is not a graph name, the
session passed elsewhere, a graph name rebound later, a monitored session, ...), the
program keeps running: it is put in explicit graph mode
(`tf.compat.v1.disable_eager_execution()`), keeps TF1's functional layers and hooks, and
this finding says what blocked the conversion. A placeholder left outside every program,
with nothing switching graph mode on, is a finding too (an error at module level, where
importing the module fails on TF2).
"""
    before = """
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3])
w = tf.Variable(tf.zeros([3, 1]), name="w")
loss = tf.reduce_mean(tf.matmul(x, w))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(loss, feed_dict={x: data}))
"""
    after = """
import tensorflow as tf

w = tf.Variable(tf.zeros([3, 1]), name="w")


@tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
def compute_loss(x):
    loss = tf.reduce_mean(tf.matmul(x, w))
    return loss


print(compute_loss(data).numpy())
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._captured: dict = {}  # id(fetched expression) -> it as the other fixes left it
        self._exprs: list = []  # the graph expressions the run being read fetches (Planner)
        self._assign = None  # the (variable key, how) of the run being read, if it assigns (Planner)
        self._handed_param_now = None  # the class being read is handed its session here (handed)
        self._built_now: list = []  # the build methods of the class being read (detect.ClassParts)
        self._class_now = None  # the class being read
        self._monitoring = False  # the program being planned runs in a monitored session
        # placeholders made outside `with <graph>.as_default():`, with their enclosing
        # functions (outermost first): what _left_in_graph_code checks once programs are known
        self._placeholders: List[tuple] = []
        self._functions: List[cst.FunctionDef] = []
        self._graphs = 0
        self._sync_hooks: frozenset = frozenset()  # the program being planned: its sync hooks (Workers)
        self._made_feed_ids: set = set()  # feed arguments a function made (Planner, names)
        self._block_binds: set = set()  # the planned block's own names (Planner, names)
        self._graph_functions: set = set()  # the planned program's functions moved into its build

    # -- the engine's walk: placeholders and where they are ------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_With(self, node: cst.With) -> None:
        self._graphs += _makes_default(node)

    def leave_With(self, original_node: cst.With) -> None:
        self._graphs -= _makes_default(original_node)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._graphs and self._call_name(node) in PLACEHOLDERS:
            self._placeholders.append((node, tuple(self._functions)))

    @classmethod
    def applies(cls, text: str, memo=None) -> bool:
        """TF1 code with a Session program, or migrated code (``tf.compat.v1`` spelling) that
        switches graph mode on: its kept programs are said again (``report_only``)."""
        return super().applies(text, memo) or (
            any(s in text for s in SWITCHES) and needles.GRAPH_PROGRAM.search(text))

    def leave_Module(self, node: cst.Module) -> None:  # after the walk: every import is known
        before = list(self.ctx.findings)
        self._reused = None  # ids under `with tf.variable_scope(..., reuse=...)` (handed)
        excluded: Set[str] = set()
        try:
            while not self._programs_of(node, excluded):  # a class handed a session was blocked
                excluded |= self._handed_kept             # with others converted: read again
                self.ctx.findings[:] = before             # without it (its scripts stay too)
        finally:
            reset_collect_cache()  # it holds this file's nodes
        if not needles.TF1_CODE.search(self.ctx.source):
            self.report_only(before)

    def report_only(self, before: list) -> None:
        """Code already migrated (spelled ``tf.compat.v1``, graph mode switched on) is not
        converted again (a second run changes nothing); its programs kept in graph mode are
        said again, why included, so ``upgrade --check`` still lists what is left in TF1."""
        kept = [f for f in self.ctx.findings[len(before):] if f.message.startswith(KEPT)]
        self.ctx.findings[:] = before + [Finding(f.code, f.message, f.node) for f in kept]

    def _programs_of(self, node: cst.Module, excluded: Set[str]) -> bool:
        """Convert the module's programs, or keep them in graph mode; False when a class of
        the handed form (not in ``excluded``) turned out blocked while a class handed the
        same kind of session was converted: its scripts must stay, so the others must too."""
        self._programs: Set[int] = set()  # nodes of the programs converted or kept in graph mode
        self._blocked: List[tuple] = []    # (session statement, why, its block): kept in graph mode
        self._own_graph_sections: dict = {}  # id(first statement) -> a section not converted (sections)
        self._switched_owners: Set[int] = set()  # functions (the module) _fallback switched whole
        # classes handed their script's session, converted with it (handed)
        self._handed_shapes: dict = {}
        self._handed_kept: Set[str] = set(excluded)  # such classes whose conversion was blocked
        self._handed_native: Set[str] = set()  # such classes written natively (no session at all)
        self._handed_steps: dict = {}  # and the step whose graph shows each (its training step)
        self._handed_graph_read: Set[str] = set()  # such classes whose script reads its session's graph
        self._handed_scoped: Set[str] = set()  # such classes made in a variable or name scope
        self._handed_excluded = excluded
        self._object_shapes: dict = {}
        self._handed_classes = self._handed_candidates(node, excluded)
        candidates = set(self._handed_classes)
        self._object_classes = self._object_candidates(node)  # graph objects scripts run (objects)
        self._blocks(list(node.body), node)
        if (self._handed_kept & candidates) and self._handed_classes:
            return False
        self._fallback(node)
        self._left_in_graph_code(node)
        return True
