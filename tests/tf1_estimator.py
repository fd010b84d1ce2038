"""The TF1 reference for Estimator programs in tests: tf.estimator is gone from TF 2.21,
so the reference run drives model_fn the way TF 1.15's Estimator did, in TF1 graph mode:
a fresh graph per call; train() restores model_dir's latest checkpoint, runs the train
op until global_step reaches max_steps (or `steps` more) and saves; evaluate() restores,
runs the metric update ops over the whole input and returns the metrics, the mean loss
and global_step; predict() restores and yields one dict per example.

Installed as ``tensorflow.estimator`` (with tensorflow = tf.compat.v1) by the test."""
import collections
import os

import tensorflow.compat.v1 as v1


class ModeKeys:
    TRAIN, EVAL, PREDICT = "train", "eval", "infer"


EstimatorSpec = collections.namedtuple("EstimatorSpec", "mode predictions loss train_op eval_metric_ops")
EstimatorSpec.__new__.__defaults__ = (None,) * 4


class RunConfig:
    def __init__(self, save_checkpoints_steps=None, keep_checkpoint_max=5, **_):
        self.save_checkpoints_steps, self.keep_checkpoint_max = save_checkpoints_steps, keep_checkpoint_max


class Estimator:
    def __init__(self, model_fn, model_dir, config=None, params=None):
        self.model_fn, self.model_dir, self.params = model_fn, model_dir, params
        self.config = config or RunConfig()

    def _graph(self, input_fn, mode):
        features, labels = v1.data.make_one_shot_iterator(input_fn()).get_next()
        step = v1.train.get_or_create_global_step()
        return self.model_fn(features, labels, mode, self.params), step

    def _session(self):
        session = v1.Session()
        session.run([v1.global_variables_initializer(), v1.local_variables_initializer()])
        latest = v1.train.latest_checkpoint(self.model_dir)
        if latest:
            v1.train.Saver(v1.global_variables()).restore(session, latest)
        return session

    def train(self, input_fn, steps=None, max_steps=None, hooks=()):
        with v1.Graph().as_default():
            spec, step = self._graph(input_fn, ModeKeys.TRAIN)
            saver = v1.train.Saver(max_to_keep=self.config.keep_checkpoint_max)
            every = self.config.save_checkpoints_steps
            for hook in hooks:
                hook.begin()
            with self._session() as session:
                start = session.run(step)
                last = max_steps if max_steps is not None else start + steps
                prefix = os.path.join(self.model_dir, "model.ckpt")
                context = v1.train.SessionRunContext(None, session)
                while session.run(step) < last and not context.stop_requested:
                    asked = [hook.before_run(context) for hook in hooks]
                    fetches = [a.fetches if a is not None else [] for a in asked]
                    _, results = session.run([spec.train_op, fetches])
                    for hook, result in zip(hooks, results):
                        hook.after_run(context, v1.train.SessionRunValues(result, None, None))
                    now = session.run(step)
                    if every and now % every == 0 and now < last:
                        saver.save(session, prefix, global_step=now)
                saver.save(session, prefix, global_step=session.run(step))
                for hook in hooks:
                    hook.end(session)

    def evaluate(self, input_fn):
        with v1.Graph().as_default():
            spec, step = self._graph(input_fn, ModeKeys.EVAL)
            metrics = dict(spec.eval_metric_ops, loss=v1.metrics.mean(spec.loss))
            with self._session() as session:
                try:
                    while True:
                        session.run([update for _, update in metrics.values()])
                except v1.errors.OutOfRangeError:
                    pass
                result = {key: session.run(value) for key, (value, _) in metrics.items()}
                result["global_step"] = session.run(step)
        return result

    def predict(self, input_fn):
        with v1.Graph().as_default():
            spec, _ = self._graph(input_fn, ModeKeys.PREDICT)
            with self._session() as session:
                try:
                    while True:
                        batch = session.run(spec.predictions)
                        for i in range(len(next(iter(batch.values())))):
                            yield {key: value[i] for key, value in batch.items()}
                except v1.errors.OutOfRangeError:
                    return

    def get_variable_value(self, name):
        return v1.train.load_variable(v1.train.latest_checkpoint(self.model_dir), name)
