"""The code that runs a program inside each interpreter of ``verify --program``.

One script for every side. It must run on Python 3.7 with TensorFlow 1.15 (the user's
own TF1 interpreter) as well as on TF 2.x, so it uses neither newer syntax nor anything
of tf-migrate's: it reports through files named in its configuration.

- It runs the program as ``python FILE ARGS...`` would: ``__main__``, ``sys.argv``, the
  program's folder first on ``sys.path``, the working directory the caller chose.
- It patches TensorFlow only after the program imports it (an import hook), so the
  program chooses its own Keras generation as it would when run alone.
- Initial values, per graph: every Session's ``run`` is watched until the variable
  initializers of all global variables of its graph have run (``global_variables_initializer``,
  a ``tf.group`` of them, a Scaffold's ``init_op``, ``variables_initializer`` calls in
  turn) or a ``Saver.restore`` filled them. At that point the values are saved (``save``:
  the first TF1 run) or the saved ones are loaded by TF1 name (``load``: a repeat of the
  TF1 run, or the migrated run), without adding ops to the graph (``Variable.load`` feeds
  the initializer), so a finalized graph is fine. ``shims.GraphProgram`` (the eager
  conversion) loads them when its variables are first created. The n-th graph to be
  initialized gets the n-th graph's values (a TF1 graph is one GraphProgram: a Session
  program's graph, or each Estimator train/evaluate/predict call's), so a second model
  (a fine-tuning run starting from a pre-trained checkpoint) starts from its own.
- Final values: a Session's variables when it closes (or at exit), and every
  GraphProgram's at exit, merged by TF1 name (where a script builds one graph after
  another with the same names, the graph made last wins, Session or program alike).
- Step time: every ``Session.run`` / ``GraphProgram.run`` call is timed.
- Unseeded randomness: numpy's global random state and Python's ``random`` start from the
  same seed on every side, and ``numpy.random.seed(None)`` reseeds from it (TF 1.x's MNIST
  reader reseeds numpy so for every DataSet, shuffling the batches differently in every
  run): a program's own unseeded draws and its batches are the same on both sides.

Imports inside functions: TensorFlow, its Keras and the libraries it patches are imported
only once the program has imported TensorFlow itself (the import hook), so the program
still chooses its Keras generation.
"""
# Run by ``verify --program`` in each interpreter as ``python -c <this file's text>`` (see
# harness.py): Python 3.7 with TensorFlow 1.15 too, so no newer syntax and none of tf-migrate's
# own modules. It is a script, never imported.
if __name__ != "__main__":
    raise ImportError("migrate.verify.program.child is verify --program's harness: it is run, not imported")
import atexit, json, os, sys, time
_t0 = time.time()
cfg = json.loads(os.environ["TFM_VERIFY_PROGRAM"])
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
import numpy as np
import random as _random

# Unseeded randomness is the same on both sides: numpy's global state and Python's start from
# one seed, and numpy.random.seed(None) (TF 1.x's MNIST reader calls it for every DataSet
# when no graph seed is set, to shuffle its batches) reseeds from it instead of the OS.
# Importing TensorFlow draws from Python's state (TF 2 more than TF 1.15), so both states are
# set again once it is imported, unless the program seeded them itself by then.
_numpy_seed, _python_seed, _own_seeds = np.random.seed, _random.seed, set()


def _seed(seed=None):
    if seed is not None:
        _own_seeds.add("numpy")
    _numpy_seed(cfg.get("seed", 0) if seed is None else seed)


def _seed_python(*args, **kwargs):
    _own_seeds.add("python")
    _python_seed(*args, **kwargs)


def _same_randomness():
    if "numpy" not in _own_seeds:
        _numpy_seed(cfg.get("seed", 0))
    if "python" not in _own_seeds:
        _python_seed(cfg.get("seed", 0))


np.random.seed, _random.seed = _seed, _seed_python
_same_randomness()

state = {"covered": {}, "graphs": [], "saved": {}, "init": None, "final": {}, "runs": [], "first_run": None,
         "loaded": [], "unloaded": [], "init_names": [], "busy": False, "programs": [],
         "sessions": [], "tf_version": None, "skipped": [], "order": [], "not_kept": []}


def _merge_final(owner, values):
    """Final values by TF1 name, the graph made last winning where names repeat (a script
    building one graph after another reuses them), whether a Session or a program ran it."""
    rank = next((i for i, o in enumerate(state["order"]) if o is owner), len(state["order"]))
    for name, array in values.items():
        if name not in state["final"] or state["final"][name][0] <= rank:
            state["final"][name] = (rank, array)


