"""tf.contrib.training: HParams (the rest of contrib.training was input queues: use tf.data)."""
from __future__ import annotations

import json
import re

__all__ = ["HParams"]


class HParams:
    """tf.contrib.training.HParams: named hyperparameters with typed overrides."""

    _TOKEN = re.compile(r"(?P<name>[a-zA-Z][\w\.]*)\s*=\s*"
                        r"((?P<val>[^,\[]*)|\[(?P<vals>[^\]]*)\])($|,\s*)")

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        self._hparam_types = {}
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        if getattr(self, name, None) is not None:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        kind, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, kind, v) for v in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast(name, kind, value))

    def del_hparam(self, name):
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        for match_values in self._split(values):
            name, raw = match_values
            kind, is_list = self._hparam_types.get(name, (None, False))
            if kind is None:
                raise ValueError(f"Unknown hyperparameter type for {name}")
            if is_list:
                self.set_hparam(name, [_parse_scalar(name, kind, v) for v in raw])
            else:
                self.set_hparam(name, _parse_scalar(name, kind, raw))
        return self

    def _split(self, values):
        pos = 0
        out = []
        values = values or ""
        while pos < len(values):
            match = self._TOKEN.match(values, pos)
            if not match:
                raise ValueError(f"Malformed hyperparameter value: {values[pos:]}")
            pos = match.end()
            if match.group("vals") is not None:
                items = [v.strip() for v in match.group("vals").split(",") if v.strip()]
                out.append((match.group("name"), items))
            else:
                out.append((match.group("name"), match.group("val").strip()))
        return out

    def override_from_dict(self, values_dict):
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def values(self):
        return {n: getattr(self, n) for n in self._hparam_types}

    def get(self, key, default=None):
        return getattr(self, key) if key in self._hparam_types else default

    def to_json(self, indent=None, separators=None, sort_keys=False):
        return json.dumps(self.values(), indent=indent, separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json):
        return self.override_from_dict(json.loads(values_json))

    def __contains__(self, key):
        return key in self._hparam_types

    def __repr__(self):
        return f"HParams({sorted(self.values().items())!r})"


def _cast(name, kind, value):
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise ValueError(f"Could not cast {value!r} to bool for parameter {name}")
    if kind is int and isinstance(value, float):
        if value != int(value):
            raise ValueError(f"Could not cast {value!r} to int for parameter {name}")
        return int(value)
    if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, kind):
        return value
    raise ValueError(f"Could not cast {value!r} to {kind.__name__} for parameter {name}")


def _parse_scalar(name, kind, text):
    if kind is bool:
        lowered = text.lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
        raise ValueError(f"Could not parse {text!r} as bool for parameter {name}")
    if kind is str:
        return text.strip("'\"")
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"Could not parse {text!r} as {kind.__name__} for parameter {name}") from None
