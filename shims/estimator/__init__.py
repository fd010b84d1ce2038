"""shims.estimator: model_fn-based Estimator programs on TF 2.16+, eagerly.

``tf.estimator`` was removed in TensorFlow 2.16. This runs the same programs with
TF 1.15's Estimator semantics, each call on a fresh program as TF1 built a fresh
graph:

- ``train(input_fn, steps, max_steps, hooks)`` builds ``model_fn`` in TRAIN mode
  (under :class:`shims.GraphProgram`: variables created once with their TF1 names,
  TF1 optimizers' ``minimize(loss, global_step)`` applied in a ``tf.function``
  step), restores the latest checkpoint in ``model_dir``, runs the train op until
  ``global_step`` reaches ``max_steps`` (or for ``steps`` more steps, or until the
  input ends), and saves ``model.ckpt-<step>`` with TF1 names.
- ``evaluate(input_fn, steps, name)`` restores, runs the ``eval_metric_ops`` update
  ops (``tf.compat.v1.metrics``) over the input and returns the metric values, the
  mean loss and ``global_step``.
- ``predict(input_fn, predict_keys)`` restores and yields one dict per example.

Checkpoints are TF1 name-based (``regressor/hidden/kernel``, ``global_step``,
optimizer slots): an Estimator checkpoint written by TF 1.x restores, and what
this writes restores into a TF1 graph. ``tf-migrate ckpt`` reads both.
"""
from __future__ import annotations

import collections
import inspect
import json
import logging
import os
import time
from typing import Any, Callable, Dict, Iterable, List, Optional
import tempfile

import numpy as np
import tensorflow as tf

from shims._saving import CheckpointSaver
from shims import _coordinated, _replicas, cluster as _cluster
from shims.program import GraphProgram

from shims.estimator.hooks import (CheckpointSaverHook, ChiefSessionCreator, HookRunner, LoggingTensorHook,
                                   check_scaffold, scaffold_init, scaffold_keep, NanLossDuringTrainingError,
                                   NanTensorHook, SessionRunArgs, SessionRunContext, SessionRunHook,
                                   SessionRunValues, StopAtStepHook, check_hook)
from shims.estimator import inputs
from shims.estimator import early_stopping
from shims.estimator import early_stopping as experimental  # tf.estimator.experimental's hooks

__all__ = [
    "CheckpointSaverHook", "ChiefSessionCreator", "CrossShardOptimizer", "Estimator", "EstimatorSpec", "EvalSpec", "LoggingTensorHook",
    "ModeKeys", "NanLossDuringTrainingError", "NanTensorHook", "RunConfig", "SessionRunArgs",
    "SessionRunHook", "SessionRunValues",
    "StopAtStepHook", "InputPipelineConfig", "TPUConfig", "TPUEstimator", "TPUEstimatorSpec",
    "TrainSpec", "experimental", "inputs", "train_and_evaluate",
]

# TF 1.x's Estimator logs through TensorFlow's logger ("INFO:tensorflow:loss = ..., step = ...",
# shown once the program sets tf.compat.v1.logging.set_verbosity(INFO)); the same lines here
_log = logging.getLogger("tensorflow")


class ModeKeys:
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"
    INFER = "infer"  # tf.contrib.learn.ModeKeys' name for PREDICT


_SPEC_FIELDS = ("mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
                "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
                "prediction_hooks")


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _SPEC_FIELDS)):
    """What ``model_fn`` returns (TF 1.15's fields)."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops,
                               export_outputs, training_chief_hooks, training_hooks, scaffold,
                               evaluation_hooks, prediction_hooks)


class TPUEstimatorSpec(collections.namedtuple(
        "TPUEstimatorSpec", ("mode", "predictions", "loss", "train_op", "eval_metrics",
                             "export_outputs", "scaffold_fn", "host_call", "training_hooks",
                             "evaluation_hooks", "prediction_hooks"))):
    """The TPU spec, run on CPU/GPU: ``eval_metrics=(metric_fn, tensors)``."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None,
                export_outputs=None, scaffold_fn=None, host_call=None, training_hooks=None,
                evaluation_hooks=None, prediction_hooks=None):
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metrics,
                               export_outputs, scaffold_fn, host_call, training_hooks,
                               evaluation_hooks, prediction_hooks)

    def as_estimator_spec(self) -> EstimatorSpec:
        """TF 1.15's CPU path (``use_tpu=False``): ``eval_metrics`` and ``host_call``
        functions called on the tensors given with them, the host call's values fetched
        at every run by a hook, and ``scaffold_fn`` called for the scaffold."""
        calls = {}
        for field in ("eval_metrics", "host_call"):
            value = getattr(self, field)
            if value is None:
                continue
            if not isinstance(value, (tuple, list)) or len(value) != 2 or not callable(value[0]):
                raise ValueError(f"TPUEstimatorSpec: {field} must be (fn, tensors), "
                                 f"got {value!r}")
            fn, tensors = value
            calls[field] = fn(**tensors) if isinstance(tensors, dict) else fn(*tensors)
        hooks = (_HostCallHook(calls["host_call"]),) if "host_call" in calls else ()
        return EstimatorSpec(self.mode, predictions=self.predictions, loss=self.loss,
                             train_op=self.train_op, eval_metric_ops=calls.get("eval_metrics"),
                             export_outputs=self.export_outputs,
                             scaffold=self.scaffold_fn() if self.scaffold_fn else None,
                             training_hooks=tuple(self.training_hooks or ()) + hooks,
                             evaluation_hooks=tuple(self.evaluation_hooks or ()) + hooks,
                             prediction_hooks=tuple(self.prediction_hooks or ()) + hooks)