def _numeric(value):
    array = np.asarray(value)
    return array if array.dtype.kind in "biufc" else None


def _flatten(fetches):
    if isinstance(fetches, dict):
        return [x for v in fetches.values() for x in _flatten(v)]
    if isinstance(fetches, (list, tuple)):
        return [x for v in fetches for x in _flatten(v)]
    return [fetches]


def _reached(graph, fetches, ops_type):
    stack = []
    for fetch in _flatten(fetches):
        try:
            element = graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except Exception:
            continue
        stack.append(element if isinstance(element, ops_type) else element.op)
    seen = set()
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        stack.extend(op.control_inputs)
    return seen


def _components(variable):
    """A distributed (mirrored) variable's per-device variables, else [variable]: the
    first has the TF1 name, every one has its own initializer."""
    values = getattr(variable, "values", None)
    if isinstance(values, tuple) and values:
        return list(values)
    return [variable]


def _firsts(variables):
    return [_components(v)[0] for v in variables]


def _values(session, run, variables):
    """{TF1 name: numpy value} of the variables that can be read now."""
    out = {}
    try:
        values = run(session, list(variables))
        pairs = zip(variables, values)
    except Exception:
        pairs = []
        for variable in variables:
            try:
                pairs.append((variable, run(session, variable)))
            except Exception:
                continue
    for variable, value in pairs:
        array = _numeric(value)
        name = variable.op.name
        if array is None:
            state["skipped"].append(name)
        else:
            out[name] = array
    return out


def _init_data():
    """The saved initial values, read once (a native program loads them variable by variable)."""
    if "init_data" in state:
        return state["init_data"]
    values = {}
    if os.path.exists(cfg["init"]):
        with np.load(cfg["init"]) as data:
            values = {k: data[k] for k in data.files}
    if cfg.get("nudge"):  # each float one ulp up: how far the program itself carries rounding
        values = {k: np.nextafter(v, np.array(np.inf, v.dtype)) if v.dtype.kind == "f" else v
                  for k, v in values.items()}  # (in its own dtype: a scalar too)
    state["init_data"] = values
    return values


def _label(n, name):
    """A variable of the n-th initialized graph, as the report names it."""
    return name if n == 0 else "%s (graph %d)" % (name, n + 1)


def _initialized(graph):
    """The index of ``graph`` among the initialized graphs, or None."""
    for n, known in enumerate(state["graphs"]):
        if known is graph:
            return n
    return None


def _at_init(session, run, variables):
    if _initialized(session.graph) is not None:
        return
    state["graphs"].append(session.graph)
    n = len(state["graphs"]) - 1
    state["busy"] = True
    try:
        if cfg["init_action"] == "save":
            values = _values(session, run, _firsts(variables))
            state["saved"].update(("%d:%s" % (n, k), v) for k, v in values.items())
            np.savez(cfg["init"], **state["saved"])
            state["init_names"].extend(_label(n, k) for k in sorted(values))
            state["init"] = "saved"
        else:
            _load(n, [(_components(v)[0].op.name, v) for v in variables],
                  lambda v, value: [c.load(value, session) for c in _components(v)])
    finally:
        state["busy"] = False


def _load(n, named, assign):
    """The n-th graph's saved initial values into (TF1 name, variable) pairs whose shapes
    match."""
    data = _init_data()
    for name, variable in named:
        value = data.get("%d:%s" % (n, name))
        # (a variable made with validate_shape=False has no static shape: k-means' centers)
        if value is not None and variable.shape.is_compatible_with(value.shape):
            assign(variable, value)
            state["loaded"].append(_label(n, name))
        else:
            state["unloaded"].append(_label(n, name))
    state["init"] = "loaded"


