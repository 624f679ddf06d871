"""One relearn schedule: the points where relearn_due fires, learning one record at a time,
are relearn_point's (the service's candidate-list points), for every period."""

from __future__ import annotations

import pytest

from streamnb.models.schedule import relearn_due, relearn_point


@pytest.mark.parametrize("every", [1, 2, 3, 5, 8, 50, 100, 128, 1000])
def test_relearn_due_fires_at_relearn_points(every):
    fired, last = [], 0
    for n in range(1, 5001):
        if relearn_due(n - last, every, n):
            fired.append(n)
            last = n
    assert fired == [relearn_point(k, every) for k in range(1, len(fired) + 1)]
    assert relearn_point(len(fired) + 1, every) > 5000


def test_period_zero_is_on_demand_only():
    assert not any(relearn_due(n, 0, n) for n in range(1, 100))
    assert relearn_point(1, 0) == 1 and relearn_point(2, 0) > 10**18
