"""Secrets that never show: :class:`Secret` values (the SASL password, the SSL key password),
whose ``str`` and ``repr`` are ``'***'``, so that a config dump, a log line or an exception
message cannot show them (only the dictionaries handed to the Kafka client reveal them), and
:class:`RedactSecrets`, the log filter for what the Kafka clients log themselves.
"""

from __future__ import annotations

import html
import json
import logging
import re
import urllib.parse

__all__ = ["RedactSecrets", "Secret"]


class Secret:
    """A string that never shows itself: ``str``/``repr`` give ``'***'``; :meth:`reveal` gives
    the value (only for the Kafka client's configuration)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = str(value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "'***'"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __reduce__(self):  # never let a secret travel through pickle
        raise TypeError("a Secret cannot be pickled")


def _spellings(secret: str) -> set[str]:
    """The ways a log line can spell ``secret``: as it is, escaped inside a ``repr`` (of a str
    or of its UTF-8 bytes, as a config dict is logged), inside JSON (ASCII or not), URL-encoded
    (path or form), HTML-escaped; each of these once more inside another (a repr of a dict
    holding a JSON text). Redacting the raw text alone misses a password with a backslash or a
    quote in a logged dict."""
    one = [lambda s: s, lambda s: repr(s)[1:-1], lambda s: repr('"' + s)[2:-1],
           lambda s: repr(s.encode())[2:-1], lambda s: json.dumps(s)[1:-1],
           lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
           lambda s: urllib.parse.quote(s, safe=""), urllib.parse.quote,
           urllib.parse.quote_plus, lambda s: html.escape(s)]
    first = {f(secret) for f in one}
    return {f(s) for s in first for f in one} - {""}


class RedactSecrets(logging.Filter):
    r"""A handler filter that replaces the given secrets by ``***`` in every record, its
    arguments and its traceback, in every spelling of :func:`_spellings`: kafka-python logs its
    whole configuration at debug level (``KafkaAdminClient``), passwords included, as a dict's
    repr.

    Examples
    --------
    >>> record = logging.LogRecord("kafka", 10, "", 0, "config: %s", ({"pw": "pass\\word"},),
    ...                            None)
    >>> RedactSecrets(["pass\\word"]).filter(record), record.getMessage()
    (True, "config: {'pw': '***'}")

    """

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]
        spellings = set().union(*map(_spellings, self.secrets))
        # the longest first: a spelling that holds another is replaced whole (no secret: a
        # pattern that never matches, not the empty one that matches everywhere)
        self._pattern = re.compile("|".join(map(re.escape, sorted(spellings, key=len,
                                                                  reverse=True))) or r"(?!)")

    def _redact(self, text: str) -> str:
        return self._pattern.sub("***", text)

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            record.msg, record.args = self._redact(record.getMessage()), None
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = self._redact(record.exc_text)
            if record.stack_info:
                record.stack_info = self._redact(record.stack_info)
        return True
