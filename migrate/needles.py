"""Text tests rules use to skip files they cannot fire on (see ``Rule.needle``).

A rule's ``needle`` is one Needle, or a tuple of them that must all match. They only
need to be necessary conditions: a file that passes is parsed and the rule decides
on the tree. Substring guards run first (fast); the regex only where they pass.
"""
import re
from typing import Optional, Sequence


class Needle:
    def __init__(self, literals: Sequence[str], pattern: Optional[str] = None) -> None:
        self.literals = tuple(literals)
        self.pattern = re.compile(pattern) if pattern else None

    def search(self, text: str) -> bool:
        if not any(literal in text for literal in self.literals):
            return False
        return self.pattern is None or self.pattern.search(text) is not None


# an import of TensorFlow's public TF1 namespace (not compat.v1/v2, not tensorflow.python)
TF1_IMPORT = Needle(("import tensorflow", "from tensorflow"),
                    r"\b(import\s+tensorflow(?!\.compat|\.python)|"
                    r"from\s+tensorflow(?!\.compat|\.python)[\w.]*\s+import\s+(?!compat\b))")
# tf.layers.* functions, or `layers` imported from somewhere
TF_LAYERS = Needle(("layers",), r"\blayers\.(dense|dropout|flatten|conv|separable|batch_norm|max_pool|"
                                r"average_pool)|\bimport\b[^\n]*\blayers\b|\blayers\s+import\b")
CONTRIB = Needle(("contrib",))
EAGER_ENABLE = Needle(("enable_eager_execution", "enable_v2_behavior", "disable_v2_behavior",
                       "disable_eager_execution"))
KERAS_CLASS = Needle(("Layer", "Model", "Sequential"))
VARIABLE = Needle(("Variable",))
# a container assigned to an attribute, or filled in place
CONTAINER = Needle(("self.",), r"self\.\w+\s*=\s*(\[|\{|\(|list\(|dict\(|tuple\()|"
                               r"self\.\w+\.(append|extend|insert)\(")
TF_FUNCTION = Needle(("function", "defun"), r"\.function\b|@function\b|\bdefun\b")
TRACED = Needle(("function", "defun", "def call"), r"\.function\b|@function\b|\bdefun\b|def call\b")
SIDE_EFFECT = Needle(("print(", ".append(", ".extend(", ".insert(", ".pop(", ".remove(", ".clear(",
                      ".update(", ".add(", ".discard(", ".setdefault(", ".popitem(", ".sort(",
                      ".reverse(", "global ", "nonlocal "))
EXECUTING_EAGERLY = Needle(("executing_eagerly",))
PYTHON_VALUE = Needle((".numpy(", "float(", "int(", "bool("))
SUMMARY = Needle(("summary",))
# a TF1 layer class (capitalized name after layers.), or layers imported from somewhere
TF_LAYER_CLASSES = Needle(("layers",), r"\blayers\.[A-Z]|\bimport\b[^\n]*\blayers\b|\blayers\s+import\b")
