"""Text tests rules use to skip files they cannot fire on (see ``Rule.needle``).

A rule's ``needle`` is one Needle, or a tuple of them that must all match. They only
need to be necessary conditions: a file that passes is parsed and the rule decides
on the tree. Substring guards run first (fast); the regex only where they pass.
"""
import io
import re
import tokenize
from typing import Optional, Sequence

#: the top-level packages whose names the rules care about: TensorFlow (with the
#: tensorflow-estimator package of TF 1.x) and the Keras packages
TF_ROOTS = ("tensorflow", "keras", "tf_keras", "tf_slim", "tensorflow_estimator")


class Needle:
    """``literals``: one must be in the text; ``pattern``: then it must match. ``starts``:
    texts every match of ``pattern`` begins with (after its lookbehinds); given, the pattern
    is tried only where one of them is (``str.find``), several times faster than a search
    of the whole text by a pattern that begins with ``\\b`` or an alternation."""

    def __init__(self, literals: Sequence[str], pattern: Optional[str] = None,
                 starts: Sequence[str] = ()) -> None:
        self.literals = tuple(literals)
        self.pattern = re.compile(pattern) if pattern else None
        self.starts = tuple(starts)

    def search(self, text: str) -> bool:
        if not any(literal in text for literal in self.literals):
            return False
        if self.pattern is None:
            return True
        if not self.starts:
            return self.pattern.search(text) is not None
        match, find = self.pattern.match, text.find
        for start in self.starts:
            at = find(start)
            while at >= 0:
                if match(text, at):
                    return True
                at = find(start, at + 1)
        return False



# between a name and the attribute read from it: spaces, line continuations, comments
# (``np  # why\n    .int`` inside brackets is one attribute)
_GAP = r"(?:[ \t\f\r\n\\]|#[^\n]*)*"


class ImportedAttribute(Needle):
    """One of ``names`` read as an attribute of a name ``imported`` (a pattern beginning
    with ``\\bimport``) binds: group 1 of its matches, or ``default`` where the import has
    no ``as``. Both come from the file's own
    text, so ``tf.cast`` is no hit for numpy's removed ``cast`` (``np.cast``)."""

    def __init__(self, imported: "re.Pattern", default: str, names: Sequence[str]) -> None:
        super().__init__((default,))
        self.imported = imported
        self.default = default
        self.names = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
        self._patterns: dict = {}

    def search(self, text: str) -> bool:
        aliases, match, find = set(), self.imported.match, text.find
        at = find("import")  # (the import pattern begins with it: see ``starts``)
        while at >= 0:
            found = match(text, at)
            if found:
                aliases.add(found.group(1) or self.default)
            at = find("import", at + 1)
        aliases = frozenset(aliases)
        if not aliases or not self.names:
            return False
        pattern = self._patterns.get(aliases)
        if pattern is None:
            bound = "|".join(sorted(map(re.escape, aliases)))
            pattern = self._patterns[aliases] = re.compile(
                rf"(?<![\w.])(?:{bound}){_GAP}\.{_GAP}(?:{self.names})\b")
        return pattern.search(text) is not None

# an import of TensorFlow's public TF1 namespace (not compat.v1/v2, not tensorflow.python),
# also as one name of several (`import os, tensorflow as tf`)
TF1_IMPORT = Needle(("tensorflow",),
                    r"\b(import\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*tensorflow(?!\.compat|\.python)|"
                    r"from\s+tensorflow(?!\.compat|\.python)[\w.]*\s+import\s+(?!compat\b))",
                    starts=("import", "from"))
# a line importing something named layers from TensorFlow or Keras (``from tensorflow
# import layers``, ``import tensorflow.compat.v1.layers as tfl``, ``from tensorflow.layers
# import dense``): a project's own ``from model.layers import common_layers`` is not one
_TF_LAYERS_IMPORT = r"\b(?:tensorflow|keras|tf_keras)\b[^\n]*\blayers\b"
# where a match of ``\b(?:tensorflow|keras|tf_keras)\b...`` can begin (``starts``)
_TF_ROOT_WORDS = ("tensorflow", "keras", "tf_keras")
# tf.layers.* functions, or `layers` imported from TensorFlow
TF_LAYERS = Needle(("layers",), r"\blayers\.(dense|dropout|flatten|conv|separable|batch_norm|max_pool|"
                                r"average_pool)|" + _TF_LAYERS_IMPORT, starts=("layers.", *_TF_ROOT_WORDS))
