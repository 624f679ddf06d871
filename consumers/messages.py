"""Input messages: bytes → validated records, or the reason they are rejected.

A message is UTF-8 JSON, ``{"id": str, "text": str}`` (a raw RFC-822 e-mail, tokenised with
:func:`streamnb.features.tokenize_email`) or ``{"id": str, "features": {name: value}}`` with
values str (nominal), bool/int (token presence or count) or float (numeric), and an optional
``"label"`` (str, int or bool; ``null`` means unlabelled). Other keys are ignored.

A message that cannot be used is not an error of the service: it gets one of :data:`REASONS`
and goes to the dead-letter topic with its original bytes.

``decode_batch`` decodes a whole poll at once: the values are joined into one JSON array with a
per-process random string between them, parsed by one ``json.loads`` (about twice as fast as one
call per message), and the result is accepted only if every separator came back at its place,
which no message can fake without knowing the string; otherwise each message is decoded on its
own to find out which ones are bad.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from streamnb.features import tokenize_email

__all__ = ["REASONS", "Record", "Rejection", "decode_batch", "decode_one"]

#: Why a message went to the dead-letter topic (the ``streamnb-error`` header and the
#: ``reason`` label of ``streamnb_dead_letters_total``).
REASONS = ("invalid_utf8", "invalid_json", "invalid_schema", "invalid_label", "oversize",
           "invalid_record")

_FEATURE_TYPES = frozenset({str, bool, int, float, type(None)})
_LABEL_TYPES = (str, bool, int)


@dataclass(slots=True)
class Record:
    """A valid message: its id, features and label (``None``: unlabelled)."""

    id: str
    features: dict[str, Any]
    label: str | int | bool | None


@dataclass(slots=True)
class Rejection:
    """A message that cannot be used: one of :data:`REASONS` and a human-readable detail."""

    reason: str
    detail: str


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_SEPARATOR = "streamnb-" + secrets.token_hex(16)
_JOIN = f',"{_SEPARATOR}",'.encode()


def _parse(value: bytes) -> Any | Rejection:
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection("invalid_utf8", f"not UTF-8: {exc.reason} at byte {exc.start}")
    try:
        return _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        return Rejection("invalid_json", f"not JSON: {str(exc)[:200]}")


def _parse_many(values: list[bytes]) -> list[Any | Rejection]:
    if len(values) > 1:
        try:
            parsed = _DECODER.decode(b"".join((b"[", _JOIN.join(values), b"]")).decode("utf-8"))
        except (ValueError, RecursionError):
            pass
        else:
            if (len(parsed) == 2 * len(values) - 1
                    and parsed[1::2].count(_SEPARATOR) == len(values) - 1):
                return parsed[0::2]
    return [_parse(v) for v in values]


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


def _record(document: Any, tokenize: Callable[[str], Any]) -> Record | Rejection:
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
        return Record(id_, dict.fromkeys(tokenize(text), True), label)
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
    return Record(id_, features, label)


def decode_one(value: bytes | None, max_bytes: int,
               tokenize: Callable[[str], Any] = tokenize_email) -> Record | Rejection:
    """Decode and validate one message (the reference for :func:`decode_batch`).

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
    return _record(document, tokenize)


def decode_batch(values: Sequence[bytes | None], max_bytes: int,
                 tokenize: Callable[[str], Any] = tokenize_email) -> list[Record | Rejection]:
    """Decode a batch; element i is what :func:`decode_one` gives for ``values[i]``."""
    out: list[Record | Rejection | None] = [None] * len(values)
    sizable = []
    for i, value in enumerate(values):
        if value is None or len(value) > max_bytes:
            out[i] = decode_one(value, max_bytes, tokenize)
        else:
            sizable.append(i)
    documents = _parse_many([values[i] for i in sizable])
    for i, document in zip(sizable, documents, strict=True):
        out[i] = document if isinstance(document, Rejection) else _record(document, tokenize)
    return out  # type: ignore[return-value]
