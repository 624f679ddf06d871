"""The C kernels and their Python twins (streamnb._accel.kernels) give the same results."""

from __future__ import annotations

import re
from array import array

import numpy as np
import pytest

from streamnb._accel import kernels

_kernels = pytest.importorskip("streamnb._accel._kernels", reason="C kernels not built")


def _random_state(rng, k=3, width=40, bins=8):
    counts = np.zeros((k + 1, width + 5))  # capacity beyond the live part, as in the stats
    counts[:k, :width] = rng.integers(0, bins, size=(k, width)).astype(float)
    class_counts = counts[:k, :width].max(axis=1) + rng.integers(0, 3, size=k)
    return counts, class_counts


@pytest.mark.parametrize("seed", range(20))
def test_encode_tokens_same(seed):
    rng = np.random.default_rng(seed)
    token_column = {f"t{i}": i for i in range(10)}
    attribute_index = {**{f"t{i}": i for i in range(10)}, "nom": 10}
    values = [True, False, 0, 1, 3, -2, 1.0, "s", None, np.int64(1)]
    x = {f"t{rng.integers(0, 14)}": values[rng.integers(0, len(values))] for _ in range(8)}
    x["nom"] = "v"
    for grow in (False, True):
        assert _kernels.encode_tokens(x, token_column, attribute_index, grow) == \
            kernels._encode_tokens(x, token_column, attribute_index, grow)


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize(("a", "b"), [(1.0, 1.0), (0.0, 0.0), (0.5, 2.0)])
def test_token_log_odds_same(seed, a, b):
    rng = np.random.default_rng(seed)
    counts, class_counts = _random_state(rng)
    columns = rng.choice(40, size=12, replace=False).tolist()
    out = []
    for fn in (_kernels.token_log_odds, kernels._token_log_odds):
        finite, zeros = array("d", [0.5, -1.0, 2.0]), array("q", [0, 1, 0])
        fn(counts, 3, columns, class_counts, a, b, finite, zeros)
        out.append((finite.tolist(), zeros.tolist()))
    assert out[0] == out[1]


@pytest.mark.parametrize("seed", range(20))
def test_token_increment_same(seed):
    rng = np.random.default_rng(seed)
    heads = rng.choice(40, 3, replace=False)
    columns = rng.choice(40, 10, replace=False).tolist()
    results = []
    for fn in (_kernels.token_increment, kernels._token_increment):
        counts, _ = _random_state(np.random.default_rng(seed))
        bins = np.zeros((3, 8))
        for c in range(3):  # counts ≥ 7 overflow the last bin: their tokens cross to the head
            bins[c] = np.bincount(np.minimum(counts[c, :40].astype(int), 7), minlength=8)
        is_head = np.zeros(64, dtype=bool)
        is_head[heads] = True
        crossed = fn(counts, 1, columns, bins, is_head, True)
        results.append((crossed, counts.tolist(), bins.tolist()))
    assert results[0] == results[1]


@pytest.mark.parametrize(("count", "shown"), [(9.0, "9.0"), (-3.0, "-3.0"), (1e20, "1e+20")])
def test_token_increment_unbinned_count_message(count, shown):
    """A count outside the bins is named in the message as Python's repr writes it (the C
    kernel once passed %g to PyErr_Format, which has no such conversion), and both twins
    stop at that column, leaving the same counts and bins."""
    results = []
    for fn in (_kernels.token_increment, kernels._token_increment):
        counts = np.zeros((2, 8))
        counts[0, [1, 3, 5]] = [2.0, count, 1.0]
        bins = np.zeros((2, 8))
        bins[0] = np.bincount([2, 0, 0, 0, 0, 1], minlength=8)
        with pytest.raises(ValueError, match="^count " + re.escape(shown)
                           + " of column 3 is not binned$"):
            fn(counts, 0, [1, 3, 5], bins, np.zeros(8, dtype=bool), True)
        results.append((counts.tolist(), bins.tolist()))
    assert results[0] == results[1]
    assert results[0][0][0][1] == 3.0 and results[0][0][0][5] == 1.0  # 1 counted, 5 not


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("a", [1.0, 0.0])
def test_class_absent_sum_same(seed, a):
    rng = np.random.default_rng(seed)
    counts, class_counts = _random_state(rng)
    N = int(class_counts[1])
    bins = np.zeros((3, 6))
    binned = counts[1, :30].astype(int)
    binned = binned[binned < 6]
    bins[1] = np.bincount(binned, minlength=6)
    head = np.flatnonzero(counts[1, :40] >= 6).astype(np.int64)
    with np.errstate(divide="ignore"):
        table = np.log(np.arange(N + 1) + a)
    table[np.isinf(table)] = 0.0
    assert _kernels.class_absent_sum(bins, counts, 1, N, table, head, a == 0) == \
        kernels._class_absent_sum(bins, counts, 1, N, table, head, a == 0)


@pytest.mark.parametrize("seed", range(20))
def test_posterior_same(seed):
    rng = np.random.default_rng(seed)
    labels = ["a", "b", "c", "d"]
    finite = array("d", rng.normal(size=4) * 300)
    zeros = array("q", rng.integers(0, 2, size=4))
    one, two = _kernels.posterior(labels, finite, zeros), kernels._posterior(labels, finite, zeros)
    assert one.keys() == two.keys()
    assert [one[c] for c in labels] == pytest.approx([two[c] for c in labels], rel=1e-15)
    assert sum(one.values()) == pytest.approx(1.0)


def test_kernels_reject_out_of_range_columns():
    counts = np.zeros((2, 4))
    finite, zeros = array("d", [0, 0]), array("q", [0, 0])
    with pytest.raises(IndexError):
        _kernels.token_log_odds(counts, 2, [7], np.ones(2), 1.0, 1.0, finite, zeros)