def _patch_sessions(tf_module):
    from tensorflow.python.client import session as session_lib
    from tensorflow.python.framework import ops as ops_lib
    v1 = tf_module.compat.v1 if hasattr(tf_module, "compat") else tf_module
    state["tf_version"] = getattr(tf_module, "__version__", None) or getattr(v1, "VERSION", None)
    base = session_lib.BaseSession
    if getattr(base, "_tfm_patched", False):
        return
    run, close = base.run, base.close

    def patched_run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if state["busy"]:
            return run(self, fetches, feed_dict, options, run_metadata)
        started = time.time()
        out = run(self, fetches, feed_dict, options, run_metadata)
        state["runs"].append(time.time() - started)
        if state["first_run"] is None:
            state["first_run"] = started - _t0
        if self not in state["sessions"]:
            state["sessions"].append(self)
            state["order"].append(self)
        if cfg["init_action"] and _initialized(self.graph) is None:
            variables = self.graph.get_collection("variables")
            if variables:
                covered = state["covered"].setdefault(id(self.graph), set())
                covered.update(_reached(self.graph, fetches, ops_lib.Operation))
                # a variable init_from_checkpoint set up has an assign tensor as initializer
                if all(getattr(c.initializer, "op", c.initializer).name in covered
                       for v in variables for c in _components(v)):
                    _at_init(self, run, variables)
        return out

    def final_of(session):
        if getattr(session, "_closed", False) or session not in state["sessions"]:
            return
        state["busy"] = True
        try:
            _merge_final(session, _values(session, run, _firsts(session.graph.get_collection("variables"))))
        finally:
            state["busy"] = False

    def patched_close(self):
        final_of(self)
        return close(self)

    base.run, base.close, base._tfm_patched = patched_run, patched_close, True
    state["final_of"] = final_of
    saver_class = v1.train.Saver
    restore = saver_class.restore

    def patched_restore(self, sess, save_path):
        out = restore(self, sess, save_path)
        # a real Session's restore (a shims runtime's session restoring in an init_fn is
        # a program's, whose initial values were loaded when it was built)
        if cfg["init_action"] and isinstance(sess, base) and _initialized(sess.graph) is None:
            _at_init(sess, run, sess.graph.get_collection("variables"))
        return out

    saver_class.restore = patched_restore


def _timed(call):
    """A run of a program (a GraphProgram run, a tf.function step) timed; one inside another
    is one run."""
    def timed_call(*args, **kwargs):
        if state.get("in_run"):
            return call(*args, **kwargs)
        started = time.time()
        state["in_run"] = True
        try:
            out = call(*args, **kwargs)
        finally:
            state["in_run"] = False
        state["runs"].append(time.time() - started)
        if state["first_run"] is None:
            state["first_run"] = started - _t0
        return out
    return timed_call


def _patch_programs(program_lib):
    """shims.GraphProgram: initial values when its variables are created, timed runs."""
    def on_build(program):
        state["programs"].append(program)
        state["order"].append(program)
        variables = program.global_variables()
        if cfg["init_action"] == "load" and variables:
            # programs built into one shims.SharedGraph are the one TF1 graph they were
            graph = getattr(program._state, "shared", None) or program
            n = _initialized(graph)
            if n is None:
                state["graphs"].append(graph)
                n = len(state["graphs"]) - 1
            _load(n, [(program.name_of(v), v) for v in variables], lambda v, value: v.assign(value))

    program_lib.add_build_hook(on_build)
    program_lib.GraphProgram.run = _timed(program_lib.GraphProgram.run)
    program_lib.GraphProgram.run_replicas = _timed(program_lib.GraphProgram.run_replicas)


# A native TF2 program (tf.Variable made by the program, tf.function steps): its variables
# get the names TF1 gave the same variables made in the same order (TF1 made every name of
# its graph unique: Variable, Variable_1, ...), load the TF1 run's initial values when they
# are made, and are read at exit; its tf.function calls are its runs.
_NATIVE = {"graph": object(), "variables": [], "names": {}, "optimizers": []}
_LIBRARIES = tuple(os.sep + part + os.sep for part in ("keras", "tf_keras", "shims", "absl"))


