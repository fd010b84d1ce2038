"""The finding record every layer after the engine passes on (no heavy imports: the
runner, the cache and the report formats use it without loading libcst)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True, slots=True)
class Reported:
    """A finding as the engine reports it, from the engine to the printed report: plain
    data (it crosses process boundaries and the cache), positions 1-based. ``cell`` and
    ``file_line`` are set for a notebook: the cell (1-based) and the line of the .ipynb
    file the finding's line sits on."""

    line: int
    column: int
    code: str
    message: str
    fixable: bool
    cell: Optional[int] = None
    file_line: Optional[int] = None

    @property
    def is_error(self) -> bool:
        """The code fails on TF2 as it stands, or means two things there."""
        return self.message.startswith("error:")

    def to_json(self) -> dict:
        data = {"line": self.line, "column": self.column, "code": self.code,
                "message": self.message, "fixable": self.fixable}
        if self.cell is not None:
            data["cell"] = self.cell
            if self.file_line is not None:
                data["file_line"] = self.file_line
        return data

    @classmethod
    def from_json(cls, data) -> "Reported":
        """The inverse of ``to_json``; ValueError for anything else (a damaged cache entry)."""
        if not isinstance(data, dict):
            raise ValueError("a finding is an object")
        ints = ("line", "column") + tuple(k for k in ("cell", "file_line") if k in data)
        if not all(type(data.get(k)) is int for k in ints) or not isinstance(data.get("code"), str) \
                or not isinstance(data.get("message"), str) or type(data.get("fixable")) is not bool \
                or set(data) - {"line", "column", "code", "message", "fixable", "cell", "file_line"}:
            raise ValueError(f"not a finding: {data!r:.80}")
        return cls(**data)
