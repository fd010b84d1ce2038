"""TFM107: TF1 calls whose TF2 namesake means something else."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import arg, join_args
from migrate.codemod.rule import Rule
from migrate.codemod.signatures import call_keywords, tf1_keyword_evidence

NAMES = ("tf.nn.dropout", "tf.nn.softmax_cross_entropy_with_logits", "tf.name_scope",
         "tf.strings.split")


def _simple(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.Attribute))


def _one(node) -> bool:
    return (isinstance(node, cst.Integer) and node.value == "1") or (
        isinstance(node, cst.Float) and node.value in ("1.0", "1.", "1.00"))


def _rate(keep: cst.BaseExpression) -> cst.BaseExpression:
    """``1 - keep``, written as a person would: ``keep_prob=1 - p`` gives ``rate=p``."""
    bare = keep.with_changes(lpar=[], rpar=[]) if getattr(keep, "lpar", None) else keep
    if isinstance(bare, cst.BinaryOperation) and isinstance(bare.operator, cst.Subtract) \
            and _one(bare.left):
        right = bare.right
        if getattr(right, "lpar", None) and not isinstance(right, (cst.Tuple, cst.GeneratorExp)):
            right = right.with_changes(lpar=[], rpar=[])
        return right
    if not _simple(bare):
        bare = bare.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BinaryOperation(cst.Integer("1"), cst.Subtract(), bare)


class ChangedSemantics(Rule):
    code = "TFM107"
    needle = needles.TF1_IMPORT
    summary = "the TF2 function of the same name means something else"
    fixable = True
    explanation = """
Some TF1 calls still run in TF2 but silently change meaning:

- `tf.nn.dropout(x, keep_prob)`: TF2's second argument is `rate`, the probability to
  DROP. The call becomes `tf.nn.dropout(x, rate=1 - (keep_prob))`, which is what TF1
  computed internally.
- `tf.nn.softmax_cross_entropy_with_logits(labels, logits)`: TF2 also backpropagates into
  the labels; the labels get `tf.stop_gradient`, as TF1 did.
- `tf.name_scope(name, default_name, values)`: TF2 takes one name; calls using the TF1
  arguments go to `tf.compat.v1.name_scope`.
- `tf.strings.split`: TF2 returns a RaggedTensor, TF1 a SparseTensor; it goes to
  `tf.compat.v1.strings.split`.

Since the same calls are valid TF2, they are changed only in TF1 code: a `keep_prob=`
keyword, or a file using TF1-only APIs (Session, placeholder, get_variable, variable_scope,
tf.layers, tf.contrib, compat.v1, ...). TF2 code is left alone.
"""
    before = """
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 10])
h = tf.nn.dropout(x, 0.9)
loss = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=h)
"""
    after = """
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 10])
h = tf.nn.dropout(x, rate=1 - 0.9)
loss = tf.nn.softmax_cross_entropy_with_logits(labels=tf.stop_gradient(y), logits=h)
"""

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.ctx.qualname(node.func)
        if not qualname or qualname.startswith("tensorflow.compat."):
            return
        name = self.ctx.v1(node.func)
        if name not in NAMES:
            return
        keywords = call_keywords(node)
        # these calls are valid TF2 too: only TF1 code is fixed (a TF1-only keyword such as
        # dim= is TF1 code too); where nothing tells, the call is an error finding
        tf1 = self.ctx.is_tf1_file() or (keywords is not None and tf1_keyword_evidence(name, keywords))
        if name == "tf.nn.dropout" and (tf1 or any(a.keyword and a.keyword.value == "keep_prob"
                                                   for a in node.args)):
            self._dropout(node)
        elif name == "tf.nn.softmax_cross_entropy_with_logits":
            self._xent(node, tf1)
        elif name == "tf.name_scope" and (len(node.args) > 1 or any(
                a.keyword and a.keyword.value in ("default_name", "values") for a in node.args)):
            self._to_compat(node, "name_scope", "tf.name_scope takes one name in TF2")
        elif name == "tf.strings.split" and tf1:
            self._to_compat(node, "strings.split", "tf.strings.split returns a RaggedTensor in TF2 "
                                                   "(a SparseTensor in TF1)")
        elif name == "tf.strings.split":
            self._two_readings(node, name, "returns a SparseTensor in TF1 but a RaggedTensor in TF2",
                               "tf.compat.v1.strings.split")

    def _two_readings(self, node, name, difference, tf1_form) -> None:
        if self.ctx.is_tf2_file():  # written (or migrated) for TF2: TF2's meaning
            return
        self.report(node, f"error: {name} {difference}, and this file uses no TF1-only API to "
                          f"tell which it was written for; write {tf1_form} for TF1's meaning, or "
                          f"add `# tf-migrate: ignore[{self.code}]` to keep TF2's")

    def _to_compat(self, node, name, why):
        finding = self.report(node, f"{why}: using tf.compat.v1.{name}")
        func = self.ctx.tf(finding, f"compat.v1.{name}")
        finding.replace(node, lambda updated: updated.with_changes(func=func))

    def _dropout(self, node: cst.Call) -> None:
        # TF1: dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None)
        order = ["x", "keep_prob", "noise_shape", "seed", "name", "rate"]
        roles = []
        for index, a in enumerate(node.args):
            if a.star:
                self.report(node, "tf.nn.dropout with *args/**kwargs: TF2's second argument is "
                                  "rate, not keep_prob; check this call by hand")
                return
            roles.append(a.keyword.value if a.keyword else (order[index] if index < len(order) else None))
        if "keep_prob" not in roles:
            return
        finding = self.report(node, "tf.nn.dropout's second argument is rate (to drop) in TF2, "
                                    "not keep_prob: rewritten as rate=1 - keep_prob")

        def replace(updated: cst.Call) -> cst.Call:
            args = []
            for role, a in zip(roles, updated.args):
                if role == "keep_prob":
                    args.append(arg(_rate(a.value), "rate"))
                elif role == "x" and a.keyword is None:
                    args.append(a)
                else:
                    args.append(arg(a.value, role))
            return updated.with_changes(args=join_args(args))

        finding.replace(node, replace)

    def _xent(self, node: cst.Call, tf1: bool) -> None:
        labels = [i for i, a in enumerate(node.args) if (a.keyword and a.keyword.value == "labels")
                  or (a.keyword is None and i == 0)]
        if not labels:
            return
        index = labels[0]
        value = node.args[index].value
        if isinstance(value, cst.Call) and (self.ctx.v1(value.func) or "").endswith("stop_gradient"):
            return
        if not tf1:
            self._two_readings(node, "tf.nn.softmax_cross_entropy_with_logits",
                               "stops gradients into labels in TF1 but backpropagates into them "
                               "in TF2", "labels=tf.stop_gradient(...)")
            return
        finding = self.report(node, "TF2's softmax_cross_entropy_with_logits backpropagates into "
                                    "labels: wrapped in tf.stop_gradient as TF1 behaved")
        stop = self.ctx.tf(finding, "stop_gradient")

        def replace(updated: cst.Call) -> cst.Call:
            args = list(updated.args)
            a = args[index]
            args[index] = a.with_changes(value=cst.Call(stop, [cst.Arg(a.value)]))
            return updated.with_changes(args=args)

        finding.replace(node, replace)