def _made_by_program():
    """Whether the code that made a variable is the program's (not TensorFlow's machinery
    in between, not Keras', shims' or absl's)."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if os.sep.join(("", "tensorflow", "python", "training", "")) in filename:
            return False  # a TF1 optimizer's slot (read at exit by its TF1 name)
        if os.sep.join(("", "tensorflow", "python", "checkpoint", "")) in filename:
            return False  # tf.train.Checkpoint's save_counter: no TF1 variable
        if not filename.startswith("<") and os.sep + "tensorflow" + os.sep not in filename:
            return not any(part in filename for part in _LIBRARIES)
        frame = frame.f_back
    return False


def _tf1_unique(name):
    used = _NATIVE["names"]
    key = name.lower()
    count = used.get(key, 0)
    used[key] = count + 1
    if count == 0:
        return name
    while "%s_%d" % (key, count) in used:
        count += 1
    used["%s_%d" % (key, count)] = 1
    return "%s_%d" % (name, count)


def _keras_layer_path(variable):
    """TF1's name of the Keras layer variable being made (``hidden/kernel``: Keras 3's path,
    tf_keras' scoped name), when a Keras layer of the program (not a GraphProgram's, which
    has its own watch) makes it, else None."""
    keras = sys.modules.get("keras")
    frame, path, layer = sys._getframe(2), None, False
    while frame is not None:
        owner = frame.f_locals.get("self")
        if type(owner).__name__ == "GraphProgram":
            return None
        if keras is not None and path is None and isinstance(owner, keras.Variable):
            path = owner.path
        if owner is not None and type(owner).__module__.startswith(("keras", "tf_keras")) \
                and any(c.__name__ == "Layer" for c in type(owner).__mro__):
            layer = True
        frame = frame.f_back
    if not layer:
        return None
    made = variable.name.split(":")[0]
    if path is None:
        return made
    # Keras 3's path leaves TensorFlow's name scopes out (``dense_1/kernel`` built under
    # tf.name_scope("Generator")); the variable's own name has them, as TF1's had, and the
    # layer's op scope made unique in the graph (``Generator/dense_1_1/kernel``)
    scopes = made.split("/")[:-len(path.split("/"))]
    return "/".join([*scopes, path])


def _keep_optimizer():
    """The optimizer making a variable (its step count, its slots) is kept to the end: a
    program may drop it before exit (the next model's optimizer bound to the same name),
    and its state is read at exit."""
    frame, depth = sys._getframe(2), 0
    while frame is not None and depth < 40:
        owner = frame.f_locals.get("self")
        if owner is not None and "apply_gradients" in dir(type(owner)):
            if not any(o is owner for o in _NATIVE["optimizers"]):
                _NATIVE["optimizers"].append(owner)
            return
        frame, depth = frame.f_back, depth + 1


def _native_creator(next_creator, **kwargs):
    variable = next_creator(**kwargs)
    tf = _NATIVE["tf"]
    _keep_optimizer()
    # a Session's graph (graph mode) has its own watch (_patch_sessions); a step's trace
    # (a FuncGraph) makes the Keras layers it calls first
    if not tf.executing_eagerly() and not getattr(tf.compat.v1.get_default_graph(), "building_function", False):
        return variable
    path = _keras_layer_path(variable)
    if path is None and not (tf.executing_eagerly() and _made_by_program()):
        return variable
    # made eagerly, a variable's name has its name scopes (``layer1/W``), as TF1's had
    made = getattr(variable, "name", None) if tf.executing_eagerly() else None
    name = path or _tf1_unique((made or kwargs.get("name") or "Variable").split(":")[0])
    graph = _NATIVE["graph"]
    if not any(g is graph for g in state["order"]):
        state["order"].append(graph)
    _NATIVE["variables"].append((name, variable, graph))
    if cfg["init_action"] == "load":
        n = _initialized(graph)
        if n is None:
            state["graphs"].append(graph)
            n = len(state["graphs"]) - 1
        with tf.init_scope():
            _load(n, [(name, variable)], lambda v, value: v.assign(value))
    return variable


def _watch_variables():
    # entered for the program's lifetime (kept: a collected generator would leave the scope)
    _NATIVE["scope"] = _NATIVE["tf"].variable_creator_scope(_native_creator)
    _NATIVE["scope"].__enter__()


def _patch_native(tf_module):
    if str(getattr(tf_module, "__version__", "1.")).startswith("1.") or cfg["mode"] == "compat":
        return
    _NATIVE["tf"] = tf_module
    _watch_variables()
    from tensorflow.python.framework import ops as ops_lib
    reset = ops_lib.reset_default_graph

    def reset_default_graph():
        """A new TF1 graph: the variables made next are its own (and the new default graph
        gets the watch: a graph's creator scopes are its own)."""
        _NATIVE["graph"], _NATIVE["names"] = object(), {}
        out = reset()
        _watch_variables()
        return out

    ops_lib.reset_default_graph = tf_module.compat.v1.reset_default_graph = reset_default_graph
    function_class = type(tf_module.function(lambda: None))
    function_class.__call__ = _timed(function_class.__call__)


# Keras optimizers of a native program, their state by TF1's slot names (the TF1 run's
# final variables list them): Adam's m and v are <variable>/Adam and /Adam_1, beta1_power is
# beta1 ** (steps + 1); Momentum's accumulator is -velocity / learning rate.
_SLOTS = {"Adam": (("_momentums", "Adam", 1.0), ("_velocities", "Adam_1", 1.0)),
          "Adagrad": (("_accumulators", "Adagrad", 1.0),),
          "SGD": (("momentums", "Momentum", None),)}


def _slots_of(kind, optimizer):
    """(attribute, TF1 slot, scale) of a Keras optimizer's state. TF1's RMSProp makes its mean
    square, then its mean gradient where centered, then its momentum: RMSProp, RMSProp_1, ...;
    with momentum 0 Keras keeps no momentum (TF1's held the last step's update, which no later
    update reads): that slot is listed as not kept."""
    if kind != "RMSprop":
        return _SLOTS.get(kind, ())
    centered = bool(getattr(optimizer, "centered", False))
    out = [("_velocities", "RMSProp", 1.0)] + ([("_average_gradients", "RMSProp_1", 1.0)] if centered else [])
    momentum = "RMSProp_2" if centered else "RMSProp_1"
    if float(np.asarray(getattr(optimizer, "momentum", 0.0))):
        return out + [("_momentums", momentum, 1.0)]
    return out + [("_not_kept", momentum, 1.0)]


def _tf1_optimizer_state(named, objects):
    """tf.compat.v1.train optimizers applied in the program's steps: their slots by TF1's
    names (<variable>/<slot> as TF1 named it; in eager the primary's own name was
    ``Variable`` whatever TF1 called it) and beta1_power-like values."""
    base = _NATIVE["tf"].compat.v1.train.Optimizer
    out = {}
    for optimizer in [o for o in objects if isinstance(o, base)]:
        for slot_name in optimizer.get_slot_names():
            suffix = None  # as the first variable's slot is named (eager names of later ones repeat)
            for name, primary, _ in _NATIVE["variables"]:
                try:
                    variable = optimizer.get_slot(primary, slot_name)
                except Exception:
                    variable = None
                if variable is None:
                    continue
                if suffix is None:
                    own, prefix = variable.name.split(":")[0], primary.name.split(":")[0] + "/"
                    suffix = own[len(prefix):] if own.startswith(prefix) else slot_name
                out["%s/%s" % (name, suffix)] = np.asarray(variable.numpy())
        for variable in getattr(optimizer, "_non_slot_dict", {}).values():
            out[variable.name.split(":")[0]] = np.asarray(variable.numpy())
    return out


def _native_optimizer_state():
    """{id(graph): {TF1 slot name: value}}: each optimizer's state with the graph of the
    variables it trains (a file of several programs, each its own TF1 graph)."""
    if not _NATIVE["variables"]:
        return {}
    import gc
    named = dict((id(v), n) for n, v, _ in _NATIVE["variables"])
    graph_of = dict((id(v), g) for _, v, g in _NATIVE["variables"])
    objects = list({id(o): o for o in gc.get_objects() + _NATIVE["optimizers"]}.values())
    last = _NATIVE["variables"][-1][2]
    out = {id(last): _tf1_optimizer_state(named, objects)}
    # Keras 3's optimizers, and tf_keras' (a module that imports shims runs on it)
    bases = tuple(module.optimizers.Optimizer for module in map(sys.modules.get, ("keras", "tf_keras"))
                  if module is not None and hasattr(module, "optimizers"))
    adams = {}
    for optimizer in sorted([o for o in objects if bases and isinstance(o, bases)], key=_made_order):
        kind = type(optimizer).__name__
        tracked = list(getattr(optimizer, "_trainable_variables", None) or _indexed(optimizer))
        keys = [id(getattr(v, "value", v)) if id(getattr(v, "value", v)) in named else id(v) for v in tracked]
        graph = next((graph_of[k] for k in keys if k in graph_of), last)
        values = out.setdefault(id(graph), {})
        for attr, slot, scale in _slots_of(kind, optimizer):
            if scale is None and not float(np.asarray(getattr(optimizer, "momentum", 0.0))):
                continue  # tf_keras' SGD keeps momentums at 0 too: TF1's GradientDescent has none
            for key, value in zip(keys, keys if attr == "_not_kept" else getattr(optimizer, attr, None) or []):
                name = named.get(key)
                if name is None:
                    continue
                if attr == "_not_kept":
                    state["not_kept"].append("%s/%s" % (name, slot))
                    continue
                array = np.asarray(value.numpy())
                if scale is None:  # Momentum: TF1 keeps the sum of gradients, Keras -lr times it
                    array = -array / float(np.asarray(optimizer.learning_rate))
                values["%s/%s" % (name, slot)] = array
        if kind == "Adam" and tracked:  # TF1's beta1_power, beta1_power_1, ... in order of making
            steps = int(np.asarray(optimizer.iterations))
            count = adams.get(id(graph), 0)
            suffix = "_%d" % count if count else ""
            adams[id(graph)] = count + 1
            values["beta1_power" + suffix] = np.float32(optimizer.beta_1 ** (steps + 1))
            values["beta2_power" + suffix] = np.float32(optimizer.beta_2 ** (steps + 1))
    return out


def _indexed(optimizer):
    """The variables a tf_keras optimizer was built over, in its slots' order (its
    ``_index_dict`` of variable keys)."""
    index = getattr(optimizer, "_index_dict", None) or {}
    found = []
    for _, variable, _ in _NATIVE["variables"]:
        try:
            key = optimizer._var_key(variable)
        except Exception:
            continue
        if key in index:
            found.append((index[key], variable))
    return [v for _, v in sorted(found, key=lambda pair: pair[0])]


def _made_order(optimizer):
    """Keras names optimizers adam, adam_1, ... as they are made: their order of making."""
    name = str(getattr(optimizer, "name", ""))
    tail = name.rsplit("_", 1)[-1]
    return int(tail) if "_" in name and tail.isdigit() else 0


class _AfterImport(object):
    """Calls a function with a module right after the module is first imported."""

    def __init__(self, hooks):
        self.hooks = hooks

    def find_spec(self, name, path=None, target=None):
        if name not in self.hooks:
            return None
        import importlib.util
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        hook, loader = self.hooks.pop(name), spec.loader
        execute = loader.exec_module

        def exec_module(module):
            execute(module)
            hook(module)

        loader.exec_module = exec_module
        return spec


if cfg["mode"] == "compat":  # TF 2.x pretending to be TF1: the old default of verify --program
    import tensorflow.compat.v1 as _v1
    _v1.disable_v2_behavior()
    sys.modules["tensorflow"] = _v1
    import tensorflow as _real
    _patch_sessions(_real)
    state["tf_version"] = _real.__version__ + " (compat.v1 graph mode)"
else:
    def _after_tensorflow(tf_module):
        _patch_sessions(tf_module)
        _patch_native(tf_module)
        _same_randomness()

    sys.meta_path.insert(0, _AfterImport({"tensorflow": _after_tensorflow,
                                          "shims.program": _patch_programs}))


def _finish():
    for session in list(state["sessions"]):
        if "final_of" in state:
            state["final_of"](session)
    for program in state["programs"]:
        values = {}
        try:
            for variable in program.global_variables():
                array = _numeric(variable.numpy())
                if array is not None:
                    values[program.name_of(variable)] = array
        except Exception:
            pass  # the values read so far count
        _merge_final(program, values)
    if _NATIVE["variables"]:
        graphs = []
        for name, variable, graph in _NATIVE["variables"]:
            if not any(g is graph for g, _ in graphs):
                graphs.append((graph, {}))
            try:
                array = _numeric(variable.numpy())
            except Exception:
                continue
            if array is not None:
                next(v for g, v in graphs if g is graph)[name] = array
        try:
            found = _native_optimizer_state()
            for graph, values in graphs:
                values.update(found.get(id(graph), {}))
        except Exception:
            pass  # the variables count without the optimizer's state
        for graph, values in graphs:
            _merge_final(graph, values)
    np.savez(cfg["final"], **{name: array for name, (_, array) in state["final"].items()})
    if state["tf_version"] is None and "tensorflow" in sys.modules:
        state["tf_version"] = getattr(sys.modules["tensorflow"], "__version__", None)
    meta = {key: state[key] for key in ("init", "runs", "first_run", "loaded", "unloaded",
                                        "init_names", "tf_version", "skipped", "not_kept")}
    meta["wall"] = time.time() - _t0
    meta["python"] = sys.version.split()[0]
    # as the program ran: `import shims` turns oneDNN off unless the environment said otherwise
    meta["onednn"] = os.environ.get("TF_ENABLE_ONEDNN_OPTS")
    import resource  # the process's peak resident memory, in KiB on Linux
    meta["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    with open(cfg["meta"], "w") as handle:
        json.dump(meta, handle)


atexit.register(_finish)
sys.path.insert(0, os.path.dirname(os.path.abspath(cfg["source"])))
sys.argv = [cfg["source"]] + list(cfg["args"])
import runpy
runpy.run_path(cfg["source"], run_name="__main__")
