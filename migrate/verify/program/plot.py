"""``verify --program --plot FILE``: both runs' trajectories, one panel per printed series.

A *series* is what a program prints again and again: one number position of a line
template printed on several lines (``step #, loss #`` gives ``loss`` over the steps), or
one line with many numbers (``LOSSES 0.69 0.67 ...``). Counters (a position whose values
only count up by one or are the same everywhere) are the x axis, not a series.

SVG and HTML are written without any dependency; PNG needs matplotlib.

Imports inside functions: matplotlib is optional (only .png needs it).
"""
from __future__ import annotations

import html
import math
import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

from migrate.verify.program.lines import Record

Series = Tuple[str, List[float], List[Optional[float]]]  # label, TF1 values, migrated values


def _label(template: str, position: int) -> str:
    """The word printed before the ``position``-th number of a template."""
    parts = template.split("#")
    before = re.findall(r"[A-Za-z_][\w/]*", parts[position]) if position < len(parts) else []
    word = before[-1] if before else f"value {position + 1}"
    head = re.findall(r"[A-Za-z_][\w/]*", parts[0])
    return word if not head or head[0] == word else f"{head[0]}: {word}"


def _counter(values: Sequence[float]) -> bool:
    """The same everywhere, or whole numbers counting up by a fixed step (steps, epochs)."""
    if len(set(values)) <= 1:
        return True
    steps = {b - a for a, b in zip(values, values[1:])}
    return len(steps) == 1 and steps.pop() > 0 and all(float(v).is_integer() for v in values)


def series(pairs: List[Tuple[Record, Optional[Record]]], most: int = 8) -> List[Series]:
    """The series in what the TF1 run printed, each with the migrated run's values where
    its lines were aligned (None where it printed none)."""
    by_template: Dict[str, List[Tuple[Record, Optional[Record]]]] = {}
    for want, got in pairs:
        by_template.setdefault(want.template, []).append((want, got))
    out: List[Series] = []
    for template, rows in by_template.items():
        if len(rows) == 1:
            want, got = rows[0]
            if len(want.numbers) >= 5:
                other = list(got.numbers) if got is not None and len(got.numbers) == len(want.numbers) else \
                    [None] * len(want.numbers)
                out.append((_label(template, 0), list(want.numbers), other))
            continue
        width = min(len(w.numbers) for w, _ in rows)
        for position in range(width):
            values = [w.numbers[position] for w, _ in rows]
            if _counter(values):
                continue
            other = [g.numbers[position] if g is not None and len(g.numbers) > position else None
                     for _, g in rows]
            out.append((_label(template, position), values, other))
    return out[:most]


def _svg(all_series: List[Series], title: str) -> str:
    cols = 2 if len(all_series) > 1 else 1
    rows = math.ceil(len(all_series) / cols) or 1
    pw, ph, pad = 420, 240, 48
    width, height = cols * pw, rows * ph + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="18" font-size="13">{html.escape(title)}</text>',
           f'<line x1="{width - 250}" y1="14" x2="{width - 225}" y2="14" stroke="#1f77b4" stroke-width="2"/>'
           f'<text x="{width - 220}" y="18">TF1</text>'
           f'<line x1="{width - 180}" y1="14" x2="{width - 155}" y2="14" stroke="#d62728" '
           f'stroke-width="2" stroke-dasharray="5,3"/><text x="{width - 150}" y="18">migrated</text>']
    if not all_series:
        out.append('<text x="10" y="40">no series: the TF1 run printed no repeated numbers</text>')
    for k, (label, want, got) in enumerate(all_series):
        x0, y0 = (k % cols) * pw + pad, 40 + (k // cols) * ph + 14
        w, h = pw - pad - 16, ph - 50
        values = [v for v in list(want) + [g for g in got if g is not None] if math.isfinite(v)]
        lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
        if hi == lo:
            lo, hi = lo - 0.5, hi + 0.5
        n = max(len(want) - 1, 1)

        def point(i: int, v: float) -> str:
            return f"{x0 + w * i / n:.1f},{y0 + h - h * (v - lo) / (hi - lo):.1f}"

        out.append(f'<text x="{x0}" y="{y0 - 4}">{html.escape(label)}</text>')
        out.append(f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#999"/>')
        out.append(f'<text x="{x0 - 4}" y="{y0 + 10}" text-anchor="end">{hi:.4g}</text>')
        out.append(f'<text x="{x0 - 4}" y="{y0 + h}" text-anchor="end">{lo:.4g}</text>')
        out.append(f'<text x="{x0 + w}" y="{y0 + h + 14}" text-anchor="end">{len(want)} values</text>')
        tf1 = " ".join(point(i, v) for i, v in enumerate(want) if math.isfinite(v))
        out.append(f'<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{tf1}"/>')
        tf2 = " ".join(point(i, v) for i, v in enumerate(got) if v is not None and math.isfinite(v))
        out.append(f'<polyline fill="none" stroke="#d62728" stroke-width="1.5" '
                   f'stroke-dasharray="5,3" points="{tf2}"/>')
    out.append("</svg>")
    return "\n".join(out)


def write(path: str, all_series: List[Series], title: str) -> None:
    """Writes the picture; the format follows the file's extension (.svg, .html, .png)."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".png":
        _png(path, all_series, title)
        return
    svg = _svg(all_series, title)
    text = svg if ext == ".svg" else (f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}"
                                      f"</title><body>{svg}</body>")
    tmp = path + ".tf-migrate.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text + "\n")
    os.replace(tmp, path)


def _png(path: str, all_series: List[Series], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = 2 if len(all_series) > 1 else 1
    rows = max(1, math.ceil(len(all_series) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5.5 * cols, 3 * rows), squeeze=False)
    for ax, (label, want, got) in zip(axes.flat, all_series):
        ax.plot(range(len(want)), want, label="TF1", color="#1f77b4", linewidth=2)
        ax.plot([i for i, v in enumerate(got) if v is not None], [v for v in got if v is not None],
                "--", label="migrated", color="#d62728")
        ax.set_title(label, fontsize=9)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(all_series):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    tmp = path + ".tf-migrate.tmp.png"
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    os.replace(tmp, path)
