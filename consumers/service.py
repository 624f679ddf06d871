"""The classification service: Kafka in, predictions out, state kept exactly once.

The loop: poll a batch, decode it (:mod:`.messages`), classify every valid record with the
summed model, learn the labelled ones into their partition's state and the sum (:mod:`.state`),
publish predictions and dead letters, and every N records or T seconds flush the producer,
snapshot the owned states with their offsets (:mod:`.snapshots`), publish them to the changelog
(:mod:`.changelog`) and commit the offsets.

Exactly once for the model: a partition is always (re)started from a state together with the
offset it reflects (the highest-offset one among this instance's snapshot, the changelog and
what it holds in memory), never from the group's committed offset, so a record is in a state iff
it is before that state's offset. Predictions and dead letters are at least once: records
between the last snapshot and a crash are classified again after the restart.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import gc
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from kafka import TopicPartition

from streamnb.consumers.bounded import BoundedCalls
from streamnb.consumers.changelog import publish_candidates
from streamnb.consumers.checkpoint import MODEL_FILE, Checkpoint
from streamnb.consumers.clients import Clients
from streamnb.consumers.config import ServiceConfig
from streamnb.consumers.consumer import (
    BROKER_ERRORS,
    InputConsumer,
    OffsetsOutOfRange,
    PartitionRecords,
    open_consumer,
)
from streamnb.consumers.endpoint import MetricsServer
from streamnb.consumers.logcheck import LogAnchors
from streamnb.consumers.messages import Record, Rejection, decode_batch
from streamnb.consumers.metrics import ServiceMetrics
from streamnb.consumers.redaction import RedactSecrets
from streamnb.consumers.snapshots import (
    SNAPSHOT_FILE,
    SnapshotsUnreadable,
    probe_directory,
    read_snapshot,
)
from streamnb.consumers.state import PartitionedModel, PartitionState, fingerprint, model_factory
from streamnb.stats.persist import StateFileError

__all__ = ["EXIT_OFFSET_GAP", "EXIT_SHUTDOWN_INCOMPLETE", "MODEL_FILE", "OffsetGapError",
           "Service", "class_label", "find_gap"]

log = logging.getLogger("streamnb.service")
EXIT_OFFSET_GAP = 3  # exit status of --offset-gap-policy fail
EXIT_SHUTDOWN_INCOMPLETE = 4  # the final flush, publish or commit failed (snapshot written)
_PROBE_SECONDS = 10.0  # longest wait for the record before a state's offset
_WATCHDOG_GRACE = 10.0  # seconds past the shutdown timeout before the CLI's process exits


class OffsetGapError(RuntimeError):
    """A partition's state is outside the broker's log, under ``--offset-gap-policy fail``."""


def class_label(label: str | int | bool) -> str:
    """The class of a message's ``label``: labels are strings. A JSON integer or boolean
    label is read as its JSON text, so ``1`` and ``"1"`` are one class, ``true`` and
    ``"true"`` another (and ``true`` is not ``1``, as it would be as a Python key).

    >>> class_label("spam"), class_label(1), class_label(True), class_label(False)
    ('spam', '1', 'true', 'false')
    """
    if type(label) is str:
        return label
    if type(label) is bool:
        return "true" if label else "false"
    return str(label)


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


class _BatchRecords:
    """The fresh records of one poll, numbered 0.. in batch order: ``offsets`` per record, the
    record itself (for dead letters) on demand."""

    __slots__ = ("offsets", "segments", "starts")

    def __init__(self, segments: list[tuple[TopicPartition, PartitionRecords, int, int]],
                 offsets: list[int]) -> None:
        self.segments = segments  # (partition, its records, first fresh one, its batch index)
        self.starts = [first for _, _, _, first in segments]
        self.offsets = offsets

    def ranges(self) -> list[tuple[TopicPartition, int, int]]:
        """Each partition's ``(partition, first, end)`` batch indices."""
        ends = [*self.starts[1:], len(self.offsets)]
        return [(tp, first, end) for (tp, _, _, first), end in
                zip(self.segments, ends, strict=True)]

    def record(self, i: int) -> Any:
        _, recs, start, first = self.segments[bisect.bisect_right(self.starts, i) - 1]
        return recs.record(start + i - first)



