"""Native steps against hand-written TF2 and real TensorFlow 1.15: per-step time.

    python benchmarks/native_step.py [--repeats 3] [--tf1-python PATH]

For every TF1 program ``benchmarks/native/<name>.py`` that has a hand-written TF2 port
``<name>_tf2.py`` beside it: migrate the program (``tf-migrate upgrade``; it must come out
native: tf.function steps, a GradientTape, a Keras optimizer), then ``tf-migrate verify
--program`` times every ``Session.run`` of the original on TF 1.15 and every tf.function
call of the migrated program, and again of the hand-written port, each on TF 2.21 with
shims' default (oneDNN off). Medians of ``--repeats`` runs. The target (#60): the
migrated step within 5% of the hand-written one. Nothing here is a test: results go into
docs/benchmarks.md.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from tf1_step import ROOT, tf1_python, verify

NATIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "native")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tf1-python")
    args = parser.parse_args(argv)
    tf1 = tf1_python(args.tf1_python)
    out = tempfile.mkdtemp(prefix="tfm-native-")
    names = sorted(n[:-3] for n in os.listdir(NATIVE) if n.endswith(".py") and not n.endswith("_tf2.py")
                   and os.path.exists(os.path.join(NATIVE, n[:-3] + "_tf2.py")))
    print("| program | TF 1.15 step | migrated (native) step | hand-written TF2 step | migrated / hand-written "
          "| equal to TF 1.15 |")
    print("|---|---:|---:|---:|---:|---|")
    for name in names:
        program = os.path.join(NATIVE, f"{name}.py")
        done = subprocess.run([sys.executable, "-m", "migrate", "upgrade", program, "--outtree", out],
                              capture_output=True, text=True, cwd=ROOT)
        migrated = os.path.join(out, f"{name}.py")
        with open(migrated) as handle:
            if "tf.GradientTape" not in handle.read():
                print(f"native_step: {name}.py did not come out native:\n{done.stdout}", file=sys.stderr)
                return 1
        ours = verify(tf1, program, migrated, False, args.repeats, [])
        theirs = verify(tf1, program, os.path.join(NATIVE, f"{name}_tf2.py"), False, args.repeats, [])
        print(f"| {name}.py | {ours['tf1_ms']:.3g} ms | {ours['migrated_ms']:.3g} ms | {theirs['migrated_ms']:.3g} ms "
              f"| {ours['migrated_ms'] / theirs['migrated_ms']:.2f}x | {'yes' if ours['equivalent'] else 'no'} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
