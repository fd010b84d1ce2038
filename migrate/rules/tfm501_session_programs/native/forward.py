"""The computation several steps share, written once: the program's forward pass.

TF1 built the model once and every run computed the part of it its fetches needed; the
native form gives each kind of run its own step, so a model read by training, the loss
printout and the accuracy would be written out in each of them. As a TF2 developer writes
it, the shared statements become one plain function (``def forward(X, keep_prob): ...
return hypothesis``) that each step calls where the first of them stood.

Pure: steps in, a :class:`~.model.Forward` or None out. The shared statements are those
the most steps share (a loss shared by fewer stays in the steps that compute it), two
statements at least (one shared line reads better where it is used); written only when
it changes no meaning: they read nothing those steps compute apart from them
(placeholders and the state only), and no other statement of those steps binds a name
they bind or read.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from .model import Forward, Item, Step
from .syntax import _names_read


def share(steps: Sequence[Step], placeholders: Sequence[str]) -> Optional[Forward]:
    """The forward pass the steps share, else None."""
    users: Dict[int, List[int]] = {}
    for at, step in enumerate(steps):
        for computed in step.computed:
            users.setdefault(id(computed), []).append(at)
    by_steps = {key: tuple(at) for key, at in users.items() if len(at) > 1}
    if not by_steps:
        return None
    # the model: what the most steps share (the loss, shared by fewer, follows it in each)
    widest = max(by_steps.values(), key=len)
    shared = {key for key, at in by_steps.items() if at == widest}
    sharing = [steps[at] for at in widest]
    group = [c for c in sharing[0].computed if id(c) in shared]
    if len(group) < 2:
        return None  # one shared line reads better where it is used
    binds = {name for c in group for name in c.binds}
    reads = {name for c in group for name in c.reads}
    outputs: List[str] = []
    for step in sharing:
        rest = [c for c in step.computed if id(c) not in shared]
        if any(set(c.binds) & (binds | reads) for c in rest):
            return None  # another statement of the step rebinds what the shared ones use
        among = [at for at, c in enumerate(step.computed) if id(c) in shared]
        if any(not c.binds for c in step.computed[among[0]:among[-1]] if id(c) not in shared):
            return None  # a print among them (``traced``) would see the values after all of them
        later = [name for c in rest for name in c.reads] + _read_by(step.returns) + [
            t.loss for t in step.trainings] + [name for s in step.summaries for name in s.reads]
        outputs += [name for name in dict.fromkeys(later) if name in binds and name not in outputs]
    if not outputs:
        return None
    params = tuple(p for p in placeholders if p in reads)
    ordered = sorted(outputs, key=lambda name: max(at for at, c in enumerate(group) if name in c.binds))
    return Forward(params=params, computed=tuple(group), outputs=tuple(ordered))


def _read_by(items: Sequence[Item]) -> List[str]:
    return [name for item in items for name in ((item,) if isinstance(item, str) else _names_read(item))]
