"""What two runs of a program printed, as numbers to compare.

Every printed line becomes a record: its *template* (the text with each number replaced
by ``#``) and its numbers. What is not the program's computation is taken out first:

- a terminal's carriage-return updates (only the last state of a line counts);
- paths (``/tmp/run1/model.ckpt-10``) and object reprs (``Tensor("add:0", ...)``,
  ``<tf.Variable ...>``, ``0x7f...`` addresses), whose digits are not results;
- timing and dates: a number followed by a unit of time or rate (``0.12 sec``,
  ``3ms/step``, ``512 examples/sec``, ``ETA: 0s``) or named by a timing word
  (``time``, ``elapsed``, ``took``, ``global_step/sec``), and clock or date stamps.

Log lines (``INFO:tensorflow:...``, absl's ``I1124 12:00:00.1 ... file.py:12] ...``) come
from stderr; of those, the ones that name a step (Estimator's ``loss = 0.69, step = 1``,
``Saving dict for global step 10: ...``) are compared, keyed by their step.

Records are aligned on their templates, so a line one run printed and the other did not is
named, and the rest still line up: equal sequences pair at once, a common start and end
are taken off, and ``difflib`` aligns what is left while it is small; a larger middle pairs
the n-th line of each template with the other run's n-th. Time and memory grow linearly with
the lines printed; a report keeps every differing line but only the first
:data:`KEPT_LINES` that agree (each kind of line is summed up whole in ``kinds``).
"""
from __future__ import annotations

import difflib
import math
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])|"
                    r"(?<![\w])[-+]?(?:nan|inf)(?![\w])", re.IGNORECASE)
_UNIT = (r"(?:s|sec|secs|second|seconds|ms|msec|us|µs|ns|min|mins|minutes|h|hours"
         r"|ms/step|s/step|us/step|ms/batch|s/batch|sec/batch|s/it|it/s"
         r"|steps?/s(?:ec)?|examples?/s(?:ec)?|samples?/s(?:ec)?|ex/s|images?/s(?:ec)?"
         r"|batch(?:es)?/s(?:ec)?)")
TIMED = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?\s?" + _UNIT + r"(?![\w/])",
                   re.IGNORECASE)
