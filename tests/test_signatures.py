"""Rewritten calls bind: every rewrite target is checked against TF 2.21's real signature
(generated from TensorFlow), and a call that means two things is never left silent."""
import textwrap

import pytest

from migrate.codemod.engine import transform
from migrate.codemod.rule import all_rules
from migrate.codemod.signatures import bind, parse, readings, tf1_signature, tf2_signature

RULES = list(all_rules().values())


def upgrade(source):
    outcome = transform(textwrap.dedent(source).lstrip(), RULES)
    return outcome.new_source, outcome.findings


def errors(findings):
    return [f for f in findings if f.message.startswith("error:")]


def test_signatures_are_read_from_tensorflow():
    assert tf2_signature("tf.raw_ops.SdcaFprint").all_keyword_only  # TF's kwarg_only wrapper
    assert tf1_signature("tf.nn.dropout").positional[:2] == ("x", "keep_prob")
    assert tf2_signature("tf.nn.dropout").positional[:2] == ("x", "rate")
    assert "tensor" in tf2_signature("tf.summary.write").names


@pytest.mark.parametrize("line,keywords,problem", [
    ("a, b", [None], "needs b="),
    ("a, b=", [None, None, None], "positional"),
    ("*, a", [None], "keyword arguments only"),
    ("a, b=", [None, "a"], "twice"),
    ("a, b=", ["c", "a"], "no parameter c="),
    ("a, **kw", ["c", "a"], None),
    ("a, *rest", [None, None, None], None),
])
def test_bind_is_pythons(line, keywords, problem):
    found = bind(parse(line), keywords).problem
    assert (found is None) if problem is None else (problem in found)


def test_raw_ops_get_keywords():
    new, findings = upgrade("""
        import tensorflow as tf
        fp = tf.train.sdca_fprint(keys)
        w = tf.train.sdca_shrink_l1(weights, 0.1, 0.2)
        """)
    assert "tf.raw_ops.SdcaFprint(input=keys)" in new
    assert "tf.raw_ops.SdcaShrinkL1(weights=weights, l1=0.1, l2=0.2)" in new
    assert not errors(findings)


def test_call_that_cannot_bind_is_an_error_and_left_alone():
    source = """
        import tensorflow as tf
        x = tf.to_float(y)  # TF1-only API: the file is TF1 code
        s = tf.sparse_concat(ax, inp, name=n, expand_nonconcat_dims=e, concat_dim=c)
        """
    new, findings = upgrade(source)
    assert "tf.sparse.concat(ax, inp, name=n, expand_nonconcat_dims=e, concat_dim=c)" in new
    (error,) = errors(findings)
    assert "gets axis twice" in error.message and error.code == "TFM102"


def test_contrib_summaries_get_the_global_step_and_record_if_its_condition():
    new, findings = upgrade("""
        import tensorflow as tf
        tf.contrib.summary.scalar("loss", loss)
        tf.contrib.summary.generic("g", t)
        tf.contrib.summary.histogram("h", v, step=3)
        with tf.contrib.summary.always_record_summaries():
            pass
        with tf.contrib.summary.never_record_summaries():
            pass
        """)
    step = "step=tf.compat.v1.train.get_or_create_global_step()"
    assert f"tf.compat.v2.summary.scalar(name=\"loss\", data=loss, {step})" in new
    assert f"tf.compat.v2.summary.write(tag=\"g\", tensor=t, {step})" in new  # TF2 has no data=
    assert "tf.compat.v2.summary.histogram(name=\"h\", data=v, step=3)" in new
    assert "record_if(condition=True)" in new and "record_if(condition=False)" in new
    assert not errors(findings)


@pytest.mark.parametrize("call,argument", [
    ("tf.nn.dropout(h, 0.5)", "argument 2 is keep_prob= in TF1 but rate= in TF2"),
    ("tf.boolean_mask(t, m, 'n')", "argument 3 is name= in TF1 but axis= in TF2"),
    ("tf.nn.in_top_k(p, t, 3)", "argument 1 is predictions= in TF1 but targets= in TF2"),
    ("tf.cond(p, f, g, True)", "argument 4 is strict= (gone in TF2) in TF1 but name= in TF2"),
])
def test_two_readings_without_evidence_are_an_error(call, argument):
    new, findings = upgrade(f"import tensorflow as tf\ny = {call}\n")
    assert new is None
    (error,) = errors(findings)
    assert argument in error.message


@pytest.mark.parametrize("call", ["tf.nn.dropout(h, rate=0.5)", "tf.boolean_mask(t, m)",
                                  "tf.nn.conv2d(x, w, [1, 1, 1, 1], 'SAME')"])
def test_one_reading_is_left_alone(call):
    new, findings = upgrade(f"import tensorflow as tf\ny = {call}\n")
    assert new is None and not findings


def test_only_tf1_binds_so_it_is_tf1():
    both = readings("tf.sparse_concat", [None, None, "expand_nonconcat_dim"])
    assert both.verdict == "tf1"  # TF2's sparse.concat has no expand_nonconcat_dim


def test_tf1_only_keyword_is_evidence():
    new, findings = upgrade("""
        import tensorflow as tf
        loss = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z, dim=-1)
        """)
    assert "labels=tf.stop_gradient(y), logits=z, axis=-1" in new
    assert not errors(findings)


def test_softmax_without_evidence_names_both_readings():
    new, findings = upgrade("""
        import tensorflow as tf
        loss = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z)
        """)
    assert new is None
    (error,) = errors(findings)
    assert "stops gradients into labels in TF1 but backpropagates" in error.message
    assert "ignore[TFM107]" in error.message
    kept, findings = upgrade("""
        import tensorflow as tf
        loss = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z)  # tf-migrate: ignore[TFM107]
        """)
    assert kept is None and not findings


def test_rewritten_call_gets_no_check_the_call_note():
    new, findings = upgrade("""
        import tensorflow as tf
        x = tf.placeholder(tf.float32)
        h = tf.nn.dropout(x, keep_prob=1 - self.dropout)
        """)
    assert "tf.nn.dropout(x, rate=self.dropout)" in new
    assert [f.code for f in findings if "dropout" in f.message] == ["TFM107"]


def test_a_parameter_only_renamed_is_no_error_in_tf2_code():
    """`with tf.device("/cpu:0"):` in a file with no TF1 API: TF1's `device_name_or_function`
    and TF2's `device_name` are one parameter renamed, and TensorFlow's upgrade tables
    record no change of tf.device, so the call means the same either way (it was an
    error finding, in idiomatic TF2 code and on every second run over migrated code). A
    call whose change the tables do record still is one."""
    new, findings = upgrade("""
        import tensorflow as tf
        with tf.device("/cpu:0"):
            x = tf.ones(3)
        """)
    assert new is None and not findings
    _, findings = upgrade("""
        import tensorflow as tf
        y = tf.nn.dropout(x, 0.5)
        """)
    assert [f.code for f in errors(findings)] == ["TFM102"]
