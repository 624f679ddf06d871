"""When a structure is re-learned from the counts: one schedule for every model and for the
service's shared candidate lists (``relearn_due`` asks "now?", ``relearn_point`` says where the
k-th point is; the two give the same points)."""

from __future__ import annotations

__all__ = ["relearn_due", "relearn_point"]


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


def relearn_point(k: int, every: int) -> int:
    """The number of learned records at the k-th point (k = 1, 2, …) of the schedule
    :func:`relearn_due` follows from the start: 1, 2, 4, … up to the first power of two at
    least ``every``, then every ``every`` records after it (``every`` 0: a first point only,
    after the first record — the service's candidate list is chosen then and kept).

    >>> [relearn_point(k, 100) for k in range(1, 11)]
    [1, 2, 4, 8, 16, 32, 64, 128, 228, 328]
    >>> relearn_point(1, 0), relearn_point(2, 0) > 10**18
    (1, True)
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    if not every:
        return 1 if k == 1 else 2**62
    m = (every - 1).bit_length()  # 2**m: the first power of two >= every
    if k <= m + 1:
        return 2 ** (k - 1)
    return 2**m + (k - 1 - m) * every
