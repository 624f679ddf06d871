"""Exponential forgetting: every statistic's ``decay(factor)`` accepts the same factors."""

from __future__ import annotations

__all__ = ["check_decay_factor"]


def check_decay_factor(factor: float) -> float:
    """``factor`` if it is in (0, 1] (1 keeps everything), else ValueError.

    >>> check_decay_factor(0.5)
    0.5
    >>> check_decay_factor(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: decay factor must be in (0, 1], got nan
    """
    if not 0.0 < factor <= 1.0:
        raise ValueError(f"decay factor must be in (0, 1], got {factor!r}")
    return factor
