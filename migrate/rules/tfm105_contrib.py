"""TFM105: tf.contrib is gone in TF2."""
import functools
import re

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import arg, call, code
from migrate.codemod.rule import SymbolRule
from migrate.codemod.shared import target as estimator_target
from migrate.codemod.tables import no_tf2_home, shim_exports, upgrade_tables

# contrib modules whose replacement is a shims module: a name moves there when that
# module's __all__ (read from shims/, never typed here) has it
SHIM_MODULES = {
    "tf.contrib.layers": "contrib",  # flat: shims.contrib.batch_norm
    "tf.contrib.training": "contrib",  # HParams
    "tf.contrib.framework": "contrib.framework",
    "tf.contrib.rnn": "contrib.rnn",
    "tf.contrib.eager": "contrib.eager",
    "tf.contrib.learn.preprocessing": "contrib.learn.preprocessing",  # VocabularyProcessor
    "tf.contrib.factorization": "contrib.factorization",  # KMeans
    "tf.contrib.seq2seq": "contrib.seq2seq",  # sequence_loss
}
EXPORTS = {"contrib": ("contrib.layers", "contrib.training")}
# the modules themselves (`layers = tf.contrib.layers`): the shims module with that API
# (the flat "contrib" ones by their own name: shims.contrib.layers)
MODULE_OBJECTS = {name: shim if shim != "contrib" else "contrib." + name.rpartition(".")[2]
                  for name, shim in SHIM_MODULES.items()}
# contrib parts that moved into TF2 modules: tf.contrib.eager.X -> tf.X when TF 2.21 has tf.X
MOVED_INTO = {"tf.contrib.eager": "tf", "tf.contrib.distribute": "tf.distribute"}
# the one eager name whose TF2 spelling differs (TF 1.15's docs: "tfe.defun: use tf.function")
EAGER_RENAMED = {"tf.contrib.eager.defun": "tf.function"}
# tf-slim 1.1.0 functions that fail on TF 2.16+ and that shims.contrib makes work
SLIM_BROKEN = ("batch_norm", "layers.batch_norm", "layers.layers.batch_norm")


# members of these contrib modules that TensorFlow's tables move into TF2 proper go there
# (tf.nest.flatten); the shims module holds the module object and the TF1 names TF2 renamed
TF2_FIRST = ("tf.contrib.framework.nest.",)
# contrib's implementation modules (tensorflow.contrib.rnn.python.ops.rnn, ...): their
# public functions are the contrib module's own (tf.contrib.rnn.static_bidirectional_rnn)
DEEP = re.compile(r"^(tf\.contrib\.[a-z_0-9]+)\.python(?:\.[a-z_0-9]+)+?\.([A-Za-z_]\w*)$")


# learn's preprocessing is public one level below learn (tf.contrib.learn.preprocessing.X)
LEARN_PREPROCESSING = re.compile(
    r"^tf\.contrib\.learn\.python\.learn\.preprocessing(?:\.[a-z_]+)?\.([A-Za-z_]\w*)$")


def public_name(name: str) -> str:
    """``tf.contrib.rnn.static_bidirectional_rnn`` for
    ``tf.contrib.rnn.python.ops.rnn.static_bidirectional_rnn``; other names unchanged."""
    match = LEARN_PREPROCESSING.match(name)
    if match:
        return f"tf.contrib.learn.preprocessing.{match.group(1)}"
    match = DEEP.match(name)
    return f"{match.group(1)}.{match.group(2)}" if match else name


def shim_target(name: str):
    """``contrib.batch_norm`` for ``tf.contrib.layers.batch_norm`` (and
    ``contrib.rnn.LSTMBlockCell.__init__`` for an attribute of an exported name), else None."""
    for module, shim in SHIM_MODULES.items():
        if not name.startswith(module + "."):
            continue
        rest = name[len(module) + 1:]
        leaf = rest.split(".")[0]
        if any(leaf in shim_exports(m) for m in EXPORTS.get(shim, (shim,))):
            return f"{shim}.{rest}"
    return None


