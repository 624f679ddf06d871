"""Hyperparameters are checked declaratively (streamnb/models/params.py): a parameter that
several models share is refused with the same message in each, bools are not ints, NaN and
infinities are not numbers, and every declared parameter of every model is checked."""

from __future__ import annotations

import math

import pytest

from streamnb import (
    AODE,
    CCICANB,
    LDA,
    QDA,
    TAN,
    KernelNB,
    NaiveBayes,
    SelectiveBN,
    SelectiveNB,
    SelectiveTAN,
    SpamFilter,
)
from streamnb.models.params import Integer, OneOf, Real, constraints_of

MODELS = [NaiveBayes, TAN, AODE, SelectiveNB, SelectiveTAN, SelectiveBN, SpamFilter, LDA,
          QDA, KernelNB, CCICANB]


@pytest.mark.parametrize("classes, name, value, message", [
    ((TAN, SelectiveNB, SelectiveTAN, SelectiveBN), "relearn_every", True,
     "relearn_every must be a non-negative int, got True"),
    ((TAN, SelectiveTAN), "relearn_every", -1, "relearn_every must be a non-negative int, got -1"),
    ((TAN, SelectiveTAN), "drift_detector", "adwin",
     "drift_detector must be None or a river drift detector, got 'adwin'"),
    ((TAN, SelectiveTAN), "weight", "mi",
     "weight must be one of ('cmi', 'ddr', 'bayes'), got 'mi'"),
    ((TAN, AODE, SelectiveTAN), "max_candidates", 1, "max_candidates must be an int >= 2, got 1"),
    ((NaiveBayes, TAN, KernelNB), "var_smoothing", math.nan,
     "var_smoothing must be a number >= 0, got nan"),
])
def test_a_shared_parameter_is_refused_alike(classes, name, value, message):
    for cls in classes:
        with pytest.raises(ValueError) as info:
            cls(**{name: value})
        assert str(info.value) == message, cls.__name__


def _bad_values(constraint) -> list:
    if isinstance(constraint, Integer):
        return [True, 1.5, *([constraint.low - 1] if constraint.low is not None else [])]
    if isinstance(constraint, Real):
        return [math.inf, math.nan, "1", *([constraint.low - 1] if constraint.low is not None
                                          else [])]
    if isinstance(constraint, OneOf):
        return ["no such option"]
    return [object()]


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_every_declared_parameter_is_checked(cls):
    """Values outside every allowed kind are refused for each declared parameter (the check
    really runs for each), naming the parameter; the defaults pass."""
    cls()
    for name, allowed in constraints_of(cls).items():
        if len([c for c in allowed if c is not None]) != 1:
            continue  # unions (shrinkage): covered by test_shrinkage_accepts_its_three_forms
        (constraint,) = [c for c in allowed if c is not None]
        for value in _bad_values(constraint):
            if any(c is not None and c.accepts(value) for c in allowed):
                continue
            with pytest.raises(ValueError, match=f"^{name} must be "):
                cls(**{name: value})


def test_shrinkage_accepts_its_three_forms():
    for value in (None, "ledoit-wolf", 0.0, 0.3, 1):
        LDA(shrinkage=value)
    for value in (1.5, "auto", True, math.nan):
        with pytest.raises(ValueError, match="shrinkage must be None or one of"):
            QDA(shrinkage=value)
