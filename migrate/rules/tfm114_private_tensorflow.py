"""TFM114: TF1's private modules (tensorflow.python.*) where TF 2.21 no longer has them."""
import libcst as cst

from migrate.codemod.cstutil import code, names_read
from migrate.codemod.needles import Needle
from migrate.codemod.resolver import v1name
from migrate.codemod.rule import SymbolRule
from migrate.codemod.shared import target
from migrate.codemod.tables import shim_exports, upgrade_tables

PRIVATE = "tensorflow.python."
ESTIMATOR = "tensorflow_estimator"  # gone with TF 2.16: TFM110 moves what shims.estimator has


def _gone_module(module: str) -> bool:
    """Is ``module`` one of TF 1.15's private modules that TF 2.21 has not (or part of the
    tensorflow-estimator package, which stops at TF 2.15)?"""
    if module == ESTIMATOR or module.startswith(ESTIMATOR + "."):
        return True
    tables = upgrade_tables()
    if "private_modules_gone_set" not in tables:
        tables["private_modules_gone_set"] = frozenset(tables.get("private_modules_gone", ()))
    return module in tables["private_modules_gone_set"]


def new_home(qualname: str):
    """Where TF 2.21 has the TF1 object at private path ``qualname``: ``tf.nest.flatten``
    or ``shims.contrib.framework.nest.is_sequence``; None when it is still where it was, or
    has no home."""
    tables = upgrade_tables()
    public = tables.get("private_names", {}).get(qualname)
    if public is not None and not public.startswith("tf.estimator."):  # TFM110's
        return public
    module, _, member = qualname.rpartition(".")
    shim = tables.get("private_shims", {}).get(module)
    if shim is not None and member not in tables["private_members"][module] \
            and member in shim_exports(shim[1]):
        return f"shims.{shim[0]}.{member}"
    return None


class PrivateTensorFlow(SymbolRule):
    code = "TFM114"
    needle = Needle(("tensorflow.python", "tensorflow_core", "tensorflow_estimator"),
                    r"tensorflow(?:_core)?\.python|tensorflow_estimator")
    summary = "TF1's private tensorflow.python modules: moved names get their public TF2 spelling"
    fixable = True
    explanation = """
TF1 code often imports TensorFlow's private modules (`from tensorflow.python.util.nest
import is_sequence`, `from tensorflow.python.training import training_ops`). TF 2.21 moved,
renamed or dropped many of them, so the import fails and with it every module that imports
this one. A use of a public TF1 object through its private path gets that object's public
TF2 spelling (the table maps each TF1 object's private path, read from TF 1.15, to its
public name, where TF 2.21 lacks the path); TF1's `nest.is_sequence` and the other nest
names TF2 renamed go to `shims.contrib.framework.nest`, which keeps them. An import of a
private module TF 2.21 does not have, or whose uses could not all be moved, is an error
finding: it fails at import.
"""
    before = """
from tensorflow.python.util import nest

flat = nest.flatten(x) if nest.is_sequence(x) else [x]
"""
    after = """
import shims
from tensorflow.python.util import nest

flat = nest.flatten(x) if shims.contrib.framework.nest.is_sequence(x) else [x]
"""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._imports: list = []  # (statement, module, local name) of gone private modules
        self._left: set = set()  # local names with a use not moved
        self._roots = None  # every Name the module uses outside imports (when needed)

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = code(alias.name)
            if module.startswith((PRIVATE, ESTIMATOR)) and _gone_module(module):
                local = alias.asname.name.value if alias.asname else None
                self._imports.append((node, module, local))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = code(node.module)
        if not module.startswith((PRIVATE, ESTIMATOR)):
            return
        for alias in node.names:
            full = f"{module}.{code(alias.name)}"
            local = alias.asname.name.value if alias.asname else code(alias.name)
            if _gone_module(module) or _gone_module(full):
                self._imports.append((node, module if _gone_module(module) else full, local))
            elif new_home(full) is not None:  # a member TF 2.21's module lacks
                self._imports.append((node, full, local))

    def check(self, node) -> None:
        qualname = self.ctx.qualname(node) or ""
        if qualname.startswith("tensorflow_core.python."):
            qualname = "tensorflow." + qualname[len("tensorflow_core."):]
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if qualname.startswith(ESTIMATOR):
            name = v1name(qualname)
            if isinstance(root, cst.Name) and (name is None or target(name) is None):
                self._left.add(root.value)  # TFM110 reports it; the import line fails
            return
        if not qualname.startswith(PRIVATE):
            return
        home = new_home(qualname)
        if home is None:
            if isinstance(root, cst.Name):
                self._left.add(root.value)
            return
        finding = self.report(node, f"{qualname} is gone in TF 2.21: {home} is the same TF1 object")
        if home.startswith("shims."):
            finding.replace(node, cst.parse_expression(home))
            finding.add_import("import shims")
        else:
            finding.replace(node, self.ctx.tf(finding, home[len("tf."):]))

    def leave_Module(self, node: cst.Module) -> None:
        """A gone module's import line some use of which stays (or that nothing uses: an
        import no fix made unused is kept) fails at import."""
        reported = set()
        for statement, module, local in self._imports:
            if id(statement) in reported or (local is not None and local not in self._left
                                             and self._used(local)):
                continue
            reported.add(id(statement))
            hint = ("shims.estimator has what model_fn Estimators use" if module.startswith(ESTIMATOR)
                    else "use the public tf.* API it was part of")
            self.report(statement, f"error: {module} is not in TF 2.21: this import fails; {hint}")

    def _used(self, local: str) -> bool:
        if self._roots is None:
            self._roots = names_read(self.ctx.module)  # imports are not reads
        return local in self._roots

