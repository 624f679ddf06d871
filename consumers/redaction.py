"""Secrets that never show: :class:`Secret` values (the SASL password, the SSL key password),
whose ``str`` and ``repr`` are ``'***'``, so that a config dump, a log line or an exception
message cannot show them (only the dictionaries handed to the Kafka client reveal them), and
:class:`RedactSecrets`, the log filter for what the Kafka clients log themselves.
"""

from __future__ import annotations

import logging

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


class RedactSecrets(logging.Filter):
    """A handler filter that replaces the given secrets by ``***`` in every record, its
    arguments and its traceback: kafka-python logs its whole configuration at debug level
    (``KafkaAdminClient``), passwords included.

    Examples
    --------
    >>> record = logging.LogRecord("kafka", 10, "", 0, "config: %s", ({"pw": "hunter2"},), None)
    >>> RedactSecrets(["hunter2"]).filter(record), record.getMessage()
    (True, "config: {'pw': '***'}")

    """

    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def _redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

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