# tf.contrib through any alias (``tf.contrib.layers``, ``import tensorflow.contrib.slim``,
# ``from tensorflow import contrib``), tf-slim, or an rnn_cell module: a project's own
# ``contrib`` module (``from tensor2tensor.utils import contrib``) is not one
CONTRIB = Needle(("contrib", "tf_slim", "rnn_cell"),
                 r"\.contrib\b|\btensorflow\b[^\n]*\bcontrib\b|tf_slim|rnn_cell",
                 starts=(".contrib", "tensorflow", "tf_slim", "rnn_cell"))
EAGER_ENABLE = Needle(("enable_eager_execution", "enable_v2_behavior", "disable_v2_behavior",
                       "disable_eager_execution"))
# Layer, Model or Sequential as a word: a Keras base class resolves to one of these names
# (tf.keras.Model, an imported Layer, keras.engine.base_layer.Layer), and a project's own
# T2TModel or BaseModel is not one
KERAS_CLASS = Needle(("Layer", "Model", "Sequential"), r"\b(?:Layer|Model|Sequential)\b",
                     starts=("Layer", "Model", "Sequential"))
VARIABLE = Needle(("Variable",))
# a container assigned to an attribute, or filled in place
CONTAINER = Needle(("self.",), r"self\.\w+\s*=\s*(\[|\{|\(|list\(|dict\(|tuple\()|"
                               r"self\.\w+\.(append|extend|insert)\(")
TF_FUNCTION = Needle(("function", "defun"), r"\.function\b|@function\b|\bdefun\b",
                     starts=(".function", "@function", "defun"))
TRACED = Needle(("function", "defun", "def call"), r"\.function\b|@function\b|\bdefun\b|def call\b",
                starts=(".function", "@function", "defun", "def call"))
SIDE_EFFECT = Needle(("print(", ".append(", ".extend(", ".insert(", ".pop(", ".remove(", ".clear(",
                      ".update(", ".add(", ".discard(", ".setdefault(", ".popitem(", ".sort(",
                      ".reverse(", "global ", "nonlocal "))
EXECUTING_EAGERLY = Needle(("executing_eagerly",))
PYTHON_VALUE = Needle((".numpy(", "float(", "int(", "bool("))
# tf.summary through any alias (``tf.summary.scalar``, ``from tensorflow import summary``,
# ``from tensorflow.summary import scalar``): not the word in a docstring or a variable name
SUMMARY = Needle(("summary",), r"\bsummary\.|\b(?:tensorflow|keras|tf_keras)\b[^\n]*\bsummary\b",
                 starts=("summary.", *_TF_ROOT_WORDS))
# a TF1 layer class (capitalized name after layers.), or layers imported from TensorFlow
TF_LAYER_CLASSES = Needle(("layers",), r"\blayers\.[A-Z]|" + _TF_LAYERS_IMPORT,
                          starts=("layers.", *_TF_ROOT_WORDS))
# TF1-only API in the text: what tells TF1 code from TF2 code using the same import.
# Explicit compat.v1 uses do not count (half-migrated TF2 code has them too).
_TF1_MARKERS = [r"(Interactive)?Session\(", r"placeholder\(", r"get_variable\(", r"variable_scope\(",
                r"layers\.(dense|dropout|flatten|conv[123]d(_transpose)?|separable_conv[12]d|"
                r"batch_normalization|max_pooling[123]d|average_pooling[123]d)\(",
                r"contrib\b", r"train\.\w*Optimizer\(", r"global_variables(_initializer)?\(",
                r"get_collection\(", r"GraphKeys\b", r"merge_all\(", r"FileWriter\(",
                r"to_(float|int32|int64|double)\(", r"initialize_all_variables\(",
                r"enable_eager_execution\("]
TF1_CODE = Needle(("Session", "placeholder", "get_variable", "variable_scope", "layers.", "contrib",
                   "Optimizer(", "global_variables", "get_collection", "GraphKeys",
                   "merge_all", "FileWriter", "to_float(", "to_int32(", "to_int64(", "to_double(",
                   "initialize_all_variables", "enable_eager_execution"),
                  r"(?<!v1\.)\b(?:" + "|".join(_TF1_MARKERS) + ")")

# dotted names the tool writes (and users write when they mean TF1 explicitly): a TF1-only
# name inside them (tf.compat.v1.summary.merge_all, shims.contrib.batch_norm) is not a sign
# that the file's ambiguous names mean their TF1 versions
_EXPLICIT = re.compile(r"[\w.]*\b(?:compat\.v1|shims)\.[\w.]+")