class _HostCallHook(SessionRunHook):
    """TF 1.15's _OutfeedHostCallHook: a host call's values run with every step (the
    summary writers it writes to are the program's: opened once, flushed at the end)."""

    def __init__(self, values) -> None:
        self._values = values

    def before_run(self, run_context):
        return SessionRunArgs(self._values)


class InputPipelineConfig:
    """``tf.estimator.tpu.InputPipelineConfig``'s values (used on a TPU only)."""
    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


class TPUConfig(collections.namedtuple("TPUConfig", (
        "iterations_per_loop", "num_shards", "num_cores_per_replica",
        "per_host_input_for_training", "tpu_job_name", "initial_infeed_sleep_secs",
        "input_partition_dims", "eval_training_input_configuration",
        "experimental_host_call_every_n_steps"))):
    """``tf.estimator.tpu.TPUConfig`` (TF 1.15's fields and defaults). Off a TPU, as with
    TF1's ``use_tpu=False``, none of them changes what a program computes."""

    def __new__(cls, iterations_per_loop=2, num_shards=None, num_cores_per_replica=None,
                per_host_input_for_training=True, tpu_job_name=None,
                initial_infeed_sleep_secs=None, input_partition_dims=None,
                eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
                experimental_host_call_every_n_steps=1):
        if not isinstance(iterations_per_loop, int) or iterations_per_loop < 1:
            raise ValueError(f"TPUConfig: iterations_per_loop must be a positive int, got "
                             f"{iterations_per_loop!r}")
        if num_shards is not None and num_shards < 1:
            raise ValueError(f"TPUConfig: num_shards must be positive, got {num_shards}")
        return super().__new__(cls, iterations_per_loop, num_shards, num_cores_per_replica,
                               per_host_input_for_training, tpu_job_name,
                               initial_infeed_sleep_secs, input_partition_dims,
                               eval_training_input_configuration,
                               experimental_host_call_every_n_steps)


