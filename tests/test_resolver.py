"""The light alias resolver: every TensorFlow import spelling resolves; shadowed names do not."""
import textwrap

import libcst as cst
import pytest

from migrate.codemod.engine import FileContext, _Walker
from migrate.codemod.rule import Rule


class Probe(Rule):
    """Records the resolved name of every call's function."""

    def __init__(self, ctx) -> None:
        super().__init__(ctx)
        self.calls = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(self.ctx.qualname(node.func))


def resolve(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    ctx = FileContext(module)
    probe = Probe(ctx)
    _Walker(ctx, [probe]).walk(module)
    return probe.calls


@pytest.mark.parametrize("source,expected", [
    ("import tensorflow as tf\ntf.layers.dense(x, 1)", "tensorflow.layers.dense"),
    ("import tensorflow.compat.v1 as tf\ntf.layers.dense(x, 1)", "tensorflow.compat.v1.layers.dense"),
    ("import tensorflow.compat.v1 as tf1\ntf1.layers.dense(x, 1)", "tensorflow.compat.v1.layers.dense"),
    ("from tensorflow.compat import v1\nv1.layers.dense(x, 1)", "tensorflow.compat.v1.layers.dense"),
    ("from tensorflow.compat.v1 import layers\nlayers.dense(x, 1)", "tensorflow.compat.v1.layers.dense"),
    ("from tensorflow import layers\nlayers.dense(x, 1)", "tensorflow.layers.dense"),
    ("from tensorflow.layers import dense as fc\nfc(x, 1)", "tensorflow.layers.dense"),
    ("import tensorflow\ntensorflow.layers.dense(x, 1)", "tensorflow.layers.dense"),
    ("import tensorflow.compat.v1\ntensorflow.compat.v1.layers.dense(x, 1)", "tensorflow.compat.v1.layers.dense"),
    ("import tensorflow.contrib.eager as tfe\ntfe.enable_eager_execution()", "tensorflow.contrib.eager.enable_eager_execution"),
    ("import tensorflow.compat.v2 as tf\ntf.compat.v1.get_variable('w')", "tensorflow.compat.v1.get_variable"),
    ("import keras\nkeras.layers.Dense(1)", "keras.layers.Dense"),
])
def test_import_spellings_resolve(source, expected):
    assert resolve(source) == [expected]


def test_shadowed_and_unrelated_names_do_not_resolve():
    calls = resolve("""
        import tensorflow as tf
        import numpy as np

        def f(tf):
            return tf.layers.dense(x, 1)

        def g():
            tf = make()
            return tf.layers.dense(x, 1)

        def h():
            return tf.layers.dense(x, 1)

        np.layers.dense(x)
        layers.dense(x)
        (lambda tf: tf.layers.dense(x))(0)
        """)
    # f: param tf; g: make(), then local tf; h: module tf; np; a bare name; the lambda's
    # own call, then its body with a parameter named tf
    assert calls == [None, None, None, "tensorflow.layers.dense", None, None, None, None]


def test_global_declaration_does_not_shadow():
    calls = resolve("""
        import tensorflow as tf

        def f():
            global tf
            tf = reload()
            return tf.Session()
        """)
    assert calls[-1] == "tensorflow.Session"


def test_a_function_above_the_import_sees_the_modules_tensorflow():
    """Notebooks define helpers in their first cell and import TensorFlow later: a function
    body runs after the module's imports, so its `tf` is the module's (once imported twice
    the same way); not at module level before the import, not where the name is also bound
    to something else, and not where the function binds it itself."""
    calls = resolve("""
        def reset_graph():
            tf.reset_default_graph()
        tf.zeros([1])
        def own(tf):
            tf.zeros([1])
        def other():
            np.zeros([1])
        import tensorflow as tf
        import tensorflow as tf
        import numpy as np
        np = None
    """)
    assert calls == ["tensorflow.reset_default_graph", None, None, None]
