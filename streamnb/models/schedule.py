"""When a structure is re-learned from the counts: one schedule for every model."""

from __future__ import annotations

__all__ = ["relearn_due"]


def relearn_due(since: int, every: int, learned: int) -> bool:
    """Whether a structure update is due ``since`` records after the last one, with
    ``learned`` records learned in all: after 1, 2, 4, 8, … records, then every ``every``
    (0: never, only on demand). The first structure comes as soon as there are counts — a
    model trained on fewer than ``every`` records is never left without one — and it is
    refined while the counts are young, for log2(every) extra updates.

    >>> done, last = [], 0
    >>> for n in range(1, 400):
    ...     if relearn_due(n - last, 100, n):
    ...         done.append(n)
    ...         last = n
    >>> done
    [1, 2, 4, 8, 16, 32, 64, 128, 228, 328]
    """
    if not every:
        return False
    return since >= min(every, max(learned - since, 1))
