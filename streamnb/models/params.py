"""Declarative hyperparameter checks (scikit-learn's ``_parameter_constraints`` style): a model
lists what each parameter accepts, and one function checks them all with one message form, so
a parameter that two models share means and checks the same in both.

A class declares ``_parameter_constraints = {name: [constraint, ...]}`` (``None`` in the list
accepts None); subclasses add to or override their bases' entries. A constructor stores its
parameters and calls :func:`validate_params` before building anything from them.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["DriftDetector", "Integer", "OneOf", "Real", "validate_params"]


class Integer:
    """An int (not a bool) in ``[low, high]``."""

    def __init__(self, low: int | None = None, high: int | None = None) -> None:
        self.low, self.high = low, high

    def accepts(self, value: Any) -> bool:
        return (isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)
                and (self.low is None or value >= self.low)
                and (self.high is None or value <= self.high))

    def __str__(self) -> str:
        if self.low == 0 and self.high is None:
            return "a non-negative int"
        if self.high is None:
            return "an int" + ("" if self.low is None else f" >= {self.low}")
        return f"an int in [{self.low}, {self.high}]"


class Real:
    """A finite real number (not a bool) between ``low`` and ``high``; ``closed`` says which
    ends are included: "both", "left", "right" or "neither"."""

    def __init__(self, low: float | None = None, high: float | None = None,
                 closed: str = "both") -> None:
        self.low, self.high, self.closed = low, high, closed

    def accepts(self, value: Any) -> bool:
        if not (isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)
                and math.isfinite(value)):
            return False
        if self.low is not None and (value < self.low or (
                value == self.low and self.closed not in ("both", "left"))):
            return False
        return self.high is None or not (value > self.high or (
            value == self.high and self.closed not in ("both", "right")))

    def __str__(self) -> str:
        low_in, high_in = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.low is None and self.high is None:
            return "a finite number"
        if self.high is None:
            return f"a number {'>=' if low_in else '>'} {self.low:g}"
        if self.low is None:
            return f"a number {'<=' if high_in else '<'} {self.high:g}"
        return (f"a number in {'[' if low_in else '('}{self.low:g}, {self.high:g}"
                f"{']' if high_in else ')'}")


class OneOf:
    """One of a fixed set of values (the options are shown as given)."""

    def __init__(self, options: Sequence[Any]) -> None:
        self.options = options

    def accepts(self, value: Any) -> bool:
        return any(value == option and type(value) is type(option) for option in self.options)

    def __str__(self) -> str:
        return f"one of {self.options!r}"


class DriftDetector:
    """A river drift detector (anything with ``update`` and ``drift_detected``)."""

    def accepts(self, value: Any) -> bool:
        return hasattr(value, "update") and hasattr(value, "drift_detected")

    def __str__(self) -> str:
        return "a river drift detector"


@functools.cache  # a class's signature is read once, not at every construction (not to mutate)
def constraints_of(cls: type) -> dict[str, list]:
    """Every ``_parameter_constraints`` entry of ``cls`` and its bases, subclasses winning, for
    the parameters ``cls`` takes (TAN fixes NaiveBayes' ``numeric`` instead of taking it)."""
    merged: dict[str, list] = {}
    for klass in reversed(cls.__mro__):
        merged.update(klass.__dict__.get("_parameter_constraints", {}))
    taken = inspect.signature(cls).parameters
    return {name: allowed for name, allowed in merged.items() if name in taken}


def validate_params(obj: Any) -> None:
    """Check the parameters ``obj`` has stored so far against its class's constraints; the
    first one that fails raises ``ValueError("<name> must be <what>, got <value>")``."""
    for name, allowed in constraints_of(type(obj)).items():
        if name not in obj.__dict__:
            continue  # a base class's constructor runs before the subclass stores its own
        value = obj.__dict__[name]
        if any(value is None if c is None else c.accepts(value) for c in allowed):
            continue
        what = " or ".join("None" if c is None else str(c) for c in allowed)
        raise ValueError(f"{name} must be {what}, got {value!r}")


# parameters several models share: one meaning, one check
RELEARN_EVERY = [Integer(0)]
DRIFT_DETECTOR = [None, DriftDetector()]
#: records over which a count halves (None: never forget), as the service's ``--half-life``
HALF_LIFE = [None, Real(1)]
#: the factor a drift multiplies the counts by, as the service's ``--drift-decay``
DRIFT_DECAY = [Real(0, 1, closed="right")]
VAR_SMOOTHING = [Real(0)]
#: how NaiveBayes reads a float attribute: per-class Gaussian, counts of fine bins, or MDL
#: intervals of the bins
NUMERIC_READING = [OneOf(["gaussian", "bins", "mdl"])]
#: how the discrete-attribute models read a float: MDL intervals of fine bins, or the bins
NUMERIC_INTERVALS = [OneOf(["mdl", "bins"])]
