"""``tf-migrate ckpt convert --model``'s child process: builds the user's model from its
factory under the Keras generation its own imports (or ``TF_USE_LEGACY_KERAS``) choose, loads
the TF1 checkpoint into it by the name map, and writes the object-layout checkpoint. It runs
in a process of its own (``ckpt.convert_model``: a Keras generation is settled once per
process); its configuration comes in ``TFM_CONVERT`` and its answer is the last line it
prints, one JSON object.

Imports inside functions: TensorFlow, shims and the name map only after the factory's
module is loaded, whose own imports choose the Keras generation ("auto")."""
import json
import os
import sys
import warnings

from migrate.checkpoints.ckpt import CkptError, load_factory


def _convert(cfg: dict) -> dict:
    factory = load_factory(cfg["model"])  # its imports choose the Keras generation ("auto")
    import tensorflow as tf
    tf.keras.layers  # settle tf.keras before shims' default could
    legacy = getattr(tf.keras, "__name__", "").startswith("tf_keras") or \
        getattr(tf.keras, "__version__", "3").startswith("2.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import shims
    from migrate.checkpoints.names import NameMap
    from migrate.safeio import read_regular

    model = factory()
    if not shims.tracked_variables(model):
        raise CkptError("the model has no variables yet: build or call it inside the factory")
    try:
        report = shims.load_tf1_checkpoint(model, cfg["old"], name_map=NameMap.load(cfg["map"], read_regular),
                                           strict=True)
    except ValueError as exc:
        raise CkptError(str(exc)) from None
    checkpoint = tf.train.Checkpoint(model=model)
    checkpoint.save_counter.assign_add(1)
    path = checkpoint.write(cfg["out"])
    return {"path": path, "keras": "2" if legacy else "3", "ignored": sorted(report.ignored)}


def main() -> None:
    try:
        answer = _convert(json.loads(os.environ["TFM_CONVERT"]))
    except CkptError as exc:
        answer = {"error": str(exc)}
    print(json.dumps(answer))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
