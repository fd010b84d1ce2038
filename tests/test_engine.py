"""Rules working together in one pass."""
from hypothesis import given, settings
from hypothesis import strategies as st

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


def test_tensorflow_imported_among_other_names_is_tf1_code():
    """`import numpy as np, tensorflow as tf` is an import of TensorFlow like any other:
    before, the TF1 rules never looked at such a file (exit 0, `tf.placeholder` left)."""
    from fixture_cases import run

    for first in ("import numpy as np, tensorflow as tf\n", "import os, sys, tensorflow as tf\n"):
        outcome = run("TFM101", first + "x = tf.placeholder(tf.float32)\n")
        assert "tf.compat.v1.placeholder" in outcome.new_source


def test_tf1_api_named_in_prose_is_not_tf1_code():
    """A docstring or comment that names TF1 API ("a Session(graph=graph)") does not make
    a file TF1 code: a migrated file would otherwise read as TF1 on the second run and be
    changed again (softmax labels wrapped in stop_gradient)."""
    from migrate.codemod.needles import tf1_meaning

    code = "import tensorflow as tf\ny = tf.nn.softmax_cross_entropy_with_logits(labels=a, logits=b)\n"
    assert not tf1_meaning('"""Made with a Session(graph=graph)."""\n' + code)
    assert not tf1_meaning(code + "# was: tf.placeholder(tf.float32) and tf.logging.info\n")
    assert tf1_meaning('"""Docs."""\n' + code + "s = tf.Session()  # a Session\n")
    assert tf1_meaning(code + "tf.logging.info('x')\n")


def test_a_project_s_own_layers_contrib_and_models_do_not_make_a_rule_look_at_a_file():
    """The text tests that decide whether a rule can fire (a file no rule can fire on is
    not parsed) look for TensorFlow's ``layers``, ``summary`` and ``contrib`` and Keras's
    ``Layer``/``Model`` where a resolved name could come from, not for the words: a
    tensor2tensor module importing its own ``common_layers`` and ``contrib`` and defining
    a ``T2TModel`` subclass is not looked at by those rules; TensorFlow's are."""
    rules = all_rules()
    project = ("import tensorflow as tf\nfrom tensor2tensor.layers import common_layers\n"
               "from tensor2tensor.utils import contrib\nfrom tensor2tensor.utils import t2t_model\n\n\n"
               "class Body(t2t_model.T2TModel):  # writes a summary of its contrib layers\n"
               "    def body(self, x):\n        return contrib.slim().fully_connected(common_layers.flatten4d3d(x), 2)\n")
    for code in ("TFM201", "TFM202", "TFM105", "TFM106", "TFM301", "TFM302", "TFM304"):
        assert not rules[code].applies(project), code
    assert transform(project, list(rules.values())).findings == []
    tensorflow = {
        "TFM201": ["from tensorflow.compat.v1 import layers\n", "import tensorflow.compat.v1.layers as tfl\n",
                   "x = tf.layers.dense(x, 2)\n"],
        "TFM202": ["from tensorflow.layers import Dense\n", "d = tf.layers.Dense(2)\n",
                   "from tensorflow.python.layers import base\n"],
        "TFM105": ["x = tf.contrib.layers.flatten(x)\n", "from tensorflow.contrib import slim\n",
                   "import tensorflow.contrib.slim as slim\n", "cell = tf.nn.rnn_cell.LSTMCell(4)\n"],
        "TFM106": ["tf.summary.scalar('loss', loss)\n", "from tensorflow import summary\n",
                   "from tensorflow.compat.v1.summary import scalar\n"],
        "TFM304": ["class Head(tf.keras.Model):\n    pass\n", "from tensorflow.keras.layers import Layer as L\n"],
    }
    for code, lines in tensorflow.items():
        for line in lines:
            assert rules[code].applies("import tensorflow as tf\n" + line), (code, line)