TIMING_KEY = re.compile(r"\b(?:time|times|elapsed|duration|took|eta|speed|throughput|wall|"
                        r"global_step/sec|steps?_per_sec(?:ond)?|examples?_per_sec(?:ond)?|"
                        r"sec/batch|seconds?|fps)\b\s*[=:]?\s*\(?\s*"
                        r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?", re.IGNORECASE)
STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?")
PATH = re.compile(r"(?:[A-Za-z]:)?(?:[\w.~-]*/)+[\w.@:+-]*|\b0x[0-9a-fA-F]+\b")
REPR = re.compile(r"<tf\.(?:Tensor|Variable|Operation)[^>]*>|<tensorflow\.[^>]*>|<[\w.]+ object at [^>]*>|"
                  r"\b(?:Tensor|SparseTensor|IndexedSlices)\(\"[^\"]*\"[^)]*\)|"
                  r"\bname: \"[^\"]*\"|\bop: \"[^\"]*\"|\bdtype=[\w.]+|\bshape=\([^)]*\)")
LOG = re.compile(r"^(?:INFO|WARNING|ERROR):tensorflow:(.*)$|^[IWE]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] (.*)$")
STEP = re.compile(r"\b(?:global[ _]step|step)\b\s*[=:]?\s*(\d+)", re.IGNORECASE)
# NumPy 2 prints np.float32(0.5) where NumPy 1 (TF 1.15's) printed 0.5
NUMPY_SCALAR = re.compile(r"\bnp\.(?:float|int|uint|bool_|complex)\w*\(([^()]*)\)")
# TF 1.x printed a shape's unknown dimension as ? (`(?, 1)`), TF 2 prints None
UNKNOWN_DIM = re.compile(r"(?<=[(\[,\s])\?(?=\s*[,)\]])")


_BRACKET_SPACE = re.compile(r"(?<=[\[(]) | (?=[\]),])")
_CLEANERS = (NUMPY_SCALAR, UNKNOWN_DIM, REPR, STAMP, TIMING_KEY, TIMED, PATH)  # clean()'s order
_REPLACEMENTS = (r"\1", "None", "<obj>", "<time>",
                 lambda m: NUMBER.sub("<t>", m.group(0)),  # before paths: ms/step
                 "<t>", "<path>")


KEPT_LINES = 2000  # lines that agree, kept in a report for each stream
KEPT_DIFFERENT = 2000  # lines that differ, likewise
DIFFLIB_MOST = 1_000_000  # the product of the two middles' lengths difflib still aligns


@dataclass(slots=True)
class Record:
    """One printed line: where it was (1-based), what it said, its numbers."""
    line: int
    text: str
    template: str
    numbers: List[float]
    step: Optional[int] = None

    @property
    def key(self) -> str:
        return self.template if self.step is None else f"{self.template} @step {self.step}"


_DIGITS_AS_ZERO = str.maketrans("123456789", "000000000")
_SKELETONS: Dict[str, Tuple[bool, ...]] = {}  # a line with its digits made 0 -> which patterns match it


def _patterns(text: str, skeleton: Optional[str] = None) -> Tuple[bool, ...]:
    """Which of clean()'s patterns can change ``text``. Lines that differ only in their
    digits give the same answer (no pattern tells one digit from another, and one that does
    not match the line with every digit 0 does not match it with any digits), so it is
    asked once per skeleton: a training log's lines mostly share a few."""
    skeleton = text.translate(_DIGITS_AS_ZERO) if skeleton is None else skeleton
    found = _SKELETONS.get(skeleton)
    if found is None:
        found = tuple(p.search(skeleton) is not None for p in _CLEANERS)
        if len(_SKELETONS) > 50_000:
            _SKELETONS.clear()
        _SKELETONS[skeleton] = found
    return found


def clean(text: str) -> str:
    """The part of a line that is the program's result (see the module's docstring)."""
    if "\r" in text:
        text = [part for part in text.split("\r") if part.strip()][-1:] or [""]
        text = text[0]
    changed = False  # once a pattern changed the line, the later ones are all tried
    for pattern, replace, can in zip(_CLEANERS, _REPLACEMENTS, _patterns(text)):
        if can or changed:
            new = pattern.sub(replace, text)
            changed, text = changed or new != text, new
    return text


_TEMPLATES: Dict[str, str] = {}  # skeleton -> template, for lines clean() leaves as they are
# whose digits are all in their numbers: every line of that skeleton has that template


def record(number: int, raw: str) -> Optional[Record]:
    """A Record for a line with numbers worth comparing, else None."""
    skeleton = raw.translate(_DIGITS_AS_ZERO)
    template = _TEMPLATES.get(skeleton)
    if template is not None:  # a line like one seen before: only its numbers are read
        return Record(number, raw.rstrip(), template, [float(v) for v in NUMBER.findall(raw)])
    found = _record(number, raw)
    if found is not None and "\r" not in raw and not any(_patterns(raw, skeleton)) and not any(
            c.isdigit() for c in found.template):
        if len(_TEMPLATES) > 50_000:
            _TEMPLATES.clear()
        _TEMPLATES[skeleton] = found.template
    return found


def _record(number: int, raw: str) -> Optional[Record]:
    text = clean(raw)
    found = list(NUMBER.finditer(text))
    if not found:
        return None
    values = []
    for match in found:
        try:
            values.append(float(match.group(0)))
        except ValueError:
            return None
    template = NUMBER.sub("#", text).strip()
    # numpy pads an array's numbers to the widest one (`[[0.2305116 ]` beside `[[0.23051164]`)
    # and may switch to exponents (`[-2224343. ]`, `[-2.2243430e+06]`) by the last digits of
    # other elements: spaces inside brackets and before commas are layout, not text
    template = sys.intern(_BRACKET_SPACE.sub("", re.sub(r"\s+", " ", template)))
    return Record(number, raw.rstrip(), template, values)


def read_lines(path: str) -> Iterator[str]:
    """The lines of a run's output file, one at a time, as ``str.splitlines`` splits them."""
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        for chunk in handle:
            yield from chunk.splitlines()


Lines = Union[str, Iterable[str]]  # printed text, or its lines (read_lines)


def _lines(source: Lines) -> Iterable[str]:
    return source.splitlines() if isinstance(source, str) else source


def stdout_records(source: Lines) -> List[Record]:
    out = []
    for number, raw in enumerate(_lines(source), 1):
        rec = record(number, raw)
        if rec is not None:
            out.append(rec)
    return out


def log_records(source: Lines) -> List[Record]:
    """TensorFlow's log lines that name a step, keyed by it (Estimator's ``loss = ...,
    step = ...``, evaluation results, LoggingTensorHook lines with a step)."""
    out = []
    for number, raw in enumerate(_lines(source), 1):
        match = LOG.match(raw.strip())
        if not match:
            continue
        message = match.group(1) if match.group(1) is not None else match.group(2)
        step = STEP.search(clean(message))
        if step is None:
            continue
        rec = record(number, message)
        if rec is None or len(rec.numbers) < 2:  # a step and nothing else: not a result
            continue
        rec.step = int(step.group(1))
        out.append(rec)
    return out


@dataclass
class Difference:
    """Where two values differ: which, by how much, and why it failed."""
    index: int
    want: float
    got: float
    abs: float
    rel: float


@dataclass
class Pair:
    """A TF1 record, the migrated one aligned with it (None: not printed), the verdict."""
    want: Record
    got: Optional[Record]
    ok: bool
    max_abs: float = 0.0
    max_rel: float = 0.0
    first: Optional[Difference] = None
    problem: str = ""
    unstable: bool = False  # TF1 itself printed other values here on a repeat run


@dataclass
class Kind:
    """Every line of one template in a stream, summed up (the report keeps only some lines)."""
    template: str
    lines: int = 0
    numbers: int = 0
    different: int = 0
    first_different: Optional[Pair] = None
    max_abs: float = 0.0
    max_rel: float = 0.0
    unstable: bool = False


@dataclass
class Stream:
    name: str
    pairs: List[Pair] = field(default_factory=list)  # every differing line, the first agreeing
    extra: List[Record] = field(default_factory=list)  # printed only by the migrated run (first ones)
    kinds: Dict[str, Kind] = field(default_factory=dict)
    compared: int = 0
    different: int = 0
    extra_count: int = 0
    kept_ok: int = 0

    @property
    def ok(self) -> bool:
        return self.different == 0

    def add(self, pair: Pair) -> None:
        self.compared += 1
        kind = self.kinds.get(pair.want.template)
        if kind is None:
            kind = self.kinds[pair.want.template] = Kind(pair.want.template)
        kind.lines += 1
        kind.numbers += len(pair.want.numbers)
        kind.max_abs, kind.max_rel = max(kind.max_abs, pair.max_abs), max(kind.max_rel, pair.max_rel)
        kind.unstable = kind.unstable or pair.unstable
        if not pair.ok:
            self.different += 1
            kind.different += 1
            if kind.first_different is None:
                kind.first_different = pair
        if pair.ok and self.kept_ok < KEPT_LINES:
            self.kept_ok += 1
            self.pairs.append(pair)
        elif not pair.ok and self.different <= KEPT_DIFFERENT:
            self.pairs.append(pair)

    def add_extra(self, record: Record) -> None:
        self.extra_count += 1
        if len(self.extra) < KEPT_LINES:
            self.extra.append(record)


def close(a: float, b: float, rtol: float, atol: float, slack: float = 0.0) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * abs(a) + slack


def compare_record(want: Record, got: Record, rtol: float, atol: float,
                   spread: Sequence[float] = ()) -> Pair:
    pair = Pair(want, got, True)
    if want.template != got.template:
        pair.ok, pair.problem = False, f"the text differs: {got.text.strip()[:120]!r}"
        return pair
    if want.numbers == got.numbers and not any(spread):  # the same numbers (never NaN: NaN != NaN)
        return pair
    if len(want.numbers) != len(got.numbers):
        pair.ok, pair.problem = False, f"{len(got.numbers)} numbers, TF1 printed {len(want.numbers)}"
        return pair
    for i, (a, b) in enumerate(zip(want.numbers, got.numbers)):
        diff = abs(a - b) if not (math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b)) else (
            0.0 if (a == b or (math.isnan(a) and math.isnan(b))) else math.inf)
        rel = diff / max(abs(a), 1e-12) if diff else 0.0
        pair.max_abs, pair.max_rel = max(pair.max_abs, diff), max(pair.max_rel, rel)
        slack = spread[i] if i < len(spread) else 0.0
        if slack:
            pair.unstable = True
        if not close(a, b, rtol, atol, slack) and pair.first is None:
            pair.ok = False
            pair.first = Difference(i, a, b, diff, rel)
    return pair


