"""The service's Prometheus metrics (names are a contract: dashboards and alerts use them).

Counters: ``streamnb_messages_consumed_total{topic}``, ``streamnb_messages_learned_total``,
``streamnb_messages_predicted_total``, ``streamnb_dead_letters_total{reason}``,
``streamnb_relearns_total``, ``streamnb_drifts_total{topic,partition}``,
``streamnb_snapshots_total``, ``streamnb_offset_gaps_total{topic,partition,kind}``,
``streamnb_records_lost_total{topic,partition}``, ``streamnb_snapshot_fallbacks_total{to}``,
``streamnb_publish_errors_total``, ``streamnb_commit_errors_total``,
``streamnb_snapshot_errors_total``, ``streamnb_predictions_total{class}``.
Histograms:
``streamnb_learn_latency_seconds`` and ``streamnb_predict_latency_seconds`` (per batch),
``streamnb_batch_size``, ``streamnb_relearn_duration_seconds``. Gauges:
``streamnb_prequential_accuracy{window,class}`` and ``streamnb_prequential_log_loss{window,class}``
(``class="all"`` overall), ``streamnb_model_records``, ``streamnb_structure_version``,
``streamnb_model_version``, ``streamnb_snapshot_age_seconds``,
``streamnb_consumer_lag{topic,partition}``, ``streamnb_ready``, ``streamnb_broker_reachable``,
``streamnb_snapshot_failing``,
``streamnb_last_poll_timestamp_seconds``, ``streamnb_last_commit_timestamp_seconds``,
``streamnb_last_snapshot_timestamp_seconds``; a SpamFilter's ``streamnb_spam_threshold``,
``streamnb_spam_threshold_learned``, ``streamnb_spam_max_ham_rate``,
``streamnb_spam_error_rate{class}``, ``streamnb_spam_window_errors{class}``,
``streamnb_spam_window_messages{class}``; ``streamnb_build_info``. docs/service.md has the
whole table.
"""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
)

from streamnb.consumers.messages import REASONS

if TYPE_CHECKING:
    from streamnb.consumers.spam_rates import SpamRates

__all__ = ["CLASS_SERIES", "OTHER_CLASSES", "PrequentialWindow", "ServiceMetrics"]

# The per-class series (predictions, accuracy, log-loss) name the first CLASS_SERIES classes
# seen; every later class is counted under OTHER_CLASSES, so that a model of many classes
# keeps its /metrics page small (each named class costs 1 + 2 x windows series).
CLASS_SERIES = 50
OTHER_CLASSES = "(other)"

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                    5.0)
_BATCH_BUCKETS = (1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000)
_LOG_LOSS_CAP = -math.log(1e-15)  # scikit-learn's clipping, as in streamnb.evaluate


class PrequentialWindow:
    """Accuracy and log-loss of the last ``size`` labelled predictions, overall and per class.

    A ring buffer of (class, correct, log-loss) updated a batch at a time with numpy: river's
    ``utils.Rolling(metrics.Accuracy())`` updates one prediction per Python call (measured here
    at 2–8 µs per prediction and metric), several times the cost of learning the record.

    Examples
    --------
    >>> w = PrequentialWindow(3)
    >>> w.add(["a", "b", "a", "a"], [True, False, True, False], [0.1, 2.0, 0.2, 0.3])
    >>> w.accuracy(), round(w.log_loss(), 4), w.per_class()["a"]
    (0.3333333333333333, 0.8333, (0.5, 0.25))

    """

    def __init__(self, size: int) -> None:
        if not (isinstance(size, int) and size > 0):
            raise ValueError(f"size must be a positive int, got {size!r}")
        self.size = size
        self.classes: list[Hashable] = []
        self._class_index: dict[Hashable, int] = {}
        self._class = np.zeros(size, dtype=np.int64)
        self._correct = np.zeros(size)
        self._loss = np.zeros(size)
        self._next = 0
        self.n = 0

    def add(self, labels: Sequence[Hashable], correct: Sequence[bool],
            log_loss: Sequence[float]) -> None:
        index = self._class_index
        for label in labels:
            if label not in index:
                index[label] = len(self.classes)
                self.classes.append(label)
        classes = np.fromiter((index[label] for label in labels), np.int64, len(labels))
        correct = np.asarray(correct, dtype=np.float64)
        loss = np.minimum(np.asarray(log_loss, dtype=np.float64), _LOG_LOSS_CAP)
        if len(classes) > self.size:
            classes, correct, loss = (a[-self.size:] for a in (classes, correct, loss))
        at = (self._next + np.arange(len(classes))) % self.size
        self._class[at], self._correct[at], self._loss[at] = classes, correct, loss
        self._next = (self._next + len(classes)) % self.size
        self.n = min(self.n + len(classes), self.size)

    def accuracy(self) -> float:
        return float(self._correct[: self.n].mean()) if self.n else math.nan

    def log_loss(self) -> float:
        return float(self._loss[: self.n].mean()) if self.n else math.nan

    def per_class(self) -> dict[Hashable, tuple[float, float]]:
        """Class → (accuracy, log-loss) over the window's records of that class (NaN for a
        class seen before but not in the window)."""
        k = len(self.classes)
        cls = self._class[: self.n]
        counts = np.bincount(cls, minlength=k)
        correct = np.bincount(cls, weights=self._correct[: self.n], minlength=k)
        loss = np.bincount(cls, weights=self._loss[: self.n], minlength=k)
        return {label: (float(correct[c] / counts[c]), float(loss[c] / counts[c]))
                if counts[c] else (math.nan, math.nan) for c, label in enumerate(self.classes)}