_TF_NAME = re.compile(r"\btf\.([A-Za-z_][\w.]*)")


def tf1_meaning(source: str) -> bool:
    """Do the file's names that exist in TF1 and TF2 alike mean their TF1 versions? Yes when
    it uses TF1-only API outside explicit ``tf.compat.v1``/``shims`` names: a marker above,
    or any ``tf.`` name TensorFlow's tables move because TF2 has no such name
    (``tf.multinomial``, ``tf.logging``). Stable under migration: the migrated file has none
    left, so a second run decides nothing new."""
    if "tf." not in source and not any(literal in source for literal in TF1_CODE.literals):
        return False
    text = _EXPLICIT.sub(lambda m: " " * len(m.group(0)), source)  # offsets kept
    prose = _Prose(source)
    if any(literal in text for literal in TF1_CODE.literals):
        if any(not prose.covers(m.start()) for m in TF1_CODE.pattern.finditer(text)):
            return True
    only = _tf1_only_names()
    for match in _TF_NAME.finditer(text):
        parts = match.group(1).rstrip(".").split(".")
        if any("tf." + ".".join(parts[:n]) in only for n in range(1, len(parts) + 1)) \
                and not prose.covers(match.start()):
            return True
    return False


# TF2-only ways of running a model: a file using them was written (or migrated) for TF2, so a
# call valid in both means its TF2 version (the native form of a Session program writes them)
_TF2_CODE = re.compile(r"\b(?:GradientTape\s*\(|tf\.function\b|random\.set_seed\s*\()")


def tf2_meaning(source: str) -> bool:
    """Does the file run TensorFlow the TF2 way (a GradientTape, tf.function, TF2's seed),
    outside comments and strings? Then, where no TF1-only API says otherwise, its names
    mean their TF2 versions."""
    prose = _Prose(source) if _TF2_CODE.search(source) else None
    return prose is not None and any(not prose.covers(m.start()) for m in _TF2_CODE.finditer(source))


_PROSE = {tokenize.COMMENT, tokenize.STRING} | (
    {tokenize.FSTRING_MIDDLE} if hasattr(tokenize, "FSTRING_MIDDLE") else set())


class _Prose:
    """Is an offset of the source inside a comment or a string literal? A docstring that
    says "a Session(graph=graph)" is no TF1 code (else a migrated file would read as TF1 on
    a second run). The source is tokenized only as far as the offsets asked reach, and
    what was read is kept for any offset asked later. Source tokenize cannot read counts
    as code."""

    def __init__(self, source: str) -> None:
        self.starts = [0]
        for line in source.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        self.spans: list = []  # (start offset, end offset) of prose tokens read so far
        self.read_to = -1

    def _offset(self, row: int, col: int) -> int:
        return self.starts[row - 1] + col if row - 1 < len(self.starts) else self.starts[-1]

    def covers(self, offset: int) -> bool:
        try:
            while self.read_to <= offset:
                token = next(self.tokens)
                self.read_to = self._offset(*token.end)
                if token.type in _PROSE:
                    self.spans.append((self._offset(*token.start), self.read_to))
        except (StopIteration, tokenize.TokenError, IndentationError, SyntaxError):
            self.read_to = float("inf")
        return any(a <= offset < b for a, b in self.spans)


_TF1_ONLY = None


def _tf1_only_names() -> frozenset:
    """TF1 names TensorFlow's upgrade tables move because TF 2 has no such name."""
    global _TF1_ONLY
    if _TF1_ONLY is None:
        # the tables' JSON, only when a needle needs them
        from migrate.codemod.tables import upgrade_tables

        tables = upgrade_tables()
        names = set(tables["symbol_renames"]) | set(tables.get("module_renames", {}))
        _TF1_ONLY = frozenset(n for n in names if n.startswith("tf.")
                              and n not in tables["tf2_symbols_set"])
    return _TF1_ONLY


def tf1_only(name) -> bool:
    """Is ``name`` (``tf.multinomial``) a TF1 name TF 2 does not have? Then a call of it is
    TF1 code whatever the rest of the file looks like."""
    return bool(name) and name in _tf1_only_names()


# a TF1 Session being made (TFM104, TFM501)
SESSION = Needle(("Session",), r"Session\s*\(")  # any: tf.Session, MonitoredTrainingSession, ...
# a Session being made, or a placeholder (TFM501: programs, and graph code left outside them)
GRAPH_PROGRAM = Needle(("Session", "placeholder"), r"Session\s*\(|placeholder(?:_with_default)?\s*\(",
                       starts=("Session", "placeholder"))
