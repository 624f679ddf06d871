"""JSON encoding of attribute names, attribute values and class labels.

Names and values are what users put in their records: ``str``, ``int`` and ``bool`` map to JSON
natively and keep their type; tuples (river's n-gram features are tuples of words) are tagged.
numpy scalars are normalised to the Python type first, so ``np.bool_(True)`` and ``True`` are one
category.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = ["decode", "encode", "from_json_value", "normalize_label",
           "normalize_name", "to_json_value", "unencodable", "unencodable_reason"]

Key = str | int | bool | tuple


def normalize_name(name: Any) -> Key:
    """Return ``name`` as a plain Python str/int/bool/tuple, or raise ``TypeError``."""
    if isinstance(name, str | bool | int) and not isinstance(name, np.generic):
        return name
    if isinstance(name, np.bool_):
        return bool(name)
    if isinstance(name, np.integer):
        return int(name)
    if isinstance(name, np.str_):
        return str(name)
    if isinstance(name, tuple):
        return tuple(normalize_name(part) for part in name)
    raise TypeError(f"feature names must be str, int, bool or tuples of them, got {type(name)!r}")


def unencodable(value: Any) -> bool:
    """Whether ``value`` is a str, or a tuple holding one, that UTF-8 cannot encode: a lone
    surrogate (JSON's ``"\\ud800"`` escape and Python allow one), which a state file, a metric
    label or an output message cannot hold."""
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    return isinstance(value, tuple) and any(map(unencodable, value))


def unencodable_reason(what: str, value: Any) -> str:
    """Why an :func:`unencodable` name, value, token or label is refused."""
    return (f"{what} {value!r} holds a lone surrogate (a \\ud800-\\udfff escape with no "
            "pair), which UTF-8, and so a state file, cannot hold")


def normalize_label(label: Any) -> str | int | bool:
    """Return a class label as str/int/bool; NaN, None, floats and containers are rejected."""
    if label is None:
        raise ValueError("the label is None; a labelled record needs a class")
    if isinstance(label, bool | np.bool_):
        return bool(label)
    if isinstance(label, str | np.str_):
        label = str(label)
        if unencodable(label):
            raise ValueError(unencodable_reason("label", label))
        return label
    if isinstance(label, numbers.Integral):
        return int(label)
    if isinstance(label, numbers.Real):
        if math.isnan(float(label)):
            raise ValueError("the label is NaN; a labelled record needs a class")
        if float(label).is_integer():
            return int(label)
        raise ValueError(f"the label {label!r} is a non-integral float; classes are categories")
    raise TypeError(f"labels must be str, int or bool, got {type(label).__name__} {label!r}")


def encode(value: Key) -> Any:
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    return value


def decode(value: Any, what: str = "name") -> Key:
    """A name, value or label as :func:`encode` stored it in a state. A str UTF-8 cannot
    encode, which a JSON parser may give for a ``"\\ud800"`` escape, is refused (ValueError
    saying it is ``what``), as where records register one: the state could not be saved
    again."""
    if isinstance(value, dict):
        return tuple(decode(v, what) for v in value["tuple"])
    if isinstance(value, str) and unencodable(value):
        raise ValueError(f"the state's {unencodable_reason(what, value)}")
    return value


def to_json_value(value: Any) -> Any:
    """Nested parameters → JSON, keeping tuples and non-string mapping keys (tagged)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, tuple):
        return {"tuple": [to_json_value(v) for v in value]}
    if isinstance(value, list | set | frozenset):
        items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
        return [to_json_value(v) for v in items]
    if isinstance(value, dict):
        return {"map": [[to_json_value(k), to_json_value(v)] for k, v in value.items()]}
    raise TypeError(f"cannot store a {type(value).__name__} in a state file")


def from_json_value(value: Any, what: str = "value") -> Any:
    """What :func:`to_json_value` stored, its strs checked as :func:`decode` checks them."""
    if isinstance(value, list):
        return [from_json_value(v, what) for v in value]
    if isinstance(value, dict):
        if "tuple" in value:
            return tuple(from_json_value(v, what) for v in value["tuple"])
        if "map" in value:
            return {from_json_value(k, what): from_json_value(v, what) for k, v in value["map"]}
        raise ValueError(f"unknown tagged value {value!r}")
    return decode(value, what)
