"""The classification service: Kafka in, predictions out, state kept exactly once.

The loop: poll a batch and hand it to :class:`~.batch.Batches` (decode, classify with the summed
model, learn the labelled records into their partition's state and the sum, publish predictions
and dead letters); between polls, read the changelog, rebuild the sum, and every N records or T
seconds run the ordered checkpoint (:mod:`.checkpoint`: flush, snapshot, changelog, commit).
Restoring and checking the states against the broker's log is :mod:`.recovery`'s, readiness and
the HTTP endpoint :mod:`.health`'s, the Kafka clients :mod:`.clients`'.

Exactly once for the model: a partition is always (re)started from a state together with the
offset it reflects (the highest-offset one among this instance's snapshot, the changelog and
what it holds in memory), never from the group's committed offset, so a record is in a state iff
it is before that state's offset. Predictions and dead letters are at least once: records
between the last snapshot and a crash are classified again after the restart.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import threading
import time

from kafka import TopicPartition

from streamnb.consumers.batch import Batches
from streamnb.consumers.bounded import BoundedCalls
from streamnb.consumers.changelog import record_candidates
from streamnb.consumers.checkpoint import MODEL_FILE, Checkpoint
from streamnb.consumers.clients import Clients
from streamnb.consumers.config import ServiceConfig
from streamnb.consumers.consumer import OffsetsOutOfRange
from streamnb.consumers.health import Health, Watchdog
from streamnb.consumers.metrics import ServiceMetrics
from streamnb.consumers.recovery import OffsetGapError, Recovery
from streamnb.consumers.redaction import RedactSecrets
from streamnb.consumers.snapshots import probe_directory
from streamnb.consumers.spam_rates import SpamRates, model_factory
from streamnb.consumers.state import PartitionedModel

__all__ = ["EXIT_OFFSET_GAP", "EXIT_SHUTDOWN_INCOMPLETE", "MODEL_FILE", "OffsetGapError",
           "Service"]

log = logging.getLogger("streamnb.service")
EXIT_OFFSET_GAP = 3  # exit status of --offset-gap-policy fail
EXIT_SHUTDOWN_INCOMPLETE = 4  # the final flush, publish or commit failed (snapshot written)
_WATCHDOG_GRACE = 10.0  # seconds past the shutdown timeout before the CLI's process exits


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
    clients, checkpoint, recovery, health, batches
        Its parts: the Kafka clients (:mod:`.clients`), the ordered checkpoint
        (:mod:`.checkpoint`), restore and the offset-gap check (:mod:`.recovery`), readiness and
        the HTTP endpoint (:mod:`.health`), the handling of each batch (:mod:`.batch`). The
        service itself is the poll loop, rebalancing and the housekeeping between polls.

    """

    def __init__(self, config: ServiceConfig, metrics: ServiceMetrics | None = None) -> None:
        try:
            import pandas  # noqa: F401 - predict_proba_many returns DataFrames
        except ImportError:
            raise RuntimeError("the service classifies in batches with pandas: pip install "
                               "'streamnb[pandas]' (or the broker extra)") from None
        self.config = config
        self.metrics = metrics or ServiceMetrics(windows=config.window_sizes)
        self.model = PartitionedModel(model_factory(config),
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
        self.metrics.spam_rates = SpamRates.tracking(self.model.model, config, self.metrics)
        self._stop = threading.Event()
        self._calls = BoundedCalls(self._stop, "--shutdown-timeout-seconds "
                                   f"{config.shutdown_timeout_seconds:g}")
        self.clients = Clients(config, self.metrics)
        self.checkpoint = Checkpoint(config, self.metrics, self.model, self.clients, self._calls)
        self.recovery = Recovery(config, self.metrics, self.model, self.clients,
                                 self.checkpoint, self._stop, self._rebuilt)
        self.health = Health(config, self.metrics, self.recovery, self.checkpoint, self._stop)
        self._last_changelog_poll = 0.0
        self._last_rebuild = 0.0
        self._last_lag = 0.0
        self.batches = Batches(config, self.metrics, self.model, self.clients, self.checkpoint,
                               self._update_model_gauges)
        self.exit_code = 0
        self.hard_exit = False  # the CLI: a watchdog bounds the whole shutdown
        self._stopping = threading.Lock()
        self._deadline: float | None = None  # the shutdown's, set by the first stop request
        self._stopped = False  # the shutdown is done (the watchdog's exit status says so)
        self._watchdog: Watchdog | None = None

    @property
    def metrics_url(self) -> str:
        """The Prometheus endpoint, once running ('' without one)."""
        return self.health.url

    def readiness(self) -> tuple[bool, str]:
        """``(ready, why)``, as ``/readyz`` answers (:meth:`.Health.readiness`)."""
        return self.health.readiness()

    # -- lifecycle ------------------------------------------------------------------------------
    def stop(self) -> None:
        """Ask the loop to finish its batch, snapshot and exit, within
        ``--shutdown-timeout-seconds`` of this first request (in the CLI, a watchdog ends the
        process 10 s after that if the shutdown still runs). Any thread may call it, but not
        a signal handler: :func:`~.signals.stopping_signals` does that part."""
        with self._stopping:
            if self._deadline is None:
                self._deadline = time.monotonic() + self.config.shutdown_timeout_seconds
                if self.hard_exit:
                    self._watchdog = Watchdog(
                        self._deadline - time.monotonic(), _WATCHDOG_GRACE,
                        lambda: self.exit_code if self._stopped else EXIT_SHUTDOWN_INCOMPLETE)
        self._stop.set()

    @property
    def processed(self) -> int:
        """Records handled (learned, predicted or dead-lettered) by this run."""
        return self.batches.processed

    def run(self, max_records: int | None = None) -> int:
        """Serve until :meth:`stop` (or, if given, until ``max_records`` records have been
        handled); then drain, snapshot, publish and exit. Returns the exit status: 0, or
        :data:`EXIT_OFFSET_GAP` when an offset gap stopped it (``--offset-gap-policy fail``)."""
        self._redact_logs()
        probe_directory(self.checkpoint.snapshot_dir)  # refused now, not at the first snapshot
        self.health.serve()
        kafka_log = logging.getLogger("kafka")
        level = kafka_log.level
        if self.config.log_level != "debug":
            # kafka-python logs every failed connection attempt at ERROR: while starting, the
            # service's own one line (the CLI's) says what failed
            kafka_log.setLevel(logging.CRITICAL)
        try:
            try:
                self.clients.open(on_assign=self._assign, on_revoke=self._revoke)
                self.recovery.restore()
                self._last_changelog_poll = time.monotonic()
                self._subscribe()
            finally:
                kafka_log.setLevel(level)
            self.recovery.restored = True
            self._check_broker()
            self.health.readiness()
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
            self.recovery.check(self.health.broker_ok)
            try:
                batch = self.clients.consumer.poll(self.config.max_poll_records,
                                            self.config.poll_timeout_ms)
            except OffsetsOutOfRange as exc:
                out = exc.offsets
                log.info("the broker reports offsets out of range: %s", ", ".join(
                    f"{tp.topic}:{tp.partition}@{o}" for tp, o in out.items()))
                self.recovery.check(self.health.broker_ok, out_of_range=list(out))
                continue
            if self.health.broker_ok:
                self.metrics.last_poll.set_to_current_time()
            if batch:
                self.batches.process(batch)
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

    def _subscribe(self) -> None:
        if self.config.group_id:
            self.clients.consumer.subscribe(list(self.config.input_topic))
        else:
            self._assign_all()

    def _check_broker(self) -> None:
        self.health.check_broker(self.clients.consumer.connected())

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
        self.recovery.assigned = True

    # -- rebalancing ----------------------------------------------------------------------------
    def _assign(self, tps: list[TopicPartition]) -> None:
        """Own ``tps`` (the consumer's on_assign): each from the furthest state known, the
        consumer positioned at its offset."""
        self.recovery.assign(tps)
        self._rebuilt()
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
            self.recovery.unchecked.discard(TopicPartition(*key))
            self.model.release(key)
            with contextlib.suppress(KeyError):  # no lag reported for it yet
                self.metrics.lag.remove(key[0], str(key[1]))
        log.info("revoked %s", ", ".join(f"{t}:{p}" for t, p in keys))

    def _propose(self, version: int, names: list, cut: dict[str, int]) -> list:
        """Record candidate list ``version`` on the changelog, if there is one
        (:func:`~.changelog.record_candidates`)."""
        if self.clients.changelog is None:
            return names
        return record_candidates(self.clients.producer, self.clients.changelog,
                                 self.config.changelog_topic, version, names, cut,
                                 self.recovery.offer)

    def _drifted(self, key: tuple[str, int], offset: int | None) -> None:
        self.metrics.drifts.labels(topic=key[0], partition=str(key[1])).inc()
        log.info("drift detected on %s:%s at offset %s (%s): the partition's counts multiplied "
                 "by %g, its structure re-learned", *key, offset, self.config.drift_detector,
                 self.config.drift_decay)

    def _relearned(self, seconds: float) -> None:
        self.metrics.relearns.inc()
        self.metrics.relearn_duration.observe(seconds)

    def _rebuilt(self) -> None:
        """The sum rebuilt if any state changed under it, and the gauges set."""
        if self.model.dirty:
            self.model.rebuild()
            self._last_rebuild = time.monotonic()
        self._update_model_gauges()

    def _update_model_gauges(self) -> None:
        model = self.model.model
        m = self.metrics
        m.model_records.set(model.stats.n_records)
        m.structure_version.set(getattr(model, "structure_version", 0))
        if m.spam_rates is not None:
            m.spam_rates.model_changed(model)
        # last: a scrape that reads this version reads the other gauges of the same sum
        m.model_version.set(model.n_learned)

    # -- housekeeping ---------------------------------------------------------------------------
    def _maintain(self) -> None:
        now = time.monotonic()
        cfg = self.config
        if self.clients.changelog is not None and now - self._last_changelog_poll >= 0.5:
            self._last_changelog_poll = now
            self.recovery.offer(self.clients.changelog.poll(0))
        if self.model.dirty and now - self._last_rebuild >= cfg.rebuild_every_seconds:
            self.model.rebuild()
            self._last_rebuild = now
            self._update_model_gauges()
        if self.checkpoint.due(now):
            self.checkpoint.run(publish=list(self.model.own))
        self.recovery.recheck(self.health.broker_ok, now)
        if now - self._last_lag >= 1.0:
            self._last_lag = now
            self._check_broker()
            self.health.readiness()
            for key, state in self.model.own.items():
                high = self.clients.consumer.highwater(TopicPartition(*key))
                if high is not None:
                    self.metrics.lag.labels(topic=key[0], partition=str(key[1])).set(
                        max(high - state.offset, 0))
        self.metrics.tick()

    def _shutdown(self) -> None:
        self.stop()  # the deadline counts from the first request (a signal's, or this one)
        assert self._deadline is not None
        deadline = self._deadline
        try:
            if self.recovery.restored:
                self.checkpoint.final(deadline)
        finally:
            self.clients.close(self._calls, deadline, before=self.recovery.probe.closing())
            if self.checkpoint.failures and not self.exit_code:
                self.exit_code = EXIT_SHUTDOWN_INCOMPLETE
                log.error("stopped after %d records, but %s failed (the local snapshot holds "
                          "the model and its offsets); exit status %d", self.processed,
                          " and ".join(sorted(set(self.checkpoint.failures))), self.exit_code)
            else:
                log.info("stopped after %d records", self.processed)
            self._stopped = True
            if self._watchdog is not None:  # done in time: a caller's process lives on
                self._watchdog.cancel()
            self.health.close()
