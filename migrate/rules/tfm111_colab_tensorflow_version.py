"""TFM111: Colab's `%tensorflow_version 1.x` (a TF1 runtime Colab no longer has)."""
import libcst as cst

from migrate.codemod import needles
from migrate.codemod.rule import Rule


def _magic_call(node: cst.BaseExpression):
    """The argument of ``get_ipython().run_line_magic('tensorflow_version', ARG)``."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "run_line_magic" and isinstance(node.func.value, cst.Call)
            and isinstance(node.func.value.func, cst.Name) and node.func.value.func.value == "get_ipython"
            and len(node.args) == 2 and isinstance(node.args[0].value, cst.SimpleString)):
        return None
    if node.args[0].value.evaluated_value != "tensorflow_version":
        return None
    arg = node.args[1].value
    return arg.evaluated_value if isinstance(arg, cst.SimpleString) else "?"


class ColabTensorflowVersion(Rule):
    code = "TFM111"
    needle = needles.Needle(("tensorflow_version",))
    summary = "Colab's %tensorflow_version magic: removed, the migrated code runs on TF2"
    fixable = True
    explanation = """
Colab notebooks written for TF1 start with `%tensorflow_version 1.x`, which selected a
TensorFlow 1 runtime. Colab has none any more, and the migrated notebook runs on the
installed TensorFlow 2, so the line is removed (an `if`/`try` body left empty gets
`pass`). In a notebook exported to Python the magic reads
`get_ipython().run_line_magic('tensorflow_version', '1.x')`; it is handled the same way.
"""
    before = """
%tensorflow_version 1.x
import tensorflow as tf
"""
    after = """
import tensorflow as tf
"""

    def visit_Expr(self, node: cst.Expr) -> None:
        version = _magic_call(node.value)
        if version is None:
            return
        statement = self.ctx.parent()
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
            self.report(node.value, f"%tensorflow_version {version}: Colab has no TF1 runtime; "
                                    "the migrated code runs on TF2 (remove this line)")
            return
        self.report(node.value, f"%tensorflow_version {version} removed: Colab has no TF1 runtime, "
                                "and the migrated code runs on TF2").remove(statement)