class RunConfig:
    """The RunConfig fields a single-machine program uses."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=None, save_checkpoints_secs=None, session_config=None,
                 keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100, train_distribute=None, device_fn=None,
                 protocol=None, eval_distribute=None, experimental_distribute=None,
                 experimental_max_worker_delay_secs=None, session_creation_timeout_secs=7200,
                 **tpu_fields):
        if save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise ValueError("RunConfig: give save_checkpoints_steps or save_checkpoints_secs, "
                             "not both")
        if save_checkpoints_steps is None and save_checkpoints_secs is None:
            save_checkpoints_secs = 600
        self.model_dir = model_dir
        self.tf_random_seed = tf_random_seed
        self.save_summary_steps = save_summary_steps
        self.save_checkpoints_steps = save_checkpoints_steps
        self.save_checkpoints_secs = save_checkpoints_secs
        self.session_config = session_config
        self.keep_checkpoint_max = keep_checkpoint_max
        self.keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self.log_step_count_steps = log_step_count_steps
        self.train_distribute = train_distribute
        self.eval_distribute = eval_distribute
        self.tpu_config = tpu_fields.pop("tpu_config", None)
        self.master = tpu_fields.pop("master", "") or ""
        self.cluster = tpu_fields.pop("cluster", None)
        for key in tpu_fields:
            setattr(self, key, tpu_fields[key])
        self._cluster_from_environment()

    def _cluster_from_environment(self) -> None:
        """TF 1.15's RunConfig read its cluster from ``TF_CONFIG`` (what cluster managers
        set): ``cluster_spec``, ``task_type``, ``task_id``, ``is_chief``, ``num_ps_replicas``,
        ``num_worker_replicas``. A cluster of one task (a managed service's single
        ``master``) runs here as it did; a bigger one is refused by ``train`` (see
        ``distributed``)."""
        text = os.environ.get("TF_CONFIG", "")
        try:
            tf_config = json.loads(text) if text.strip() else {}
        except ValueError as exc:
            raise ValueError(f"RunConfig: TF_CONFIG is not JSON ({exc}): {text[:200]!r}") from None
        cluster = {job: list(tasks) for job, tasks in (tf_config.get("cluster") or {}).items()}
        task = tf_config.get("task") or {}
        self.cluster_spec = cluster
        if not cluster:
            self.task_type, self.task_id = task.get("type", "worker"), int(task.get("index", 0))
            if self.task_type != "worker" or self.task_id != 0:
                raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be WORKER '
                                 'and task index 0')
            self.is_chief, self.num_ps_replicas, self.num_worker_replicas = True, 0, 1
            return
        self.task_type, self.task_id = task.get("type"), int(task.get("index", 0))
        if self.task_type is None:
            raise ValueError("RunConfig: TF_CONFIG has a cluster but no task type")
        if self.task_type != "evaluator" and not (
                self.task_type in cluster and 0 <= self.task_id < len(cluster[self.task_type])):
            raise ValueError(f"RunConfig: TF_CONFIG's task {self.task_type}:{self.task_id} is not "
                             f"in its cluster {sorted(cluster)}")
        self.is_chief = self.task_type in ("chief", "master")
        self.num_ps_replicas = len(cluster.get("ps", ()))
        self.num_worker_replicas = sum(len(cluster.get(job, ())) for job in ("chief", "master", "worker"))
        if not self.master and "session_master" in tf_config:
            self.master = tf_config["session_master"]
        elif not self.master and self.distributed and self.task_type in cluster:
            self.master = "grpc://" + cluster[self.task_type][self.task_id]

    @property
    def distributed(self) -> bool:
        """Whether TF_CONFIG puts this process in a cluster of more than one task (or makes
        it an evaluator): TF 1.15 trained such programs by between-graph replication."""
        tasks = sum(len(tasks) for tasks in self.cluster_spec.values())
        return tasks > 1 or self.task_type == "evaluator"

    def replace(self, **changes) -> "RunConfig":
        new = RunConfig.__new__(RunConfig)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        return new


def _arg_names(fn) -> set:
    """The named parameters of ``fn`` (TF 1.15's fn_args: **kwargs does not count)."""
    try:
        return {name for name, p in inspect.signature(fn).parameters.items()
                if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    except (TypeError, ValueError):
        return set()


def _call_model_fn(model_fn, features, labels, mode, params, config):
    """TF 1.15's argument inspection: features, labels, mode, params, config."""
    names = _arg_names(model_fn)
    kwargs: Dict[str, Any] = {}
    if "labels" in names:
        kwargs["labels"] = labels
    elif labels is not None:
        raise ValueError("model_fn does not take labels, but input_fn returns labels")
    if "mode" in names:
        kwargs["mode"] = mode
    if "params" in names:
        kwargs["params"] = params
    if "config" in names:
        kwargs["config"] = config
    spec = model_fn(features=features, **kwargs)
    if isinstance(spec, TPUEstimatorSpec):
        spec = spec.as_estimator_spec()
    if not isinstance(spec, EstimatorSpec):
        raise TypeError(f"model_fn must return an EstimatorSpec, not {type(spec).__name__}")
    check_scaffold(spec.scaffold, "EstimatorSpec")
    return spec


def _dataset(input_fn, params, config, mode, input_context=None) -> tf.data.Dataset:
    kwargs = {}
    names = _arg_names(input_fn)
    if "input_context" in names:  # TF 1.15 passed it under a strategy (None without one)
        kwargs["input_context"] = input_context
    if "params" in names:
        kwargs["params"] = params
    if "config" in names:
        kwargs["config"] = config
    if "mode" in names:
        kwargs["mode"] = mode
    data = input_fn(**kwargs)
    if isinstance(data, tf.data.Dataset):
        return data
    if isinstance(data, tuple) and len(data) == 2:  # (features, labels) tensors: one batch, repeated
        return tf.data.Dataset.from_tensors(data).repeat()
    return tf.data.Dataset.from_tensors(data).repeat()


def _split(element):
    if isinstance(element, tuple) and len(element) == 2:
        return element[0], element[1]
    if isinstance(element, tuple) and len(element) == 1:
        return element[0], None
    return element, None


def _check_steps(steps: Optional[int], max_steps: Optional[int]) -> None:
    """``train``'s step arguments, checked as TF 1.15 checked them."""
    if steps is not None and max_steps is not None:
        raise ValueError("Estimator.train: give steps or max_steps, not both")
    if steps is not None and steps <= 0:
        raise ValueError(f"Estimator.train: steps must be positive, got {steps}")
    if max_steps is not None and max_steps <= 0:
        raise ValueError(f"Estimator.train: max_steps must be positive, got {max_steps}")


class Estimator:
    """TF 1.15's ``tf.estimator.Estimator`` for model_fn programs (see the module doc)."""

    def __init__(self, model_fn: Callable, model_dir: Optional[str] = None,
                 config: Optional[RunConfig] = None, params: Optional[dict] = None,
                 warm_start_from=None):
        if not callable(model_fn):
            raise ValueError("Estimator: model_fn must be callable")
        self._model_fn = model_fn
        self._config = config or RunConfig()
        if model_dir is None:
            model_dir = self._config.model_dir
        if model_dir is None:

            model_dir = tempfile.mkdtemp(prefix="estimator-")
            _log.warning("Using temporary folder as model directory: %s", model_dir)
        self._model_dir = str(model_dir)
        self._config = self._config.replace(model_dir=self._model_dir)
        self._params = dict(params or {})
        self._warm_start_from = warm_start_from

    # -- properties --------------------------------------------------------------
    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: self._config)
    params = property(lambda self: dict(self._params))
    model_fn = property(lambda self: self._model_fn)

    def latest_checkpoint(self) -> Optional[str]:
        return tf.train.latest_checkpoint(self._model_dir)

    def eval_dir(self, name: Optional[str] = None) -> str:
        """Where evaluate writes its metrics as summary events (TF 1.15's eval_dir)."""
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def get_variable_names(self) -> List[str]:
        latest = self._require_checkpoint()
        return [name for name, _ in tf.train.list_variables(latest)]

    def get_variable_value(self, name: str) -> np.ndarray:
        latest = self._require_checkpoint()
        return tf.train.load_variable(latest, name)

    def _resume_point(self) -> Optional[str]:
        """The checkpoint a session resumes from, as TF 1.15's session manager finds it:
        the one the ``checkpoint`` file names. A named checkpoint that does not exist is
        an error, as in TF1 (``The passed save_path is not a valid checkpoint``), raised
        before anything in model_dir is touched; a run never silently starts afresh over
        an earlier run's checkpoints."""
        state = tf.train.get_checkpoint_state(self._model_dir)
        if state is None or not state.model_checkpoint_path:
            return None
        path = state.model_checkpoint_path  # joined to model_dir by TensorFlow when relative
        if not tf.io.gfile.exists(path + ".index"):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {path} (named by "
                             f"{os.path.join(self._model_dir, 'checkpoint')}; nothing in "
                             "model_dir was changed)")
        return path

    def _require_checkpoint(self) -> str:
        latest = self.latest_checkpoint()
        if latest is None:
            raise ValueError(f"Estimator: no checkpoint in {self._model_dir}; train first")
        return latest

    def _parameter_servers(self, strategy):
        """TF 1.15's Estimator in a ``TF_CONFIG`` cluster with parameter servers and no
        ``train_distribute`` ran between-graph replication: the variables on the parameter
        servers (its default ``replica_device_setter``), every worker training them
        asynchronously. Here that is ``ParameterServerStrategy``: this task's
        ``shims.cluster.ParameterServers`` (the chief coordinates, the other tasks serve),
        else None."""
        config = self._config
        if strategy is not None or not getattr(config, "distributed", False) \
                or not config.cluster_spec.get("ps") or config.task_type == "evaluator":
            return None
        return _cluster.ParameterServers(config.cluster_spec, job_name=config.task_type,
                                         task_index=config.task_id)

    def _refuse_cluster(self, what: str, strategy=None) -> None:
        """A cluster from TF_CONFIG: TF 1.15 ran this task as one part of between-graph
        replication (parameter servers serving, workers training one shared model, an
        evaluator following the checkpoints). Run alone, every task would train a model of
        its own into the same model_dir; so nothing runs and nothing is written. A
        multi-worker strategy (``train_distribute=MultiWorkerMirroredStrategy()``) is the
        cluster's own way: every worker trains one model with it."""
        config = self._config
        if not getattr(config, "distributed", False):
            return
        if strategy is not None and _replicas.workers(strategy) > 1:
            return
        jobs = ", ".join(f"{job}: {len(tasks)}" for job, tasks in sorted(config.cluster_spec.items()))
        raise RuntimeError(
            f"shims.estimator: TF_CONFIG puts this process in a cluster ({jobs}) as "
            f"{config.task_type}:{config.task_id}; TF 1.15 ran {what}() there as between-graph "
            "replication, which shims.estimator does not do. Run the program as one process "
            "(without TF_CONFIG), or train the model with tf.distribute "
            "(MultiWorkerMirroredStrategy or ParameterServerStrategy read the same TF_CONFIG). "
            "Nothing was run or written.")

    def _replicas(self, what: str):
        """``RunConfig(train_distribute=..., eval_distribute=...)``: the strategy when it has
        more than one replica, else None (one replica computes what no strategy computes).
        Training runs model_fn once per replica, as TF 1.15's Estimator did; a strategy
        whose replicas are not this process's devices is refused before anything runs."""
        strategy = getattr(self._config, what, None)
        if strategy is None:
            return None
        replicas = getattr(strategy, "num_replicas_in_sync", 1)
        if replicas == 1:
            _log.info("%s with one replica: model_fn runs once per step, as it did under it", what)
            return None
        try:
            _replicas.check_strategy(strategy)
        except (TypeError, NotImplementedError) as error:
            raise NotImplementedError(
                f"shims.estimator: RunConfig({what}=...): {error}. Nothing was run or "
                "written.") from None
        return strategy

    # -- building ------------------------------------------------------------------
    def _program(self, dataset: tf.data.Dataset, mode: str, hooks=()):
        """A GraphProgram running model_fn on one element of ``dataset``. Its values: the
        spec's tensors under fixed names. ``holder`` gets the spec and the hooks (the
        given ones and the spec's), begun inside the first build, as TF1 began them."""
        features_spec, labels_spec = _split(dataset.element_spec)
        holder: Dict[str, Any] = {}
        model_fn, params, config = self._model_fn, self._params, self._config

        def model(features, labels=None):
            if config.tf_random_seed is not None:
                tf.compat.v1.set_random_seed(config.tf_random_seed)
            step = tf.compat.v1.train.get_or_create_global_step()
            spec = _call_model_fn(model_fn, features, labels, mode, params, config)
            values: Dict[str, Any] = {"global_step": step}
            if spec.loss is not None:
                values["loss"] = spec.loss
            if spec.train_op is not None:
                values["train_op"] = spec.train_op
                with tf.control_dependencies([spec.train_op]):  # the step the train op reached
                    values["global_step_after"] = tf.identity(step.read_value())
            if spec.predictions is not None:
                values["predictions"] = spec.predictions
            if spec.eval_metric_ops:
                values["metric_values"] = {k: v[0] for k, v in spec.eval_metric_ops.items()}
                values["metric_updates"] = {k: v[1] for k, v in spec.eval_metric_ops.items()}
            if mode == ModeKeys.EVAL and spec.loss is not None:
                mean, update = tf.compat.v1.metrics.mean(spec.loss)
                values["loss_mean"], values["loss_update"] = mean, update
            if "spec" not in holder:
                holder["spec"] = spec
                holder["hooks"] = [*hooks, *_spec_hooks(spec, mode)]
                for hook in holder["hooks"]:
                    check_hook(hook, "shims.estimator")
                    hook.begin()
            return values

        signature = {"features": features_spec}
        if labels_spec is not None:
            signature["labels"] = labels_spec
        program = GraphProgram(model, name=f"estimator_{mode}", **signature)
        return program, holder

    def _restore(self, program: GraphProgram, required: bool,
                 path: Optional[str] = None) -> Optional[str]:
        latest = path or self._resume_point()
        if latest is None:
            if required:
                raise ValueError(f"Estimator: could not find a trained model in {self._model_dir}")
            if self._warm_start_from is not None:
                self._warm_start(program)
            return None
        wanted = {program.name_of(v) for v in program.global_variables()}
        present = {name for name, _ in tf.train.list_variables(latest)}
        missing = sorted(wanted - present)
        if missing:
            raise ValueError(
                f"Estimator: the checkpoint {latest} in model_dir is not of this model: it lacks "
                f"{len(missing)} variable(s): {', '.join(missing[:10])}"
                f"{' ...' if len(missing) > 10 else ''}. Nothing in model_dir was changed.")
        program.restore(latest)
        return latest

    def _warm_start(self, program: GraphProgram) -> None:
        source = self._warm_start_from
        if not isinstance(source, str):
            source = getattr(source, "ckpt_to_initialize_from", None)
        if os.path.isdir(source):
            source = tf.train.latest_checkpoint(source)
        present = dict(tf.train.list_variables(source))
        for variable in program.trainable_variables:
            name = program.name_of(variable)
            if name in present:
                variable.assign(tf.train.load_variable(source, name))

    # -- train ---------------------------------------------------------------------
    def train(self, input_fn, hooks: Optional[Iterable] = None, steps: Optional[int] = None,
              max_steps: Optional[int] = None, saving_listeners=None) -> "Estimator":
        strategy = self._replicas("train_distribute")
        servers = self._parameter_servers(strategy)
        if servers is None:
            self._refuse_cluster("train", strategy)
        elif not servers.is_chief:  # a parameter server serves, a worker runs the chief's steps:
            servers.join()          # neither returns (see shims.cluster.ParameterServers)
        else:  # the chief joins the cluster before its input exists (the cluster renames its devices)
            servers.coordinated()
        _check_steps(steps, max_steps)
        latest = self._resume_point()
        if max_steps is not None and latest is not None:
            done = int(tf.train.load_variable(latest, "global_step"))
            if done >= max_steps:
                _log.info("Skipping training since max_steps has already saved.")
                return self
        dataset = _dataset(input_fn, self._params, self._config, ModeKeys.TRAIN,
                           _input_context(strategy))
        program, holder = self._program(dataset, ModeKeys.TRAIN, tuple(hooks or ()))
        if strategy is not None:  # TF 1.15: model_fn per replica, v1 optimizers' losses scaled
            program.on_strategy(strategy, scale_loss=True)
        if servers is not None:  # the chief schedules every step on the cluster's workers
            program.on_parameter_servers(servers)
        feeds = ("features", "labels") if "labels" in program._state.specs else ("features",)
        program.function((), feeds)  # build: creates every variable, begins the hooks
        spec, all_hooks = holder["spec"], holder["hooks"]
        if spec.train_op is None or spec.loss is None:
            raise ValueError("Estimator.train: model_fn must return loss and train_op in TRAIN mode")
        if self._restore(program, required=False) is None:
            scaffold_init(spec.scaffold, program)
        os.makedirs(self._model_dir, exist_ok=True)
        start = int(program.variable("global_step").numpy())
        if steps is not None:
            max_steps = start + steps
        hooks_run = HookRunner(program, all_hooks)
        hooks_run.after_create_session()
        config = self._config
        # under a multi-worker strategy only the chief writes checkpoints, as in TF 1.15
        chief = strategy is None or bool(getattr(strategy.extended, "should_checkpoint", True))
        saver = CheckpointSaver(program, self._model_dir, start, config.save_checkpoints_steps,
                                config.save_checkpoints_secs,
                                scaffold_keep(spec.scaffold, config.keep_checkpoint_max or 5),
                                saving_listeners, chief=chief)
        try:
            step_value, loss = self._train_loop(program, dataset, hooks_run, saver, start,
                                                max_steps, len(feeds) == 2)
        except _replicas.LOST_WORKER_ERRORS as error:
            if program.parameter_servers is not None:
                if not _coordinated.parameter_server_failure(error):
                    raise  # (a lost worker's steps go to the others: not this)
                raise _coordinated.server_lost(error, program.parameter_servers, self._model_dir,
                                               "shims.estimator") from None
            if strategy is None or _replicas.workers(strategy) == 1:
                raise
            raise _replicas.worker_lost(error, self._model_dir, "shims.estimator",
                                        writes_checkpoints=chief) from None
        saver.end(step_value)
        hooks_run.end()
        program.flush_summary_writers()  # TF1's graph and its writers ended with train()
        _log.info("Loss for final step: %s.", loss)
        return self

    def _train_loop(self, program: GraphProgram, dataset, hooks_run: HookRunner,
                    saver: CheckpointSaver, start: int, max_steps: Optional[int],
                    labelled: bool):
        """train()'s steps, as TF 1.15's MonitoredTrainingSession ran them; returns the last
        step and loss."""
        log_every = self._config.log_step_count_steps
        # under a strategy (one replica too), or on parameter servers, TF 1.15 logged the step
        # read before the update
        read_before = int(getattr(self._config, "train_distribute", None) is not None
                          or program.parameter_servers is not None)
        step_value, loss, started = start, None, time.time()
        iteration = 0
        for elements in _rounds(dataset, program):
            if max_steps is not None and step_value >= max_steps:
                break
            fetch: Dict[str, Any] = {"train_op": "train_op", "loss": "loss",
                                     "global_step": "global_step_after"}
            asked = hooks_run.before_run()
            if asked:
                fetch["hooks"] = asked
            out = _train_step(program, fetch, elements, labelled)
            loss, step_value = float(out["loss"]), int(out["global_step"])
            if not np.isfinite(loss):
                raise FloatingPointError(f"Estimator: model diverged with loss = {loss} "
                                         f"at step {step_value}")
            # TF1's chief hooks run first: the step's checkpoint (and the evaluation a saving
            # listener runs on it) comes before the program's own hooks see the step
            if saver.after_step(step_value):
                hooks_run.context.request_stop()
            hooks_run.after_run(out.get("hooks", {}))
            if log_every and iteration % log_every == 0:  # TF1: the first step, then every N
                logged = step_value - read_before
                if iteration:
                    _log.info("loss = %s, step = %d (%.3f sec)", out["loss"], logged,
                              time.time() - started)
                else:
                    _log.info("loss = %s, step = %d", out["loss"], logged)
                started = time.time()
            iteration += 1
            if hooks_run.context.stop_requested:
                break
        return step_value, loss

    # -- evaluate ------------------------------------------------------------------
    def evaluate(self, input_fn, steps: Optional[int] = None, hooks=None,
                 checkpoint_path: Optional[str] = None, name: Optional[str] = None) -> Dict[str, Any]:
        strategy = self._replicas("eval_distribute")
        if strategy is not None and steps is not None:
            # TF 1.15 ran each of the N replicas on its own batch per step and summed the
            # metrics' totals across them: the same metrics as N batches in a row on one device
            steps *= strategy.num_replicas_in_sync
            _log.info("eval_distribute with %d replicas: evaluating %d batches on one device "
                      "(the same metrics)", strategy.num_replicas_in_sync, steps)
        dataset = _dataset(input_fn, self._params, self._config, ModeKeys.EVAL)
        program, holder = self._program(dataset, ModeKeys.EVAL, tuple(hooks or ()))
        feeds = ("features", "labels") if "labels" in program._state.specs else ("features",)
        program.function((), feeds)
        spec = holder["spec"]
        if spec.loss is None:
            raise ValueError("Estimator.evaluate: model_fn must return loss in EVAL mode")
        self._restore(program, required=True, path=checkpoint_path)
        updates: Dict[str, Any] = {"loss": "loss_update"}
        if spec.eval_metric_ops:
            updates["metrics"] = "metric_updates"
        hooks_run = HookRunner(program, holder["hooks"])
        hooks_run.after_create_session()
        count = 0
        for element in dataset:
            if (steps is not None and count >= steps) or hooks_run.context.stop_requested:
                break
            features, labels = _split(element)
            hooks_run.run(updates, features=features, **({"labels": labels} if len(feeds) == 2 else {}))
            count += 1
        values: Dict[str, Any] = {"loss": "loss_mean", "global_step": "global_step"}
        if spec.eval_metric_ops:
            values["metrics"] = "metric_values"
        out = program.run(values)
        hooks_run.end()
        result: Dict[str, Any] = dict(out.get("metrics", {}))
        result["loss"] = out["loss"]
        result["global_step"] = out["global_step"]
        _log.info("Saving dict for global step %d: %s", int(out["global_step"]),
                  ", ".join(f"{k} = {result[k]}" for k in sorted(result)))
        early_stopping.write_eval_metrics(self.eval_dir(name), int(out["global_step"]), result)
        return result

    # -- predict -------------------------------------------------------------------
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples: bool = True):
        dataset = _dataset(input_fn, self._params, self._config, ModeKeys.PREDICT)
        features_spec, labels_spec = _split(dataset.element_spec)
        if labels_spec is not None:  # TF1 drops the labels an input_fn returns in PREDICT mode
            dataset = dataset.map(lambda *e: e[0])
        program, holder = self._program(dataset, ModeKeys.PREDICT, tuple(hooks or ()))
        program.function((), ("features",))
        spec = holder["spec"]
        if spec.predictions is None:
            raise ValueError("Estimator.predict: model_fn must return predictions in PREDICT mode")
        self._restore(program, required=True, path=checkpoint_path)
        keys = None
        if isinstance(spec.predictions, dict) and predict_keys is not None:
            keys = [predict_keys] if isinstance(predict_keys, str) else list(predict_keys)
            unknown = [k for k in keys if k not in spec.predictions]
            if unknown:
                raise ValueError(f"Estimator.predict: predict_keys {unknown} are not in the "
                                 f"predictions: {sorted(spec.predictions)}")
        hooks_run = HookRunner(program, holder["hooks"])
        hooks_run.after_create_session()
        for features in dataset:
            if hooks_run.context.stop_requested:
                break
            batch = hooks_run.run("predictions", features=features)
            if keys is not None:
                batch = {k: batch[k] for k in keys}
            if not yield_single_examples:
                yield batch
                continue
            if isinstance(batch, dict):
                size = len(next(iter(batch.values())))
                for i in range(size):
                    yield {k: v[i] for k, v in batch.items()}
            else:
                for row in batch:
                    yield row
        hooks_run.end()

    def export_saved_model(self, *args, **kwargs):
        raise NotImplementedError(
            "shims.estimator: export_saved_model is not supported; export the model with "
            "tf.saved_model.save on a tf.Module (or a Keras model's export()) instead")

    export_savedmodel = export_saved_model


