"""shims.estimator in-process: unsupported pieces get one clear error naming them."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import shims  # noqa: E402
from shims import estimator  # noqa: E402


def input_fn():
    return tf.data.Dataset.from_tensors((np.ones((2, 3), "float32"), np.ones((2, 1), "float32"))).repeat()


def spec_for(mode, labels, features, **extra):
    out = tf.compat.v1.layers.dense(features, 1, name="out")
    loss = tf.reduce_mean(tf.square(out - labels))
    step = tf.compat.v1.train.get_global_step()
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, step)
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, **extra)


def test_train_counts_steps_and_resumes(tmp_path):
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path))
    model.train(input_fn, steps=3)
    assert int(model.get_variable_value("global_step")) == 3
    model.train(input_fn, max_steps=5)
    assert int(model.get_variable_value("global_step")) == 5
    model.train(input_fn, max_steps=5)  # already there: nothing runs
    assert int(model.get_variable_value("global_step")) == 5
    assert "out/kernel" in model.get_variable_names()


def test_a_relative_model_dir_resumes(tmp_path, monkeypatch):
    """`Estimator(model_fn, "runs/model")`: the checkpoint file names its checkpoints
    relative to model_dir, as TF 1.15's Estimator wrote it, and the next run resumes
    (it looked for runs/model/runs/model/model.ckpt-3 and refused to start)."""
    monkeypatch.chdir(tmp_path)
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features),
                                "runs/model")
    model.train(input_fn, steps=3)
    assert 'model_checkpoint_path: "model.ckpt-3"' in (tmp_path / "runs/model/checkpoint").read_text()
    model.train(input_fn, steps=2)
    assert int(model.get_variable_value("global_step")) == 5
    assert sorted(p.name for p in (tmp_path / "runs/model").glob("*.index")) == [
        "model.ckpt-0.index", "model.ckpt-3.index", "model.ckpt-5.index"]


def test_unsupported_scaffold_is_named(tmp_path):
    scaffold = type("Scaffold", (), {"init_fn": lambda *a: None, "init_op": None, "saver": None})()
    model = estimator.Estimator(
        lambda features, labels, mode: spec_for(mode, labels, features, scaffold=scaffold), str(tmp_path))
    with pytest.raises(NotImplementedError, match="scaffold"):
        model.train(input_fn, steps=1)


def test_hook_feeding_is_named(tmp_path):
    class Feeding(estimator.SessionRunHook):
        def before_run(self, run_context):
            return estimator.SessionRunArgs([], feed_dict={"x:0": 1.0})

    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path))
    with pytest.raises(NotImplementedError, match="feed_dict"):
        model.train(input_fn, steps=1, hooks=[Feeding()])


def test_hooks_see_values_and_stop(tmp_path):
    class Stopper(estimator.SessionRunHook):
        def __init__(self):
            self.seen = []

        def before_run(self, run_context):
            return estimator.SessionRunArgs({"step": "global_step:0"})

        def after_run(self, run_context, run_values):
            self.seen.append(int(run_values.results["step"]))
            if len(self.seen) == 2:
                run_context.request_stop()

    hook = Stopper()
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path))
    model.train(input_fn, steps=10, hooks=[hook])
    assert len(hook.seen) == 2 and int(model.get_variable_value("global_step")) == 2
    stop = estimator.StopAtStepHook(num_steps=3)
    model.train(input_fn, steps=10, hooks=[stop])
    assert int(model.get_variable_value("global_step")) == 5


def test_missing_train_op_and_no_checkpoint_are_clear(tmp_path):
    def no_train_op(features, labels, mode):
        return estimator.EstimatorSpec(mode, loss=tf.reduce_sum(features))

    with pytest.raises(ValueError, match="train_op"):
        estimator.Estimator(no_train_op, str(tmp_path / "a")).train(input_fn, steps=1)
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path / "b"))
    with pytest.raises(ValueError, match="could not find a trained model"):
        model.evaluate(lambda: input_fn().take(1))


def test_numpy_input_fn_and_train_and_evaluate(tmp_path):
    fn = estimator.inputs.numpy_input_fn(np.ones((6, 3), "float32"), np.ones((6, 1), "float32"),
                                         batch_size=2, num_epochs=None, shuffle=False)
    config = estimator.RunConfig(save_checkpoints_steps=2)
    model = estimator.Estimator(lambda features, labels, mode: spec_for(mode, labels, features), str(tmp_path),
                                config=config)
    evaluation = estimator.inputs.numpy_input_fn(np.ones((6, 3), "float32"), np.ones((6, 1), "float32"),
                                                 batch_size=2, shuffle=False)
    result, _ = estimator.train_and_evaluate(model, estimator.TrainSpec(fn, max_steps=4),
                                             estimator.EvalSpec(evaluation, steps=None))
    assert result["global_step"] == 4 and np.isfinite(result["loss"])
    with pytest.raises(ValueError, match="shuffle"):
        estimator.inputs.numpy_input_fn(np.ones((2, 3)))
