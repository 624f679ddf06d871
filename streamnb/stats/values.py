"""The attribute kinds and their value rules: what a value means for an attribute of each kind.

Every encoder of records reads these (:meth:`Schema.encode <streamnb.stats.Schema.encode>`, the
DataFrame encoder of :mod:`streamnb.stats.frames`, the candidate rows of
:mod:`streamnb.stats.pairs` that TAN and AODE read, mode imputation), so a rule is written
once. The C kernels of :mod:`streamnb._accel` apply the token rule to dicts of messages; their
Python twins are tested against them.

- **missing** (:func:`is_missing`): None or a float NaN, whatever the kind; an absent key is
  missing too, except for a token, where it means *absent*.
- **nominal** (``str`` values, or any attribute declared nominal): :func:`nominal_value`.
- **token** (``bool`` / ``int`` values: presence, or a count from river's ``BagOfWords``):
  :func:`token_present`, present iff non-zero.
- **numeric** (``float``): :func:`numeric_value`, at most :data:`NUMERIC_LIMIT` in magnitude.
- **text** (a bag of tokens: ``{token: count}``, a list/tuple, or a set): :func:`text_draws`.

A state holds only what its file can: a name, nominal value, text token or label that is a str
UTF-8 cannot encode (a lone surrogate, which JSON's ``"\\ud800"`` escape and Python accept) is
refused where it would be registered (:func:`refuse_unencodable`), once per new value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

# drawn_once: whether a text value draws each token once (a set or frozenset of str, or a dict
# of str to True), the shape text_draws reads as a count of 1 per token, told in one C pass
from streamnb._accel.kernels import drawn_once
from streamnb.stats.codec import unencodable, unencodable_reason

__all__ = ["BAGS", "KINDS", "MISSING", "NOMINAL", "NUMERIC", "NUMERIC_LIMIT", "TEXT", "TOKEN",
           "TOKEN_TYPES", "UNNAMED", "InvalidRecord", "RecordName", "drawn_once", "is_missing",
           "kind_of", "named", "nominal_value", "numeric_out_of_range", "numeric_value",
           "refuse_unencodable", "text_draws", "token_present"]

#: The attribute kinds; compare a schema's ``kinds`` with these names, never with integers.
NOMINAL, TOKEN, NUMERIC, TEXT = 0, 1, 2, 3
#: Each kind's name (``KINDS[TOKEN] == "token"``), as saved states and messages spell it.
KINDS = ("nominal", "token", "numeric", "text")
#: What :func:`nominal_value` and :func:`numeric_value` return for a missing value.
MISSING = object()
#: Values that make a new attribute a token: presence (bool) or a count (int).
TOKEN_TYPES = (bool, int, np.bool_, np.integer)
#: Values that make a new attribute text: bags of tokens.
BAGS = (Mapping, list, tuple, set, frozenset)
#: The largest magnitude of a numeric value. The models' statistics raise values to the second
#: power (a Gaussian's variance, divided into squared deviations when predicting) and the fourth
#: (the covariance shrinkage of the continuous models) and sum them over the records: from about
#: 1.3e154 on a square, from 1.2e77 on a fourth power is infinite, and every probability after
#: it NaN. At 1e64 a fourth power times 10^50 records stays finite.
NUMERIC_LIMIT = 1e64


class RecordName(str):
    """How errors name a record ("row 17", "record 9"), carrying the record's index in its
    batch as ``row`` (None outside a batch) so callers never parse it back out of the text."""

    row: int | None

    def __new__(cls, where: str, row: int | None = None) -> RecordName:
        name = super().__new__(cls, where if row is None else f"{where} {row}")
        name.row = row
        return name


class InvalidRecord(ValueError):
    """A record (or one of its fields) that cannot be learned or classified.

    ``record`` names it for people; ``row`` is its index in the batch being learned or
    predicted (None for a single record); ``field`` the attribute at fault, if one is."""

    def __init__(self, record: str, field: Any, reason: str) -> None:
        self.record = record
        self.row: int | None = getattr(record, "row", None)
        self.field = field
        self.reason = reason
        self.value: Any = None  # the value at fault, when refuse_unencodable raised it
        where = record if field is None else f"{record}, field {field!r}"
        super().__init__(f"{where}: {reason}")


#: The record name of an :class:`InvalidRecord` raised where the record is not known (a
#: registration, which sees new names, not records); :func:`named` gives it the caller's.
UNNAMED = RecordName("a record")


def named(exc: InvalidRecord, record: str) -> InvalidRecord:
    """``exc`` (raised :data:`UNNAMED`) naming ``record``."""
    out = InvalidRecord(record, exc.field, exc.reason)
    out.value = exc.value
    return out


def refuse_unencodable(values: list, field: Any = None, record: str = UNNAMED,
                       what: str = "name") -> None:
    """Raise :class:`InvalidRecord` if one of ``values`` (new names, nominal values, tokens or
    labels about to be registered) is a str, or a tuple holding one, that UTF-8 cannot encode:
    a state file (and a metric label, an output message) cannot hold it. ``field`` is the
    attribute they are values of (None: the values are names, and the bad one is the field);
    the exception's ``value`` is the bad value. One join and one ``isascii`` when the values
    are str (the usual case: their characters are scanned in C, not one by one in Python)."""
    types = set(map(type, values))
    if types <= {str}:
        if not unencodable("".join(values)):
            return
    elif not any(issubclass(t, str | tuple) for t in types):
        return  # ints, bools, floats: nothing to encode
    bad = next((v for v in values if unencodable(v)), None)
    if bad is None:
        return
    exc = InvalidRecord(record, bad if field is None else field, unencodable_reason(what, bad))
    exc.value = bad
    raise exc


def is_missing(value: Any) -> bool:
    """None or NaN: a value that was not observed.

    The rules below test the same inline, inside their type checks (a call per cell would
    cost a fifth of encoding a tabular record)."""
    return value is None or (isinstance(value, float | np.floating) and value != value)


def kind_of(value: Any) -> int | None:
    """Kind implied by a value's type; None for a missing value."""
    if value is None:
        return None
    if isinstance(value, str | np.str_):
        return NOMINAL
    if isinstance(value, TOKEN_TYPES):
        return TOKEN
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else NUMERIC
    if isinstance(value, BAGS):
        return TEXT
    raise TypeError(f"unsupported value type {type(value).__name__} ({value!r}); expected "
                    "str (nominal), bool/int (token presence), float (numeric) or a bag of "
                    "tokens (text: {token: count}, list, tuple or set of str)")