class TPUEstimator(Estimator):
    """``TPUEstimator`` on CPU/GPU, TF 1.15's ``use_tpu=False`` path: batch sizes go to
    params. With ``use_tpu=True`` on a machine without a TPU the same program runs that
    path, with a note (TF 1.15 stopped there, finding no TPU to connect to); the model_fn's
    ``CrossShardOptimizer`` is then the optimizer it wraps (one shard). On a TPU it is one
    clear error: there is no TPUStrategy path."""

    def __init__(self, model_fn=None, model_dir=None, config=None, params=None, use_tpu=False,
                 train_batch_size=None, eval_batch_size=None, predict_batch_size=None,
                 batch_axis=None, eval_on_tpu=True, export_to_tpu=True, warm_start_from=None,
                 **_ignored):
        if use_tpu:
            if tf.config.list_logical_devices("TPU"):
                raise NotImplementedError(
                    "shims.estimator.TPUEstimator(use_tpu=True) on a TPU: shims.estimator has no "
                    "TPUStrategy path; run with use_tpu=False (the CPU/GPU path), or move the "
                    "model to tf.distribute.TPUStrategy")
            _log.warning("TPUEstimator(use_tpu=True): this machine has no TPU, so the program runs "
                         "TPUEstimator's CPU/GPU path (use_tpu=False: one replica with the global "
                         "batch sizes, host calls every step; CrossShardOptimizer is the optimizer "
                         "it wraps)")
        params = dict(params or {})
        self._batch_sizes = {ModeKeys.TRAIN: train_batch_size, ModeKeys.EVAL: eval_batch_size,
                             ModeKeys.PREDICT: predict_batch_size}
        params.setdefault("use_tpu", False)
        super().__init__(model_fn, model_dir=model_dir, config=config, params=params,
                         warm_start_from=warm_start_from)

    def _with_batch(self, mode):
        size = self._batch_sizes.get(mode)
        if size is not None:
            self._params["batch_size"] = size

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        self._with_batch(ModeKeys.TRAIN)
        return super().train(input_fn, hooks=hooks, steps=steps, max_steps=max_steps)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        self._with_batch(ModeKeys.EVAL)
        return super().evaluate(input_fn, steps=steps, hooks=hooks,
                                checkpoint_path=checkpoint_path, name=name)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        self._with_batch(ModeKeys.PREDICT)
        return super().predict(input_fn, predict_keys=predict_keys, hooks=hooks,
                               checkpoint_path=checkpoint_path,
                               yield_single_examples=yield_single_examples)


