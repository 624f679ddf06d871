"""Drift detectors of the service (``--drift-detector``), with their state as plain data.

A partition's detector travels with its state (snapshots, changelog records), so that a restart
or another member goes on from exactly where it was: the detector is river's, and its state is
written as JSON numbers, never pickled. Only detectors whose state is numbers and river
:class:`~river.stats.Mean` objects qualify (ADWIN keeps a Rust object and does not).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["DETECTORS", "detector_state", "load_detector", "make_detector"]


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
