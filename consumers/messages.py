"""Input messages: bytes → validated records, or the reason they are rejected.

A message is UTF-8 JSON, ``{"id": str, "text": str}`` (a raw RFC-822 e-mail or a short text
such as an SMS, told apart and tokenised by :func:`streamnb.features.tokenize_text` into
``{token: True}``, or with ``token_sets`` into the frozenset of its tokens, which a model that
reads token sets, :class:`~streamnb.SpamFilter`, takes as it is) or
``{"id": str, "features": {name: value}}`` with
values str (nominal), bool/int (token presence or count) or float (numeric, at most
:data:`~streamnb.stats.values.NUMERIC_LIMIT` in magnitude), and an optional ``"label"`` (str,
int or bool; ``null`` means unlabelled). Other keys are ignored. Every string must be valid
Unicode: JSON's lone-surrogate escapes (``"\\ud800"``) are refused, since no state file,
metric label or output message can hold one.

A message that cannot be used is not an error of the service: it gets one of :data:`REASONS`
and goes to the dead-letter topic with its original bytes.

``decode_batch`` decodes each message with msgspec against the message schema (C: parsing and
type checks in one pass; in the running service two to three times faster than ``json`` plus
the checks in Python, which were its largest own cost per message); a message msgspec refuses
is decoded again by :func:`decode_one` (``json`` and Python checks), which alone decides
whether and why it is rejected. So msgspec only ever speeds up what the reference accepts: a
message whose JSON msgspec reads stricter than ``json`` (a repeated key, a float out of range)
still gets the reference's outcome.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import msgspec

from streamnb.features import tokenize_text
from streamnb.stats.values import NUMERIC_LIMIT

__all__ = ["REASONS", "Record", "Rejection", "decode_batch", "decode_one"]

#: Why a message went to the dead-letter topic (the ``streamnb-error`` header and the
#: ``reason`` label of ``streamnb_dead_letters_total``). ``too_many_classes`` is the service's
#: (``--max-classes``), not the decoder's.
REASONS = ("invalid_utf8", "invalid_json", "invalid_schema", "invalid_label", "oversize",
           "invalid_record", "too_many_classes")

_FEATURE_TYPES = frozenset({str, bool, int, float, type(None)})
_LABEL_TYPES = (str, bool, int)


@dataclass(slots=True)
class Record:
    """A valid message: its id, features (a text message's: ``{token: True}`` or its token
    frozenset) and label (``None``: unlabelled)."""

    id: str
    features: dict[str, Any] | frozenset[str]
    label: str | int | bool | None


@dataclass(slots=True)
class Rejection:
    """A message that cannot be used: one of :data:`REASONS` and a human-readable detail."""

    reason: str
    detail: str


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


class _Message(msgspec.Struct):
    """The schema checks msgspec can make while parsing; the rest (one of text and features,
    strings that are valid Unicode) is checked after, as in :func:`_record`."""

    id: Annotated[str, msgspec.Meta(min_length=1)]
    text: str | None = None
    # a number beyond the limit is refused here in C, then by the reference with its reason
    features: Annotated[dict[str, str | bool | int | Annotated[float, msgspec.Meta(
        ge=-NUMERIC_LIMIT, le=NUMERIC_LIMIT)] | None], msgspec.Meta(min_length=1)] | None = None
    label: str | bool | int | None = None


_FAST = msgspec.json.Decoder(_Message).decode


def _parse(value: bytes) -> Any | Rejection:
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection("invalid_utf8", f"not UTF-8: {exc.reason} at byte {exc.start}")
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        return Rejection("invalid_json", f"not JSON: {str(exc)[:200]}")


def _valid_unicode(text: str) -> bool:
    """False for strings with lone surrogates (JSON's \\ud800 escapes), which cannot be
    encoded as UTF-8 keys, metric labels or output."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text_features(text: str, tokenize: Callable[[str], Any], token_sets: bool
                   ) -> dict[str, Any] | frozenset[str]:
    return frozenset(tokenize(text)) if token_sets else dict.fromkeys(tokenize(text), True)


