"""TFM112: tensorflow.examples.tutorials (the MNIST reader) is gone from TF 2."""
import libcst as cst

from migrate.codemod.cstutil import code
from migrate.codemod.needles import Needle
from migrate.codemod.rule import SymbolRule

OLD = "tensorflow.examples.tutorials"
NEW = "shims.tutorials"


def _moved(module: str):
    """``shims.tutorials.mnist.input_data`` for ``tensorflow.examples.tutorials.mnist.input_data``."""
    if module == OLD or module.startswith(OLD + "."):
        return NEW + module[len(OLD):]
    return None


class Tutorials(SymbolRule):
    code = "TFM112"
    needle = Needle(("examples",), r"examples\.tutorials|examples\s+import\s+tutorials")
    summary = "tensorflow.examples.tutorials is gone in TF2: shims.tutorials has the MNIST reader"
    fixable = True
    explanation = """
TF1 tutorials and many scripts read MNIST with
`from tensorflow.examples.tutorials.mnist import input_data` and
`input_data.read_data_sets(dir, one_hot=True)`; TF 2 ships no `tensorflow.examples`, so
the import fails. `shims.tutorials.mnist.input_data` has the same `read_data_sets`,
`DataSet.next_batch`, `images`/`labels`/`num_examples`, reading the same IDX files from the
same folder (downloading them when missing), with TF 1.x's scaling, validation split,
one-hot labels and batch order (numpy's global random state, reshuffled per epoch), so a
seeded script draws the same batches. Imports and attribute uses are rewritten.
"""
    before = """
from tensorflow.examples.tutorials.mnist import input_data
mnist = input_data.read_data_sets("MNIST_data", one_hot=True)
"""
    after = """
from shims.tutorials.mnist import input_data
mnist = input_data.read_data_sets("MNIST_data", one_hot=True)
"""

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            target = _moved(code(alias.name))
            if target is None:
                continue
            if len(node.names) != 1 or (alias.asname is None and "." in target):
                self.report(node, f"error: {code(alias.name)} is gone in TF2: this import fails; "
                                  f"import {target} (as a name) instead")
                return
            finding = self.report(node, f"{code(alias.name)} is gone in TF2: {target} is its "
                                        "TF2 replacement")
            asname = f" as {alias.asname.name.value}" if alias.asname else ""
            finding.replace(node, cst.parse_statement(f"import {target}{asname}\n").body[0])

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        module = code(node.module)
        target = _moved(module)
        if target is None and module == "tensorflow.examples":
            target = "shims"  # from tensorflow.examples import tutorials
        if target is None:
            return
        finding = self.report(node, f"{module} is gone in TF2: {target} is its TF2 replacement")
        finding.replace(node.module, cst.parse_expression(target))

    def check(self, node) -> None:
        """``tf.examples.tutorials.mnist.input_data.read_data_sets`` (through the tensorflow
        alias; names bound by a tutorials import follow their rewritten import line)."""
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or self.ctx.resolver.aliases.get(root.value) != "tensorflow":
            return
        target = _moved(self.ctx.qualname(node) or "")
        if target is None:
            return
        finding = self.report(node, f"{OLD} is gone in TF2: {target} is its TF2 replacement")
        finding.replace(node, cst.parse_expression(target))
        finding.add_import("import shims.tutorials.mnist.input_data" if target.startswith(
            "shims.tutorials.mnist.input_data") else "import shims.tutorials")