def moved_target(name: str):
    """The TF2 name of a contrib member that moved into TensorFlow proper, else None."""
    if name in EAGER_RENAMED:
        return EAGER_RENAMED[name]
    if name.startswith("tf.contrib.stateless.stateless_random_"):
        leaf = "stateless_" + name[len("tf.contrib.stateless.stateless_random_"):]
        return f"tf.random.{leaf}" if leaf in upgrade_tables()["tf2_modules"]["tf.random"] else None
    if name.startswith("tf.contrib.keras."):  # contrib.keras became tf.keras, same layout
        rest = name[len("tf.contrib.keras."):]
        top = rest.split(".")[0]
        return f"tf.keras.{rest}" if top in upgrade_tables()["tf2_modules"]["tf.keras"] else None
    module, _, leaf = name.rpartition(".")
    home = MOVED_INTO.get(module)
    if home and leaf in upgrade_tables()["tf2_modules"][home]:
        return f"{home}.{leaf}"
    return _module_move(name)


@functools.lru_cache(maxsize=None)
def _module_move(name: str):
    """A contrib module whose members TensorFlow's tables all move to one TF2 module
    (``tf.contrib.framework.nest.flatten`` -> ``tf.nest.flatten``, ...): that module."""
    homes = set()
    for old, target in upgrade_tables()["symbol_renames"].items():
        if old.startswith(name + "."):
            member = old[len(name):]  # ".flatten"
            homes.add(target[:-len(member)] if target.endswith(member) else None)
    if len(homes) != 1 or None in homes:
        return None
    home = homes.pop()
    return home if home.startswith("tf.") and not home.startswith(("tf.contrib", "tf.compat")) else None


# where a module went, for the finding's message
HINTS = {
    "tf.contrib.slim": "the tf-slim package (import tf_slim as slim)",
    "tf.contrib.rnn": "shims.contrib.rnn (the TF1 cells and wrappers) or tf.keras.layers (LSTMCell, GRUCell, RNN)",
    "tf.contrib.layers": "shims.contrib.layers (contrib.layers' functions), tf.keras.layers or "
                         "tf.feature_column",
    "tf.contrib.eager": "shims.contrib.eager, or the same names under tf (eager is TF2's default)",
    "tf.contrib.distribute": "tf.distribute",
    "tf.contrib.data": "tf.data.experimental",
    "tf.contrib.framework": "shims.contrib.framework (arg_scope, variable helpers) or tf.nest",
    "tf.contrib.seq2seq": "shims.contrib.seq2seq (sequence_loss); for the decoders and attention, "
                          "tensorflow-addons' seq2seq (archived) or your own Keras code",
    "tf.contrib.tpu": "tf.distribute.TPUStrategy",
    "tf.contrib.summary": "tf.summary",
    "tf.contrib.opt": "tf.keras.optimizers",
    "tf.contrib.learn": "shims.estimator (model_fn Estimators), shims.contrib.learn.preprocessing "
                        "(VocabularyProcessor) or a Keras model with fit()",
    "tf.contrib.metrics": "tf.keras.metrics",
    "tf.contrib.losses": "tf.keras.losses",
    "tf.contrib.image": "tf.image / tensorflow-addons",
    "tf.contrib.crf": "tensorflow-addons' text.crf",
    "tf.contrib.training": "tf.data (batching) / shims.contrib.HParams",
    "tf.contrib.staging": "dataset.prefetch() (no TF2 home for StagingArea)",
    "tf.contrib.boosted_trees": "tensorflow_decision_forests (no TF2 home)",
    "tf.contrib.factorization": "shims.contrib.factorization (KMeans); WALS and GMM have no TF2 home",
    "tf.contrib.tensor_forest": "tensorflow_decision_forests (no TF2 home)",
    "tf.contrib.tfprof": "tf.profiler.experimental",
}


def _hint(name: str):
    return next((HINTS[p] for p in sorted(HINTS, key=len, reverse=True)
                 if name == p or name.startswith(p + ".")), None)


