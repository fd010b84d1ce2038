"""TF1 queue-runner input pipelines in a file, read once (TFM118 rewrites them as tf.data;
TFM501 converts a program whose queues are all rewritten, and only then drops its
``start_queue_runners``).

A pipeline is what TF1's input tutorials wrote, in one block::

    feature, label = tf.train.slice_input_producer([xs, ys], shuffle=False)   # the source
    image = tf.image.per_image_standardization(feature)                       # per element
    images, labels = tf.train.batch([image, label], batch_size=32)            # the batch

or, from files, ``q = tf.train.string_input_producer(files)``, ``reader = tf.TextLineReader()``
(any TF1 reader) and ``key, value = reader.read(q)`` as the source. The code run per
element is every assignment between the source and the batch that reads (through others)
what the source gives; it becomes the function mapped over the elements, so nothing else
may read it. Any queue API left outside such a pipeline is recorded with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

import libcst as cst

from migrate.codemod.cstutil import code, names_read, nodes_of
from migrate.codemod.signatures import bind, call_keywords, tf1_signature

PRODUCERS = {"tf.train.slice_input_producer": "slice", "tf.train.string_input_producer": "string"}
BATCHES = {"tf.train.batch", "tf.train.shuffle_batch"}
READERS = {"tf.TextLineReader", "tf.TFRecordReader", "tf.FixedLengthRecordReader", "tf.WholeFileReader"}
# queue APIs with no tf.data form here: a program using one keeps its queues (graph mode)
OTHER_QUEUES = {"tf.train.input_producer", "tf.train.range_input_producer", "tf.train.limit_epochs",
                "tf.train.batch_join", "tf.train.shuffle_batch_join", "tf.train.maybe_batch",
                "tf.train.maybe_shuffle_batch", "tf.train.maybe_batch_join",
                "tf.train.maybe_shuffle_batch_join", "tf.train.QueueRunner",
                "tf.train.add_queue_runner", "tf.train.queue_runner.QueueRunner",
                "tf.train.queue_runner.add_queue_runner", "tf.FIFOQueue", "tf.RandomShuffleQueue",
                "tf.PaddingFIFOQueue", "tf.PriorityQueue", "tf.IdentityReader", "tf.LMDBReader"}
START = "tf.train.start_queue_runners"


@dataclass
class Pipeline:
    """One producer -> (reader) -> per-element code -> batch pipeline (original nodes)."""
    producer: cst.SimpleStatementLine
    kind: str                                    # "slice" or "string"
    reader: Optional[cst.SimpleStatementLine]    # ``reader = tf.TextLineReader(...)``
    read: Optional[cst.SimpleStatementLine]      # ``key, value = reader.read(q)``
    params: List[str]                            # the element function's parameters
    elements: List[cst.SimpleStatementLine]      # the code run per element, in order
    batch: cst.SimpleStatementLine               # ``x, y = tf.train.batch(...)`` / ``return ...``
    batch_call: cst.Call
    tensors: cst.Arg                             # the batch's ``tensors`` argument
    trivial: bool                                # the batch takes the source's values as given
    at_module: bool                              # the pipeline is module-level code
    shuffled: bool                               # TF1 drew a random order (not reproduced)


@dataclass
class Dequeue:
    """A producer (with its reader) whose elements the program takes one per run, no batch:
    ``image, label = ...`` / ``_, record = reader.read(q)`` then ``sess.run(image)``."""
    producer: cst.SimpleStatementLine
    kind: str
    reader: Optional[cst.SimpleStatementLine]
    read: Optional[cst.SimpleStatementLine]
    shuffled: bool


@dataclass
class _Source:
    """Where a pipeline's elements come from."""
    producer: cst.SimpleStatementLine
    given: Dict[str, cst.Arg]                  # the producer's arguments, by parameter
    reader: Optional[cst.SimpleStatementLine]
    read: Optional[cst.SimpleStatementLine]
    params: List[str]
    last: int                                  # the index the per-element code starts after


@dataclass
class Unconverted:
    node: cst.CSTNode  # the queue call
    why: str


@dataclass
class QueueInput:
    pipelines: List[Pipeline] = field(default_factory=list)
    dequeues: List[Dequeue] = field(default_factory=list)
    unconverted: List[Unconverted] = field(default_factory=list)

    def why_not(self, nodes) -> Optional[str]:
        """Why the queue calls among ``nodes`` (ids) keep their queues, else None."""
        return next((u.why for u in self.unconverted if id(u.node) in nodes), None)


