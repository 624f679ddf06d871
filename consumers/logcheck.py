"""The periodic check of the owned partitions against the broker's log while serving.

At assignment and after every outage the service checks each partition state against the log
before it reads on (:meth:`streamnb.consumers.recovery.Recovery.check_offsets`: the record
before the state's offset must be the one the state read last). A log replaced while the
connection stayed up (a topic deleted and re-created, refilled past the state's offset) is read
on from the old offset without any error, so the check is also run every ``every`` seconds.
By then the state may have read on into the new log, where the record before its offset is
its own again; what tells the logs apart is an *anchor*: the offset and fingerprint a state
had at the previous check, which the new log holds no more. One fetch per partition a check.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from kafka import TopicPartition

from streamnb.consumers.consumer import InputConsumer, OffsetsOutOfRange, open_consumer
from streamnb.consumers.state import PartitionState, fingerprint

__all__ = ["LogAnchors", "LogProbe"]

Key = tuple[str, int]


class LogAnchors:
    """Each owned partition's anchor, ``(offset, fingerprint of the record before it)``, and
    when the next check is due.

    Parameters
    ----------
    every
        Seconds between checks (0: never).

    Examples
    --------
    >>> anchors = LogAnchors(every=60)
    >>> anchors.due(0.0), anchors.anchored()
    (True, False)
    >>> anchors.set({("t", 0): PartitionState(None, 10, last=7)}, now=0.0)
    >>> anchors.due(30.0), anchors.due(60.0), anchors.anchored()
    (False, True, True)
    >>> anchors.replaced({("t", 0): PartitionState(None, 25, last=9)},
    ...                  lambda key, offset: {10: 7}.get(offset))
    []
    >>> anchors.replaced({("t", 0): PartitionState(None, 25, last=9)},
    ...                  lambda key, offset: {10: 8}.get(offset))
    [('t', 0)]

    """

    def __init__(self, every: float) -> None:
        self.every = every
        self._anchors: dict[Key, tuple[int, int]] = {}
        self._next = 0.0

    def due(self, now: float | None = None) -> bool:
        return bool(self.every) and (time.monotonic() if now is None else now) >= self._next

    def anchored(self) -> bool:
        """Whether a state is anchored, so that a check has something to compare."""
        return bool(self._anchors)

    def set(self, states: Mapping[Key, PartitionState], now: float | None = None) -> None:
        """Anchor every state that has read a record it holds the fingerprint of; the next
        check ``every`` seconds from ``now``."""
        self._anchors = {key: (s.offset, s.last) for key, s in states.items()
                         if s.offset and s.last is not None}
        self._next = (time.monotonic() if now is None else now) + self.every

    def replaced(self, states: Mapping[Key, PartitionState],
                 record_before: Callable[[Key, int], int | None]) -> list[Key]:
        """The partitions of ``states`` whose log no longer holds their anchor's record:
        ``record_before(key, offset)`` gives the fingerprint of the log's record at
        ``offset - 1`` (``None``: none there, or deleted by retention, which is no sign of a
        new log). A state reset or moved back since its anchor is not compared."""
        out = []
        for key, (offset, last) in self._anchors.items():
            state = states.get(key)
            if state is None or state.offset < offset:
                continue
            found = record_before(key, offset)
            if found is not None and found != last:
                out.append(key)
        return out


class LogProbe:
    """Reads the broker's record before an offset with a consumer of its own (opened once, at
    the first read or by :meth:`open`), so that the service's own positions and buffers are
    untouched.

    Parameters
    ----------
    options
        The consumer's options (the service's Kafka options).
    client
        Which consumer client (``--consumer-client``).
    stop
        Ends any wait early (a read cut short finds nothing).
    wait
        Longest wait, in seconds, for the record.

    """

    def __init__(self, options: dict, client: str, stop: threading.Event,
                 wait: float = 10.0) -> None:
        self._options = {**options, "enable_auto_commit": False, "auto_offset_reset": "none"}
        self._client = client
        self._stop = stop
        self._wait = wait
        self._consumer: InputConsumer | None = None
        self._at = 0  # where the probe reads next

    def open(self) -> InputConsumer:
        if self._consumer is None:
            probe: InputConsumer = open_consumer(
                self._options, self._client,
                on_assign=lambda tps: [probe.seek(t, self._at) for t in tps])
            self._consumer = probe
        return self._consumer

    def record_before(self, tp: TopicPartition, offset: int) -> int | None:
        """The fingerprint of the broker's record at ``offset - 1``, or ``None`` when it has
        none there for ``wait`` seconds. An out-of-range answer is asked again until then (a
        broker's end offset can lag behind records it already served)."""
        probe = self.open()
        deadline = time.monotonic() + self._wait
        self._at = offset - 1
        try:
            while time.monotonic() < deadline and not self._stop.is_set():
                probe.assign([tp])  # at offset - 1 (its on_assign)
                try:
                    records = probe.poll(1, 500).get(tp)
                except OffsetsOutOfRange:
                    self._stop.wait(0.2)
                    continue
                if records and records.offsets[0] == offset - 1:
                    return fingerprint(records.record(0))
        finally:
            probe.assign([])
        return None

    def closing(self) -> list[tuple[str, Callable[[], None]]]:
        """Its teardown, as ``(what, call)`` (none if it was never opened)."""
        if self._consumer is None:
            return []
        return [("closing the probe consumer", self._consumer.close)]