def _gpu_devices(count: cst.BaseExpression) -> cst.BaseExpression:
    """The devices TF1's ``num_gpus=count`` meant: ``/gpu:0`` .. ``/gpu:N-1``, the CPU for 0."""
    if isinstance(count, cst.Integer):
        n = int(count.value, 0)
        names = [f"/gpu:{i}" for i in range(n)] or ["/cpu:0"]
        return cst.parse_expression("[" + ", ".join(f'"{d}"' for d in names) + "]")
    return cst.parse_expression(f'["/gpu:%d" % i for i in range({code(count)} or 0)] or ["/cpu:0"]')


def _slim_module(module: str):
    """``tf_slim...`` for a contrib.slim module path, else None."""
    for prefix in ("tensorflow.contrib.slim.python.slim", "tensorflow.contrib.slim"):
        if module == prefix or module.startswith(prefix + "."):
            return "tf_slim" + module[len(prefix):]
    return None


class Contrib(SymbolRule):
    code = "TFM105"
    needle = needles.CONTRIB
    summary = "tf.contrib is gone in TF2"
    fixable = True
    explanation = """
tf.contrib does not exist in TF2. Uses that shims.contrib replaces with TF1-compatible
code creating the same variable names (layer_norm, fully_connected, flatten,
xavier_initializer, variance_scaling_initializer, l2_regularizer, HParams) are rewritten
to it, so checkpoints written by the TF1 code still load. Uses TensorFlow's tables rename
(for example tf.contrib.framework.nest -> tf.nest) are renamed. Every other use is
reported with the TF2 replacement where one exists. Imports like
`import tensorflow.contrib.layers as layers` are followed too.
"""
    before = """
import tensorflow as tf

x = tf.contrib.layers.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)
"""
    after = """
import shims.keras2

x = shims.contrib.layer_norm(x, begin_norm_axis=-1, begin_params_axis=-1)
"""

    # -- import lines: `import tensorflow.contrib.slim as slim` fails before any use ------
    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self._slim_locals: set = set()  # local names of contrib.slim imports now naming tf_slim
        self._imports: list = []  # (import, module, local name, its statement) of contrib imports
        self._unfixed: set = set()  # local names with a contrib use left unmoved
        self._used: set = set()  # local names with a contrib use this rule saw

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            module = code(alias.name)
            if module == "tensorflow.contrib" or module.startswith("tensorflow.contrib."):
                self._import_line(node, module, alias.asname.name.value if alias.asname else None)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        module = code(node.module)
        if not (module == "tensorflow.contrib" or module.startswith("tensorflow.contrib.")):
            return
        for alias in node.names:
            full = f"{module}.{code(alias.name)}"
            local = alias.asname.name.value if alias.asname else code(alias.name)
            self._import_line(node, full, local, from_import=True)

    def _import_line(self, node, module: str, local, from_import: bool = False) -> None:
        slim = _slim_module(module)
        if slim is not None:  # the maintained tf-slim package has the same API
            statement = self.ctx.statement()
            if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                    and len(node.names) == 1:
                finding = self.report(node, f"{module} is gone in TF2; the tf-slim package "
                                            f"(pip install tf-slim) is its maintained home")
                if from_import and "." in slim:
                    parent, _, leaf = slim.rpartition(".")
                    new = f"from {parent} import {leaf}" + (f" as {local}" if local != leaf else "")
                else:
                    new = f"import {slim}" + (f" as {local}" if local else "")
                finding.replace(statement, cst.parse_statement(new + "\n").with_changes(
                    leading_lines=statement.leading_lines))
                self._slim_locals.add(local or module.split(".")[0])
                return
        self._imports.append((node, module, local, self.ctx.statement()))

    def leave_Module(self, node: cst.Module) -> None:
        """An import line of a contrib module some use of which could not be moved, or that
        nothing uses (the engine keeps an import no fix made unused): it fails on TF2 at
        import, so it gets an error finding naming the replacement."""
        unfixed = self._unfixed
        for statement, module, local, line in self._imports:
            if local is None or local in unfixed or local.split(".")[0] in unfixed \
                    or local.split(".")[0] not in self._used:
                name = "tf." + module[len("tensorflow."):]
                if local not in unfixed and self._import_shim(statement, name, local, line):
                    continue
                hint = _hint(name)
                self.report(statement, f"error: {module} is gone in TF2: this import fails"
                                       + (f"; use {hint}" if hint else ""))

    def _import_shim(self, statement, name: str, local, line) -> bool:
        """``from tensorflow.contrib import layers`` that nothing uses (the uses spell
        ``tf.contrib.layers``): when shims has that module, the line imports it instead, so
        it no longer fails."""
        shim = MODULE_OBJECTS.get(name)
        if shim == "contrib.rnn" and self.ctx.target.keras == 3:
            return False  # tf_keras's cells: not imported unasked next to Keras 3
        if shim is None or local is None or "." in local or len(statement.names) != 1 \
                or not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return False
        parent, _, leaf = f"shims.{shim}".rpartition(".")
        new = (f"from {parent} import {leaf}" + (f" as {local}" if local != leaf else "")
               if isinstance(statement, cst.ImportFrom) else f"import shims.{shim} as {local}")
        finding = self.report(statement, f"{name} is gone in TF2: {local} names shims.{shim}, "
                                         "its TF1 API, instead")
        finding.replace(line, cst.parse_statement(new + "\n").with_changes(leading_lines=line.leading_lines))
        return True

    def check(self, node) -> None:
        ctx = self.ctx
        qualname = ctx.qualname(node) or ""
        if qualname.startswith("tf_slim.") and qualname[len("tf_slim."):] in SLIM_BROKEN:
            self._to_shims(node, qualname, "contrib.batch_norm", slim=True)
            return
        name = ctx.v1(node)
        if not name or not (name == "tf.contrib" or name.startswith("tf.contrib.")):
            return
        if isinstance(node, cst.Name) and node.value not in ctx.resolver.bindings:
            return  # ``tfe`` itself, bound by ``tfe = tf.contrib.eager`` (rewritten there)
        name = name.replace("tf.contrib.eager.python.tfe", "tf.contrib.eager", 1)
        name = public_name(name)
        root = node
        while isinstance(root, cst.Attribute):
            root = root.value
        local = root.value if isinstance(root, cst.Name) else None
        self._used.add(local)
        slim_rest = name[len("tf.contrib.slim."):] if name.startswith("tf.contrib.slim.") else None
        if slim_rest in SLIM_BROKEN:
            self._to_shims(node, name, "contrib.batch_norm", slim=True)
            return
        if name.startswith("tf.contrib.slim") and local in self._slim_locals:
            return  # its import now names tf_slim, which has the same API
        if name in ("tf.contrib.eager.enable_eager_execution",):
            return  # TFM104 removes it
        if estimator_target(name) is not None:
            return  # TFM110 moves it to shims.estimator
        moved = moved_target(name)  # into TensorFlow proper (tfe.defun -> tf.function) first
        if moved is not None and moved == _module_move(name) and shim_target(name):
            moved = None  # a module object: its aliases may call members TF2 renamed (is_sequence)
        if moved is None and name.startswith(TF2_FIRST):
            moved = upgrade_tables()["symbol_renames"].get(name)
        target = None if moved else shim_target(name) or MODULE_OBJECTS.get(name)
        if target is not None:
            self._to_shims(node, name, target)
            return
        renamed = moved or upgrade_tables()["symbol_renames"].get(name)
        if name == "tf.contrib.distribute.MirroredStrategy" and self._mirrored(node):
            return
        if name == "tf.contrib.distribute.CollectiveAllReduceStrategy" and self._collective(node):
            return
        if renamed in upgrade_tables()["missing_in_tf2_set"]:
            self._unfixed.add(local)
            self.report(node, no_tf2_home(name, renamed))
            return
        if renamed and not renamed.startswith("tf.contrib."):
            finding = self.report(node, f"{name} is {renamed} in TF2")
            finding.replace(node, ctx.tf(finding, renamed[len("tf."):]))
            return
        if slim_rest is not None and local == self.ctx.resolver.tf_alias():
            finding = self.report(node, f"{name} is gone in TF2; the tf-slim package "
                                        "(pip install tf-slim) has it")
            finding.replace(node, cst.parse_expression("tf_slim." + slim_rest))
            finding.add_import("import tf_slim")
            return
        if name == "tf.contrib.slim" and self._slim_alias(node):
            return
        hint = _hint(name)
        self._unfixed.add(local)
        self.report(node, f"{name} is gone in TF2" + (f"; use {hint}" if hint else ""))

    def _mirrored(self, node) -> bool:
        """``tf.contrib.distribute.MirroredStrategy(num_gpus=2)``: TF2's MirroredStrategy has
        no ``num_gpus`` (a TypeError); it takes the devices TF1 derived from it, ``/gpu:0``
        to ``/gpu:N-1`` (``num_gpus_per_worker`` the same), and ``cross_tower_ops`` is
        ``cross_device_ops``. Calls without those keywords are a plain rename."""
        strategy = self.ctx.parent()
        if not (isinstance(strategy, cst.Call) and strategy.func is node):
            return False
        keywords = {a.keyword.value: a for a in strategy.args if a.keyword is not None}
        if not {"num_gpus", "num_gpus_per_worker", "cross_tower_ops", "auto_shard_dataset"} & set(keywords):
            return False
        if any(a.keyword is None for a in strategy.args) or "devices" in keywords:
            self.report(node, "tf.contrib.distribute.MirroredStrategy with positional devices and "
                              "num_gpus: TF2's takes devices=[...] only; convert it by hand")
            return True
        finding = self.report(node, "tf.contrib.distribute.MirroredStrategy is "
                                    "tf.distribute.MirroredStrategy in TF2, which has no num_gpus: "
                                    "the devices it named are given (/gpu:0 ... /gpu:N-1)")
        function = self.ctx.tf(finding, "distribute.MirroredStrategy")

        def replace(updated: cst.Call) -> cst.Call:
            current = {a.keyword.value: a.value for a in updated.args if a.keyword is not None}
            args = []
            count = current.get("num_gpus", current.get("num_gpus_per_worker"))
            if count is not None:
                args.append(arg(_gpu_devices(count), "devices"))
            cross = current.get("cross_device_ops", current.get("cross_tower_ops"))
            if cross is not None:
                args.append(arg(cross, "cross_device_ops"))
            return call(function, args)

        finding.replace(strategy, replace)
        return True

    def _collective(self, node) -> bool:
        """``tf.contrib.distribute.CollectiveAllReduceStrategy(num_gpus_per_worker=N)``, TF
        1.15's synchronous multi-worker strategy (the cluster from ``TF_CONFIG``), is TF 2's
        ``tf.distribute.MultiWorkerMirroredStrategy()``, which reads the same ``TF_CONFIG``
        and takes no GPU count: it uses every GPU the worker sees (the CPU when it has none,
        as ``num_gpus_per_worker=0`` did on a CPU machine). Other arguments (``communication``)
        are left to the user."""
        strategy = self.ctx.parent()
        if not (isinstance(strategy, cst.Call) and strategy.func is node):
            return False
        if any(a.keyword is None or a.keyword.value != "num_gpus_per_worker" for a in strategy.args):
            return False
        finding = self.report(node, "tf.contrib.distribute.CollectiveAllReduceStrategy is "
                                    "tf.distribute.MultiWorkerMirroredStrategy in TF2 (the same "
                                    "TF_CONFIG); it uses every GPU a worker sees, so a "
                                    "num_gpus_per_worker below that count needs "
                                    "CUDA_VISIBLE_DEVICES set to the GPUs to use")
        finding.replace(strategy, call(self.ctx.tf(finding, "distribute.MultiWorkerMirroredStrategy"), []))
        return True

    def _keras3_note(self) -> str:
        """For Keras 3: the contrib RNN cells shims.rnn3 lacks are tf_keras code (tf-slim's
        layers run on TensorFlow's own legacy layers there, batch_norm included)."""
        if self.ctx.target.keras != 3:
            return ""
        return (" (Keras 3 target: this cell is tf_keras code, so the process imports tf_keras "
                "next to Keras 3; such code is best migrated for Keras 2)")

    def _slim_alias(self, node) -> bool:
        """``slim = tf.contrib.slim`` (module level): ``import tf_slim as slim``, the same API;
        its uses were bound to contrib.slim by the resolver and follow as for the import."""
        statement = self.ctx.statement()
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Assign) and statement.body[0].value is node
                and len(statement.body[0].targets) == 1
                and isinstance(statement.body[0].targets[0].target, cst.Name)
                and self.ctx.enclosing(cst.FunctionDef) is None
                and self.ctx.enclosing(cst.ClassDef) is None):
            return False
        local = statement.body[0].targets[0].target.value
        finding = self.report(node, "tf.contrib.slim is gone in TF2; the tf-slim package "
                                    "(pip install tf-slim) is its maintained home")
        new = "import tf_slim" + (f" as {local}" if local != "tf_slim" else "")
        finding.replace(statement, cst.parse_statement(new + "\n").with_changes(
            leading_lines=statement.leading_lines))
        self._slim_locals.add(local)
        return True

    def _to_shims(self, node, name: str, target: str, slim: bool = False) -> None:
        leaf = target[len("contrib.rnn."):] if target.startswith("contrib.rnn.") else None
        layer = target.rpartition(".")[2]
        if self.ctx.target.keras == 3 and target in (f"contrib.{layer}", f"contrib.layers.{layer}") \
                and layer in shim_exports("layers3"):
            finding = self.report(node, f"{name} is gone in TF2: shims.layers3.{layer} is TF 1.15's "
                                        "on TensorFlow alone (Keras 3 target)")
            finding.replace(node, cst.parse_expression(f"shims.layers3.{layer}"))
            finding.add_import("import shims.layers3")
            return
        if self.ctx.target.keras == 3 and leaf in shim_exports("rnn3"):
            finding = self.report(node, f"{name} is gone in TF2: shims.rnn3.{leaf} is TF 1.15's cell "
                                        "on TensorFlow alone (Keras 3 target)")
            finding.replace(node, cst.parse_expression(f"shims.rnn3.{leaf}"))
            finding.add_import("import shims.rnn3")
            return
        if slim:
            message = (f"{name} fails on TF 2.16+ in tf-slim 1.1.0 (No module named "
                       f"'tf_keras.legacy_tf_layers'); shims.{target} is the same function, working")
        elif target in MODULE_OBJECTS.values():
            message = f"{name} is gone in TF2: shims.{target} has its API, on TF2"
        elif target == "contrib.framework.nest":
            message = (f"{name} is gone in TF2: shims.contrib.framework.nest is TF1's nest "
                       "(tf.nest, and the TF1 names TF2 renamed: is_sequence)")
        elif target.startswith(("contrib.framework.", "contrib.HParams", "contrib.eager.")):
            message = f"{name} is gone in TF2: shims.{target} is the same TF1 function"
        elif target.startswith("contrib.learn.preprocessing."):
            message = (f"{name} is gone in TF2: shims.{target} is TF 1.15's (the same ids; "
                       "its vocabulary pickles load on either side)")
        elif target.startswith("contrib.factorization."):
            message = f"{name} is gone in TF2: shims.{target} is TF 1.15's k-means, seeded as TF1"
        else:
            message = f"{name} is gone in TF2: shims.{target} keeps its variable names and math"
        if target.startswith("contrib.rnn."):
            message += self._keras3_note()
        finding = self.report(node, message)
        finding.replace(node, cst.parse_expression(f"shims.{target}"))
        finding.add_import("import shims")
