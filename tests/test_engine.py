"""Rules working together in one pass."""
from migrate.codemod.engine import transform
from migrate.codemod.rule import all_rules


def test_two_rules_asking_for_the_shim_decorator_add_it_once():
    source = (
        "import tensorflow as tf\n\n\n"
        "class Head(tf.keras.layers.Layer):\n"
        "    def call(self, x):\n"
        "        w = tf.compat.v1.get_variable('w', [4, 2])\n"
        "        return tf.layers.dense(tf.matmul(x, w), 2)\n")
    rules = [all_rules()["TFM201"], all_rules()["TFM305"]]
    out = transform(source, rules).new_source
    assert out.count("@shims.track_tf1_style_variables") == 1
    assert out.count("import shims") == 1
    assert transform(out, rules).new_source is None


def test_parse_skips_validation_only_while_parsing():
    """The parser's nodes are built without libcst's validation; every other node (what
    rules build) is validated, also after a parse that failed."""
    import libcst as cst
    import pytest

    from migrate.codemod.engine import parse
    from migrate.codemod.errors import EngineError

    assert parse("x = (1,\n     2)\n").code == "x = (1,\n     2)\n"
    with pytest.raises(EngineError):
        parse("x = (\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not an identifier")
