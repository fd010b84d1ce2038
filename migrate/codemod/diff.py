"""Unified diffs that cost about what the rewrite costs, on files of any size.

``difflib.unified_diff`` compares whole files with one SequenceMatcher; on a
50,000-line file whose rewrite touches a line in every few, that took longer than
the rewrite. The migration keeps almost every line where it was, so the lines that
occur exactly once in both texts anchor the comparison (patience diffing): the
anchors in order are found with a longest increasing subsequence, and SequenceMatcher
only compares the short stretches between them. The output is a standard unified
diff (``git apply`` and ``patch`` take it).
"""
from __future__ import annotations

import bisect
import difflib
from typing import Iterator, List, Sequence, Tuple

Op = Tuple[str, int, int, int, int]


def _anchors(a: Sequence[str], b: Sequence[str], a0: int, a1: int, b0: int, b1: int) -> List[Tuple[int, int]]:
    """Pairs (i, j) of lines unique in both ranges, in order in both (their LIS)."""
    count_a, count_b, where_b = {}, {}, {}
    for i in range(a0, a1):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    for j in range(b0, b1):
        count_b[b[j]] = count_b.get(b[j], 0) + 1
        where_b[b[j]] = j
    pairs = [(i, where_b[a[i]]) for i in range(a0, a1)
             if count_a[a[i]] == 1 and count_b.get(a[i]) == 1]
    # longest increasing subsequence of the j's (patience sorting)
    tails: List[int] = []
    tail_at: List[int] = []
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pos = bisect.bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(k)
        else:
            tails[pos] = j
            tail_at[pos] = k
        back[k] = tail_at[pos - 1] if pos else -1
    chain = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        chain.append(pairs[k])
        k = back[k]
    return chain[::-1]


def opcodes(a: Sequence[str], b: Sequence[str]) -> List[Op]:
    """SequenceMatcher-style opcodes from ``a`` to ``b``."""
    ops: List[Op] = []

    def add(tag: str, i1: int, i2: int, j1: int, j2: int) -> None:
        if i1 == i2 and j1 == j2:
            return
        if ops and ops[-1][0] == tag == "equal":
            ops[-1] = ("equal", ops[-1][1], i2, ops[-1][3], j2)
        else:
            ops.append((tag, i1, i2, j1, j2))

    def gap(i0: int, i1: int, j0: int, j1: int) -> None:
        while i0 < i1 and j0 < j1 and a[i0] == b[j0]:  # common head and tail first
            add("equal", i0, i0 + 1, j0, j0 + 1)
            i0, j0 = i0 + 1, j0 + 1
        tail = 0
        while i1 - tail > i0 and j1 - tail > j0 and a[i1 - tail - 1] == b[j1 - tail - 1]:
            tail += 1
        matcher = difflib.SequenceMatcher(None, a[i0:i1 - tail], b[j0:j1 - tail], autojunk=False) \
            if (i1 - i0) * (j1 - j0) <= 4_000_000 else None
        if matcher is None:  # a huge stretch with nothing in common worth finding
            if i1 - tail > i0 or j1 - tail > j0:
                add("replace" if i1 - tail > i0 and j1 - tail > j0 else
                    ("delete" if i1 - tail > i0 else "insert"), i0, i1 - tail, j0, j1 - tail)
        else:
            for tag, x1, x2, y1, y2 in matcher.get_opcodes():
                add(tag, i0 + x1, i0 + x2, j0 + y1, j0 + y2)
        if tail:
            add("equal", i1 - tail, i1, j1 - tail, j1)

    i = j = 0
    for ai, bj in _anchors(a, b, 0, len(a), 0, len(b)):
        gap(i, ai, j, bj)
        add("equal", ai, ai + 1, bj, bj + 1)
        i, j = ai + 1, bj + 1
    gap(i, len(a), j, len(b))
    return ops


def _grouped(ops: List[Op], n: int = 3) -> Iterator[List[Op]]:
    """``SequenceMatcher.get_grouped_opcodes`` for these opcodes."""
    if not ops:
        return
    ops = list(ops)
    if ops[0][0] == "equal":
        tag, i1, i2, j1, j2 = ops[0]
        ops[0] = tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2
    if ops[-1][0] == "equal":
        tag, i1, i2, j1, j2 = ops[-1]
        ops[-1] = tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)
    group: List[Op] = []
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, stop: int) -> str:
    length = stop - start
    first = start + 1 if length else start
    return str(first) if length == 1 else f"{first},{length}"


def unified(a: Sequence[str], b: Sequence[str], fromfile: str, tofile: str, n: int = 3) -> Iterator[str]:
    """The lines of a unified diff of ``a`` to ``b`` (lines with their line ends)."""
    started = False
    for group in _grouped(opcodes(a, b), n):
        if not started:
            started = True
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    yield " " + line
                continue
            if tag in ("replace", "delete"):
                for line in a[i1:i2]:
                    yield "-" + line
            if tag in ("replace", "insert"):
                for line in b[j1:j2]:
                    yield "+" + line
