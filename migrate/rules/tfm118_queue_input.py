"""TFM118: queue-runner input pipelines -> tf.data (shims.queues)."""
from __future__ import annotations

import libcst as cst

from migrate.codemod import needles
from migrate.codemod.cstutil import code, fresh_name
from migrate.codemod.queues import Dequeue, Pipeline, queue_input
from migrate.codemod.rule import Rule


class QueueInput(Rule):
    code = "TFM118"
    needle = needles.Needle(("slice_input_producer", "string_input_producer"))
    summary = "queue-runner input (producer -> batch) becomes a tf.data pipeline (shims.queues)"
    fixable = True
    explanation = """
TF1 programs read their input through queues that queue-runner threads fill
(`tf.train.slice_input_producer`, `string_input_producer` with a `TextLineReader`,
`TFRecordReader`, `FixedLengthRecordReader` or `WholeFileReader`, the code run per element,
then `tf.train.batch` / `shuffle_batch`, started by `tf.train.start_queue_runners`). Queues do
not exist in eager TF2: `tf.compat.v1` keeps them only in graph mode.

The pipeline becomes the tf.data pipeline it stood for, in place: the producer a dataset of
its elements (`shims.queues.slice_input_producer` / `string_input_producer`, TF1's
arguments), the reader's records `reader.read(queue)`, the assignments run per element a
function mapped over them, and the batch `shims.queues.batch(dataset, ...)`, which reads it
through one iterator. TF 1.15's semantics are kept: `num_epochs` (None: forever, batches
spanning epochs), the final partial batch dropped unless `allow_smaller_final_batch`,
`OutOfRangeError` at the end, `enqueue_many`, `dynamic_pad`, TF1's reader keys. With
`shuffle=False` and one thread the elements come in TF1's order; a shuffled producer or
`shuffle_batch` draws another random order than TF1's queue threads did (said in the finding).

The rewritten pipeline also runs in graph mode, where `start_queue_runners` then starts
nothing; TFM501 drops that call when it converts the program to eager. A queue API left
outside such a pipeline (a hand-made `FIFOQueue`, `batch_join`, a queue used by something
else) is not rewritten, and a Session program using it stays in graph mode with the reason.
"""
    before = """
import tensorflow as tf

feature, label = tf.train.slice_input_producer([xs, ys], shuffle=False)
image = tf.image.per_image_standardization(feature)
images, labels = tf.train.batch([image, label], batch_size=32)
"""
    after = """
import shims
import tensorflow as tf

input_queue = shims.queues.slice_input_producer([xs, ys], shuffle=False)


def queue_element(feature, label):
    image = tf.image.per_image_standardization(feature)
    return image, label


images, labels = shims.queues.batch(input_queue.map(queue_element), batch_size=32)
"""

    def leave_Module(self, original_node: cst.Module) -> None:
        replaced = set()  # ids of the nodes the rewrite replaces: other rules' edits there go
        found = queue_input(self.ctx)
        for left in found.unconverted:
            self.report(left.node, f"queue-runner input kept as TF1 queues, which run in graph mode "
                                   f"only: {left.why}; write it as a tf.data pipeline")
        for pipeline in found.pipelines:
            self._rewrite(pipeline)
            replaced |= {id(pipeline.batch_call.func), *(id(n) for n in _replaced(pipeline))}
        for dequeue in found.dequeues:
            self._dequeue(dequeue)
            replaced |= {id(n) for n in _replaced(dequeue)}
        self.ctx.findings[:] = [f for f in self.ctx.findings
                                if f.code == self.code or id(f.node) not in replaced]

    def _rewrite(self, p: Pipeline) -> None:
        name = self.ctx.v1(p.batch_call.func)
        finding = self.report(p.batch_call, _message(f"{name} over a {p.kind}_input_producer queue",
                                                     p.shuffled))
        finding.add_import("import shims")
        facts = self.ctx.facts
        if p.kind == "slice":
            source = fresh_name(self.ctx, "input_queue")
            finding.replace(p.producer, lambda updated: updated.with_changes(body=[cst.Assign(
                [cst.AssignTarget(cst.Name(source))],
                _shim(updated.body[0].value, "slice_input_producer"))]))
        else:
            self._files_source(finding, p)
            finding.replace(p.read, cst.RemovalSentinel.REMOVE)
        for stmt in p.elements:
            finding.replace(stmt, cst.RemovalSentinel.REMOVE)
        element = None if p.trivial else fresh_name(self.ctx, "queue_element")
        batch = "batch" if name == "tf.train.batch" else "shuffle_batch"
        at = p.batch_call.args.index(p.tensors)

        def rebuilt(updated: cst.SimpleStatementLine):
            # the source, as the other fixes left the statements it comes from
            if p.kind == "slice":
                origin = source
            else:
                origin = code(facts.rewritten[id(p.read)].body[0].value)
            call = updated.body[0].value
            args = list(call.args)
            args[at] = args[at].with_changes(value=cst.parse_expression(
                origin if element is None else f"{origin}.map({element})"))
            small = updated.body[0].with_changes(value=call.with_changes(
                func=cst.parse_expression(f"shims.queues.{batch}"), args=args))
            line = updated.with_changes(body=[small])
            if element is None:
                return line
            return cst.FlattenSentinel(self._element_function(p, element, facts, line))

        finding.replace(p.batch, rebuilt)

    def _dequeue(self, d: Dequeue) -> None:
        """No batch: the program takes the elements one per run (``shims.queues.dequeue``)."""
        name = self.ctx.v1(_call_of(d.producer).func)
        finding = self.report(_call_of(d.producer), _message(f"{name} read one element per run", d.shuffled))
        finding.add_import("import shims")
        producer = name.split(".")[-1]
        if d.kind == "slice":
            finding.replace(_call_of(d.producer), lambda updated: cst.parse_expression(
                f"shims.queues.dequeue({code(_shim(updated, producer))})"))
            return
        self._files_source(finding, d)
        finding.replace(_call_of(d.read), lambda updated: cst.parse_expression(
            f"shims.queues.dequeue({code(updated)})"))

    def _files_source(self, finding, p) -> None:
        """A string_input_producer and its reader become shims.queues's (TF1's arguments)."""
        finding.replace(_call_of(p.producer), lambda updated: _shim(updated, "string_input_producer"))
        reader = _reader_call(p)
        finding.replace(reader, lambda updated: _shim(updated, self.ctx.v1(reader.func).split(".")[-1]))

    def _element_function(self, p: Pipeline, element: str, facts, line) -> list:
        """``def <element>(<params>): <per-element code>; return <batch's tensors>`` and the
        batch line, spaced as the block they stand in wants."""
        body = [facts.rewritten.get(id(s), s) for s in p.elements]
        body = [b.with_changes(leading_lines=()) if n == 0 else b for n, b in enumerate(body)]
        tensors = p.tensors.value
        if isinstance(tensors, cst.Dict):
            returned = code(tensors)
        else:  # TF1 batched a list of tensors; tf.data elements are tuples
            returned = ", ".join(code(e.value) for e in tensors.elements)
            returned += "," if len(tensors.elements) == 1 else ""
        body.append(cst.parse_statement(f"return {returned}\n"))
        func = cst.parse_statement(f"def {element}({', '.join(p.params)}):\n    pass\n")
        blank = [cst.EmptyLine(indent=False)] * (2 if p.at_module else 1)
        func = func.with_changes(body=func.body.with_changes(body=body), leading_lines=blank)
        return [func, line.with_changes(leading_lines=blank)]


def _message(what: str, shuffled: bool) -> str:
    message = f"{what} becomes a tf.data pipeline (shims.queues): queues and their threads do not " \
              "exist in eager TF2"
    if shuffled:
        message += "; shuffled: the same elements in another random order than TF1's queues drew"
    return message


def _replaced(p):
    """The queue API names the rewrite replaces (the producer's, the reader's)."""
    yield _call_of(p.producer).func
    if p.read is not None:
        yield _reader_call(p).func


def _reader_call(p) -> cst.Call:
    """The call making the reader: its own statement's, or inline (``tf.TFRecordReader().read(q)``)."""
    return _call_of(p.reader) if p.reader is not None else p.read.body[0].value.func.value


def _call_of(stmt) -> cst.Call:
    return stmt.body[0].value


def _shim(call: cst.Call, name: str) -> cst.Call:
    return call.with_changes(func=cst.parse_expression(f"shims.queues.{name}"))

