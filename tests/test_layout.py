"""migrate.codemod.layout: positions and spliced code must be exactly libcst's own.

Positions come from laying out one statement at the line CPython's parser gives it;
code keeps unchanged statements as source text. Both are compared with libcst's
whole-module PositionProvider and ``Module.code`` on every fixture and sample, on
sources written to trip them, and on random rewrites (hypothesis).
"""
import ast
import glob
import os

import libcst as cst
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from migrate.codemod.cstutil import nodes_of
from migrate.codemod.engine import FileContext, _Apply, _Walker
from migrate.codemod.layout import Layout
from migrate.codemod.rule import Finding

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TRICKY = [
    # decorators, comments between them, a comment after the colon, nested blocks
    "import tensorflow as tf\n\n# lead\n@dec  # c\n\n# between\n@other(\n    1)\ndef f(a,\n      b=tf.x):  # after\n"
    "    if a:\n        return tf.y(a)\n    # trailing in block\n\n\n# before g\ndef g(): return 1\n",
    # elif / else chains with comments, try/except/else/finally, while/for else
    "if a:\n    x = tf.a\n# c1\nelif b:  # c2\n    x = tf.b\nelif c: x = 3\nelse:\n    x = tf.c\n"
    "try:\n    pass\nexcept (tf.errors.OutOfRangeError, ValueError) as e:\n    y = 1\n"
    "except Exception:\n    y = 2\nelse:\n    y = 3\nfinally:\n    y = tf.z\n"
    "for i in tf.range(3):\n    pass\nelse:\n    z = 1\nwhile tf.w:\n    break\nelse:\n    z = 2\n",
    # tabs, a backslash continuation, semicolons, a one-line suite, no final newline
    "class A(tf.keras.layers.Layer):\n\tdef call(self, x):\n\t\ty = x + \\\n\t\t    tf.ones(3); z = 1\n"
    "\t\tif y: return tf.q\n\t\treturn (y,\n\t\t        z)\n\tw = 1",
    # CRLF and CR-only line ends
    "import tensorflow as tf\r\n\r\ndef f():\r\n    a = tf.x\r\n    return a\r\n\r\nb = f()\r\n",
    "import tensorflow as tf\r\rdef f():\r    a = tf.x\r    return a\rb = f()\r",
    # async, with, match, except*, form feed, comments at the end of the file
    "async def f():\n    async with tf.a() as b, tf.c():\n        async for x in b:\n            await x\n"
    "match tf.v:\n    case [1, *rest]:\n        q = 1\n    case {'k': v} if v:\n        q = tf.p\n"
    "    case _:\n        pass\ntry:\n    pass\nexcept* ValueError:\n    pass\n\x0c\ndef h():\n"
    "    return tf.h\n# the end\n\n",
    # a docstring, multi-line strings, parenthesized statement starts, global code after classes
    '"""doc\n\nstring"""\nfrom __future__ import annotations\nx = """a\nb""" + tf.s\n(a).b = tf.c\n'
    "class B:\n    '''d'''\n\n    def m(self):\n        return '''\n'''\n\n    n = 1\nprint(tf.last)\n",
]


def _sources():
    paths = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "*", "*.py"))
                   + glob.glob(os.path.join(ROOT, "samples", "**", "*.py"), recursive=True))
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            yield os.path.relpath(path, ROOT), handle.read()
    for i, text in enumerate(TRICKY):
        yield f"tricky-{i}", text


SOURCES = list(_sources())


def _layout(text):
    module = cst.parse_module(text)
    walker = _Walker(FileContext(module, "", text), [])
    walker.walk(module)
    return module, Layout(module, text, ast.parse(text), walker.parents), walker.parents


@pytest.mark.parametrize("name,text", SOURCES, ids=[n for n, _ in SOURCES])
def test_positions_and_unchanged_code_are_libcsts(name, text):
    module, layout, parents = _layout(text)
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    checked = 0
    for node, where in whole.items():
        if id(node) not in parents:
            continue  # the module and nodes outside expression/statement fields
        got = layout.position(node)
        assert (got.line, got.column) == (where.start.line, where.start.column), \
            f"{type(node).__name__} at {where.start}"
        checked += 1
    assert checked
    assert layout._whole is None, "fell back to the whole-module layout"
    assert layout.code(module) == module.code  # (== text, but for a CR-only file's last CR)


def _edit(text, rename, drop, insert, move):
    """``text`` rewritten by the engine's own one-pass apply (untouched subtrees keep their
    nodes, as in a real run): chosen Names renamed, simple statements dropped, a
    statement inserted, one statement moved before another (maybe at another depth)."""
    module, layout, parents = _layout(text)
    names = list(nodes_of(module, cst.Name))
    statements = [n for n in nodes_of(module, cst.BaseStatement)  # in a block: not an elif
                  if isinstance(parents.get(id(n)), (cst.Module, cst.IndentedBlock))]
    simple = [n for n in statements if isinstance(n, cst.SimpleStatementLine)]
    edit = Finding("TEST", "edit", module)
    for i in rename:
        if names:
            node = names[i % len(names)]
            edit.replace(node, node.with_changes(value=node.value + "_r"))
    removed = set()
    for i in drop:
        if simple:
            node = simple[i % len(simple)]
            edit.remove(node)
            removed.add(id(node))
    for i in insert:
        if statements:
            edit.insert_before(statements[i % len(statements)], [cst.parse_statement("inserted = 0")])
    if move and len(simple) > 1:
        a, b = simple[move[0] % len(simple)], statements[move[1] % len(statements)]
        if a is not b and id(a) not in removed and id(b) not in removed:
            edit.remove(a)
            edit.insert_before(b, [a])
    apply = _Apply([edit], None, parents)
    new = module.visit(apply)
    assume(apply.complete)
    return layout, new


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SOURCES), st.sets(st.integers(0, 500), max_size=6),
       st.sets(st.integers(0, 500), max_size=3), st.sets(st.integers(0, 500), max_size=2),
       st.one_of(st.none(), st.tuples(st.integers(0, 500), st.integers(0, 500))))
def test_spliced_code_equals_libcsts_code(source, rename, drop, insert, move):
    layout, new = _edit(source[1], rename, drop, insert, move)
    assert layout.code(new) == new.code


def test_moved_statements_are_generated_at_their_new_indentation():
    text = "def f():\n    a = 1\n    b = 2\nc = 3\n"
    module, layout, _ = _layout(text)
    inner = module.body[0].body.body
    new = module.with_changes(body=[*inner, *module.body[1:]])  # a and b moved to the top
    assert layout.code(new) == new.code == "a = 1\nb = 2\nc = 3\n"


def test_without_cpythons_tree_libcsts_own_layout_is_used():
    """A source CPython's parser refused (no tree): whole-module positions and code."""
    text = SOURCES[-1][1]
    module, layout, parents = _layout(text)
    blind = Layout(module, text, None, parents)
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    for node in nodes_of(module, cst.Name):
        got = blind.position(node)
        assert (got.line, got.column) == (whole[node].start.line, whole[node].start.column)
    assert blind._whole is not None
    assert blind.code(module) == module.code
