"""Drift detectors of the service (``--drift-detector``), with their state as plain data.

A partition's detector travels with its state (snapshots, changelog records), so that a restart
or another member goes on from exactly where it was: the detector is river's, and its state is
written as JSON numbers, never pickled. Only detectors whose state is numbers and river
:class:`~river.stats.Mean` objects qualify (ADWIN keeps a Rust object and does not).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any

__all__ = ["DETECTORS", "DriftWatch", "detector_state", "load_detector", "make_detector"]

log = logging.getLogger("streamnb.service")


# river's detectors fed with the prequential error (0 or 1) of each learned record, imported
# when one is made (the configuration reads these names without importing river)
def _page_hinkley() -> Any:
    from river import drift

    return drift.PageHinkley(mode="up")  # a rise of the error only ("both" also calls a fall)


def _ddm() -> Any:
    from river.drift import binary

    return binary.DDM()


DETECTORS = {"page-hinkley": _page_hinkley, "ddm": _ddm}


def make_detector(name: str) -> Any:
    """A fresh detector (river's defaults, but for Page-Hinkley's mode)."""
    if name not in DETECTORS:
        raise ValueError(f"unknown drift detector {name!r}; choose one of {sorted(DETECTORS)}")
    return DETECTORS[name]()


def _number(value: float) -> float | str:
    # JSON has no infinities: DDM starts its minimum at +inf
    return repr(value) if isinstance(value, float) and not math.isfinite(value) else value


def detector_state(detector: Any) -> dict[str, Any]:
    """The detector's changing attributes (not its parameters) as JSON-able data."""
    from river import stats

    params = detector._get_params()
    state: dict[str, Any] = {}
    for name, value in vars(detector).items():
        if name in params or callable(value):
            continue
        if isinstance(value, stats.Mean):
            state[name] = {"mean": [value.n, value._mean]}
        elif value is None or isinstance(value, bool | int | float):
            state[name] = _number(value)
        else:
            raise TypeError(f"{type(detector).__name__}.{name} is a {type(value).__name__}: "
                            "a state the service cannot save")
    return state


def load_detector(name: str, state: dict[str, Any]) -> Any:
    """A detector of kind ``name`` with the attributes :func:`detector_state` saved."""
    from river import stats

    detector = make_detector(name)
    expected = detector_state(detector).keys()
    if not isinstance(state, dict) or state.keys() != expected:
        raise ValueError(f"a {name} detector state has the fields {sorted(expected)}, got "
                         f"{sorted(state) if isinstance(state, dict) else state!r}")
    for field, value in state.items():
        if isinstance(value, dict):
            n, mean = value["mean"]
            restored = stats.Mean()
            restored.n, restored._mean = float(n), float(mean)
            value = restored
        elif isinstance(value, str):
            value = float(value)  # "inf", "-inf"
        setattr(detector, field, value)
    return detector


class DriftWatch:
    """A detector per own partition, reading the prequential error of each record its state
    learns (predicted first, one by one, so that the errors are those of the partition's own
    records whatever the batching). The detector's state travels in the partition state's
    ``drift`` field.

    Parameters
    ----------
    detector
        A name of :data:`DETECTORS`.
    decay
        The factor a drift multiplies the partition's counts by, in (0, 1] (1: re-learn the
        structure only).

    """

    def __init__(self, detector: str, decay: float = 0.5) -> None:
        # the models and statistics are imported when a watch is made: the configuration
        # imports this module for DETECTORS, and the publisher process for the configuration
        from streamnb.stats.forgetting import check_decay_factor

        if detector not in DETECTORS:
            raise ValueError(f"unknown drift detector {detector!r}; choose one of "
                             f"{sorted(DETECTORS)}")
        self.detector = detector
        self.decay = check_decay_factor(decay)
        self._detectors: dict[Hashable, Any] = {}  # own partitions' live detectors

    def take(self, key: Hashable, state: Any) -> None:
        """Watch ``key`` from ``state`` on (its saved detector, or a fresh one)."""
        saved = state.drift or {}
        try:
            if saved.get("detector") != self.detector:
                raise ValueError(f"a {saved.get('detector')} detector's state")
            self._detectors[key] = load_detector(self.detector, saved["state"])
        except ValueError as exc:
            # none yet, another kind (a restart with another option), or fields another
            # river version does not have: a fresh detector
            if state.drift is not None:
                log.warning("partition %s: a new %s drift detector (the saved one cannot "
                            "go on: %s)", key, self.detector, exc)
            self._detectors[key] = make_detector(self.detector)
            self._saved(key, state)

    def release(self, key: Hashable) -> None:
        self._detectors.pop(key, None)

    def learn(self, key: Hashable, state: Any, X: Sequence[dict], y: Sequence[Any],
              rows: list[int], offsets: Sequence[int] | None, rejected: list,
              drifted: Callable[[int | None], None]) -> int:
        """Learn ``rows`` into ``state``'s model one by one, each predicted first and its error
        given to the detector, ``drifted(offset)`` called at each drift; how many learned (the
        rows the model rejects appended to ``rejected`` as ``(row, error)``)."""
        from streamnb.models.schedule import learn_watching_drift
        from streamnb.stats import InvalidRecord

        detector = self._detectors[key]
        learned = 0
        for i in rows:
            try:
                drift = learn_watching_drift(state.model, detector, X[i], y[i],
                                             lambda i=i: state.model.learn_one(X[i], y[i]))
            except InvalidRecord as exc:
                rejected.append((i, exc))
                continue
            learned += 1
            if drift:
                drifted(None if offsets is None else offsets[i])
        self._saved(key, state)
        return learned

    def _saved(self, key: Hashable, state: Any) -> None:
        state.drift = {"detector": self.detector,
                       "state": detector_state(self._detectors[key])}