def nominal_value(value: Any, record: str, name: Any) -> Any:
    """A nominal attribute's value as its domain stores it (``MISSING`` for None or NaN);
    integral floats are integer codes that went through a float column."""
    if value is None:
        return MISSING
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return MISSING
        if float(value).is_integer():
            return int(value)
        raise InvalidRecord(record, name, f"float {value!r} for a nominal attribute; "
                            "nominal values are str, int or bool")
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, str | np.str_):
        return str(value)
    if isinstance(value, int | np.integer):
        return int(value)
    raise InvalidRecord(record, name, f"unsupported type {type(value).__name__} for a "
                        "nominal attribute")


def token_present(value: Any, record: str, name: Any) -> bool:
    """Whether a token attribute's value says "present": non-zero (None and NaN: absent)."""
    if value is None:
        return False
    if isinstance(value, TOKEN_TYPES):
        return bool(value)
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return False
        if float(value).is_integer():
            return value != 0
        raise InvalidRecord(record, name, f"non-integral float {value!r} for a token "
                            "attribute (tokens take bool or int counts)")
    raise InvalidRecord(record, name, f"{type(value).__name__} value {value!r} for a token "
                        "attribute (tokens take bool or int counts)")


def numeric_out_of_range(value: Any) -> str:
    """Why a number beyond :data:`NUMERIC_LIMIT` is refused (every numeric encoder's words)."""
    return (f"value {value!r} is out of range: numeric values are at most {NUMERIC_LIMIT:g} "
            "in magnitude (their squares and fourth powers must stay finite)")


def numeric_value(value: Any, record: str, name: Any) -> Any:
    """A numeric attribute's value as a float (``MISSING`` for None or NaN); values beyond
    ±:data:`NUMERIC_LIMIT` (infinities included) and other types are refused."""
    if value is None:
        return MISSING
    if isinstance(value, np.floating):  # (a float32 compared with the limit overflows)
        value = float(value)
    if isinstance(value, int | float | np.integer) and not isinstance(
            value, bool | np.bool_):
        # compared before float(): an int too large for a float is out of range, not an error
        if -NUMERIC_LIMIT <= value <= NUMERIC_LIMIT:
            return float(value)
        if value != value:
            return MISSING
        raise InvalidRecord(record, name, numeric_out_of_range(value))
    raise InvalidRecord(record, name, f"{type(value).__name__} value {value!r} for a numeric "
                        "attribute")


def text_draws(value: Any, record: str, name: Any) -> dict[str, float]:
    """``{token: draws}`` of a text value; empty for a missing one (None, NaN)."""
    if is_missing(value):
        return {}
    if isinstance(value, set | frozenset | list | tuple):
        draws: dict[str, float] = {}
        once = isinstance(value, set | frozenset)
        for token in value:
            if type(token) is not str:
                raise InvalidRecord(record, name, f"{type(token).__name__} token {token!r} "
                                    "in a text attribute (tokens are str)")
            draws[token] = 1.0 if once else draws.get(token, 0.0) + 1.0
        return draws
    if isinstance(value, Mapping):
        draws = {}
        for token, count in value.items():
            if type(token) is not str:
                raise InvalidRecord(record, name, f"{type(token).__name__} token {token!r} "
                                    "in a text attribute (tokens are str)")
            if isinstance(count, float | np.floating) and math.isnan(count):
                continue  # a NaN count: the token is absent (a None count is an error)
            if not isinstance(count, int | float | np.integer | np.floating) or not (
                    0.0 <= count < math.inf):
                raise InvalidRecord(record, name, f"count {count!r} of token {token!r}: "
                                    "counts are finite numbers >= 0")
            if count:
                draws[token] = float(count)
        return draws
    raise InvalidRecord(record, name, f"{type(value).__name__} value {value!r} for a text "
                        "attribute (text takes {token: count}, or a list, tuple or set of "
                        "str tokens)")
