"""The spam filter's operating point in the service: ``--max-ham-rate`` (the share of ham the
operator accepts to lose to the spam folder), the threshold the filter learned for it, and the
ham→spam and spam→ham rates realised on the last labelled messages of each class.

:func:`model_factory` builds the service's models with the option, :func:`adopt_rate` gives it
to states restored from a run with another; :func:`sum_score_sketches`
keeps the summed model's score histogram the sum of the partition states' (the one thing of
a SpamFilter that is not a function of the records alone: each state counts the scores its
own counts gave, so learning a batch into the sum would count other scores); :class:`SpamRates`
feeds the gauges of :class:`~streamnb.consumers.metrics.ServiceMetrics`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from streamnb.consumers.state import PartitionedModel, PartitionState
from streamnb.consumers.state import model_factory as _factory
from streamnb.models.spam_filter import SpamFilter

if TYPE_CHECKING:
    from streamnb.consumers.config import ServiceConfig
    from streamnb.consumers.metrics import ServiceMetrics
    from streamnb.models.base import CountClassifier

__all__ = ["ErrorWindow", "SpamRates", "adopt_rate", "model_factory", "rate_window",
           "sum_score_sketches"]

log = logging.getLogger("streamnb.service")

# The default window holds WINDOW_ERRORS / max_ham_rate hams: at the target, WINDOW_ERRORS
# hams of it are lost on average, so the realised rate reads to about ±1/√10 ≈ ±32 % (Poisson)
# and a filter losing twice the target is some three standard deviations above it.
WINDOW_ERRORS = 10
DEFAULT_WINDOW = 10_000  # without a target (the fixed threshold): 10 / 0.1 %


def rate_window(config: ServiceConfig) -> int:
    """Labelled messages of each class the realised rates are read over (``--rate-window``;
    0: :data:`WINDOW_ERRORS` / ``--max-ham-rate``, :data:`DEFAULT_WINDOW` without it)."""
    if config.rate_window:
        return config.rate_window
    if config.max_ham_rate:
        return math.ceil(WINDOW_ERRORS / config.max_ham_rate)
    return DEFAULT_WINDOW


def model_factory(config: ServiceConfig) -> Callable[[], CountClassifier]:
    """The service's models: :func:`streamnb.consumers.state.model_factory` of ``--model``,
    a SpamFilter keeping ``--max-ham-rate`` when one is given (every partition state and the
    sum are made alike, so their score histograms add)."""
    if config.max_ham_rate:  # the configuration refuses it for another --model
        return partial(SpamFilter, max_ham_rate=config.max_ham_rate)
    return _factory(config.model, config.max_candidates)


def adopt_rate(states: Mapping[Hashable, PartitionState], config: ServiceConfig,
               where: str) -> None:
    """Give restored SpamFilter states learned with another ham rate (or none) the
    service's ``--max-ham-rate``: their counted scores are kept and read at the new rate
    (:meth:`~streamnb.SpamFilter.keep_ham_rate`), so that a restart changes the target without
    re-learning, and every state of the sum forgets alike (their histograms add)."""
    wanted = config.max_ham_rate or None
    for (topic, partition), state in states.items():
        model = state.model
        if isinstance(model, SpamFilter) and (model.max_ham_rate, model.score_half_life) != (
                wanted, None):
            log.info("%s: the state of %s:%s was learned with max_ham_rate %s; it keeps its "
                     "counted scores and runs with %s from now on", where, topic, partition,
                     model.max_ham_rate, wanted)
            model.keep_ham_rate(wanted)


def sum_score_sketches(model: PartitionedModel) -> None:
    """Make the summed SpamFilter's score histogram the sum of the partition states' again.

    A batch learned into the sum counts the scores the sum gave, the same batch learned into
    its partition's state the scores the state gave; the states' are what snapshots, the
    changelog and a restart sum up, so the sum's threshold is read off theirs: the same before
    a stop and after the restart, and the same in every member of a group. O(states × bins).
    """
    total = model.model
    scores = getattr(total, "scores", None)
    if scores is None:
        return
    states = [s.model for s in model.states().values()]
    if any(m is total for m in states):  # the sum is a state's own model (one non-empty)
        return
    counts = np.zeros_like(scores.counts)
    for m in states:
        if m.scores is not None and m.scores.counts.shape == counts.shape:
            counts += m.scores.counts
    if not np.array_equal(counts, scores.counts):
        scores.counts[:] = counts
        scores.version += 1  # the threshold is cached per version


class ErrorWindow:
    """Errors among the last ``size`` labelled messages of one class: a ring of 0/1 and its
    running sum, so that a batch of ``m`` messages costs O(m), whatever the window's size.

    Examples
    --------
    >>> w = ErrorWindow(3)
    >>> w.add(np.array([True, False, False, True]))
    >>> w.n, w.errors, w.rate
    (3, 1, 0.3333333333333333)

    """

    def __init__(self, size: int) -> None:
        if not (isinstance(size, int) and size > 0):
            raise ValueError(f"size must be a positive int, got {size!r}")
        self.size = size
        self._ring = np.zeros(size, dtype=np.int8)
        self._next = 0
        self.n = 0
        self.errors = 0

    def add(self, errors: np.ndarray) -> None:
        errors = np.asarray(errors, dtype=np.int8)[-self.size:]
        if not len(errors):
            return
        at = (self._next + np.arange(len(errors))) % self.size
        # slots not filled yet hold 0, so what leaves the window is what the ring holds there
        self.errors += int(errors.sum()) - int(self._ring[at].sum())
        self._ring[at] = errors
        self._next = (self._next + len(errors)) % self.size
        self.n = min(self.n + len(errors), self.size)

    @property
    def rate(self) -> float:
        return self.errors / self.n if self.n else math.nan


class SpamRates:
    """The gauges of a SpamFilter service: threshold in force, whether it is learned yet, the
    target, and per true class (``ham``, ``spam``) the errors among the last ``size`` labelled
    messages of that class, their number and their share (ham: the realised ham→spam rate;
    spam: the spam→ham rate, the spam missed)."""

    def __init__(self, metrics: ServiceMetrics, spam_label: Any, ham_label: Any,
                 max_ham_rate: float | None, size: int) -> None:
        self.metrics = metrics
        self.classes = {str(spam_label): "spam", str(ham_label): "ham"}
        self.windows = {"ham": ErrorWindow(size), "spam": ErrorWindow(size)}
        metrics.spam_max_ham_rate.set(math.nan if max_ham_rate is None else max_ham_rate)
        for name in self.windows:
            self._export(name)

    @classmethod
    def tracking(cls, model: CountClassifier, config: ServiceConfig,
                 metrics: ServiceMetrics) -> SpamRates | None:
        """The rates of the service's model, if it is a SpamFilter (None otherwise)."""
        if not isinstance(model, SpamFilter):
            return None
        rates = cls(metrics, model.spam_label, model.ham_label, model.max_ham_rate,
                    rate_window(config))
        rates.model_changed(model)
        return rates

    def observe(self, labels: Sequence[Hashable], correct: Sequence[bool]) -> None:
        """The prequential outcome of labelled messages (true class, whether predicted right),
        in stream order."""
        kind = np.array([self.classes.get(str(label), "") for label in labels])
        wrong = ~np.asarray(correct, dtype=bool)
        for name, window in self.windows.items():
            mine = kind == name
            if mine.any():
                window.add(wrong[mine])
                self._export(name)

    def model_changed(self, model: CountClassifier) -> None:
        m = self.metrics
        m.spam_threshold.set(model.current_threshold)
        m.spam_threshold_learned.set(1.0 if model.threshold_learned else 0.0)

    def _export(self, name: str) -> None:
        window, m = self.windows[name], self.metrics
        m.spam_error_rate.labels(**{"class": name}).set(window.rate)
        m.spam_window_errors.labels(**{"class": name}).set(window.errors)
        m.spam_window_messages.labels(**{"class": name}).set(window.n)
