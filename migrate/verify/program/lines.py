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

Records are aligned on their templates (``difflib``), so a line one run printed and the
other did not is named, and the rest still line up.
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

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


@dataclass
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


def clean(text: str) -> str:
    """The part of a line that is the program's result (see the module's docstring)."""
    if "\r" in text:
        text = [part for part in text.split("\r") if part.strip()][-1:] or [""]
        text = text[0]
    text = NUMPY_SCALAR.sub(r"\1", text)
    text = UNKNOWN_DIM.sub("None", text)
    text = REPR.sub("<obj>", text)
    text = STAMP.sub("<time>", text)
    text = TIMING_KEY.sub(lambda m: NUMBER.sub("<t>", m.group(0)), text)  # before paths: ms/step
    text = TIMED.sub("<t>", text)
    text = PATH.sub("<path>", text)
    return text


def record(number: int, raw: str) -> Optional[Record]:
    """A Record for a line with numbers worth comparing, else None."""
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
    template = _BRACKET_SPACE.sub("", re.sub(r"\s+", " ", template))
    return Record(number, raw.rstrip(), template, values)


def stdout_records(text: str) -> List[Record]:
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        rec = record(number, raw)
        if rec is not None:
            out.append(rec)
    return out


def log_records(text: str) -> List[Record]:
    """TensorFlow's log lines that name a step, keyed by it (Estimator's ``loss = ...,
    step = ...``, evaluation results, LoggingTensorHook lines with a step)."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
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
class Stream:
    name: str
    pairs: List[Pair] = field(default_factory=list)
    extra: List[Record] = field(default_factory=list)  # printed only by the migrated run

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.pairs)


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
    """Pairs of records, in order, matched on their keys; None where one side has none."""
    keyed_a, keyed_b = [r.key for r in want], [r.key for r in got]
    matcher = difflib.SequenceMatcher(None, keyed_a, keyed_b, autojunk=False)
    pairs: List[Tuple[Optional[Record], Optional[Record]]] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal" or (op == "replace" and a1 - a0 == b1 - b0):
            pairs.extend(zip(want[a0:a1], got[b0:b1]))
        else:
            pairs.extend((r, None) for r in want[a0:a1])
            pairs.extend((None, r) for r in got[b0:b1])
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


def compare(name: str, want: List[Record], got: List[Record], rtol: float, atol: float,
            unstable: Optional[Dict[int, List[float]]] = None) -> Stream:
    stream = Stream(name)
    index = {id(r): i for i, r in enumerate(want)}
    for a, b in align(want, got):
        if a is None:
            stream.extra.append(b)
        elif b is None:
            stream.pairs.append(Pair(a, None, False, problem="not printed by the migrated run"))
        else:
            stream.pairs.append(compare_record(a, b, rtol, atol, (unstable or {}).get(index[id(a)], ())))
    return stream
