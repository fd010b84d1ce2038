"""The native form of a Session program: TF2 as its developers write it.

``read`` (pure) turns a planned program into the program model (``model``) or a
``Blocker``; ``emit`` writes the model: the variables made once where they were, each kind
of run a ``@tf.function`` step (``tf.GradientTape`` + ``apply_gradients`` where it trains),
the runs calls of the steps. A program the native form does not cover converts through
``shims.GraphProgram`` (``..convert``), and its finding says why it is not native.
"""
from . import optimizers, updates
from .batchnorm import BATCH_NORM
from .classes import ClassForm, kept_on_object, method_names
from .emit import emit
from .model import Blocker, NativeProgram
from .read import read

__all__ = ["Blocker", "ClassForm", "NativeProgram", "emit", "kept_on_object", "read", "summary", "written_step"]


def written_step(form: ClassForm, program: NativeProgram) -> str:
    """The method name of a class program's step TensorBoard shows of it: the one that
    trains, else the first."""
    names = method_names(form, program)
    step = next((s for s in program.steps if s.trainings), program.steps[0])
    return names[id(step)]


def summary(program: NativeProgram) -> str:
    """The finding's message: what the program became, and every TF1 optimizer kept."""
    parts = ["Session program converted to native TF2: its variables are made once, each kind of "
             f"run is a tf.function step ({len(program.steps)})"]
    for optimizer in program.optimizers:
        short = optimizer.tf1_name.rsplit(".", 1)[-1]
        if optimizer.keras is not None:
            started = " once its mean square is set to TF1's start, 1" \
                if optimizers.started_at_one(optimizer.tf1_name, optimizer.keras) else ""
            parts.append(f"{short} -> tf.keras.optimizers.{optimizer.keras.split('(')[0]} "
                         f"(the same updates{started}), in a tf.GradientTape step")
        else:
            parts.append(f"tf.compat.v1.train.{short} kept, applied in a tf.GradientTape step: "
                         f"{optimizer.why_kept}")
    if program.saver is not None:
        parts.append("tf.train.Saver -> tf.train.Checkpoint" + (
            " and a CheckpointManager for its saves at a step" if program.saver.directory is not None else "")
            + " (tf-migrate ckpt convert --program resumes the TF1 program's checkpoints)")
    for name in dict.fromkeys(name for _, name in program.renames):
        parts.append(f"the session's block bound the graph's {name!r} to a Python value: that binding is renamed")
    if any(step.copies for step in program.steps):
        parts.append("variable copies (a target network's) are steps assigning each variable its pair's value, "
                     "the layers they copy made when the program is")
    if any(layer.function == BATCH_NORM for layer in program.layers):
        parts.append("tf.layers.batch_normalization -> tf_keras' BatchNormalization (TF 1.15's, its moving "
                     "averages updated by the steps that ran UPDATE_OPS; the module declares Keras 2)")
    if program.update_statements:
        parts.append("variables updated by hand (tf.assign) are updated by the steps where the graph code "
                     "did, W.assign(...)")
        parts.append(updates.summary(program))
    if any(step.summaries for step in program.steps):
        parts.append("summaries written by the steps with tf.summary v2, TF1's tags kept")
    return "; ".join(dict.fromkeys(p for p in parts if p))
