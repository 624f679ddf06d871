"""Recovery: where each partition (re)starts from, and whether its state still matches the
broker's log.

- **Restore.** At start the service reads its snapshot (:mod:`.snapshots`, falling back a
  generation when one is unreadable) and the whole changelog (:mod:`.changelog`). A partition
  assigned later starts from the furthest of the states known for it (this member's snapshot,
  the changelog, what the summed model holds as another member's), the consumer positioned at
  that state's offset: never at the group's committed offset, so a record is in a state iff it
  is before the state's offset.
- **The offset-gap check.** A restored state is paused until it is checked against the log:
  its offset within the log's bounds (:func:`find_gap`), and the record before it the one the
  state read last (a :class:`~.logcheck.LogProbe` reads it). The same check runs after every
  broker outage and, with anchors (:class:`~.logcheck.LogAnchors`), every
  ``--offset-check-seconds``. A state outside the log is an *offset gap*, handled by
  ``--offset-gap-policy``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from kafka import TopicPartition

from streamnb.consumers.checkpoint import Checkpoint
from streamnb.consumers.clients import Clients
from streamnb.consumers.config import ServiceConfig
from streamnb.consumers.consumer import BROKER_ERRORS
from streamnb.consumers.logcheck import LogAnchors, LogProbe
from streamnb.consumers.metrics import ServiceMetrics
from streamnb.consumers.snapshots import SNAPSHOT_FILE, SnapshotsUnreadable, read_snapshot
from streamnb.consumers.spam_rates import adopt_rate
from streamnb.consumers.state import PartitionedModel, PartitionState
from streamnb.stats.persist import StateFileError

__all__ = ["OffsetGapError", "Recovery", "find_gap"]

log = logging.getLogger("streamnb.service")
_PROBE_SECONDS = 10.0  # longest wait for the record before a state's offset

Key = tuple[str, int]


class OffsetGapError(RuntimeError):
    """A partition's state is outside the broker's log, under ``--offset-gap-policy fail``."""


def find_gap(offset: int, begin: int | None, end: int | None) -> str | None:
    """Where a state's ``offset`` (the next record to read) lies against the broker's log
    ``[begin, end)``: ``None`` (within it), ``"before_log_start"`` (records between the two
    were deleted before they were read) or ``"after_log_end"`` (the log is shorter than the
    state: re-created, truncated, offsets reset). An unknown bound (``None``) is no gap; a
    state at offset 0 has read nothing, so it is never behind the log.

    >>> find_gap(5000, 0, 1000), find_gap(10, 40, 90), find_gap(0, 40, 90), find_gap(90, 40, 90)
    ('after_log_end', 'before_log_start', None, None)
    """
    if offset and begin is not None and offset < begin:
        return "before_log_start"
    if end is not None and offset > end:
        return "after_log_end"
    return None


class Recovery:
    """Restores the partition states and checks them against the broker's log.

    Parameters
    ----------
    rebuilt
        Called after a check moved or reset states (the service rebuilds the sum).

    Attributes
    ----------
    restored : bool
        The snapshot and the changelog were read (nothing is saved before).
    assigned : bool
        An assignment arrived (standalone: the partitions were found).
    unchecked : set of TopicPartition
        Assigned partitions paused until they are checked against the log.

    """

    def __init__(self, config: ServiceConfig, metrics: ServiceMetrics, model: PartitionedModel,
                 clients: Clients, checkpoint: Checkpoint, stop: threading.Event,
                 rebuilt: Callable[[], None]) -> None:
        self.config = config
        self.metrics = metrics
        self.model = model
        self.clients = clients
        self.checkpoint = checkpoint
        self.snapshot_dir = Path(config.snapshot_dir)
        self._stop = stop
        self._rebuilt = rebuilt
        self.restored = False
        self.assigned = False
        self.unchecked: set[TopicPartition] = set()
        self._restorable: dict[Key, PartitionState] = {}
        self.probe = LogProbe(config.kafka_options(), config.consumer_client, stop,
                              _PROBE_SECONDS)
        self._anchors = LogAnchors(config.offset_check_seconds)

    # -- restore --------------------------------------------------------------------------------
    def restore(self) -> None:
        """Load this instance's snapshot and the changelog; partitions are restored from them
        as they are assigned (:meth:`assign`)."""
        if (self.snapshot_dir / SNAPSHOT_FILE).exists():
            # its states will be checked against the broker's log: the probe that reads the
            # record before each state's offset connects meanwhile (connecting was a quarter
            # of its first read)
            self.probe.open()
        try:
            states, meta = read_snapshot(self.snapshot_dir, on_error=self._bad_snapshot)
        except SnapshotsUnreadable as exc:
            where = self.snapshot_dir
            if self.clients.changelog is None:
                raise StateFileError(
                    f"{exc}; there is no changelog to fall back on (--changelog-topic ''), so "
                    "the service refuses to start rather than re-learn from scratch. To "
                    f"recover: restore {where} from a backup, or move it away (mv {where} "
                    f"{where}.corrupt) to re-learn every partition from its earliest "
                    "record") from None
            log.warning("no snapshot generation in %s can be read: restoring from the "
                        "changelog %s (partitions it lacks are re-learned from their earliest "
                        "record)", where, self.config.changelog_topic)
            self.metrics.snapshot_fallbacks.labels(to="changelog").inc()
            states, meta = {}, {}
        if states and meta.get("model") != self.config.model:
            raise ValueError(f"{self.snapshot_dir} holds the snapshot of a {meta.get('model')!r} "
                             f"model, not of --model {self.config.model!r}: use another "
                             "--snapshot-dir (or remove this one to start over)")
        adopt_rate(states, self.config, f"snapshot {self.snapshot_dir}")
        if states:
            log.info("snapshot %s: %d partition states (%s)", self.snapshot_dir, len(states),
                     ", ".join(f"{t}:{p}@{s.offset}" for (t, p), s in sorted(states.items())))
        self._restorable = states
        if self.clients.changelog is not None:
            self.offer(self.clients.changelog.read_all())
        for version, names in meta.get("candidates", []):  # without a changelog: only here
            self.model.candidates.decisions.setdefault(int(version), list(names))

    def _bad_snapshot(self, path: Path, exc: Exception, following: Path | None) -> None:
        if following is not None:
            log.warning("snapshot %s cannot be read (%s): falling back to the previous "
                        "generation, %s", path, exc, following.name)
            self.metrics.snapshot_fallbacks.labels(to="previous_generation").inc()
        else:
            log.warning("snapshot %s cannot be read (%s), and it is the oldest generation",
                        path, exc)

    def offer(self, states: dict[Key, PartitionState]) -> None:
        """States read from the changelog (and the candidate lists read with them)."""
        changelog = self.clients.changelog
        if changelog is not None:  # the lists first: the states read may need them
            for version, names in changelog.candidates.items():
                if self.model.candidates.decisions.setdefault(version, names) != names:
                    raise RuntimeError(f"candidate list {version} differs between the "
                                       f"changelog {self.config.changelog_topic} and this "
                                       f"instance's snapshot {self.snapshot_dir}")
        adopt_rate(states, self.config, f"changelog {self.config.changelog_topic}")
        for key, state in states.items():
            if not self.model.compatible(state):
                log.warning("changelog %s: the state of %s:%s holds a %s, not this service's "
                            "%s; ignored", self.config.changelog_topic, *key,
                            type(state.model).__name__, self.model.model_class.__name__)
                continue
            self.model.offer(key, state)

    def assign(self, tps: list[TopicPartition]) -> None:
        """Own ``tps``: each from the furthest state known, the consumer positioned at its
        offset; a state that has read anything paused until it is checked."""
        consumer = self.clients.consumer
        self.assigned = True
        for tp in tps:
            key = (tp.topic, tp.partition)
            known = [s for s in (self.model.restore_candidate(key),
                                 self._restorable.pop(key, None)) if s is not None]
            state = max(known, key=lambda s: s.position) if known else PartitionState(
                self.model.factory(), 0)
            self.model.take(key, state)
            if state.offset:
                consumer.seek(tp, state.offset)
                # checked against the broker's log before anything is read (not here: in a
                # rebalance callback kafka-python allows no blocking call)
                consumer.pause(tp)
                self.unchecked.add(tp)
            else:
                consumer.seek_to_beginning(tp)

    def broker_lost(self) -> None:
        """Pause every owned partition until it is checked again: a broker back from an outage
        may hold another log (restarted empty, topics re-created)."""
        tps = [TopicPartition(*key) for key in self.model.own]
        self.clients.consumer.pause(*tps)
        self.unchecked.update(tps)

    # -- the offset-gap check -------------------------------------------------------------------
    def check(self, broker_ok: bool, out_of_range: list[TopicPartition] | None = None) -> None:
        """The checks due while serving: the partitions reported out of range, else those
        unchecked, else (every ``--offset-check-seconds``) whether a log was replaced. A
        broker gone meanwhile leaves a check to be run again."""
        try:
            if out_of_range is not None:
                self.check_offsets(out_of_range, out_of_range=True)
            elif self.unchecked and broker_ok:
                self.check_offsets(list(self.unchecked))
        except BROKER_ERRORS as exc:
            log.warning("checking the partitions against the broker's log failed (%s); "
                        "retrying", exc)
            self._stop.wait(1.0)

    def recheck(self, broker_ok: bool, now: float) -> None:
        """The periodic check, when it is due."""
        if self._anchors.due(now) and broker_ok and not self.unchecked:
            try:
                self._recheck_logs()
            except BROKER_ERRORS as exc:
                log.warning("checking the partitions against the broker's log failed (%s); "
                            "retrying", exc)
                self._stop.wait(1.0)

    def _recheck_logs(self) -> None:
        """A partition whose log no longer holds its anchor's record is a ``log_replaced``
        gap; then every state is anchored anew."""
        own = self.model.own
        if not self._anchors.anchored():
            # the first check (or none read since): nothing to compare, so no broker query,
            # which would wait behind the consumer's pending fetch (librdkafka: up to
            # fetch.wait.max.ms) and stall the first batches
            self._anchors.set(own)
            return
        consumer = self.clients.consumer
        tps = {key: TopicPartition(*key) for key in own}
        begin = consumer.beginning_offsets(list(tps.values()))

        def record_before(key: Key, offset: int) -> int | None:
            if offset - 1 < (begin.get(tps[key]) or 0):  # deleted by retention since
                return None
            return self.probe.record_before(tps[key], offset)

        replaced = self._anchors.replaced(own, record_before)
        if self._stop.is_set():  # a probe cut short decides nothing
            return
        if replaced:
            end = consumer.end_offsets([tps[key] for key in replaced])
            for key in replaced:
                log.warning("%s:%s: the broker's log no longer holds a record the state read "
                            "in the last %g s: the records read since (up to offset %d) may be "
                            "of the new log", *key, self._anchors.every, own[key].offset)
                self._gap(tps[key], own[key], "log_replaced", begin.get(tps[key]) or 0,
                          end.get(tps[key]))
            self._rebuilt()
        self._anchors.set(self.model.own)

    def check_offsets(self, tps: list[TopicPartition], out_of_range: bool = False) -> None:
        """Compare the owned states of ``tps`` with the broker's log, apply
        ``--offset-gap-policy`` to those outside it, and resume them. The partitions stay
        "being checked" (not ready) until the check ends."""
        consumer = self.clients.consumer
        asked, tps = tps, [tp for tp in tps if (tp.topic, tp.partition) in self.model.own]
        if not tps:
            self.unchecked.difference_update(asked)
            return
        begin = consumer.beginning_offsets(tps)
        end = consumer.end_offsets(tps)
        for tp in tps:
            state = self.model.own[(tp.topic, tp.partition)]
            kind = find_gap(state.offset, begin.get(tp), end.get(tp))
            if kind == "after_log_end" or (kind is None and state.last is not None
                                            and state.offset > (begin.get(tp) or 0)):
                # the record before the state's offset decides: the end offset some brokers
                # report (tansu after batched produce) is too low, and a re-created topic
                # refilled past the offset has a record there, but not the one read
                kind = self._compare_log(tp, state)
                if self._stop.is_set():
                    # the probe was cut short, so "no record there" means nothing: decide no
                    # gap, leave the partitions paused (nothing is read); the next start checks
                    return
            if kind is not None:
                self._gap(tp, state, kind, begin.get(tp) or 0, end.get(tp))
            elif out_of_range:
                log.warning("%s:%s: the broker reported offset %d out of range, but its log "
                            "spans %s..%s; reading on from %d", tp.topic, tp.partition,
                            state.offset, begin.get(tp), end.get(tp), state.offset)
                consumer.seek(tp, state.offset)
                self._stop.wait(1.0)
        self._rebuilt()
        consumer.resume(*tps)
        for tp in tps:
            # librdkafka does not fetch a partition that was paused across a watermark query
            # for up to a second after it is resumed, unless it is sought (nothing of it has
            # been read: its state's offset is its position)
            consumer.seek(tp, self.model.own[(tp.topic, tp.partition)].offset)
        self.unchecked.difference_update(asked)

    def _compare_log(self, tp: TopicPartition, state: PartitionState) -> str | None:
        """``None`` when the broker holds, at ``state.offset - 1``, the record the state read
        last (any record there, for a state without a fingerprint); ``"after_log_end"`` when it
        holds none there within the probe's wait, ``"log_replaced"`` when it holds another."""
        found = self.probe.record_before(tp, state.offset)
        if found is None:
            return "after_log_end"
        if state.last is not None and found != state.last:
            return "log_replaced"
        return None

    def _gap(self, tp: TopicPartition, state: PartitionState, kind: str, begin: int,
             end: int | None) -> None:
        """One partition state outside the log: count it, log it, apply the policy."""
        where, expected = f"{tp.topic}:{tp.partition}", state.offset
        self.metrics.offset_gaps.labels(topic=tp.topic, partition=str(tp.partition),
                                        kind=kind).inc()
        if kind == "before_log_start":
            found = (f"the broker's log starts at offset {begin}: records {expected}.."
                     f"{begin - 1} were deleted before they were read (retention, "
                     "delete-records)")
        elif kind == "log_replaced":
            found = (f"its record at offset {expected - 1} is not the one the state read "
                     f"there (the log now spans {begin}..{end}): the topic was deleted and "
                     "re-created, or its offsets reset")
        else:
            found = (f"the broker's log ends at offset {end}: the topic was deleted and "
                     "re-created, truncated, or its offsets reset")
        policy = self.config.offset_gap_policy
        head = f"offset gap on {where}: the state expects offset {expected} next, but {found}"
        if policy == "fail":
            raise OffsetGapError(
                f"{head}; stopping (--offset-gap-policy fail, state left as it was). To go "
                "on, restart with --offset-gap-policy reset-state (forget this partition's "
                "state, re-learn it from its earliest record) or continue-from-earliest (keep "
                "the state, read on from the earliest record)")
        lost = begin - expected if kind == "before_log_start" else 0
        if policy == "reset-state":
            # a later epoch: the old state in snapshots and the changelog never wins again
            self.model.take((tp.topic, tp.partition),
                            PartitionState(self.model.factory(), begin, state.epoch + 1))
            action = f"state reset, re-learning from offset {begin}"
        else:
            if kind != "before_log_start":
                state.epoch += 1
            state.offset, state.last = begin, None
            action = f"state kept, reading on from offset {begin}"
        if lost:
            self.metrics.records_lost.labels(topic=tp.topic, partition=str(tp.partition)).inc(
                lost)
            action += f", {lost} records lost"
        log.warning("%s; %s (--offset-gap-policy %s)", head, action, policy)
        self.clients.consumer.seek(tp, begin)
        self.checkpoint.changed = True  # the next checkpoint records the moved state