def align(want: List[Record], got: List[Record]) -> List[Tuple[Optional[Record], Optional[Record]]]:
    """Pairs of records, in order, matched on their keys; None where one side has none.
    Linear but for a small changed middle (see the module's docstring)."""
    keyed_a, keyed_b = [r.key for r in want], [r.key for r in got]
    if keyed_a == keyed_b:
        return list(zip(want, got))
    start = 0
    while start < min(len(keyed_a), len(keyed_b)) and keyed_a[start] == keyed_b[start]:
        start += 1
    end = 0
    while (end < min(len(keyed_a), len(keyed_b)) - start
           and keyed_a[len(keyed_a) - 1 - end] == keyed_b[len(keyed_b) - 1 - end]):
        end += 1
    pairs: List[Tuple[Optional[Record], Optional[Record]]] = list(zip(want[:start], got[:start]))
    mid_a, mid_b = want[start:len(want) - end], got[start:len(got) - end]
    if len(mid_a) * len(mid_b) <= DIFFLIB_MOST:
        pairs.extend(_difflib(mid_a, mid_b))
    else:
        pairs.extend(_by_occurrence(mid_a, mid_b))
    pairs.extend(zip(want[len(want) - end:], got[len(got) - end:]))
    return pairs


def _difflib(want: List[Record], got: List[Record]) -> List[Tuple[Optional[Record], Optional[Record]]]:
    matcher = difflib.SequenceMatcher(None, [r.key for r in want], [r.key for r in got], autojunk=False)
    pairs: List[Tuple[Optional[Record], Optional[Record]]] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal" or (op == "replace" and a1 - a0 == b1 - b0):
            pairs.extend(zip(want[a0:a1], got[b0:b1]))
        else:
            pairs.extend((r, None) for r in want[a0:a1])
            pairs.extend((None, r) for r in got[b0:b1])
    return pairs