def _record(document: Any, tokenize: Callable[[str], Any], token_sets: bool
            ) -> Record | Rejection:
    if type(document) is not dict:
        return Rejection("invalid_schema", f"expected a JSON object, got {type(document).__name__}")
    id_ = document.get("id")
    if type(id_) is not str or not id_ or not _valid_unicode(id_):
        return Rejection("invalid_schema", f"'id' must be a non-empty string, got {id_!r:.100}")
    label = document.get("label")
    if label is not None and (not isinstance(label, _LABEL_TYPES) or (
            type(label) is str and not _valid_unicode(label))):
        return Rejection("invalid_label", f"'label' must be a string, an integer or a boolean, "
                         f"got {type(label).__name__} {label!r:.100}")
    text = document.get("text")
    features = document.get("features")
    if (text is None) == (features is None):
        return Rejection("invalid_schema", "exactly one of 'text' and 'features' is needed")
    if text is not None:
        if type(text) is not str:
            return Rejection("invalid_schema", f"'text' must be a string, got "
                             f"{type(text).__name__}")
        if not _valid_unicode(text):
            return Rejection("invalid_schema", "'text' holds a lone surrogate")
        return Record(id_, _text_features(text, tokenize, token_sets), label)
    if type(features) is not dict:
        return Rejection("invalid_schema", f"'features' must be an object, got "
                         f"{type(features).__name__}")
    if not features:
        return Rejection("invalid_schema", "'features' is empty")
    if not _FEATURE_TYPES.issuperset(map(type, features.values())):
        bad = next(k for k, v in features.items() if type(v) not in _FEATURE_TYPES)
        return Rejection("invalid_schema", f"feature {bad!r:.100} is a "
                         f"{type(features[bad]).__name__}; values are strings, numbers, "
                         "booleans or null")
    # msgspec refuses both (it reads no lone surrogate): only this reference path sees them
    for name, value in features.items():
        if not _valid_unicode(name) or (type(value) is str and not _valid_unicode(value)):
            return Rejection("invalid_schema", f"feature {name!r:.100} holds a lone surrogate "
                             "in its name or value")
        if type(value) is float and not -NUMERIC_LIMIT <= value <= NUMERIC_LIMIT:
            return Rejection("invalid_schema", f"feature {name!r:.100} is {value!r}: numbers "
                             f"are at most {NUMERIC_LIMIT:g} in magnitude")
    return Record(id_, features, label)


def decode_one(value: bytes | None, max_bytes: int,
               tokenize: Callable[[str], Any] = tokenize_text,
               token_sets: bool = False) -> Record | Rejection:
    """Decode and validate one message (the reference for :func:`decode_batch`); a text
    message's features are ``{token: True}``, or with ``token_sets`` its tokens' frozenset.

    Examples
    --------
    >>> decode_one(b'{"id": "m1", "features": {"w": true}, "label": "spam"}', 1000)
    Record(id='m1', features={'w': True}, label='spam')
    >>> decode_one(b'{"id": "m1", "features": {"w": [1]}}', 1000).reason
    'invalid_schema'
    >>> decode_one(b'\\xff', 1000).reason, decode_one(b'{"id": ', 1000).reason
    ('invalid_utf8', 'invalid_json')

    """
    if value is None:
        return Rejection("invalid_json", "empty message (no value)")
    if len(value) > max_bytes:
        return Rejection("oversize", f"{len(value)} bytes > max-message-bytes {max_bytes}")
    document = _parse(value)
    if isinstance(document, Rejection):
        return document
    return _record(document, tokenize, token_sets)


def _schema_read(value: bytes | None, max_bytes: int) -> _Message | None:
    """``value`` as msgspec reads it against the schema, or None to leave it to the reference
    (:func:`decode_one`)."""
    if value is None or len(value) > max_bytes:
        return None
    try:
        if not value.isascii():
            value.decode()  # msgspec skips the keys the schema does not name unread
        return _FAST(value)
    except (ValueError, RecursionError, msgspec.MsgspecError):  # UnicodeDecodeError included
        return None


def decode_batch(values: Sequence[bytes | None], max_bytes: int,
                 tokenize: Callable[[str], Any] = tokenize_text,
                 token_sets: bool = False) -> list[Record | Rejection]:
    """Decode a batch; element i is what :func:`decode_one` gives for ``values[i]``."""
    out: list[Record | Rejection] = []
    for value in values:
        m = _schema_read(value, max_bytes)
        if m is None or (m.text is None) == (m.features is None) or not _valid_unicode(m.id) \
                or (type(m.label) is str and not _valid_unicode(m.label)):
            out.append(decode_one(value, max_bytes, tokenize, token_sets))
        elif m.text is None:
            out.append(Record(m.id, m.features, m.label))  # type: ignore[arg-type]
        else:
            out.append(Record(m.id, _text_features(m.text, tokenize, token_sets), m.label))
    return out
