"""A GraphProgram's steps on a ``tf.distribute`` strategy's replicas (``GraphProgram.on_strategy``).

TF 1.15 ran a graph-building function once per replica (``call_for_each_replica``: the
Estimator's ``train_distribute``, a ``MirroredStrategy`` program): each replica built its
copy on its device, variables were the strategy's, and a v1 optimizer's
``apply_gradients`` combined the replicas' gradients in a ``merge_call``. A step here is
one ``tf.function`` calling ``strategy.run`` on the program's build, so the same TF1 code
runs the same way:

- each replica's copy is traced in the replica's thread, under ``replica_<n>/``: its
  variables are found by their TF1 names (the first replica creates them, mirrored);
- what a ``merge_call`` creates in the calling thread (the optimizer's slots) is the
  program's too (``GraphProgram._cross_replica``);
- a mirrored variable made in a function reads its first component to initialise the
  others, which TensorFlow cannot lift out of the function; while a step is traced, every
  component starts from the same initial value instead (equal values, as mirrored).

Nothing here imports ``shims.program``: the program hands itself in.
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, List, Mapping, Sequence

import tensorflow as tf
from tensorflow.python.distribute import values as values_lib
from tensorflow.python.framework import device as tf_device


def check_strategy(strategy) -> None:
    """A strategy with mirrored variables: MirroredStrategy over this process's devices, or
    MultiWorkerMirroredStrategy, whose workers each run the same program on their own
    devices (every worker runs the same steps, as TF 1.15's collective strategy did)."""
    extended = getattr(strategy, "extended", None)
    if extended is None or not hasattr(strategy, "run"):
        raise TypeError(f"not a tf.distribute strategy: {type(strategy).__name__}")
    if type(strategy).__name__.startswith(("ParameterServerStrategy", "CentralStorage", "TPU")):
        raise NotImplementedError(
            f"{type(strategy).__name__}: a GraphProgram runs on MirroredStrategy-style "
            "strategies (mirrored variables, replicas on this process's devices)")
    _check_devices(strategy)


def _check_devices(strategy) -> None:
    """Every device of the strategy exists here. TensorFlow 2 builds a MirroredStrategy
    over devices it does not have (TF1's ``/gpu:1`` on a machine with one GPU) and its
    first step then waits forever for the missing replica: refused at once instead."""
    def canonical(name: str) -> tuple:
        spec = tf_device.DeviceSpec.from_string(name)
        return (spec.device_type or "CPU").upper(), spec.device_index or 0

    devices = tf.config.list_logical_devices()
    present = {canonical(d.name) for d in devices}
    missing = [d for d in strategy.extended.worker_devices if canonical(d) not in present]
    if missing:
        have = ", ".join(sorted(d.name for d in devices))
        raise NotImplementedError(
            f"{type(strategy).__name__} has replicas on devices this machine does not have: "
            f"{', '.join(missing)} (it has {have}); TensorFlow would wait for them forever. "
            "Give the strategy the devices present (tf.config.list_logical_devices()), or on "
            "a CPU machine make logical CPU devices first "
            "(tf.config.set_logical_device_configuration)")


def tower_devices(count: int):
    """The devices ``count`` towers run on as replicas: the first ``count`` GPUs, else
    ``count`` logical CPU devices; None when this machine has fewer (or one tower)."""
    if count < 2:
        return None
    for kind in ("GPU", "CPU"):
        devices = [d.name for d in tf.config.list_logical_devices(kind)]
        if len(devices) >= count:
            return devices[:count]
    return None


@contextlib.contextmanager
def _same_initial_values(strategy):
    """Every component of a mirrored variable made while a step is traced starts from the
    variable's initial value (see the module doc). Several workers keep TensorFlow's way:
    the chief's values are broadcast to the others."""
    extended = strategy.extended
    if not hasattr(extended, "_get_variable_creator_initial_value") or workers(strategy) > 1:
        yield
        return
    extended._get_variable_creator_initial_value = (
        lambda replica_id, device, primary_var, **kwargs: kwargs["initial_value"])
    try:
        yield
    finally:
        del extended._get_variable_creator_initial_value


def _per_replica_spec(spec, replicas: int):
    return tf.nest.map_structure(lambda leaf: values_lib.PerReplicaSpec(*[leaf] * replicas), spec)


def workers(strategy) -> int:
    """How many worker processes the strategy spans."""
    return getattr(strategy.extended, "_num_workers", 1) or 1


def local_replicas(strategy) -> int:
    """How many replicas this process runs (all of a MirroredStrategy's; one per device of
    this worker under a multi-worker strategy)."""
    return len(strategy.extended.worker_devices)


def _local(value, replicas: int, strategy) -> list:
    results = strategy.experimental_local_results(value)
    return list(results) if len(results) == replicas else [results[0]] * replicas


def replica_step(program, fetches, feeds, specs, reduce_loss=None, broadcast: bool = False):
    """The ``tf.function`` of one ``(fetches, feeds)`` combination: ``strategy.run`` on
    the program's build; returns one output structure per local replica. ``reduce_loss``:
    the key of a fetched loss every replica reports reduced across all of them (every
    worker's), as TF 1.15's Estimator reported it: their mean when a v1 optimizer divided
    the losses, else their sum. ``broadcast``: every replica takes the same values (a
    tower program's global batch), passed as plain tensors."""
    strategy = program.strategy
    replicas = local_replicas(strategy)

    def step_fn(*values):
        graph = tf.compat.v1.get_default_graph()
        scaling = strategy._scale_loss_for_estimator_enabled() \
            if program._state.scale_loss else contextlib.nullcontext()
        with strategy.scope(), scaling, _same_initial_values(strategy), \
                program._cross_replica(graph):
            out = strategy.run(lambda *args: program._fetched(fetches, dict(zip(feeds, args)), False),
                               args=values)
        scaled = program._state.loss_scaled = bool(getattr(graph, "_is_loss_scaled_by_optimizer", False))
        flat = [_local(leaf, replicas, strategy) for leaf in tf.nest.flatten(out)]
        outs = [tf.nest.pack_sequence_as(out, [leaf[i] for leaf in flat]) for i in range(replicas)]
        if reduce_loss is not None:
            op = tf.distribute.ReduceOp.MEAN if scaled else tf.distribute.ReduceOp.SUM
            with strategy.scope():
                reduced = strategy.reduce(op, out[reduce_loss], axis=None)
            for each in outs:
                each[reduce_loss] = reduced
        return outs

    signature = specs if broadcast else [_per_replica_spec(spec, replicas) for spec in specs]
    return tf.function(step_fn, input_signature=signature, autograph=False,
                       experimental_attributes={"_disable_acd": True})


def run_replicas(program, fetches, feeds: Sequence[Mapping[str, Any]],
                 reduce_loss=None) -> List[Any]:
    """Feed local replica i ``feeds[i]``; return each one's outputs (tensors)."""
    strategy = program.strategy
    replicas = local_replicas(strategy)
    if len(feeds) != replicas:
        raise ValueError(f"run_replicas: {len(feeds)} feeds for {replicas} replicas "
                         "(one mapping of parameter values per replica)")
    names = tuple(feeds[0])
    if any(tuple(sorted(f)) != tuple(sorted(names)) for f in feeds):
        raise ValueError("run_replicas: every replica is fed the same parameters")
    specs = program._state.specs
    converted = [[tf.nest.map_structure(lambda v, leaf: tf.convert_to_tensor(v, leaf.dtype),
                                        f[n], specs[n]) for n in names] for f in feeds]
    step = program.function(fetches, names, reduce_loss=reduce_loss)
    args = strategy.experimental_distribute_values_from_function(
        lambda context: tuple(converted[context.replica_id_in_sync_group % replicas])) if names else ()
    return step(*args)


def primary(variable):
    """A distributed variable's first copy (else the variable itself)."""
    values = getattr(variable, "values", None)
    return values[0] if isinstance(values, tuple) and values else variable


def _on_read(variable) -> bool:
    return primary(variable) is not variable and \
        variable.synchronization == tf.VariableSynchronization.ON_READ


def saveable(variable, shadows: dict):
    """What a TF1 Saver saves for ``variable`` (it cannot save a distributed variable
    eagerly): a mirrored variable's first copy (the copies are equal); for one synchronized
    on read (batch norm's moving statistics: each replica keeps its own), a plain variable
    that holds the value read across the replicas before each save, what TF 1.15 saved
    (their mean, or sum). ``shadows`` keeps those plain variables by the variable's id."""
    if not _on_read(variable):
        return primary(variable)
    if id(variable) not in shadows:
        with tf.init_scope():
            shadows[id(variable)] = (variable, tf.Variable(
                variable.read_value(), trainable=False, dtype=variable.dtype,
                shape=variable.shape, name=primary(variable).name.split(":")[0] + "_saved"))
    return shadows[id(variable)][1]


def before_save(shadows: dict) -> None:
    for variable, shadow in shadows.values():
        shadow.assign(variable.read_value())


def after_restore(variables, shadows: dict) -> None:
    """After a Saver restored the first copies (and the shadows): every copy takes the
    restored value, as TF 1.15's restore gave every replica."""
    for variable in variables:
        if id(variable) in shadows:
            variable.assign(shadows[id(variable)][1].read_value())
        elif primary(variable) is not variable:
            variable.assign(primary(variable).read_value())


# what TensorFlow raises on the other workers when one is lost mid-step (the collective aborted)
LOST_WORKER_ERRORS = (tf.errors.UnavailableError, tf.errors.AbortedError, tf.errors.CancelledError,
                      tf.errors.DeadlineExceededError, tf.errors.InternalError)


def worker_lost(error, checkpoint_dir: str, runner: str, writes_checkpoints: bool = True) -> RuntimeError:
    """One clear error when the cluster lost a worker mid-step (TensorFlow aborts the
    collective on the others): where training can resume from, read from the checkpoint
    state of ``checkpoint_dir`` when this worker writes the checkpoints (the chief); a
    worker that writes none says so, and that the chief's latest checkpoint is where the
    job resumes (its own folder says nothing about the chief's)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    telling = [line for line in lines if re.search(r"unhealthy|abort|unavailable|connect|socket|"
                                                   r"heartbeat|task", line, re.I)]
    detail = (telling or lines or [type(error).__name__])[0][:300]
    resumes = "every worker resumes when the job is started again"
    latest = tf.train.latest_checkpoint(checkpoint_dir) if checkpoint_dir else None
    if writes_checkpoints or latest is not None:  # (a folder the chief shares: its state is read)
        resume = resume_from(checkpoint_dir, resumes)
    else:
        resume = ("this worker writes no checkpoints (the chief writes them, to its checkpoint "
                  f"directory): the chief's latest checkpoint is where {resumes}")
    return RuntimeError(f"{runner}: a worker of the cluster stopped during training "
                        f"({type(error).__name__}: {detail}); {resume}")


def resume_from(checkpoint_dir: str, resumes: str) -> str:
    """Where a job a lost task stopped starts again: ``the latest checkpoint, <path> (step
    N), is where <resumes>``, or that none was written yet."""
    latest = tf.train.latest_checkpoint(checkpoint_dir) if checkpoint_dir else None
    if latest is None:
        return (f"no checkpoint was written to {checkpoint_dir or 'a checkpoint directory'} yet: "
                "a new start begins from the beginning")
    step = int(tf.train.load_variable(latest, "global_step"))
    return f"the latest checkpoint, {latest} (step {step}), is where {resumes}"


def from_chief(program) -> None:
    """Every worker of a multi-worker program takes the chief's values of every variable
    (one all-reduce): what the chief restored (or initialised) is every worker's, as TF1's
    workers all read the variables the chief's session had restored on the parameter servers,
    even when a worker's own checkpoint directory holds another checkpoint or none."""
    strategy = program.strategy
    variables = [v for v in program.variables if isinstance(v, values_lib.DistributedVariable)]
    if strategy is None or workers(strategy) < 2 or not variables:
        return
    chief = bool(getattr(strategy.extended, "should_checkpoint", False))

    @tf.function(autograph=False)
    def synchronise():
        def replica():
            context = tf.distribute.get_replica_context()
            mine = [v.read_value() if chief else tf.zeros_like(v.read_value()) for v in variables]
            summed = list(mine)
            for dtype in dict.fromkeys(v.dtype for v in variables):  # one all-reduce per dtype
                at = [i for i, v in enumerate(variables) if v.dtype == dtype]
                for i, value in zip(at, context.all_reduce(tf.distribute.ReduceOp.SUM, [mine[i] for i in at])):
                    summed[i] = value
            return summed

        for variable, value in zip(variables, strategy.run(replica)):
            variable.assign(value)

    with strategy.scope():
        synchronise()


class WrappedOptimizer(tf.compat.v1.train.Optimizer):
    """A TF1 optimizer wrapper whose cross-replica work the strategy does (or that has none
    to do): it computes and applies the wrapped v1 optimizer's gradients, whose slots,
    variables and checkpoint names are the wrapped optimizer's, as they were in TF1."""

    def __init__(self, opt, name: str) -> None:
        super().__init__(False, name)
        self._opt = opt

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()