def test_numpy_s_removed_names_are_looked_for_on_numpy_only():
    """TFM122's text test wants a removed name read from a name ``import numpy`` binds:
    ``tf.cast``, ``tf.math`` and ``tf.compat`` (numpy 1.18 also had ``cast``, ``math`` and
    ``compat``) do not make it parse a file; ``np.int`` does, also split over lines in
    brackets with a comment between, and through ``import numpy`` without an alias."""
    rule = all_rules()["TFM122"]
    tf_only = "import numpy as np\nimport tensorflow as tf\nx = tf.cast(tf.math.abs(y), tf.float32)\n"
    assert not rule.applies(tf_only)
    assert not rule.applies("import numpy as np\nx = other.int(3) + npx.float(2)\n")
    for line in ("x = y.astype(np.int)\n", "z = f(np  # old alias\n      .float_)\n",
                 "w = np . NaN\n"):
        assert rule.applies("import numpy as np\n" + line), line
    assert rule.applies("import os, numpy\nv = numpy.asscalar(a)\n")
    assert transform("import numpy as np\nx = f(np  # c\n  .int)\n", [rule]).new_source \
        == "import numpy as np\nx = f(int)\n"


_NEEDLE_WORDS = ["tf", ".", "@", "function", "defun", "def call", "import", "from", "tensorflow",
                 "keras", "tf_keras", "layers", "layers.", "dense", "Layer", "Model", "Sequential",
                 "summary", "contrib", ".contrib", "rnn_cell", "Session", "placeholder", "(", " ",
                 "\n", "_", "x", "as", ",", "compat", "python", "undef"]


@given(st.lists(st.sampled_from(_NEEDLE_WORDS), max_size=14))
@settings(max_examples=400, deadline=None)
def test_a_needle_tried_where_its_matches_start_decides_as_a_search_of_the_whole_text(words):
    """``Needle(starts=...)`` tries its pattern only where one of ``starts`` is (a speed-up
    over searching the whole text): on any text its verdict is the plain search's."""
    from migrate.codemod import needles

    text = "".join(words)
    started = [n for n in vars(needles).values() if isinstance(n, needles.Needle) and n.starts]
    assert len(started) >= 8
    for needle in started:
        plain = any(lit in text for lit in needle.literals) and needle.pattern.search(text) is not None
        assert needle.search(text) == plain, (needle.pattern.pattern, text)

GRAPH_MODE_PROGRAM = """import numpy as np
import tensorflow as tf

x = tf.placeholder(tf.float32, [None, 3], name="x")
training = tf.placeholder(tf.bool, [])
h = tf.layers.batch_normalization(tf.layers.dense(x, 4, name="hidden"), training=training)
loss = tf.reduce_mean(tf.square(h - 1.0))
with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
hooks = [tf.train.StopAtStepHook(last_step=5)]
sess = tf.Session()
sess.run(tf.global_variables_initializer())
feeds = {x: np.ones((4, 3), np.float32), training: True}
feeds[x] = feeds[x] * 0.5  # a feed_dict changed after it was built: not provable
print(sess.run([train, loss], feed_dict=feeds)[1])
"""


def test_a_program_kept_in_graph_mode_keeps_tf1_layers_and_hooks():
    """#25.3: kept in graph mode, TF1's functional layers stay `tf.compat.v1.layers` (a Keras
    BatchNormalization registers no UPDATE_OPS: its moving statistics never updated) and
    TF1's hooks stay `tf.compat.v1.train` (shims.estimator's are eager), with every rule on.
    A second run changes nothing: the switch tells TFM201 the code runs in graph mode."""
    from migrate.codemod.engine import transform
    from migrate.codemod.rule import all_rules

    rules = list(all_rules().values())
    first = transform(GRAPH_MODE_PROGRAM, rules)
    out = first.new_source
    assert "tf.compat.v1.disable_eager_execution()" in out
    assert "tf.compat.v1.layers.batch_normalization(tf.compat.v1.layers.dense(x, 4, name=\"hidden\")" in out
    assert "tf.compat.v1.train.StopAtStepHook(last_step=5)" in out
    assert "tf.keras" not in out and "shims.estimator" not in out
    assert out.startswith("import shims.keras2\n")  # tf.compat.v1.layers is tf_keras's: Keras 2 declared
    assert transform(out, rules).new_source is None


DATASET_METHOD_PROGRAM = """
import tensorflow as tf


def count_records(make_dataset, limit):
    found = 0
    with tf.Graph().as_default():
        iterator = make_dataset(batch_size=1).make_initializable_iterator()
        next_record = iterator.get_next()
        with tf.Session() as sess:
            sess.run(iterator.initializer)
            try:
                for _ in range(limit):
                    sess.run(next_record)
                    found += 1
            except tf.errors.OutOfRangeError:
                pass
    return found
"""


