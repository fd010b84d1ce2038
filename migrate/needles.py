"""Text tests rules use to skip files they cannot fire on (see ``Rule.needle``)."""
import re

# an import of TensorFlow's TF1 namespace (not compat.v1/v2): what the rename rules act on
TF1_IMPORT = re.compile(r"\b(import\s+tensorflow(?!\.compat)|from\s+tensorflow(?!\.compat)[\w.]*\s+import\s+(?!compat\b))")
TF_LAYERS = re.compile(r"\blayers\b")
CONTRIB = re.compile(r"\bcontrib\b")
EAGER_ENABLE = re.compile(r"enable_eager_execution|enable_v2_behavior")
KERAS_CLASS_VARIABLES = re.compile(r"(?s)\b(Layer|Model|Sequential)\b.*\bVariable\b|\bVariable\b.*\b(Layer|Model|Sequential)\b")
KERAS_CLASS = re.compile(r"\b(Layer|Model|Sequential)\b")
TF_FUNCTION = re.compile(r"\.function\b|@function\b|\bdefun\b")
TRACED = re.compile(r"\.function\b|@function\b|\bdefun\b|def call\b")
SUMMARY = re.compile(r"\bsummary\b")