class CrossShardOptimizer(_replicas.WrappedOptimizer):
    """``tf.tpu.CrossShardOptimizer`` where ``TPUEstimator`` runs its CPU/GPU path (no TPU):
    one shard, whose cross-shard sum (or mean) of the gradients is the gradients
    themselves, so it computes and applies those of the optimizer it wraps (its slots and
    checkpoint names too), as TF1's did on one shard."""

    def __init__(self, opt, reduction=tf.compat.v1.losses.Reduction.MEAN, name="CrossShardOptimizer",
                 group_assignment=None):
        accepted = (tf.compat.v1.losses.Reduction.SUM, tf.compat.v1.losses.Reduction.MEAN)
        if reduction not in accepted:
            raise ValueError(f"Unsupported reduction: {reduction}.")
        if tf.config.list_logical_devices("TPU"):
            raise NotImplementedError("shims.estimator.CrossShardOptimizer on a TPU: shims.estimator has "
                                      "no TPUStrategy path (see TPUEstimator)")
        super().__init__(opt, name)


def _spec_hooks(spec, mode):
    field = {ModeKeys.TRAIN: "training_hooks", ModeKeys.EVAL: "evaluation_hooks",
             ModeKeys.PREDICT: "prediction_hooks"}[mode]
    hooks = list(getattr(spec, field) or ())
    if mode == ModeKeys.TRAIN:
        hooks += list(spec.training_chief_hooks or ())
    return hooks


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])):
    def __new__(cls, input_fn, max_steps=None, hooks=None):
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()))