class _ServingHeap:
    """While the service serves: what start-up built (modules, clients, the restored models),
    which lives as long as the service, is left out of the collector's full passes (0.1 s
    each over a trained SpamFilter's heap), and the youngest generation is collected every
    20,000 allocations instead of 700 (a poll of raw e-mails makes ~10⁵ short-lived objects:
    90 collections a 5,000-message run). Services of one process nest: the last to stop
    serving undoes both (cycles made meanwhile become collectable)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._serving = 0  # services serving now
        self._thresholds = gc.get_threshold()  # as the first of them found them

    def __enter__(self) -> None:
        with self._lock:
            if not self._serving:
                self._thresholds = gc.get_threshold()
                gc.set_threshold(20_000, *self._thresholds[1:])
            self._serving += 1
            gc.freeze()

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._serving -= 1
            if not self._serving:
                gc.set_threshold(*self._thresholds)
                gc.unfreeze()


_serving_heap = _ServingHeap()


class Service:
    """One member of the service.

    Parameters
    ----------
    config
        The configuration (:func:`streamnb.consumers.config.load_config`).
    metrics
        Where to count (default: new :class:`~streamnb.consumers.metrics.ServiceMetrics`, served on
        ``config.metrics_address``).

    Attributes
    ----------
    model : PartitionedModel
        The partition states and their sum.
    metrics_url : str
        The Prometheus endpoint, once running ('' without one).

    """

    def __init__(self, config: ServiceConfig, metrics: ServiceMetrics | None = None) -> None:
        try:
            import pandas  # noqa: F401 - predict_proba_many returns DataFrames
        except ImportError:
            raise RuntimeError("the service classifies in batches with pandas: pip install "
                               "'streamnb[pandas]' (or the broker extra)") from None
        self.config = config
        self.metrics = metrics or ServiceMetrics(windows=config.window_sizes)
        self.model = PartitionedModel(model_factory(config.model, config.max_candidates),
                                      relearn_every=config.relearn_every,
                                      on_relearn=self._relearned, propose=self._propose,
                                      # by time: milliseconds of record timestamps
                                      half_life=(config.half_life_seconds * 1000
                                                 or config.half_life),
                                      decay_every=(config.decay_every * 1000
                                                   if config.half_life_seconds
                                                   else config.decay_every),
                                      by_time=config.half_life_seconds > 0,
                                      drift_detector=("" if config.drift_detector == "none"
                                                      else config.drift_detector),
                                      drift_decay=config.drift_decay,
                                      on_drift=self._drifted)
        self.snapshot_dir = Path(config.snapshot_dir)
        self.metrics_url = ""
        self._stop = threading.Event()
        self._restorable: dict[tuple[str, int], PartitionState] = {}
        self._http = None
        self._last_changelog_poll = 0.0
        self._last_rebuild = 0.0
        self._last_lag = 0.0
        self.processed = 0  # records handled (learned, predicted or dead-lettered) by this run
        self._restored = False  # nothing to save before the state was restored
        self._unchecked: set[TopicPartition] = set()  # assigned, paused until checked
        self._probe: InputConsumer | None = None
        self._probe_at = 0  # where the probe reads next
        self.exit_code = 0
        self._assigned = False  # an assignment arrived (standalone: the partitions found)
        self._broker_ok = False
        self._broker_lost = False  # "no Kafka broker reachable" was logged
        self.hard_exit = False  # the CLI: a watchdog bounds the whole shutdown
        self._calls = BoundedCalls(self._stop, "--shutdown-timeout-seconds "
                                   f"{config.shutdown_timeout_seconds:g}")
        self._anchors = LogAnchors(config.offset_check_seconds)
        self.clients = Clients(config, self.metrics)
        self.checkpoint = Checkpoint(config, self.metrics, self.model, self.clients, self._calls)
        self._shutdown_done = False

    # -- lifecycle ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the loop to finish its batch, snapshot and exit (safe from a signal handler)."""
        self._stop.set()

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: self.stop())

    def run(self, max_records: int | None = None) -> int:
        """Serve until :meth:`stop` (or, if given, until ``max_records`` records have been
        handled); then drain, snapshot, publish and exit. Returns the exit status: 0, or
        :data:`EXIT_OFFSET_GAP` when an offset gap stopped it (``--offset-gap-policy fail``)."""
        self._redact_logs()
        probe_directory(self.snapshot_dir)  # refused now, not at the first snapshot
        self._start_metrics()
        kafka_log = logging.getLogger("kafka")
        level = kafka_log.level
        if self.config.log_level != "debug":
            # kafka-python logs every failed connection attempt at ERROR: while starting, the
            # service's own one line (the CLI's) says what failed
            kafka_log.setLevel(logging.CRITICAL)
        try:
            try:
                self.clients.open(on_assign=self._assign, on_revoke=self._revoke)
                self._restore()
            finally:
                kafka_log.setLevel(level)
            self._restored = True
            self._check_broker()
            self.readiness()
            with _serving_heap:
                self._serve(max_records)
        except OffsetGapError as exc:
            log.error("%s", exc)
            self.exit_code = EXIT_OFFSET_GAP
        finally:
            self._shutdown()
        return self.exit_code

    def _serve(self, max_records: int | None) -> None:
        """Poll and process until stopped (or ``max_records`` records are handled)."""
        while not self._stop.is_set():
            if self._calls.pending():
                # outputs wait for the broker: nothing more is read until they are delivered
                # (the publisher's pipe and the producer's buffer would fill, and block)
                self._maintain()
                self._stop.wait(0.1)
                continue
            if self._unchecked and self._broker_ok:
                self._checking(lambda: self._check_offsets(list(self._unchecked)))
            try:
                batch = self.clients.consumer.poll(self.config.max_poll_records,
                                            self.config.poll_timeout_ms)
            except OffsetsOutOfRange as exc:
                out = exc.offsets
                log.info("the broker reports offsets out of range: %s", ", ".join(
                    f"{tp.topic}:{tp.partition}@{o}" for tp, o in out.items()))
                self._checking(functools.partial(self._check_offsets, list(out), True))
                continue
            if self._broker_ok:
                self.metrics.last_poll.set_to_current_time()
            if batch:
                self._process(batch)
            self._maintain()
            if max_records is not None and self.processed >= max_records:
                break

    def _redact_logs(self) -> None:
        """Keep the configured secrets out of every log handler of the process."""
        secrets = self.config.secrets()
        if not secrets:
            return
        for handler in logging.getLogger().handlers:
            if not any(isinstance(f, RedactSecrets) for f in handler.filters):
                handler.addFilter(RedactSecrets(secrets))

    def _start_metrics(self) -> None:
        """The HTTP endpoint: /metrics, /healthz (the process is up) and /readyz."""
        address = self.config.metrics_address
        if not address:
            return
        host, _, port = address.rpartition(":")
        self._http = MetricsServer(host.strip("[]"), int(port), self.metrics.registry,
                                   self.readiness)
        self.metrics_url = f"http://{host}:{self._http.port}/metrics"
        log.info("metrics at %s (and /healthz, /readyz)", self.metrics_url)

    def readiness(self) -> tuple[bool, str]:
        """``(ready, why)``: ready once the state is restored, partitions are assigned and
        checked against the broker's log, and the broker is reachable."""
        missing = [why for bad, why in (
            (not self._restored, "state not restored yet"),
            (not self._assigned, "no partitions assigned yet"),
            (bool(self._unchecked), "partitions being checked against the broker's log"),
            (not self._broker_ok, "no broker reachable"),
            (bool(self.checkpoint.failing), f"checkpoint failing: {self.checkpoint.failing}"),
            (self._stop.is_set(), "stopping")) if bad]
        ready = not missing
        self.metrics.up.set(1 if ready else 0)
        return ready, "ready" if ready else "not ready: " + "; ".join(missing)

    def _check_broker(self) -> None:
        """Whether the consumer has a broker connection (as its client tells). Losing it
        pauses every owned partition until it is checked against the broker's log again: a
        broker back from an outage may hold another log (restarted empty, topics re-created)."""
        count = self.clients.consumer.connected()
        if count != self._broker_ok and self._restored:
            if not count:
                log.warning("no Kafka broker reachable at %s", self.config.bootstrap_servers)
                tps = [TopicPartition(*key) for key in self.model.own]
                self.clients.consumer.pause(*tps)
                self._unchecked.update(tps)
            elif self._broker_lost:  # "again" only after it was said to be gone
                log.info("a Kafka broker is reachable again")
            self._broker_lost = not count
        self._broker_ok = bool(count)
        self.metrics.broker_reachable.set(1 if self._broker_ok else 0)

    def _restore(self) -> None:
        """Load this instance's snapshot and the changelog; partitions are restored from them
        as they are assigned."""
        if (self.snapshot_dir / SNAPSHOT_FILE).exists():
            # its states will be checked against the broker's log: the probe that reads the
            # record before each state's offset connects meanwhile (connecting was a quarter
            # of its first read)
            self._open_probe()
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
        if states:
            log.info("snapshot %s: %d partition states (%s)", self.snapshot_dir, len(states),
                     ", ".join(f"{t}:{p}@{s.offset}" for (t, p), s in sorted(states.items())))
        self._restorable = states
        if self.clients.changelog is not None:
            self._offer(self.clients.changelog.read_all())
            self._last_changelog_poll = time.monotonic()
        for version, names in meta.get("candidates", []):  # without a changelog: only here
            self.model.decisions.setdefault(int(version), list(names))
        if self.config.group_id:
            self.clients.consumer.subscribe(list(self.config.input_topic))
        else:
            self._assign_all()

    def _bad_snapshot(self, path: Path, exc: Exception, following: Path | None) -> None:
        if following is not None:
            log.warning("snapshot %s cannot be read (%s): falling back to the previous "
                        "generation, %s", path, exc, following.name)
            self.metrics.snapshot_fallbacks.labels(to="previous_generation").inc()
        else:
            log.warning("snapshot %s cannot be read (%s), and it is the oldest generation",
                        path, exc)

    def _assign_all(self) -> None:
        """Standalone: every partition of every input topic (waiting for topics to exist)."""
        tps = []
        for topic in self.config.input_topic:
            partitions = None
            while not partitions and not self._stop.is_set():
                partitions = self.clients.consumer.partitions_for_topic(topic)
                if not partitions:
                    log.info("waiting for topic %s", topic)
                    self._stop.wait(1.0)
            tps += [TopicPartition(topic, p) for p in sorted(partitions or ())]
        self.clients.consumer.assign(tps)  # which calls _assign
        self._assigned = True

    def _offer(self, states: dict[tuple[str, int], PartitionState]) -> None:
        if self.clients.changelog is not None:  # the lists first: the states read may need them
            for version, names in self.clients.changelog.candidates.items():
                if self.model.decisions.setdefault(version, names) != names:
                    raise RuntimeError(f"candidate list {version} differs between the "
                                       f"changelog {self.config.changelog_topic} and this "
                                       f"instance's snapshot {self.snapshot_dir}")
        for key, state in states.items():
            if not self.model.compatible(state):
                log.warning("changelog %s: the state of %s:%s holds a %s, not this service's "
                            "%s; ignored", self.config.changelog_topic, *key,
                            type(state.model).__name__, self.model.model_class.__name__)
                continue
            self.model.offer(key, state)

    # -- rebalancing ----------------------------------------------------------------------------
    def _assign(self, tps: list[TopicPartition]) -> None:
        """Own ``tps`` (the consumer's on_assign): each from the furthest state known, the
        consumer positioned at its offset."""
        self._assigned = True
        for tp in tps:
            key = (tp.topic, tp.partition)
            known = [s for s in (self.model.restore_candidate(key),
                                 self._restorable.pop(key, None)) if s is not None]
            state = max(known, key=lambda s: s.position) if known else PartitionState(
                self.model.factory(), 0)
            self.model.take(key, state)
            if state.offset:
                self.clients.consumer.seek(tp, state.offset)
                # checked against the broker's log before anything is read (not here: in a
                # rebalance callback kafka-python allows no blocking call)
                self.clients.consumer.pause(tp)
                self._unchecked.add(tp)
            else:
                self.clients.consumer.seek_to_beginning(tp)
        if self.model.dirty:
            self.model.rebuild()
            self._last_rebuild = time.monotonic()
        self._update_model_gauges()
        log.info("assigned %s", ", ".join(f"{tp.topic}:{tp.partition}@"
                                          f"{self.model.own[(tp.topic, tp.partition)].offset}"
                                          for tp in tps) or "nothing")

    def _revoke(self, tps: list[TopicPartition]) -> None:
        """Give up ``tps``: flush what their records produced, snapshot, publish their states
        for the next owner, commit, and keep their states in the sum as another's."""
        keys = [(tp.topic, tp.partition) for tp in tps
                if (tp.topic, tp.partition) in self.model.own]
        if not keys:
            return
        # inside the consumer's IO loop: no blocking consumer call (no commit) here
        if self.checkpoint.changed:
            self.checkpoint.run(publish=keys, commit=False)
        else:
            self.checkpoint.publish_states(keys)
        for key in keys:
            self._unchecked.discard(TopicPartition(*key))
            self.model.release(key)
            with contextlib.suppress(KeyError):  # no lag reported for it yet
                self.metrics.lag.remove(key[0], str(key[1]))
        log.info("revoked %s", ", ".join(f"{t}:{p}" for t, p in keys))

    # -- offset gaps ----------------------------------------------------------------------------
    def _checking(self, check: Callable[[], None]) -> None:
        """Run a check of the log; a broker gone meanwhile leaves it to be run again."""
        try:
            check()
        except BROKER_ERRORS as exc:
            log.warning("checking the partitions against the broker's log failed (%s); "
                        "retrying", exc)
            self._stop.wait(1.0)

    def _recheck_logs(self) -> None:
        """The periodic check (:mod:`.logcheck`): a partition whose log no longer holds its
        anchor's record is a ``log_replaced`` gap; then every state is anchored anew."""
        own = self.model.own
        tps = {key: TopicPartition(*key) for key in own}
        begin = self.clients.consumer.beginning_offsets(list(tps.values()))

        def record_before(key: tuple[str, int], offset: int) -> int | None:
            if offset - 1 < (begin.get(tps[key]) or 0):  # deleted by retention since
                return None
            return self._record_before(tps[key], offset)

        replaced = self._anchors.replaced(own, record_before)
        if self._stop.is_set():  # a probe cut short decides nothing
            return
        if replaced:
            end = self.clients.consumer.end_offsets([tps[key] for key in replaced])
            for key in replaced:
                log.warning("%s:%s: the broker's log no longer holds a record the state read "
                            "in the last %g s: the records read since (up to offset %d) may be "
                            "of the new log", *key, self._anchors.every, own[key].offset)
                self._gap(tps[key], own[key], "log_replaced", begin.get(tps[key]) or 0,
                          end.get(tps[key]))
            if self.model.dirty:
                self.model.rebuild()
                self._last_rebuild = time.monotonic()
                self._update_model_gauges()
        self._anchors.set(self.model.own)

    def _check_offsets(self, tps: list[TopicPartition], out_of_range: bool = False) -> None:
        """Compare the owned states of ``tps`` with the broker's log, apply
        ``--offset-gap-policy`` to those outside it, and resume them. The partitions stay
        "being checked" (not ready) until the check ends."""
        asked, tps = tps, [tp for tp in tps if (tp.topic, tp.partition) in self.model.own]
        if not tps:
            self._unchecked.difference_update(asked)
            return
        begin = self.clients.consumer.beginning_offsets(tps)
        end = self.clients.consumer.end_offsets(tps)
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
                self.clients.consumer.seek(tp, state.offset)
                self._stop.wait(1.0)
        if self.model.dirty:
            self.model.rebuild()
            self._last_rebuild = time.monotonic()
            self._update_model_gauges()
        self.clients.consumer.resume(*tps)
        for tp in tps:
            # librdkafka does not fetch a partition that was paused across a watermark query
            # for up to a second after it is resumed, unless it is sought (nothing of it has
            # been read: its state's offset is its position)
            self.clients.consumer.seek(tp, self.model.own[(tp.topic, tp.partition)].offset)
        self._unchecked.difference_update(asked)

    def _compare_log(self, tp: TopicPartition, state: PartitionState) -> str | None:
        """``None`` when the broker holds, at ``state.offset - 1``, the record the state read
        last (any record there, for a state without a fingerprint); ``"after_log_end"`` when it
        holds none there within the probe's wait, ``"log_replaced"`` when it holds another."""
        found = self._record_before(tp, state.offset)
        if found is None:
            return "after_log_end"
        if state.last is not None and found != state.last:
            return "log_replaced"
        return None

    def _open_probe(self) -> InputConsumer:
        """The consumer of :meth:`_record_before`, opened once."""
        if self._probe is None:
            probe: InputConsumer = open_consumer(
                {**self.config.kafka_options(), "enable_auto_commit": False,
                 "auto_offset_reset": "none"}, self.config.consumer_client,
                on_assign=lambda tps: [probe.seek(t, self._probe_at) for t in tps])
            self._probe = probe
        return self._probe

    def _record_before(self, tp: TopicPartition, offset: int) -> int | None:
        """The fingerprint of the broker's record at ``offset - 1``, or ``None`` when it has
        none there for :data:`_PROBE_SECONDS`. Read by a separate consumer, so that the
        service's own positions and buffers are untouched; an out-of-range answer is asked
        again until then (a broker's end offset can lag behind records it already served)."""
        probe = self._open_probe()
        deadline = time.monotonic() + _PROBE_SECONDS
        self._probe_at = offset - 1
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

    # -- the batch ------------------------------------------------------------------------------
    def _process(self, batch: dict[TopicPartition, PartitionRecords]) -> None:
        m = self.metrics
        values: list = []
        offsets: list[int] = []
        # each partition's fresh records: (partition, its records, first fresh one, its index
        # in the batch)
        segments: list[tuple[TopicPartition, PartitionRecords, int, int]] = []
        # the partitions' clocks at each record and after the batch (--half-life-seconds only)
        clocks: list[int] | None = [] if self.model.by_time else None
        ends: dict[TopicPartition, int] = {}
        for tp, recs in batch.items():
            state = self.model.own.get((tp.topic, tp.partition))
            if state is None:  # not ours (any more): its next owner reads it
                continue
            m.consumed.labels(topic=tp.topic).inc(len(recs.offsets))
            # a record before the state's offset is already in the state
            start = recs.start(state.offset)
            if start == len(recs.offsets):
                continue
            segments.append((tp, recs, start, len(values)))
            values += recs.values[start:]
            offsets += recs.offsets[start:]
            if clocks is not None:
                clock = state.clock
                for t in recs.timestamps()[start:]:
                    clock = max(clock, t)
                    clocks.append(clock)
                ends[tp] = clock
        if not values:
            return
        records = _BatchRecords(segments, offsets)
        m.batch_size.observe(len(values))
        decoded = decode_batch(values, self.config.max_message_bytes,
                               token_sets=self.model.reads_token_sets)
        valid = [i for i, d in enumerate(decoded) if isinstance(d, Record)]
        if len(valid) < len(decoded):
            for i, d in enumerate(decoded):
                if isinstance(d, Rejection):
                    self.clients.dead_letter(records.record(i), d.reason, d.detail)

        start = time.perf_counter()
        # with the model's own scores (SpamFilter's spam log-odds), published beside proba
        proba, classes, rows, rejected, scores = self.model.classify([decoded[i].features
                                                                      for i in valid])
        m.predict_latency.observe(time.perf_counter() - start)
        for j, exc in rejected:
            self.clients.dead_letter(records.record(valid[j]), "invalid_record", str(exc))
        predicted = {valid[j]: k for k, j in enumerate(rows)}  # batch index -> proba row
        m.predicted.inc(len(predicted))
        if len(rows):
            if len(classes):
                counts = np.bincount(proba.argmax(axis=1), minlength=len(classes))
                for c, n in zip(classes, counts.tolist(), strict=True):
                    if n:
                        m.predictions.labels(**{"class": m.class_series(c)}).inc(n)
            else:
                m.predictions.labels(**{"class": "none"}).inc(len(rows))
        model_version = self.model.model.n_learned
        structure_version = getattr(self.model.model, "structure_version", 0)

        learned = self._learn(records, decoded, predicted, clocks)
        self._prequential(decoded, predicted, learned, proba, classes)
        publish = [i for i in predicted if decoded[i].label is None or (
            self.config.publish_labelled and i in learned)]
        self._publish(decoded, publish, predicted, proba, classes, model_version,
                      structure_version, scores)

        for tp, recs, _, _ in segments:
            last = len(recs.offsets) - 1
            self.model.advance((tp.topic, tp.partition), recs.offsets[last] + 1,
                               fingerprint(recs.record(last)), ends.get(tp))
        self.processed += len(values)
        self.checkpoint.handled(len(values))
        self._update_model_gauges()

    def _learn(self, records: _BatchRecords, decoded: list, predicted: dict[int, int],
               clocks: list[int] | None) -> set[int]:
        """Learn the labelled, classified records per partition, in offset order (``clocks``:
        each one's partition clock); the batch indices learned."""
        by_partition: dict[tuple[str, int], list[int]] = {}
        for tp, first, end in records.ranges():
            indices = [i for i in range(first, end)
                       if i in predicted and decoded[i].label is not None]
            if indices:
                by_partition[(tp.topic, tp.partition)] = indices
        learned: set[int] = set()
        start = time.perf_counter()
        limit = self.config.max_classes
        known = self.model.classes() if limit else set()  # the model's, all partitions'
        for key, indices in by_partition.items():
            labels = {i: class_label(decoded[i].label) for i in indices}
            groups = [indices]
            if limit and len(known | set(labels.values())) > limit:
                # the bound binds in this batch: record by record, so that which records are
                # refused depends on the order of the records only, not on how they are batched
                groups = [[i] for i in indices]
            for group in groups:
                label = labels[group[0]]
                if limit and len(group) == 1 and label not in known and len(known) >= limit:
                    self.clients.dead_letter(records.record(group[0]), "too_many_classes",
                                      f"label {label!r:.100} would be class {len(known) + 1} "
                                      f"of the model; --max-classes is {limit}")
                    continue
                rejected = self.model.learn(key, [decoded[i].features for i in group],
                                            [labels[i] for i in group],
                                            [records.offsets[i] for i in group],
                                            None if clocks is None
                                            else [clocks[i] for i in group])
                bad = {group[j] for j, _ in rejected}
                for j, exc in rejected:
                    # a label the model does not learn (SpamFilter: neither spam nor ham)
                    reason = "invalid_label" if exc.field == "label" else "invalid_record"
                    self.clients.dead_letter(records.record(group[j]), reason, str(exc))
                learned.update(i for i in group if i not in bad)
                known.update(labels[i] for i in group if i not in bad)
        if by_partition:
            self.metrics.learn_latency.observe(time.perf_counter() - start)
        self.metrics.learned.inc(len(learned))
        return learned

    def _prequential(self, decoded: list, predicted: dict[int, int], learned: set[int],
                     proba: Any, classes: list) -> None:
        """Accuracy and log-loss of the predictions of the records just learned."""
        if not learned:
            return
        column = {c: k for k, c in enumerate(classes)}
        order = sorted(learned)
        labels = [class_label(decoded[i].label) for i in order]
        rows = np.fromiter((predicted[i] for i in order), np.int64, len(order))
        columns = np.fromiter((column.get(y, -1) for y in labels), np.int64, len(order))
        known = columns >= 0  # a class the model had not seen got probability 0
        p = np.where(known, proba[rows, np.maximum(columns, 0)] if len(classes) else 0.0, 0.0)
        correct = known & (proba.argmax(axis=1)[rows] == columns) if len(classes) else known
        with np.errstate(divide="ignore"):
            losses = -np.log(p)
        self.metrics.observe_predictions(labels, correct, losses)

    def _publish(self, decoded: list, indices: list[int], predicted: dict[int, int],
                 proba: Any, classes: list, model_version: int, structure_version: int,
                 scores: np.ndarray | None = None) -> None:
        if not indices:
            return
        rows = [predicted[i] for i in indices]
        self.clients.outputs.send_predictions(
            self.config.output_topic, [decoded[i].id for i in indices],
            proba[rows] if len(classes) else np.zeros((len(rows), 0)), classes, model_version,
            structure_version, scores=None if scores is None else scores[rows])

    def _propose(self, version: int, names: list, cut: dict[str, int]) -> list:
        """Record candidate list ``version`` (shared candidates, :mod:`.state`) and return the
        recorded one: with a changelog, the first proposal of that version in it, this one or
        another member's, read back."""
        if self.clients.changelog is None:
            return names
        publish_candidates(self.clients.producer, self.config.changelog_topic, version, names, cut)
        self.clients.producer.flush()
        deadline = time.monotonic() + 120.0
        while version not in self.clients.changelog.candidates:
            if time.monotonic() > deadline:
                raise RuntimeError(f"candidate list {version} proposed to the changelog "
                                   f"{self.config.changelog_topic} was not read back")
            self._offer(self.clients.changelog.poll(200))
        recorded = self.clients.changelog.candidates[version]
        log.info("candidate list %d: %d attributes%s", version, len(recorded),
                 "" if recorded == names else " (another member's proposal)")
        return recorded

    def _drifted(self, key: tuple[str, int], offset: int | None) -> None:
        self.metrics.drifts.labels(topic=key[0], partition=str(key[1])).inc()
        log.info("drift detected on %s:%s at offset %s (%s): the partition's counts multiplied "
                 "by %g, its structure re-learned", *key, offset, self.config.drift_detector,
                 self.config.drift_decay)

    def _relearned(self, seconds: float) -> None:
        self.metrics.relearns.inc()
        self.metrics.relearn_duration.observe(seconds)

    def _update_model_gauges(self) -> None:
        model = self.model.model
        m = self.metrics
        m.model_records.set(model.stats.n_records)
        m.model_version.set(model.n_learned)
        m.structure_version.set(getattr(model, "structure_version", 0))

    # -- housekeeping ---------------------------------------------------------------------------
    def _maintain(self) -> None:
        now = time.monotonic()
        cfg = self.config
        if self.clients.changelog is not None and now - self._last_changelog_poll >= 0.5:
            self._last_changelog_poll = now
            self._offer(self.clients.changelog.poll(0))
        if self.model.dirty and now - self._last_rebuild >= cfg.rebuild_every_seconds:
            self.model.rebuild()
            self._last_rebuild = now
            self._update_model_gauges()
        if self.checkpoint.due(now):
            self.checkpoint.run(publish=list(self.model.own))
        if self._anchors.due(now) and self._broker_ok and not self._unchecked:
            self._checking(self._recheck_logs)
        if now - self._last_lag >= 1.0:
            self._last_lag = now
            self._check_broker()
            self.readiness()
            for key, state in self.model.own.items():
                high = self.clients.consumer.highwater(TopicPartition(*key))
                if high is not None:
                    self.metrics.lag.labels(topic=key[0], partition=str(key[1])).set(
                        max(high - state.offset, 0))
        self.metrics.tick()

    def _watchdog(self) -> None:
        """The CLI's last resort: the process exits even if a client hangs in its teardown."""
        log.error("shutdown still not done %g s after --shutdown-timeout-seconds; exiting",
                  _WATCHDOG_GRACE)
        logging.shutdown()
        os._exit(self.exit_code if self._shutdown_done else EXIT_SHUTDOWN_INCOMPLETE)

    def _shutdown(self) -> None:
        timeout = self.config.shutdown_timeout_seconds
        deadline = time.monotonic() + timeout
        watchdog = None
        if self.hard_exit:
            watchdog = threading.Timer(timeout + _WATCHDOG_GRACE, self._watchdog)
            watchdog.daemon = True
            watchdog.start()
        self._stop.set()
        try:
            if self._restored:
                self.checkpoint.final(deadline)
        finally:
            probe = [] if self._probe is None else [("closing the probe consumer",
                                                     self._probe.close)]
            self.clients.close(self._calls, deadline, before=probe)
            if self.checkpoint.failures and not self.exit_code:
                self.exit_code = EXIT_SHUTDOWN_INCOMPLETE
                log.error("stopped after %d records, but %s failed (the local snapshot holds "
                          "the model and its offsets); exit status %d", self.processed,
                          " and ".join(sorted(set(self.checkpoint.failures))), self.exit_code)
            else:
                log.info("stopped after %d records", self.processed)
            self._shutdown_done = True
            if watchdog is not None:  # done in time: the process (maybe a caller's) lives on
                watchdog.cancel()
            if self._http is not None:
                self._http.close()