class ServiceMetrics:
    """Every metric of the service, registered in ``registry`` at construction.

    Parameters
    ----------
    registry
        Where to register (default: a new :class:`~prometheus_client.CollectorRegistry`).
    windows
        Sizes of the prequential sliding windows (the ``window`` label).

    """

    def __init__(self, registry: CollectorRegistry | None = None,
                 windows: Sequence[int] = (1000, 10000)) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self.consumed = Counter("streamnb_messages_consumed", "Messages read from the input "
                                "topics", ["topic"], registry=r)
        self.learned = Counter("streamnb_messages_learned", "Labelled messages learned",
                               registry=r)
        self.predicted = Counter("streamnb_messages_predicted", "Messages classified "
                                 "(labelled ones before learning them)", registry=r)
        self.dead_letters = Counter("streamnb_dead_letters", "Messages sent to the dead-letter "
                                    "topic", ["reason"], registry=r)
        self.relearns = Counter("streamnb_relearns", "Structure re-learnings", registry=r)
        self.drifts = Counter("streamnb_drifts", "Drifts the --drift-detector found in a "
                              "partition's prequential errors (each one reacted to)",
                              ["topic", "partition"], registry=r)
        self.snapshots = Counter("streamnb_snapshots", "Snapshots written", registry=r)
        self.learn_latency = Histogram("streamnb_learn_latency_seconds", "Time to learn one "
                                       "batch", buckets=_LATENCY_BUCKETS, registry=r)
        self.predict_latency = Histogram("streamnb_predict_latency_seconds", "Time to classify "
                                         "one batch", buckets=_LATENCY_BUCKETS, registry=r)
        self.batch_size = Histogram("streamnb_batch_size", "Records per poll",
                                    buckets=_BATCH_BUCKETS, registry=r)
        self.relearn_duration = Histogram("streamnb_relearn_duration_seconds", "Time of one "
                                          "structure re-learning", buckets=_LATENCY_BUCKETS,
                                          registry=r)
        self.accuracy = Gauge("streamnb_prequential_accuracy", "Accuracy of the predictions of "
                              "labelled messages, made before learning them, over the last "
                              "`window` of them (class: true class, or all)",
                              ["window", "class"], registry=r)
        self.log_loss = Gauge("streamnb_prequential_log_loss", "Mean -log P(true class) over "
                              "the same window (each term capped at -log 1e-15)",
                              ["window", "class"], registry=r)
        self.model_records = Gauge("streamnb_model_records", "Records in the model (all "
                                   "partitions; with --half-life, their decayed weight)",
                                   registry=r)
        self.structure_version = Gauge("streamnb_structure_version", "Structure re-learnings "
                                       "the model has been through", registry=r)
        self.model_version = Gauge("streamnb_model_version", "Records the model has learned "
                                   "(the model_version of its predictions)", registry=r)
        self.snapshot_age = Gauge("streamnb_snapshot_age_seconds", "Seconds since the last "
                                  "snapshot", registry=r)
        self.lag = Gauge("streamnb_consumer_lag", "Records behind the end of each input "
                         "partition", ["topic", "partition"], registry=r)
        self.offset_gaps = Counter("streamnb_offset_gaps", "Partition states found outside the "
                                   "broker's log (kind: before_log_start, records deleted "
                                   "unread; after_log_end, the log is shorter than the state; "
                                   "log_replaced, another record before the state's offset)",
                                   ["topic", "partition", "kind"], registry=r)
        self.records_lost = Counter("streamnb_records_lost", "Records deleted from the broker "
                                    "before they were read (counted when the offset gap "
                                    "policy goes on past them)", ["topic", "partition"],
                                    registry=r)
        self.snapshot_fallbacks = Counter("streamnb_snapshot_fallbacks", "Unreadable snapshot "
                                          "generations at start, by what the restore fell back "
                                          "to (previous_generation, changelog)", ["to"],
                                          registry=r)
        # health (docs/service.md, "Health")
        self.up = Gauge("streamnb_ready", "1 when /readyz answers 200: state restored, "
                        "partitions assigned and checked, broker reachable", registry=r)
        self.broker_reachable = Gauge("streamnb_broker_reachable", "1 while the consumer has "
                                      "a connection to a broker", registry=r)
        self.last_poll = Gauge("streamnb_last_poll_timestamp_seconds", "Unix time of the last "
                               "poll that reached a broker", registry=r)
        self.last_commit = Gauge("streamnb_last_commit_timestamp_seconds", "Unix time of the "
                                 "last successful offset commit", registry=r)
        self.last_snapshot_time = Gauge("streamnb_last_snapshot_timestamp_seconds", "Unix time "
                                        "of the last snapshot written", registry=r)
        self.publish_errors = Counter("streamnb_publish_errors", "Failed flushes of predictions, "
                                      "dead letters or changelog states", registry=r)
        self.commit_errors = Counter("streamnb_commit_errors", "Failed offset commits",
                                     registry=r)
        self.snapshot_errors = Counter("streamnb_snapshot_errors", "Snapshots that could not "
                                       "be written", registry=r)
        self.snapshot_failing = Gauge("streamnb_snapshot_failing", "1 while the latest "
                                      "snapshot could not be written (disk full, permissions)",
                                      registry=r)
        self.predictions = Counter("streamnb_predictions", "Messages classified, by predicted "
                                   "class (none: the model knew no class yet)", ["class"],
                                   registry=r)
        # the spam filter's operating point (:mod:`.spam_rates`; NaN, and no class series,
        # for another model)
        self.spam_threshold = Gauge("streamnb_spam_threshold", "The SpamFilter's decision "
                                    "threshold in force (spam log-odds; a score above it is "
                                    "spam)", registry=r)
        self.spam_threshold_learned = Gauge("streamnb_spam_threshold_learned", "1 once the "
                                            "threshold is learned for --max-ham-rate (after "
                                            "the warm-up of 1/rate labelled ham)", registry=r)
        self.spam_max_ham_rate = Gauge("streamnb_spam_max_ham_rate", "--max-ham-rate: the "
                                       "share of ham the threshold is to send to spam at "
                                       "most", registry=r)
        self.spam_error_rate = Gauge("streamnb_spam_error_rate", "Share of the last "
                                     "--rate-window labelled messages of the class that were "
                                     "classified as the other (class=ham: the realised "
                                     "ham->spam rate; class=spam: spam missed)", ["class"],
                                     registry=r)
        self.spam_window_errors = Gauge("streamnb_spam_window_errors", "Messages of the class "
                                        "classified as the other among its last "
                                        "--rate-window labelled ones", ["class"], registry=r)
        self.spam_window_messages = Gauge("streamnb_spam_window_messages", "Labelled messages "
                                          "of the class in the window (up to --rate-window)",
                                          ["class"], registry=r)
        self.spam_threshold.set(math.nan)
        self.spam_max_ham_rate.set(math.nan)
        self.spam_rates: SpamRates | None = None  # set by the service for a SpamFilter
        self.build = Info("streamnb_build", "Versions of streamnb, Python and the Kafka client",
                          registry=r)
        from kafka import __version__ as kafka_version

        from streamnb import __version__

        self.build.info({"version": __version__, "python": platform.python_version(),
                         "kafka_python": kafka_version})
        if r is not REGISTRY:  # prometheus-client registers these in its default one itself
            ProcessCollector(registry=r)
            PlatformCollector(registry=r)
            GCCollector(registry=r)
        for to in ("previous_generation", "changelog"):
            self.snapshot_fallbacks.labels(to=to)
        for reason in REASONS:  # every reason exported from the start, at 0
            self.dead_letters.labels(reason=reason)
        self.windows = {size: PrequentialWindow(size) for size in windows}
        self._class_series: set[str] = set()
        self.last_snapshot = time.monotonic()

    def observe_predictions(self, labels: Sequence[Hashable], correct: Sequence[bool],
                            log_loss: Sequence[float]) -> None:
        """Record the prequential outcome of labelled predictions and refresh the gauges."""
        if not len(labels):
            return
        if self.spam_rates is not None:
            self.spam_rates.observe(labels, correct)
        labels = [self.class_series(label) for label in labels]
        for size, window in self.windows.items():
            window.add(labels, correct, log_loss)
            name = str(size)
            self.accuracy.labels(window=name, **{"class": "all"}).set(window.accuracy())
            self.log_loss.labels(window=name, **{"class": "all"}).set(window.log_loss())
            for label, (accuracy, loss) in window.per_class().items():
                self.accuracy.labels(window=name, **{"class": str(label)}).set(accuracy)
                self.log_loss.labels(window=name, **{"class": str(label)}).set(loss)

    def class_series(self, label: Hashable) -> str:
        """The ``class`` label value of ``label``'s series: itself for the first
        :data:`CLASS_SERIES` classes seen, :data:`OTHER_CLASSES` for the rest."""
        name = str(label)
        if name in self._class_series:
            return name
        if len(self._class_series) < CLASS_SERIES:
            self._class_series.add(name)
            return name
        return OTHER_CLASSES

    def snapshot_written(self) -> None:
        self.snapshots.inc()
        self.last_snapshot_time.set_to_current_time()
        self.last_snapshot = time.monotonic()
        self.snapshot_age.set(0.0)

    def tick(self) -> None:
        self.snapshot_age.set(time.monotonic() - self.last_snapshot)
