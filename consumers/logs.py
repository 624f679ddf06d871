"""What the Kafka clients log, made readable: one line per kind of message and a count of its
repeats (:class:`RepeatedLines`), and no traceback for each lost connection. Below debug level
a broker outage otherwise writes a line per reconnection attempt per connection: about 1,300
librdkafka error lines in 75 s of a group-mode outage.

The service's own lines say when the broker goes and comes back; these filters only thin the
clients' narration of it.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable

__all__ = ["RepeatedLines", "quiet_kafka_logs"]

_NUMBERS = re.compile(r"\d+")


class RepeatedLines(logging.Filter):
    """Let through the first record of each kind from the loggers under ``prefix`` (its logger,
    level and message with the numbers taken out: ports, durations and counts vary between
    attempts), then at most one every ``every`` seconds, which tells how many were held back.

    Examples
    --------
    >>> now = [0.0]
    >>> f = RepeatedLines(every=60.0, clock=lambda: now[0])
    >>> def line(text):
    ...     record = logging.LogRecord("kafka.librdkafka", 40, "", 0, text, (), None)
    ...     return record.getMessage() if f.filter(record) else None
    >>> line("Connect to :9092 failed (after 0ms)"), line("Connect to :9092 failed (after 3ms)")
    ('Connect to :9092 failed (after 0ms)', None)
    >>> now[0] = 61.0
    >>> line("Connect to :9092 failed (after 1ms)")
    'Connect to :9092 failed (after 1ms) (1 more like it in the last 61 s)'

    """

    def __init__(self, prefix: str = "kafka", every: float = 60.0,
                 clock: Callable[[], float] = time.monotonic, kinds: int = 1000) -> None:
        super().__init__()
        self.prefix, self.every, self.clock, self.kinds = prefix, every, clock, kinds
        self._shown: dict[str, list] = {}  # kind -> [when last shown, held back since]
        self._lock = threading.Lock()  # records come from the clients' threads too

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(self.prefix):
            return True
        kind = f"{record.name} {record.levelno} " + _NUMBERS.sub("#", record.getMessage())
        now = self.clock()
        with self._lock:
            entry = self._shown.get(kind)
            if entry is not None and now - entry[0] < self.every:
                entry[1] += 1
                return False
            if len(self._shown) >= self.kinds:  # bounded: forget the kinds not seen lately
                self._shown = {k: e for k, e in self._shown.items()
                               if now - e[0] < self.every}
            self._shown[kind] = [now, 0]
        if entry is not None and entry[1]:
            record.msg = (f"{record.getMessage()} ({entry[1]} more like it in the last "
                          f"{now - entry[0]:.0f} s)")
            record.args = None
        return True


def _no_tracebacks(record: logging.LogRecord) -> bool:
    """A Kafka client's lost connection in one line, without its traceback."""
    if record.name.startswith("kafka") and record.exc_info:
        record.exc_info = record.exc_text = None
    return True


def quiet_kafka_logs(handler: logging.Handler) -> None:
    """Below debug level: the Kafka clients' lines through ``handler`` without tracebacks
    and without repeats (:class:`RepeatedLines`)."""
    handler.addFilter(_no_tracebacks)
    handler.addFilter(RepeatedLines())
