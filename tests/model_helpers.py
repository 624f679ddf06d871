"""Assertions on models' states that several test modules make."""

from __future__ import annotations

import numpy as np


def assert_same_pair_tables(a, b) -> None:
    """The pairwise models ``a`` and ``b`` hold the same candidates and, for every two of them,
    equal joint tables, read by name (values and classes may be in another order in ``b``)."""
    names = sorted(a.candidate_names())
    assert names == sorted(b.candidate_names())
    order = [list(b.stats.labels.values).index(c) for c in a.stats.labels.values]
    for i, u in enumerate(names):
        for v in names[i + 1:]:
            ta, ua, va = a.pairs.joint_table(a.stats, u, v)
            tb, ub, vb = b.pairs.joint_table(b.stats, u, v)
            tb = tb[np.ix_([ub.index(t) for t in ua], [vb.index(t) for t in va], order)]
            assert np.array_equal(ta, tb), (u, v)