class EvalSpec(collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks",
                                                   "exporters", "start_delay_secs",
                                                   "throttle_secs"])):
    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        return super().__new__(cls, input_fn, steps, name, tuple(hooks or ()), exporters,
                               start_delay_secs, throttle_secs)


def _input_context(strategy):
    """What TF 1.15 gave an ``input_fn(input_context)`` under a strategy: this worker's
    input pipeline among the workers' (a MirroredStrategy has one), and the replicas."""
    if strategy is None:
        return None
    return tf.distribute.InputContext(
        num_input_pipelines=_replicas.workers(strategy),
        input_pipeline_id=getattr(strategy.extended, "_id_in_cluster", 0) or 0,
        num_replicas_in_sync=strategy.num_replicas_in_sync)


def _rounds(dataset, program: GraphProgram):
    """The elements one training step takes: one, or one per replica of a program on a
    strategy (TF 1.15 gave each replica the next element; a last incomplete round ended
    training, as the replicas' iterators ran out)."""
    replicas = _replicas.local_replicas(program.strategy) if program.strategy is not None else 1
    taken = []
    for element in dataset:
        taken.append(element)
        if len(taken) == replicas:
            yield taken
            taken = []


def _train_step(program: GraphProgram, fetch, elements, labelled: bool) -> Dict[str, Any]:
    """One training step: the first replica's values, the loss as TF 1.15's Estimator
    reported it under a strategy (every replica's, reduced: see run_replicas)."""
    feeds = []
    for element in elements:
        features, labels = _split(element)
        feeds.append({"features": features, **({"labels": labels} if labelled else {})})
    if program.strategy is None:
        return program.run(fetch, **feeds[0])
    return program.run_replicas(fetch, feeds, reduce_loss="loss")[0]


