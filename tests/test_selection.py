"""Info-AS (Singh & Provan §4): CIG/CGR/CDC against hand-computed tables, the index tree against
brute-force counting, the G-test against scipy, the forward selection and its χ² stop."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chi2_contingency
from sklearn.metrics import mutual_info_score

from streamnb.structure import (
    DiscreteData,
    IndexTree,
    conditional_distance_complement,
    conditional_gain_ratio,
    conditional_independence_test,
    conditional_information_gain,
    info_as,
)


def entropy(counts):
    total = sum(counts)
    return -sum(c / total * math.log(c / total) for c in counts if c)


def by_definition(table):
    """Definitions 4.1–4.3 read literally: per layer l, p_l, H_C^l, H_A^l, H_Cell^l (eq. 3–5)."""
    total = sum(sum(sum(row) for row in layer) for layer in table)
    cig = h_a = h_cell = 0.0
    for layer in table:
        n_l = sum(sum(row) for row in layer)
        if not n_l:
            continue
        p_l = n_l / total
        h_c_l = entropy([sum(row) for row in layer])
        h_a_l = entropy([sum(col) for col in zip(*layer, strict=True)])
        h_cell_l = entropy([c for row in layer for c in row])
        cig += p_l * (h_c_l + h_a_l - h_cell_l)
        h_a += p_l * h_a_l
        h_cell += p_l * h_cell_l
    return cig, (cig / h_a if h_a else 0.0), (cig / h_cell if h_cell else 0.0)


# layers × classes × values
HAND = [
    # two layers: in the first A tracks the class, in the second it is noise
    [[[6, 1], [1, 4]], [[3, 3], [2, 2]]],
    # three classes, three values, an empty layer, a structural zero column
    [[[5, 0, 1], [0, 4, 0], [2, 0, 3]], [[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[1, 1, 0], [2, 0, 0],
                                                                              [0, 3, 0]]],
    # one layer: Quinlan's gain / gain ratio
    [[[10, 2], [3, 9]]],
]


@pytest.mark.parametrize("table", HAND)
def test_metrics_equal_the_definitions(table):
    cig, cgr, cdc = by_definition(table)
    t = np.array(table, dtype=float)
    assert conditional_information_gain(t) == pytest.approx(cig, abs=1e-12)
    assert conditional_gain_ratio(t) == pytest.approx(cgr, abs=1e-12)
    assert conditional_distance_complement(t) == pytest.approx(cdc, abs=1e-12)


def test_hand_computed_values():
    # Π = ∅, table [[2, 0], [1, 1]] (rows: classes, columns: values of A): H(C) = ln 2,
    # H(A) = H(3/4, 1/4), H(cell) = H(1/2, 1/4, 1/4) = 1.5 ln 2, so
    # CIG = ln 2 + H(3/4, 1/4) − 1.5 ln 2.
    t = np.array([[[2, 0], [1, 1]]])
    h_a = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    cig = math.log(2) + h_a - 1.5 * math.log(2)
    assert conditional_information_gain(t) == pytest.approx(cig, abs=1e-15)
    assert conditional_gain_ratio(t) == pytest.approx(cig / h_a, abs=1e-15)
    assert conditional_distance_complement(t) == pytest.approx(cig / (1.5 * math.log(2)),
                                                               abs=1e-15)
    # two layers of 4 records each; layer 1 pure (H_C = 0, CIG_1 = 0), layer 2 A = C: ln 2.
    t = np.array([[[2, 2], [0, 0]], [[2, 0], [0, 2]]])
    assert conditional_information_gain(t) == pytest.approx(0.5 * math.log(2), abs=1e-15)
    # Σ p_l H_A^l = ½ ln 2 + ½ ln 2; Σ p_l H_Cell^l = ½ ln 2 + ½ ln 2
    assert conditional_gain_ratio(t) == pytest.approx(0.5, abs=1e-15)
    assert conditional_distance_complement(t) == pytest.approx(0.5, abs=1e-15)


def test_zero_denominators_give_zero():
    constant_a = np.array([[[3, 0], [4, 0]], [[0, 1], [0, 5]]])  # A constant in every layer
    pure = np.array([[[3, 2]], [[0, 0]]])[:, :1]  # one class, one value
    for t in (constant_a, pure, np.zeros((1, 2, 2))):
        assert conditional_information_gain(t) == 0.0
        assert conditional_gain_ratio(t) == 0.0
        assert conditional_distance_complement(t) == 0.0


def test_unconditional_cig_is_mutual_information():
    rng = np.random.default_rng(0)
    c = rng.integers(0, 3, 500)
    a = (c + rng.integers(0, 2, 500)) % 4
    t = np.zeros((1, 3, 4))
    np.add.at(t, (0, c, a), 1)
    assert conditional_information_gain(t) == pytest.approx(mutual_info_score(c, a), rel=1e-12)


def test_metrics_ignore_a_common_scale():
    t = np.array(HAND[0], dtype=float)
    for f in (conditional_information_gain, conditional_gain_ratio,
              conditional_distance_complement):
        assert f(t * 0.37) == pytest.approx(f(t), rel=1e-12)


# -- the index tree ------------------------------------------------------------------------------
@settings(max_examples=80, deadline=None)
@given(st.data())
def test_index_tree_tables_equal_brute_force(draw):
    n = draw.draw(st.integers(2, 5))
    cards = draw.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    m = draw.draw(st.integers(0, 30))
    rows = draw.draw(st.lists(st.tuples(*[st.integers(-1, r - 1) for r in cards]),
                              min_size=m, max_size=m))
    classes = draw.draw(st.lists(st.integers(0, 2), min_size=m, max_size=m))
    weights = draw.draw(st.lists(st.sampled_from([1.0, 0.5, 2.0]), min_size=m, max_size=m))
    selected = draw.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n - 1))
    candidate = draw.draw(st.sampled_from([i for i in range(n) if i not in selected]))
    values = np.array(rows, dtype=np.int64).reshape(m, n)
    y = np.array(classes, dtype=np.int64)
    w = np.array(weights)
    tree = IndexTree(m)
    for a in selected:
        tree = tree.extend(values[:, a], cards[a])
    table = tree.table(y, 3, values[:, candidate], cards[candidate], w)
    # brute force: count by the tuple of Π's values, over records with nothing missing
    counts: Counter = Counter()
    for r, c, weight in zip(rows, classes, weights, strict=True):
        if any(r[a] < 0 for a in [*selected, candidate]):
            continue
        counts[tuple(r[a] for a in selected), c, r[candidate]] += weight
    occurring = {key for key, _, _ in counts}
    instantiations = [tuple(v) for v in tree.instantiations.tolist()]
    assert set(instantiations) >= occurring
    assert len(instantiations) == len(set(instantiations))
    for leaf, key in enumerate(instantiations):
        for c in range(3):
            for v in range(cards[candidate]):
                assert table[leaf, c, v] == counts.get((key, c, v), 0.0)
    # the stacked tables of every candidate of that cardinality, in one pass, are the same
    same = [a for a in range(n) if cards[a] == cards[candidate]]
    stacked = tree.tables(y, 3, values[:, same], cards[candidate], w)
    for a, t in zip(same, stacked, strict=True):
        np.testing.assert_array_equal(t, tree.table(y, 3, values[:, a], cards[a], w))
    # every record sits in the leaf of its instantiation
    for r, leaf in zip(rows, tree.leaf.tolist(), strict=True):
        if any(r[a] < 0 for a in selected):
            assert leaf == -1
        else:
            assert instantiations[leaf] == tuple(r[a] for a in selected)


# -- the G-test ------------------------------------------------------------------------------------
def test_g_test_matches_scipy_per_layer():
    rng = np.random.default_rng(3)
    t = rng.integers(1, 20, size=(3, 2, 3)).astype(float)
    g, df, p = conditional_independence_test(t)
    g_ref = df_ref = 0
    for layer in t:
        stat, _, dof, _ = chi2_contingency(layer, correction=False, lambda_="log-likelihood")
        g_ref += stat
        df_ref += dof
    assert g == pytest.approx(g_ref, rel=1e-10)
    assert df == df_ref == 3 * 2
    from scipy.stats import chi2
    assert p == pytest.approx(chi2.sf(g_ref, df_ref), rel=1e-10)


def test_g_test_degrees_of_freedom_skip_structural_zeros():
    t = np.array([[[5, 0, 2], [1, 0, 4]], [[3, 3, 3], [0, 0, 0]]], dtype=float)
    _, df, _ = conditional_independence_test(t)
    assert df == 1  # layer 1: 2 classes × 2 occurring values; layer 2: one class
    assert conditional_independence_test(np.zeros((1, 2, 2)))[1:] == (0, 1.0)


def test_g_test_effective_size_scales_g():
    t = np.array([[[30, 10], [10, 30]]], dtype=float)
    g, _, _ = conditional_independence_test(t)
    g_w, _, _ = conditional_independence_test(t * 100, effective_size=80)
    assert g_w == pytest.approx(g, rel=1e-12)


# -- Info-AS ---------------------------------------------------------------------------------------
def records_from(rng, m):
    a = rng.integers(0, 2, m)
    b = rng.integers(0, 3, m)
    c = (a + (rng.random(m) < 0.1)) % 2  # class follows a
    copy = a.copy()  # redundant with a
    d = np.where(c == 1, (b + 1) % 3, b)  # b shifted in class 1: informative given b
    return [{"a": str(u), "copy": str(v), "b": str(x), "d": str(z)}
            for u, v, x, z in zip(a, copy, b, d, strict=True)], [str(v) for v in c]


def test_info_as_adds_the_argmax_while_positive():
    records, labels = records_from(np.random.default_rng(0), 400)
    data = DiscreteData.from_records(records, labels)
    for metric in ("cig", "cgr", "cdc"):
        sel = info_as(data, metric=metric)
        assert sel.selected[0] == "a"
        assert "copy" not in sel.selected  # CIG(copy; {a}) = 0 exactly
        assert all(s > 0 for s in sel.scores)
        assert sel.method == f"info-as/{metric}"
    # the recorded score is the metric of the chosen attribute given the earlier ones
    sel = info_as(data, metric="cgr")
    tree = IndexTree(data.n_records)
    for a, score in zip(sel.indices, sel.scores, strict=True):
        t = tree.table(data.classes, data.n_classes, data.values[:, a],
                       int(data.cardinalities[a]))
        assert conditional_gain_ratio(t) == pytest.approx(score)
        for other in range(data.n_attributes):  # and it was the maximum
            if other not in sel.indices[: sel.indices.index(a)]:
                t2 = tree.table(data.classes, data.n_classes, data.values[:, other],
                                int(data.cardinalities[other]))
                assert conditional_gain_ratio(t2) <= score + 1e-12
        tree = tree.extend(data.values[:, a], int(data.cardinalities[a]))


def test_xor_is_invisible_to_greedy_selection():
    """Each half of an XOR carries no information alone: the argmax is 0, nothing is added."""
    records = [{"a": a, "b": b} for a in "01" for b in "01"] * 5
    labels = [str(int(r["a"] != r["b"])) for r in records]
    sel = info_as(DiscreteData.from_records(records, labels))
    assert sel.selected == () and "positive" in sel.stop


def test_chi2_stop_rejects_noise():
    """Noise attributes have CIG > 0 by chance and the > 0 rule keeps adding them until the
    layers are pure; the G-test stops after the one real dependence."""
    rng = np.random.default_rng(1)
    m = 300
    signal = rng.integers(0, 2, m)
    y = np.where(rng.random(m) < 0.85, signal, 1 - signal)
    records = [{"signal": str(s), **{f"noise{i}": str(v) for i, v in enumerate(row)}}
               for s, row in zip(signal, rng.integers(0, 3, (m, 8)), strict=True)]
    data = DiscreteData.from_records(records, [str(v) for v in y])
    plain = info_as(data, metric="cgr")
    tested = info_as(data, metric="cgr", significance=0.01)
    assert plain.selected[0] == tested.selected[0] == "signal"
    assert len(plain.selected) >= 4  # noise keeps "informing" as layers thin out
    assert tested.selected == ("signal",)
    assert "G-test" in tested.stop and tested.p_values[0] < 1e-10


def test_chi2_stop_uses_the_effective_size():
    """Weights that scale the counts up (a reservoir's estimates) do not make noise
    significant: the test counts the records, not their weights."""
    rng = np.random.default_rng(2)
    m = 200
    y = rng.integers(0, 2, m)
    records = [{f"n{i}": str(v) for i, v in enumerate(row)} for row in rng.integers(0, 2, (m, 4))]
    base = DiscreteData.from_records(records, [str(v) for v in y])
    heavy = DiscreteData(base.values, base.classes, base.cardinalities, base.n_classes,
                         base.names, np.full(m, 1000.0))
    assert info_as(base, significance=0.05).selected == info_as(heavy,
                                                               significance=0.05).selected


def test_max_selected_and_candidates():
    records, labels = records_from(np.random.default_rng(0), 200)
    data = DiscreteData.from_records(records, labels)
    assert len(info_as(data, max_selected=1).selected) == 1
    sel = info_as(data, candidates=[2, 3])
    assert set(sel.indices) <= {2, 3}


def test_invalid_arguments():
    data = DiscreteData.from_records([{"a": "x"}], ["+"])
    with pytest.raises(ValueError, match="metric"):
        info_as(data, metric="gain")
    with pytest.raises(ValueError, match="significance"):
        info_as(data, significance=1.5)
    with pytest.raises(ValueError, match="candidate"):
        info_as(data, candidates=[3])
    with pytest.raises(ValueError, match="value indices"):
        DiscreteData(np.array([[2]]), np.array([0]), np.array([2]), 1)