def queue_input(ctx) -> QueueInput:
    """The file's queue pipelines (computed once per file: ``ctx.facts.queue_input``)."""
    if ctx.facts.queue_input is None:
        ctx.facts.queue_input = _Finder(ctx).run()
    return ctx.facts.queue_input


def _call(stmt) -> Optional[cst.Call]:
    """The call a one-statement line assigns or returns."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    value = small.value if isinstance(small, (cst.Assign, cst.Return)) else None
    if isinstance(small, cst.Assign) and len(small.targets) != 1:
        return None
    return value if isinstance(value, cst.Call) else None


def _target_names(stmt) -> Optional[List[str]]:
    """``a`` -> ["a"], ``a, b`` / ``[a, b]`` -> ["a", "b"]; None for anything else."""
    target = stmt.body[0].targets[0].target if isinstance(stmt.body[0], cst.Assign) else None
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and all(
            isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements):
        return [e.value.value for e in target.elements]
    return None


def _binds(stmt) -> Set[str]:
    found: Set[str] = set()
    for small in stmt.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        for target in targets:
            found |= {n.value for n in _names_in(target)}
    return found


def _names_in(target):
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names_in(element.value)


def _assigns_only(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and (
            not isinstance(s, cst.AnnAssign) or s.value is not None) for s in stmt.body)


class _Finder:
    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.found = QueueInput()
        self.taken: Set[int] = set()  # ids of the queue calls a pipeline accounts for

    def name(self, call) -> Optional[str]:
        return self.ctx.v1(call.func) if isinstance(call, cst.Call) else None

    def run(self) -> QueueInput:
        module = self.ctx.module
        self.block(list(module.body), True)
        for body in _bodies(module):
            self.block(body, False)
        for call in _calls(module):  # every queue call no pipeline took: with the reason
            name = self.name(call)
            if id(call) not in self.taken and (
                    name in PRODUCERS or name in BATCHES or name in READERS or name in OTHER_QUEUES):
                why = f"{name} has no tf.data form here" if name in OTHER_QUEUES else \
                    f"{name} is in no producer -> batch pipeline that becomes tf.data"
                if not any(u.node is call for u in self.found.unconverted):
                    self.found.unconverted.append(Unconverted(call, why))
        return self.found

    def block(self, stmts, at_module: bool) -> None:
        for j, stmt in enumerate(stmts):
            call = _call(stmt)
            if self.name(call) in BATCHES:
                why = self.pipeline(stmts, j, call, at_module)
                if why:
                    self.found.unconverted.append(Unconverted(call, why))
        for i, stmt in enumerate(stmts):  # producers no batch reads: one element per run
            call = _call(stmt)
            if self.name(call) in PRODUCERS and id(call) not in self.taken:
                source = self.source(stmts, i, len(stmts))
                if isinstance(source, _Source) and not self.feeds_a_queue(stmts, source):
                    self.found.dequeues.append(Dequeue(
                        source.producer, PRODUCERS[self.name(call)], source.reader, source.read,
                        _shuffled(source.given)))
                    self.take(source)

    def take(self, source: "_Source") -> None:
        """The source's queue calls (its producer, its reader) are a rewrite's now."""
        self.taken.add(id(_call(source.producer)))
        for extra in (source.reader, source.read):
            if extra is not None:
                self.taken |= {id(c) for c in _calls(extra) if self.name(c) in READERS}

    def feeds_a_queue(self, stmts, source: "_Source") -> bool:
        """Do the source's elements reach a queue call (a batch left as a queue)?"""
        values = {p.lstrip("*") for p in source.params}
        for stmt in stmts[source.last + 1:]:
            if set(names_read(stmt)) & values and any(
                    self.name(c) in BATCHES or self.name(c) in OTHER_QUEUES for c in _calls(stmt)):
                return True
        return False

    def pipeline(self, stmts, j, call, at_module) -> Optional[str]:
        """The pipeline ending at ``stmts[j]`` (recorded), or why there is none."""
        name = self.name(call)
        keywords = call_keywords(call)
        binding = bind(tf1_signature(name), keywords) if keywords is not None else None
        if binding is None or binding.problem:
            return f"{name}() with arguments it does not bind"
        given = dict(zip(binding.params, call.args))
        tensors = given.get("tensors")
        if tensors is None or not isinstance(tensors.value, (cst.List, cst.Tuple, cst.Dict)):
            return f"{name}() of something other than a list or dict of tensors"
        reads = set(names_read(tensors.value))
        for i in range(j - 1, -1, -1):
            source = self.source(stmts, i, j)
            if source is None:
                continue
            if isinstance(source, str):
                return source
            values = set(p.lstrip("*") for p in source.params)
            elements = []
            for stmt in stmts[source.last + 1:j]:
                if stmt is source.reader or not set(names_read(stmt)) & values:
                    continue
                if not _assigns_only(stmt):
                    return "per-element code that is not an assignment"
                elements.append(stmt)
                values |= _binds(stmt)
            if not reads & values:
                continue  # this source does not feed the batch: look further up
            later = set(names_read(*stmts[j + 1:])) & values
            if later:
                return f"a per-element value ({', '.join(sorted(later))}) is used past the batch"
            params = source.params
            trivial = not elements and isinstance(tensors.value, (cst.List, cst.Tuple)) \
                and not params[0].startswith("*") \
                and [code(e.value) for e in tensors.value.elements] == params
            shuffled = name == "tf.train.shuffle_batch" or _shuffled(source.given)
            self.found.pipelines.append(Pipeline(
                source.producer, PRODUCERS[self.name(_call(source.producer))], source.reader,
                source.read, params, elements, stmts[j], call, tensors, trivial, at_module, shuffled))
            self.taken.add(id(call))
            self.take(source)
            return None
        return f"{name}() whose input is not a slice_input_producer or string_input_producer " \
               "(with a reader) in the same block"

    def source(self, stmts, i, j):
        """What ``stmts[i]`` starts if it is a pipeline's producer (a _Source), a reason it
        cannot be converted, or None (not a producer)."""
        call = _call(stmts[i])
        kind = PRODUCERS.get(self.name(call))
        if kind is None or not isinstance(stmts[i].body[0], cst.Assign):
            return None
        keywords = call_keywords(call)
        binding = bind(tf1_signature(self.name(call)), keywords) if keywords is not None else None
        if binding is None or binding.problem:
            return f"{self.name(call)}() with arguments it does not bind"
        given = dict(zip(binding.params, call.args))
        targets = _target_names(stmts[i])
        if targets is None:
            return f"{self.name(call)}() assigned to something other than names"
        rest = stmts[i + 1:]
        if kind == "slice":
            return _Source(stmts[i], given, None, None, targets if len(targets) > 1 else [f"*{targets[0]}"], i)
        queue = targets[0]
        reads = [k for k in range(i + 1, j) if queue in names_read(stmts[k])]
        if len(targets) != 1 or len(reads) != 1 or names_read(*rest)[queue] != 1:
            return "a string_input_producer queue used other than by one reader's read()"
        k = reads[0]
        read = _call(stmts[k])
        if read is None or not isinstance(read.func, cst.Attribute) or read.func.attr.value != "read" \
                or len(read.args) != 1 or code(read.args[0].value) != queue or read.args[0].keyword:
            return "a string_input_producer queue used other than by one reader's read()"
        params = _target_names(stmts[k])
        if params is None or len(params) != 2:
            return "a reader's read() assigned to something other than (key, value) names"
        owner, reader = read.func.value, None
        if self.name(owner) not in READERS:
            if not isinstance(owner, cst.Name):
                return "read() of something other than a TF1 reader"
            made = [s for s in stmts[:k] if _call(s) is not None and _target_names(s) == [owner.value]
                    and self.name(_call(s)) in READERS]
            if len(made) != 1 or names_read(*(s for s in stmts if s is not made[0]))[owner.value] != 1:
                return "a reader made elsewhere or used for more than one read()"
            reader = made[0]
        return _Source(stmts[i], given, reader, stmts[k], params, k)


def _shuffled(given) -> bool:
    """A producer shuffles unless given ``shuffle=False`` (TF1's default is True)."""
    shuffle = given.get("shuffle")
    return not (shuffle is not None and isinstance(shuffle.value, cst.Name) and shuffle.value.value == "False")


def _calls(node):
    return nodes_of(node, cst.Call)


def _bodies(module):
    """Every statement list below the module's own: function, class and compound bodies."""
    for block in nodes_of(module, cst.IndentedBlock):
        yield list(block.body)