def _by_occurrence(want: List[Record], got: List[Record]) -> List[Tuple[Optional[Record], Optional[Record]]]:
    """The n-th record of each key on one side with the n-th of the same key on the other,
    in TF1's order; the migrated run's records left over come last."""
    queues: Dict[str, List[Record]] = {}
    for r in reversed(got):
        queues.setdefault(r.key, []).append(r)
    pairs: List[Tuple[Optional[Record], Optional[Record]]] = []
    for r in want:
        queue = queues.get(r.key)
        pairs.append((r, queue.pop() if queue else None))
    leftover = {id(r) for queue in queues.values() for r in queue}
    pairs.extend((None, r) for r in got if id(r) in leftover)
    return pairs


def spreads(runs: List[List[Record]]) -> Dict[int, List[float]]:
    """For each record of the first TF1 run (by its index), how far the repeat runs'
    values strayed from it, position by position: TF1's own non-determinism."""
    out: Dict[int, List[float]] = {}
    if len(runs) < 2:
        return out
    index = {id(r): i for i, r in enumerate(runs[0])}
    for other in runs[1:]:
        for a, b in align(runs[0], other):
            if a is None:
                continue
            i = index[id(a)]
            if b is None or len(b.numbers) != len(a.numbers):
                continue
            spread = out.setdefault(i, [0.0] * len(a.numbers))
            for j, (x, y) in enumerate(zip(a.numbers, b.numbers)):
                if not (math.isnan(x) or math.isnan(y)):
                    spread[j] = max(spread[j], abs(x - y))
    return {i: s for i, s in out.items() if any(s)}


def widened(spread: Dict[int, List[float]], other: Dict[int, List[float]],
            factor: float) -> Dict[int, List[float]]:
    """Two spreads by record, position by position the larger, ``other``'s times ``factor``
    (a record's spreads have its number of numbers: ``spreads`` keeps no other)."""
    out = dict(spread)
    for i, values in other.items():
        out[i] = [max(a, factor * b) for a, b in zip(out.get(i, [0.0] * len(values)), values)]
    return out


def compare(name: str, want: List[Record], got: List[Record], rtol: float, atol: float,
            unstable: Optional[Dict[int, List[float]]] = None) -> Stream:
    stream = Stream(name)
    index = {id(r): i for i, r in enumerate(want)} if unstable else {}
    for a, b in align(want, got):
        if a is None:
            stream.add_extra(b)
        elif b is None:
            stream.add(Pair(a, None, False, problem="not printed by the migrated run"))
        else:
            stream.add(compare_record(a, b, rtol, atol, (unstable or {}).get(index.get(id(a)), ())))
    return stream