def test_a_dataset_method_is_graph_code_on_the_first_run_too():
    """Found on magenta's record counter: the graph is only `make_dataset(...)
    .make_initializable_iterator()` (a Dataset method, no `tf.` name), so the first run
    found "no graph-building code" and kept the program in graph mode; TFM109 made it
    `tf.compat.v1.data.make_initializable_iterator(...)`, and a second run then converted
    it. The method is graph code on the first run: converted once, stable after."""
    rules = list(all_rules().values())
    first = transform(DATASET_METHOD_PROGRAM, rules).new_source
    assert "shims.GraphProgram(build_graph)" in first and "disable_eager_execution" not in first, first
    assert 'program.run("iterator_initializer")' in first
    assert transform(first, rules).new_source is None


# where libcst declares a node's fields in another order than the source has them
SOURCE_ORDERS = """
@tf.function(autograph=False)
def f(a, /, b: int = g(c), *args, d=h(e), **kw) -> tf.Tensor:
    y = p(q, kw=r(s)) if t(u) else v(w)
    try:
        pass
    except Error(x) as err:
        z = m(err)
    match k(n):
        case [o, *rest] if cond(o):
            call(o)
    return y


class C(Base(tf.Module), metaclass=Meta(i)):
    value = compute(j)
"""


def test_the_read_only_walk_visits_as_libcst_visits():
    """``cstutil.walk`` (TFM501's analysis, NameReads) calls a visitor's visit_X/leave_X
    for every expression and statement in the order libcst's visit() does, and a visit_X
    returning False skips that node's children, as libcst skips them."""
    import glob
    import os

    import libcst as cst

    from migrate.codemod.cstutil import walk

    kinds = ("Name", "Call", "Attribute", "FunctionDef", "ClassDef", "With", "For", "Lambda",
             "ListComp", "Assign", "Arg", "SimpleStatementLine", "Subscript")

    class Record(cst.CSTVisitor):
        def __init__(self):
            super().__init__()
            self.events = []

        def on_visit(self, node):
            if type(node).__name__ in kinds:
                self.events.append(("visit", id(node)))
            return not isinstance(node, cst.Lambda)  # pruned: nothing under a lambda

        def on_leave(self, node):
            if type(node).__name__ in kinds:
                self.events.append(("leave", id(node)))

    here = os.path.dirname(__file__)
    sources = sorted(glob.glob(os.path.join(here, "fixtures", "TFM501", "*.in.py")))[:12]
    assert sources
    for path in sources + [SOURCE_ORDERS]:
        text = open(path, encoding="utf-8").read() if path is not SOURCE_ORDERS else path
        module = cst.parse_module(text)
        theirs, ours = Record(), Record()
        module.visit(theirs)
        walk(module, ours)
        assert len(ours.events) > 50 and ours.events == theirs.events, path


def test_the_names_a_new_binding_avoids_are_libcst_s_names_read_from_cpython_s_tree():
    """``fresh_name`` reads every identifier from CPython's tree (a walk of libcst's took a
    second of a 30 s corpus run); the set is the one libcst's Name nodes give, on every
    construct that binds or names something, and on this repository's own code."""
    import ast
    import glob
    import os

    from migrate.codemod.cstutil import _tree_identifiers, identifiers
    from migrate.codemod.engine import parse

    crafted = (
        "from os import *\nimport a.b.c as d, e\nfrom .f.g import h as i\nglobal j\n"
        "@deco(k=True)\nasync def fn(l, /, m=None, *n, o=False, **p) -> q.r:\n"
        "    nonlocal_ = lambda s, *t: s.u\n    try:\n        pass\n    except V as w:\n        pass\n"
        "    match x:\n        case Point(y=0, z=zz) as aa:\n            pass\n"
        "        case {'k': bb, **rest}:\n            pass\n        case [cc, *others]:\n            pass\n"
        "    print(f'{dd.ee!r:>{ff}}', ..., sep=gg)\n    return [hh for hh in ii if (jj := hh)]\n"
        "class Kk(Ll, metaclass=Mm):\n    nn: oo = 1\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = [crafted] + [open(path, encoding="utf-8").read() for path in sorted(
        glob.glob(os.path.join(root, "migrate", "**", "*.py"), recursive=True))]
    for source in sources:
        assert _tree_identifiers(ast.parse(source)) == identifiers(parse(source))
    assert {"a", "b", "c", "d", "f", "g", "h", "i", "j", "True", "None", "False", "rest", "others",
            "ee", "ff", "jj", "Mm", "oo", "zz"} <= _tree_identifiers(ast.parse(crafted))
