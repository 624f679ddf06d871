"""The periodic check of the owned partitions against the broker's log while serving.

At assignment and after every outage the service checks each partition state against the log
before it reads on (:meth:`streamnb.consumers.service.Service._check_offsets`: the record
before the state's offset must be the one the state read last). A log replaced while the
connection stayed up (a topic deleted and re-created, refilled past the state's offset) is read
on from the old offset without any error, so the check is also run every ``every`` seconds.
By then the state may have read on into the new log, where the record before its offset is
its own again; what tells the logs apart is an *anchor*: the offset and fingerprint a state
had at the previous check, which the new log holds no more. One fetch per partition a check.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from streamnb.consumers.state import PartitionState

__all__ = ["LogAnchors"]

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
    >>> anchors.set({("t", 0): PartitionState(None, 10, last=7)}, now=0.0)
    >>> anchors.due(30.0), anchors.due(60.0)
    (False, True)
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