def train_and_evaluate(estimator: Estimator, train_spec: TrainSpec, eval_spec: EvalSpec):
    """TF 1.15's local train_and_evaluate: one ``train()`` to ``max_steps`` (the input runs
    on, never restarted), evaluating after each checkpoint save (the first save of the run
    skipped: nothing trained yet; then at most every ``throttle_secs``) and at the end when
    the last step was not evaluated. A hook's stop (early stopping) ends it, as in TF1.

    With a multi-worker strategy (``train_distribute=MultiWorkerMirroredStrategy()``, the
    cluster in ``TF_CONFIG``), TF 1.15's distribute coordinator: the workers train, and
    only an ``evaluator`` task evaluates, each new checkpoint until ``max_steps``."""
    config = estimator.config
    strategy = getattr(config, "train_distribute", None)
    servers = strategy is None and getattr(config, "distributed", False) \
        and bool((getattr(config, "cluster_spec", None) or {}).get("ps"))
    if (strategy is not None or servers) and getattr(config, "distributed", False):
        if config.task_type == "evaluator":
            return _evaluator(estimator, train_spec, eval_spec), []
        if servers or _replicas.workers(strategy) > 1:  # (parameter servers: see Estimator.train)
            estimator.train(train_spec.input_fn, hooks=train_spec.hooks,
                            max_steps=train_spec.max_steps)
            return None, []
    estimator._refuse_cluster("train_and_evaluate")
    listener = _EvaluateOnSave(estimator, eval_spec)
    estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps,
                    saving_listeners=[listener])
    return listener.result, []


