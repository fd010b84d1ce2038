"""TFM115: TF1 Keras initializers called with TF1's arguments (dtype, verify_shape)."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import arg, code, join_args
from migrate.codemod.rule import Rule
from migrate.codemod.signatures import bind, call_keywords, parse, tf1_signature
from migrate.codemod.tables import upgrade_tables


class KerasInitializers(Rule):
    code = "TFM115"
    needle = needles.Needle(("initializers",))
    summary = "TF1 Keras initializer with TF1 arguments: the tf.compat.v1 initializer keeps them"
    fixable = True
    explanation = """
TF 1.15's `tf.keras.initializers` are TF1's own initializer classes (`Zeros` is
`tf.zeros_initializer`; `RandomNormal` is `tf.random_normal_initializer` with a stddev of
0.05): they take `dtype` (positionally too) and `Constant` takes `verify_shape`. TF2's Keras
initializers take neither (`TypeError: GlorotUniform.__init__() takes from 1 to 2
positional arguments but 3 were given`). A call whose arguments only TF1 binds that way
becomes the `tf.compat.v1` initializer TF1's Keras object was, every argument by keyword,
with the defaults the Keras class changed passed explicitly: same dtype, same random ops,
same values from the same seed, under either Keras generation. Calls TF2's Keras binds the
same way (`RandomNormal(0.0, 0.1, seed=3)`) stay Keras. The pairs are read from TF 1.15
and TF 2.21, never listed by hand.
"""
    before = """
import tensorflow as tf

init = tf.keras.initializers.RandomNormal(0.0, 0.1, 3, tf.float64)
"""
    after = """
import tensorflow as tf

init = tf.compat.v1.random_normal_initializer(mean=0.0, stddev=0.1, seed=3, dtype=tf.float64)
"""

    def visit_Call(self, node: cst.Call) -> None:
        name = self.ctx.v1(node.func)
        entry = upgrade_tables().get("keras_initializers", {}).get(name or "")
        keywords = call_keywords(node)
        tf1 = tf1_signature(name) if entry else None
        if tf1 is None or keywords is None or (not keywords and entry["tf2"] is not None):
            return
        one = bind(tf1, keywords)
        if one.problem:
            return  # not a TF1 call either: leave it to Python's error
        if entry["tf2"] is not None:
            two = bind(parse(entry["tf2"]), keywords)
            if not two.problem and two.params == one.params:
                return  # TF2's Keras binds it the same way: it stays Keras
        target = entry["target"]
        given = [p for p in one.params if p is not None]
        defaults = [(k, entry["defaults"][k]) for k in tf1.names if k in entry["defaults"] and k not in given]
        passed = ", ".join(f"{p}={code(a.value)}" for p, a in zip(one.params, node.args))
        finding = self.report(node, f"{name}({passed}): {_tf2_lacks(name, one.params, entry)}; "
                                    f"TF 1.15's was {target}, which keeps TF1's arguments")
        function = self.ctx.tf(finding, target[len("tf."):])

        def rewrite(updated: cst.Call) -> cst.Call:
            args = [arg(a.value, p) for p, a in zip(one.params, updated.args)]
            args += [arg(_expression(self.ctx, finding, v), k) for k, v in defaults]
            return updated.with_changes(func=function, args=join_args(args))

        finding.replace(node, rewrite)


def _tf2_lacks(name, params, entry) -> str:
    """What TF2's Keras lacks for this call: the name, or the TF1 parameters it fills."""
    if entry["tf2"] is None:
        return f"TF2's Keras has no {name.rpartition('.')[2]}"
    extra = [f"{p}=" for p in params if p not in parse(entry["tf2"]).names]
    return "TF2's Keras initializer takes no " + (", ".join(extra) if extra else
                                                  "arguments in TF1's order")


def _expression(ctx, finding, value: str) -> cst.BaseExpression:
    """A default recorded as code: ``0.05``, or ``tf.float32`` through the file's own tf."""
    if value.startswith("tf."):
        return ctx.tf(finding, value[len("tf."):])
    return cst.parse_expression(value)