def _evaluator(estimator: Estimator, train_spec: TrainSpec, eval_spec: EvalSpec):
    """TF 1.15's evaluator task: after ``start_delay_secs``, every checkpoint the chief
    writes is evaluated (at most every ``throttle_secs``) until one reaches the train
    spec's ``max_steps``; without ``max_steps`` it follows the training for good, as there."""
    time.sleep(eval_spec.start_delay_secs or 0)
    last, result = None, None
    while True:
        latest = estimator.latest_checkpoint()
        if latest is None or latest == last:
            time.sleep(1)
            continue
        started, last = time.time(), latest
        try:
            result = estimator.evaluate(eval_spec.input_fn, steps=eval_spec.steps, hooks=eval_spec.hooks,
                                        checkpoint_path=latest, name=eval_spec.name)
        except tf.errors.NotFoundError:
            if os.path.exists(latest + ".index"):
                raise
            # the chief keeps keep_checkpoint_max checkpoints: a fast one deleted this one
            # while it was read; the next is evaluated (TF 1.15's evaluator failed here)
            _log.info("Checkpoint %s was deleted while it was evaluated; evaluating the next one", latest)
            continue
        if train_spec.max_steps is not None and result["global_step"] >= train_spec.max_steps:
            return result
        time.sleep(max(0.0, (eval_spec.throttle_secs or 0) - (time.time() - started)))


class _EvaluateOnSave:
    """TF 1.15's _NewCheckpointListenerForEvaluate (a CheckpointSaverListener)."""

    def __init__(self, estimator: Estimator, eval_spec: EvalSpec) -> None:
        self._estimator, self._spec = estimator, eval_spec
        self._timer = early_stopping._Timer(every_secs=eval_spec.throttle_secs)
        self._first = True
        self.result = None

    def begin(self) -> None:
        pass

    def before_save(self, session, step) -> None:
        pass

    def after_save(self, session, step) -> bool:
        if self._first:  # the run's first save: the model is not trained yet
            self._first = False
            return False
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            self._evaluate()
        return False

    def end(self, session, step) -> None:
        if step != self._timer.last_triggered_step():
            self._evaluate()

    def _evaluate(self) -> None:
        spec = self._spec
        self.result = self._estimator.evaluate(spec.input_fn, steps=spec.steps, hooks=spec.hooks,
                                               name=spec.name)
