"""TAN structure from counts (science.md §2; Zhang eq. 15, 17–19; Chow–Liu / Friedman TAN).

Expected values are written out here from explicit counts (hand arithmetic), or computed by the
small pure-Python references below, which follow the papers' *asymmetric* definitions
(p(x_i | x_j, c) / p(x_i | c), with ``Fraction`` probabilities) rather than the symmetric count
form the implementation uses. Spanning trees are checked by brute force over every labelled
tree (Prüfer sequences) and against a Kruskal reference, and the whole pipeline against pgmpy.
"""

from __future__ import annotations

import itertools
import math
import random
import time
import warnings
from fractions import Fraction as F

import numpy as np
import pytest

from streamnb.structure import (
    DEFAULT_DDR_SMOOTHING,
    PairwiseCounts,
    TreeStructure,
    chow_liu_tree,
    class_mutual_information,
    conditional_mutual_information,
    dependence_distribution_weight,
    learn_tan_structure,
    pairwise_weights,
)

ln = math.log

# Class 0 (8 records) and class 1 (6 records) of a 2 × 3 pair table, one zero cell per row.
TABLE = np.zeros((2, 3, 2))
TABLE[:, :, 0] = [[2, 0, 2],
                  [1, 3, 0]]
TABLE[:, :, 1] = [[1, 1, 1],
                  [1, 1, 1]]


# -- references --------------------------------------------------------------------------------
def ref_cmi(table) -> float:
    """Eq. 15 literally: Σ p(x_i,x_j,c) ln p(x_i,x_j|c) / (p(x_i|c) p(x_j|c))."""
    ri, rj, k = np.shape(table)
    cell = [[[F(float(table[a][b][c])) for c in range(k)] for b in range(rj)] for a in range(ri)]
    total = sum(cell[a][b][c] for a in range(ri) for b in range(rj) for c in range(k))
    out = 0.0
    for c in range(k):
        n_c = sum(cell[a][b][c] for a in range(ri) for b in range(rj))
        for a in range(ri):
            for b in range(rj):
                if cell[a][b][c] == 0:
                    continue   # 0 · ln 0 = 0
                p_ab = cell[a][b][c] / n_c
                p_a = sum(cell[a][bb][c] for bb in range(rj)) / n_c
                p_b = sum(cell[aa][b][c] for aa in range(ri)) / n_c
                out += float(cell[a][b][c] / total) * ln(p_ab / (p_a * p_b))
    return out


def ref_ddr(table, s: float, per_cell_mean: bool) -> float:
    """Eq. 17 (two classes) or eq. 18–19 (per-cell class mean) with the asymmetric ratio
    p(x_i | x_j, c) / p(x_i | c), both from the table smoothed by ``s`` per cell; the cell weight
    p(x_i, x_j) from the raw counts."""
    ri, rj, k = np.shape(table)
    raw = [[[F(float(table[a][b][c])) for c in range(k)] for b in range(rj)] for a in range(ri)]
    sm = [[[raw[a][b][c] + F(s) for c in range(k)] for b in range(rj)] for a in range(ri)]
    total = sum(raw[a][b][c] for a in range(ri) for b in range(rj) for c in range(k))
    out = 0.0
    for a in range(ri):
        for b in range(rj):
            logs = []
            for c in range(k):
                p_a_given_b = sm[a][b][c] / sum(sm[aa][b][c] for aa in range(ri))
                p_a = (sum(sm[a][bb][c] for bb in range(rj))
                       / sum(sm[aa][bb][c] for aa in range(ri) for bb in range(rj)))
                logs.append(ln(p_a_given_b / p_a))
            p_cell = float(sum(raw[a][b]) / total)
            if per_cell_mean:
                avg = sum(logs) / k
                out += p_cell * sum((v - avg) ** 2 for v in logs)
            else:
                out += p_cell * (logs[0] - logs[1]) ** 2
    return out


def kruskal_reference(w: np.ndarray) -> set[frozenset[int]]:
    """Kruskal over edges sorted by (−weight, i, j): the documented tie-breaking, literally."""
    n = len(w)
    parent = list(range(n))

    def find(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    edges = sorted((-w[i][j], i, j) for i in range(n) for j in range(i + 1, n))
    tree = set()
    for _, i, j in edges:
        ri, rj = find(i), find(j)
        if ri != rj:
            parent[ri] = rj
            tree.add(frozenset((i, j)))
    return tree


def all_spanning_trees(n: int):
    """Every labelled tree on n ≥ 2 vertices, decoded from its Prüfer sequence."""
    for seq in itertools.product(range(n), repeat=n - 2):
        degree = [1] * n
        for v in seq:
            degree[v] += 1
        edges = []
        for v in seq:
            leaf = min(u for u in range(n) if degree[u] == 1)
            edges.append((leaf, v))
            degree[leaf] -= 1
            degree[v] -= 1
        u, v = (x for x in range(n) if degree[x] == 1)
        edges.append((u, v))
        yield edges


def random_table(rng: np.random.Generator, ri: int, rj: int, k: int) -> np.ndarray:
    """Fractional counts (as after forgetting) with about a quarter of the cells empty."""
    t = rng.integers(0, 9, size=(ri, rj, k)) * rng.uniform(0.5, 1.0)
    t[rng.random(t.shape) < 0.25] = 0.0
    t[0, 0, :] += 1.0   # every class present
    return t


def check_is_directed_tree(tree: TreeStructure) -> None:
    names = list(tree.names)
    assert list(tree.parents) == names
    assert tree.parents[tree.root] is None
    assert sum(p is None for p in tree.parents.values()) == 1
    assert len(tree.edges) == len(names) - 1
    assert {(p, c) for c, p in tree.parents.items() if p is not None} == set(tree.edges)
    placed = {tree.root}
    for parent, child in tree.edges:   # breadth-first from the root: parents come first
        assert parent in placed and child not in placed
        placed.add(child)
    assert placed == set(names)


# -- eq. 15: conditional mutual information ----------------------------------------------------
def test_cmi_hand_computed():
    # Class 0: N_c = 8, rows 4, 4, columns 3, 3, 2; ratio N_ijc N_c / (N_i·c N_·jc) per cell:
    #   (0,0) 2·8/(4·3) = 4/3, (0,2) 2·8/(4·2) = 2, (1,0) 1·8/(4·3) = 2/3, (1,1) 3·8/(4·3) = 2;
    #   the two empty cells contribute 0 · ln 0 = 0.
    # Class 1 is uniform: every ratio 1·6/(3·2) = 1, contributing ln 1 = 0. N = 14.
    want = (2 * ln(4 / 3) + 2 * ln(2) + 1 * ln(2 / 3) + 3 * ln(2)) / 14
    assert conditional_mutual_information(TABLE) == pytest.approx(want, rel=1e-14)
    assert ref_cmi(TABLE) == pytest.approx(want, rel=1e-14)


def test_cmi_matches_reference_on_random_tables():
    rng = np.random.default_rng(1)
    for shape in [(2, 2, 2), (3, 2, 3), (4, 3, 2), (2, 5, 4)]:
        t = random_table(rng, *shape)
        assert conditional_mutual_information(t) == pytest.approx(ref_cmi(t), rel=1e-12)


def test_cmi_is_zero_for_conditionally_independent_table():
    # N_ijc = a_i(c) · b_j(c): independent within each class, with a different dependence on
    # the class for each attribute, so X_i and X_j are *marginally* dependent.
    a = np.array([[1, 5, 2], [4, 1, 2]])             # (r_i = 2, k = 3)
    b = np.array([[3, 1, 1], [1, 2, 6], [1, 3, 1]])   # (r_j = 3, k = 3)
    t = np.einsum("ic,jc->ijc", a, b).astype(float)
    assert conditional_mutual_information(t) == 0.0
    marginal_pair = t.sum(axis=2)[:, :, None]   # forget the class: now they are dependent
    assert conditional_mutual_information(marginal_pair) > 0.01
    # I_D has nothing to measure either: its only deviation is the smoothing's.
    assert dependence_distribution_weight(t, smoothing=1e-9) < 1e-12
    assert dependence_distribution_weight(t, smoothing=1e-9, formula="eq18") < 1e-12


def test_cmi_scale_invariant_and_empty():
    # Exponential forgetting scales every count by the same factor: no weight may change.
    assert conditional_mutual_information(TABLE * 0.37) == pytest.approx(
        conditional_mutual_information(TABLE), rel=1e-13)
    assert dependence_distribution_weight(TABLE * 0.37, smoothing=0.5 * 0.37) == pytest.approx(
        dependence_distribution_weight(TABLE), rel=1e-13)
    assert conditional_mutual_information(np.zeros((2, 3, 2))) == 0.0
    assert conditional_mutual_information(np.zeros((0, 3, 2))) == 0.0
    assert dependence_distribution_weight(np.zeros((2, 3, 2))) == 0.0


def test_cmi_smoothing_is_the_cmi_of_the_smoothed_table():
    assert conditional_mutual_information(TABLE, smoothing=0.5) == pytest.approx(
        ref_cmi(TABLE + 0.5), rel=1e-12)


# -- the Bayesian-Dirichlet score gain (Weka's default TAN score) -------------------------------
def ref_log_bd(rows, alpha):
    """log Π_cfg Γ(rα)/Γ(N_cfg + rα) Π_x Γ(N_x,cfg + α)/Γ(α), one list of child counts per
    parent configuration, written out with math.lgamma (Cooper & Herskovits, α per cell)."""
    total = 0.0
    for counts in rows:
        r = len(counts)
        total += math.lgamma(r * alpha) - math.lgamma(sum(counts) + r * alpha)
        total += sum(math.lgamma(n + alpha) - math.lgamma(alpha) for n in counts)
    return total


def ref_bayes_gain(t, alpha):
    """gain of X_i (axis 0) when X_j (axis 1) joins C as its parent, from the pair table."""
    r_i, r_j, k = t.shape
    given_both = [[t[u, v, c] for u in range(r_i)] for v in range(r_j) for c in range(k)]
    given_class = [[t[u, :, c].sum() for u in range(r_i)] for c in range(k)]
    return ref_log_bd(given_both, alpha) - ref_log_bd(given_class, alpha)


def test_bayes_weight_hand_computed():
    # TABLE, α = 0.5. X_i (2 values) given C: class 0 counts (4, 4), class 1 (3, 3);
    # given (X_j, C): class 0 columns (2, 1), (0, 3), (2, 0), class 1 every column (1, 1).
    g = math.lgamma
    cfg = lambda a, b: g(1) - g(a + b + 1) + g(a + .5) + g(b + .5) - 2 * g(.5)  # noqa: E731
    gain_i = (cfg(2, 1) + cfg(0, 3) + cfg(2, 0) + 3 * cfg(1, 1)) - (cfg(4, 4) + cfg(3, 3))
    assert ref_bayes_gain(TABLE, 0.5) == pytest.approx(gain_i, rel=1e-13)
    # X_j (3 values) given C: class 0 (3, 3, 2), class 1 (2, 2, 2); given (X_i, C): class 0
    # rows (2, 0, 2), (1, 3, 0), class 1 rows (1, 1, 1) twice
    cfg3 = lambda *n: (g(1.5) - g(sum(n) + 1.5)  # noqa: E731
                       + sum(g(m + .5) for m in n) - 3 * g(.5))
    gain_j = (cfg3(2, 0, 2) + cfg3(1, 3, 0) + 2 * cfg3(1, 1, 1)) - (cfg3(3, 3, 2) + cfg3(2, 2, 2))
    pc = PairwiseCounts(TABLE.sum(axis=(0, 1)), (TABLE.sum(axis=1), TABLE.sum(axis=0)),
                        {(0, 1): TABLE}, ("i", "j"))
    w = pairwise_weights(pc, "bayes")
    assert w[0, 1] == w[1, 0] == pytest.approx(max(gain_i, gain_j), rel=1e-12)
    assert pairwise_weights(pc, "bayes", smoothing=2.0)[0, 1] == pytest.approx(
        max(ref_bayes_gain(TABLE, 2.0), ref_bayes_gain(TABLE.transpose(1, 0, 2), 2.0)))


def test_bayes_weight_penalises_parents_with_many_values():
    # X_j copies X_i's value (2 values) but splits it over 8 values: CMI is the same as for
    # a 2-value copy, the Bayesian gain is lower, as the marginal likelihood pays per
    # parameter.
    rng = np.random.default_rng(2)
    x = rng.integers(0, 2, 60)
    c = rng.integers(0, 2, 60)
    fine = x * 4 + rng.integers(0, 4, 60)
    copy2 = np.zeros((2, 2, 2))
    np.add.at(copy2, (x, x, c), 1)
    copy8 = np.zeros((2, 8, 2))
    np.add.at(copy8, (x, fine, c), 1)
    assert conditional_mutual_information(copy2) == pytest.approx(
        conditional_mutual_information(copy8), rel=1e-12)

    def weight(t):
        pc = PairwiseCounts(t.sum(axis=(0, 1)), (t.sum(axis=1), t.sum(axis=0)),
                            {(0, 1): t}, ("i", "j"))
        return pairwise_weights(pc, "bayes")[0, 1]

    assert weight(copy8) < weight(copy2)


def test_bayes_weight_is_the_same_float_whichever_attribute_the_pair_table_has_first():
    """A pair's weight does not depend on the order in which its attributes arrived, to the
    last bit: a tie between edges (every gain 0 while each attribute has one value, identical
    attributes) is then broken the same way for any order of a record's fields."""
    rng = np.random.default_rng(5)
    for shape in [(1, 1, 2), (1, 6, 3), (4, 7, 2), (13, 9, 7), (30, 2, 5)]:
        t = rng.integers(0, 25, size=shape).astype(float)

        def weight(table, names):
            pc = PairwiseCounts(table.sum(axis=(0, 1)), (table.sum(axis=1), table.sum(axis=0)),
                                {(0, 1): table}, names)
            return pairwise_weights(pc, "bayes")[0, 1]

        assert weight(t, ("i", "j")) == weight(t.transpose(1, 0, 2).copy(), ("j", "i")), shape
    assert weight(np.full((1, 1, 2), 4.0), ("i", "j")) == 0.0  # a parent of one value: no gain


def weka_greedy_tree(gain):
    """Weka 3.6's TAN search (``TAN.buildStructure``) on an asymmetric gain matrix: the first
    link is the best gain over all ordered pairs, each next one the best gain between a linked
    and an unlinked attribute, in either direction. Its undirected edges."""
    n = gain.shape[0]
    linked, edges = set(), set()
    for _ in range(n - 1):
        best = max((gain[i, j], i, j) for i in range(n) for j in range(n)
                    if i != j and (not linked or (i in linked) != (j in linked)))
        _, i, j = best
        linked |= {i, j}
        edges.add(frozenset((i, j)))
    return edges


def test_bayes_tree_is_wekas_greedy_tree():
    """Weka links greedily on the asymmetric gain g(i, j); that is Prim's algorithm on the
    symmetric max(g(i, j), g(j, i)), so the undirected tree is Chow–Liu's on that weight."""
    rng = np.random.default_rng(8)
    for trial in range(20):
        n, k = 6, int(rng.integers(2, 4))
        r = rng.integers(2, 4, n)
        rows = rng.integers(0, 3, (300, n)) % r
        rows[:, 1] = (rows[:, 0] + rng.integers(0, 2, 300)) % r[1]  # some real dependences
        rows[:, 3] = (rows[:, 2] * 2 + rng.integers(0, 2, 300)) % r[3]
        y = rng.integers(0, k, 300)
        pc = PairwiseCounts.from_records(
            [{f"a{i}": str(v) for i, v in enumerate(row)} for row in rows], y.tolist())
        gain = np.full((n, n), -np.inf)
        for i, j in itertools.permutations(range(n), 2):
            gain[i, j] = ref_bayes_gain(pc.joint(i, j), 0.5)
        tree = learn_tan_structure(pc, weight="bayes")
        index = {name: i for i, name in enumerate(pc.names)}
        ours = {frozenset(index[a] for a in e) for e in tree.undirected_edges}
        assert ours == weka_greedy_tree(gain), trial
        assert tree.weight_kind == "bayes"


def test_bayes_weight_rejects_bad_smoothing():
    pc = PairwiseCounts(TABLE.sum(axis=(0, 1)), (TABLE.sum(axis=1), TABLE.sum(axis=0)),
                        {(0, 1): TABLE}, ("i", "j"))
    with pytest.raises(ValueError, match="smoothing must be > 0 for the bayes weight"):
        pairwise_weights(pc, "bayes", smoothing=0.0)
    with pytest.raises(ValueError, match="weight must be one of"):
        learn_tan_structure(pc, weight="entropy")


# -- eq. 17–19: Zhang's dependence-distribution weight -----------------------------------------
def test_ddr_two_classes_hand_computed():
    # Smoothed by 0.5 per cell: class 0 = [[2.5, .5, 2.5], [1.5, 3.5, .5]], N_c = 8 + 6·0.5 = 11,
    # rows 5.5, 5.5, columns 4, 4, 3, so the ratios S_ijc·11 / (row · column) are
    #   [[27.5/22, 5.5/22, 27.5/16.5], [16.5/22, 38.5/22, 5.5/16.5]]
    #   = [[5/4, 1/4, 5/3], [3/4, 7/4, 1/3]].
    # Class 1 smoothed is uniform (1.5 everywhere): every ratio is 1, ln = 0.
    # Cell weights p(x_i, x_j) from the raw counts: [[3, 1, 3], [2, 4, 1]] / 14.
    want = (3 * ln(5 / 4) ** 2 + 1 * ln(1 / 4) ** 2 + 3 * ln(5 / 3) ** 2
            + 2 * ln(3 / 4) ** 2 + 4 * ln(7 / 4) ** 2 + 1 * ln(1 / 3) ** 2) / 14   # eq. 17
    assert dependence_distribution_weight(TABLE, smoothing=0.5) == pytest.approx(want, rel=1e-14)
    assert dependence_distribution_weight(TABLE) == pytest.approx(want, rel=1e-14)  # default 0.5
    assert DEFAULT_DDR_SMOOTHING == 0.5
    assert ref_ddr(TABLE, 0.5, per_cell_mean=False) == pytest.approx(want, rel=1e-14)


def test_ddr_three_classes_hand_computed():
    # A 2 × 2 table with three classes; smoothing 1 keeps the arithmetic in small fractions.
    t = np.zeros((2, 2, 3))
    t[:, :, 0] = [[3, 0], [0, 1]]   # smoothed [[4, 1], [1, 2]]: N_c 8, rows 5, 3, columns 5, 3
    t[:, :, 1] = [[1, 1], [1, 1]]   # smoothed uniform: every ratio 1
    t[:, :, 2] = [[0, 2], [2, 0]]   # smoothed [[1, 3], [3, 1]]: N_c 8, rows 4, 4, columns 4, 4
    # Ratios S·N_c/(row·col): class 0 [[32/25, 8/15], [8/15, 16/9]], class 1 ones,
    # class 2 [[1/2, 3/2], [3/2, 1/2]]. Per cell, Avg = mean of the three logs (eq. 19).
    l0 = [[ln(32 / 25), ln(8 / 15)], [ln(8 / 15), ln(16 / 9)]]
    l2 = [[ln(1 / 2), ln(3 / 2)], [ln(3 / 2), ln(1 / 2)]]
    p = [[4 / 12, 3 / 12], [3 / 12, 2 / 12]]   # raw counts summed over classes, N = 12
    want = 0.0
    for a in range(2):
        for b in range(2):
            logs = [l0[a][b], 0.0, l2[a][b]]
            avg = sum(logs) / 3
            want += p[a][b] * sum((v - avg) ** 2 for v in logs)   # eq. 18
    assert dependence_distribution_weight(t, smoothing=1.0) == pytest.approx(want, rel=1e-14)
    assert ref_ddr(t, 1.0, per_cell_mean=True) == pytest.approx(want, rel=1e-14)


def test_ddr_matches_reference_on_random_tables():
    rng = np.random.default_rng(2)
    for shape in [(2, 2, 2), (3, 4, 2), (3, 2, 3), (2, 5, 4)]:
        t = random_table(rng, *shape)
        for s in (0.5, 1.0, 0.1):
            got = dependence_distribution_weight(t, smoothing=s)
            assert got == pytest.approx(ref_ddr(t, s, per_cell_mean=shape[2] != 2), rel=1e-12)


def test_ddr_two_class_identity_per_cell_mean_is_half_eq17():
    # For k = 2: Σ_c (L_c − (L_+ + L_−)/2)² = 2 · ((L_+ − L_−)/2)² = (L_+ − L_−)² / 2.
    rng = np.random.default_rng(3)
    for _ in range(20):
        t = random_table(rng, int(rng.integers(2, 5)), int(rng.integers(2, 5)), 2)
        eq17 = dependence_distribution_weight(t, formula="eq17")
        eq18 = dependence_distribution_weight(t, formula="eq18")
        assert eq17 > 0
        assert eq18 == pytest.approx(eq17 / 2, rel=1e-12)
        assert dependence_distribution_weight(t) == eq17   # "auto" is eq. 17 for two classes
        assert ref_ddr(t, 0.5, per_cell_mean=True) == pytest.approx(eq17 / 2, rel=1e-12)


def test_ddr_conventions_give_the_same_tree():
    rng = random.Random(4)
    records = [{f"a{i}": rng.choice("xyz"[: 2 + i % 2]) for i in range(6)} for _ in range(300)]
    for rec in records:   # some structure: a1 follows a0 in class '+' only
        rec["a1"] = rec["a0"] if rng.random() < 0.8 else rec["a1"]
    labels = [rng.choice("+-") for _ in records]
    for rec, y in zip(records, labels, strict=True):
        if y == "-":
            rec["a1"] = rng.choice("xy")
    pc = PairwiseCounts.from_records(records, labels)
    w17 = pairwise_weights(pc, "ddr", formula="eq17")
    w18 = pairwise_weights(pc, "ddr", formula="eq18")
    np.testing.assert_allclose(w18, w17 / 2, rtol=1e-12)
    t17 = learn_tan_structure(pc, "ddr", formula="eq17")
    t18 = learn_tan_structure(pc, "ddr", formula="eq18")
    assert t17.parents == t18.parents and t17.edges == t18.edges
    assert t17.total_weight == pytest.approx(2 * t18.total_weight, rel=1e-12)
    assert frozenset(("a0", "a1")) in t17.undirected_edges


def test_ddr_even_dependence_has_zero_weight_but_positive_cmi():
    # Zhang's point: a dependence distributed evenly over the classes cannot change a decision.
    same = np.array([[5, 1], [1, 5]], dtype=float)
    t = np.stack([same, same], axis=2)   # the same dependence in both classes
    assert conditional_mutual_information(t) > 0.2
    assert dependence_distribution_weight(t) == 0.0
    assert dependence_distribution_weight(np.stack([same, same, same], axis=2)) == 0.0
    # Same conditional tables but class sizes 1 : 2: the pseudo-counts weigh differently in the
    # two classes, so only the smoothing's own (vanishing) deviation is left.
    t = np.stack([same, 2 * same], axis=2)
    assert conditional_mutual_information(t) > 0.2
    assert 0 < dependence_distribution_weight(t) < 0.01
    assert dependence_distribution_weight(t, smoothing=1e-9) < 1e-15


@pytest.mark.parametrize("weight", [conditional_mutual_information, dependence_distribution_weight])
def test_weights_symmetric_in_i_and_j(weight):
    rng = np.random.default_rng(5)
    for shape in [(2, 3, 2), (4, 2, 3), (3, 3, 5)]:
        t = random_table(rng, *shape)
        assert weight(t) == pytest.approx(weight(t.transpose(1, 0, 2)), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("k", [2, 3])
def test_pairwise_weights_equal_single_table_calls(k):
    # pairwise_weights batches same-shaped tables; each entry must be the single-table weight.
    rng = np.random.default_rng(11)
    r = [2, 3, 2, 1, 2]
    marginals = tuple(np.ones((ri, k)) for ri in r)
    joints = {(i, j): random_table(rng, r[i], r[j], k)
              for i, j in itertools.combinations(range(5), 2)}
    joints[0, 4] = np.zeros((2, 2, k))   # an empty pair table: weight 0
    pc = PairwiseCounts(np.ones(k), marginals, joints, tuple("abcde"))
    for weight, fn in [("cmi", conditional_mutual_information),
                       ("ddr", dependence_distribution_weight)]:
        w = pairwise_weights(pc, weight)
        assert np.array_equal(w, w.T) and np.all(np.diag(w) == 0)
        for (i, j), t in joints.items():
            assert w[i, j] == pytest.approx(fn(t), rel=1e-13, abs=1e-300)
        assert w[0, 4] == 0.0
    np.testing.assert_allclose(pairwise_weights(pc, "ddr", smoothing=2.0)[1, 2],
                               dependence_distribution_weight(joints[1, 2], smoothing=2.0))


def test_ddr_single_class_and_bad_arguments():
    assert dependence_distribution_weight(TABLE[:, :, :1]) == 0.0
    with pytest.raises(ValueError, match="smoothing must be > 0"):
        dependence_distribution_weight(TABLE, smoothing=0.0)
    with pytest.raises(ValueError, match="two classes"):
        dependence_distribution_weight(np.ones((2, 2, 3)), formula="eq17")
    with pytest.raises(ValueError, match="formula"):
        dependence_distribution_weight(TABLE, formula="eq19")
    with pytest.raises(ValueError, match=r"shape \(r_i, r_j, k\)"):
        conditional_mutual_information(np.ones((2, 2)))
    with pytest.raises(ValueError, match="non-negative"):
        conditional_mutual_information(-TABLE)
    with pytest.raises(ValueError, match="smoothing must be >= 0"):
        conditional_mutual_information(TABLE, smoothing=-1)


def test_class_mutual_information():
    assert class_mutual_information([[3, 0], [0, 3]]) == pytest.approx(ln(2), rel=1e-15)
    # p(x, c) = [[2, 1], [1, 2]]/6: Σ p ln p/(p(x)p(c)) = 2·(2/6) ln(4/3) + 2·(1/6) ln(2/3)
    want = 2 * (2 / 6) * ln(4 / 3) + 2 * (1 / 6) * ln(2 / 3)
    assert class_mutual_information([[2, 1], [1, 2]]) == pytest.approx(want, rel=1e-14)
    assert class_mutual_information([[2, 2], [1, 1]]) == 0.0


# -- counts container and missing values -------------------------------------------------------
def test_from_records_counts_and_missing_values():
    records = [
        {"a": "x", "b": "p", "c": 1},
        {"a": "y", "b": None, "c": 1},
        {"a": "x", "b": "q"},                      # c missing (absent key)
        {"a": None, "b": "p", "c": 2},
        {"a": "y", "b": "q", "c": float("nan")},   # NaN is missing too
    ]
    labels = ["+", "-", "+", "-", "+"]
    pc = PairwiseCounts.from_records(records, labels)
    assert pc.names == ("a", "b", "c") and pc.classes == ("+", "-")
    assert pc.values == (("x", "y"), ("p", "q"), (1, 2))
    assert pc.class_counts.tolist() == [3.0, 2.0]
    assert pc.marginals[0].tolist() == [[2, 0], [1, 1]]   # a: record 4 skipped
    assert pc.marginals[2].tolist() == [[1, 1], [0, 1]]
    # N_ab(u, v, c) only over records 1, 3, 5 (both observed).
    want_ab = np.zeros((2, 2, 2))
    want_ab[0, 0, 0] = want_ab[0, 1, 0] = want_ab[1, 1, 0] = 1
    np.testing.assert_array_equal(pc.joints[0, 1], want_ab)
    np.testing.assert_array_equal(pc.joint(1, 0), want_ab.transpose(1, 0, 2))
    assert pc.joints[0, 2].sum() == 2 and pc.joints[1, 2].sum() == 2   # records 1, 2 / 1, 4


def test_weights_use_each_pairs_own_records():
    # Each pair's weight must equal the weight learned from that pair's complete cases alone.
    rng = random.Random(6)
    records, labels = [], []
    for _ in range(400):
        y = rng.choice("+-")
        a = rng.choice("xy")
        b = a if (y == "+" and rng.random() < 0.7) else rng.choice("xyz")
        c = rng.choice("pq") if rng.random() < 0.9 else b
        rec = {"a": a, "b": b, "c": c}
        for key in rec:
            if rng.random() < 0.2:
                rec[key] = None
        records.append(rec)
        labels.append(y)
    pc = PairwiseCounts.from_records(records, labels, names=["a", "b", "c"])
    for weight in ("cmi", "ddr"):
        w = pairwise_weights(pc, weight)
        for i, j in itertools.combinations(range(3), 2):
            ni, nj = pc.names[i], pc.names[j]
            keep = [(r, y) for r, y in zip(records, labels, strict=True)
                    if r[ni] is not None and r[nj] is not None]
            sub = PairwiseCounts.from_records([{ni: r[ni], nj: r[nj]} for r, _ in keep],
                                              [y for _, y in keep], names=[ni, nj])
            alone = pairwise_weights(sub, weight)[0, 1]
            # Value order can differ between the two countings; weights do not depend on it.
            assert w[i, j] == pytest.approx(alone, rel=1e-12)
    assert learn_tan_structure(pc).undirected_edges >= {frozenset(("a", "b"))}


def test_container_validation():
    with pytest.raises(ValueError, match="joints"):
        PairwiseCounts(np.ones(2), (np.ones((2, 2)), np.ones((3, 2))),
                       {(0, 1): np.ones((3, 2, 2))}, ("a", "b"))
    with pytest.raises(ValueError, match="i < j"):
        PairwiseCounts(np.ones(2), (np.ones((2, 2)), np.ones((3, 2))),
                       {(1, 0): np.ones((3, 2, 2))}, ("a", "b"))
    with pytest.raises(ValueError, match="marginals"):
        PairwiseCounts(np.ones(2), (np.ones((2, 3)),), {}, ("a",))
    with pytest.raises(ValueError, match="names"):
        PairwiseCounts(np.ones(2), (np.ones((2, 2)),), {}, ("a", "b"))
    with pytest.raises(ValueError, match="non-negative"):
        PairwiseCounts(-np.ones(2), (), {}, ())
    with pytest.raises(ValueError, match="None"):
        PairwiseCounts.from_records([{"a": 1}], [None])


# -- maximum spanning tree ---------------------------------------------------------------------
def test_spanning_tree_hand_made_matrix():
    #        a    b    c    d    e
    w = [[0.0, 0.9, 0.1, 0.4, 0.0],    # a
         [0.9, 0.0, 0.7, 0.2, 0.3],    # b
         [0.1, 0.7, 0.0, 0.8, 0.5],    # c
         [0.4, 0.2, 0.8, 0.0, 0.6],    # d
         [0.0, 0.3, 0.5, 0.6, 0.0]]    # e
    # Kruskal by hand: a–b 0.9, c–d 0.8, b–c 0.7, d–e 0.6 (then c–e 0.5 would close a cycle).
    tree = chow_liu_tree(np.array(w), list("abcde"), root="a", weight_kind="cmi")
    assert tree.parents == {"a": None, "b": "a", "c": "b", "d": "c", "e": "d"}
    assert tree.edges == (("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"))
    assert tree.total_weight == pytest.approx(0.9 + 0.8 + 0.7 + 0.6)
    assert tree.root == "a" and tree.weight_kind == "cmi"
    # Rooting elsewhere changes directions only.
    at_d = chow_liu_tree(np.array(w), list("abcde"), root="d")
    assert at_d.parents == {"a": "b", "b": "c", "c": "d", "d": None, "e": "d"}
    assert at_d.edges == (("d", "c"), ("d", "e"), ("c", "b"), ("b", "a"))
    assert at_d.undirected_edges == tree.undirected_edges
    check_is_directed_tree(at_d)


def test_spanning_tree_is_maximum_by_brute_force():
    rng = np.random.default_rng(7)
    for n in (3, 4, 5, 6):
        trees = list(all_spanning_trees(n))
        assert len(trees) == n ** (n - 2)   # Cayley
        for _ in range(10):
            w = rng.random((n, n))
            w = w + w.T
            best = max(sum(w[u, v] for u, v in t) for t in trees)
            tree = chow_liu_tree(w)
            assert tree.total_weight == pytest.approx(best, rel=1e-12)
            check_is_directed_tree(tree)


def test_spanning_tree_ties_match_kruskal_with_index_order():
    rng = np.random.default_rng(8)
    for n in range(2, 12):
        for _ in range(20):
            w = rng.integers(-1, 3, size=(n, n)).astype(float)   # many ties, some negative
            w = np.triu(w, 1) + np.triu(w, 1).T
            tree = chow_liu_tree(w)
            assert {frozenset(e) for e in tree.edges} == kruskal_reference(w)
            for root in range(n):   # the undirected tree never depends on the root
                assert chow_liu_tree(w, root=root).undirected_edges == tree.undirected_edges


def test_tie_breaking_is_deterministic_and_documented():
    # All weights equal: pairs are taken in index order (0,1), (0,2), ... → a star on 0.
    tree = chow_liu_tree(np.ones((5, 5)), list("abcde"))
    assert tree.parents == {"a": None, "b": "a", "c": "a", "d": "a", "e": "a"}
    # A triangle of equal weights: (0,1) and (0,2) beat (1,2).
    w = np.array([[0, 2, 2, 1], [2, 0, 2, 1], [2, 2, 0, 1], [1, 1, 1, 0.0]])
    assert chow_liu_tree(w).undirected_edges == {frozenset(p) for p in [(0, 1), (0, 2), (0, 3)]}
    # The same counts always give the same tree (equal as structures, whatever the call).
    rng = random.Random(9)
    records = [{f"a{i}": rng.choice("xy") for i in range(5)} for _ in range(50)]
    labels = [rng.choice("+-") for _ in records]
    first = learn_tan_structure(PairwiseCounts.from_records(records, labels))
    for _ in range(3):
        assert learn_tan_structure(PairwiseCounts.from_records(records, labels)) == first


def test_zero_negative_and_unmeasured_weights_still_span():
    w = np.array([[0.0, 0.5, 0.0, -1.0],
                  [0.5, 0.0, -2.0, 0.0],
                  [0.0, -2.0, 0.0, -3.0],
                  [-1.0, 0.0, -3.0, 0.0]])
    tree = chow_liu_tree(w, list("abcd"))
    check_is_directed_tree(tree)
    # a–b 0.5, then the zeros in index order: a–c (0,2), then b–d (1,3) (a–d is −1).
    assert tree.undirected_edges == {frozenset(p) for p in ["ab", "ac", "bd"]}
    # NaN = unmeasured: ranked below every measured weight, even negative ones; counts 0.
    w = np.full((4, 4), np.nan)
    w[0, 1] = w[1, 0] = 0.3
    w[2, 3] = w[3, 2] = -0.5
    tree = chow_liu_tree(w, list("abcd"), root="d")
    check_is_directed_tree(tree)
    assert frozenset("ab") in tree.undirected_edges and frozenset("cd") in tree.undirected_edges
    assert frozenset("ac") in tree.undirected_edges   # lowest unmeasured pair joining the parts
    assert tree.total_weight == pytest.approx(-0.2)
    # A candidate set given as missing joints gives the same NaN entries.
    pc = PairwiseCounts(np.array([2.0, 2.0]), tuple(np.ones((2, 2)) for _ in range(3)),
                        {(0, 1): np.ones((2, 2, 2))}, ("a", "b", "c"))
    wm = pairwise_weights(pc)
    assert wm[0, 1] == 0.0 and np.isnan(wm[0, 2]) and np.isnan(wm[2, 1])
    check_is_directed_tree(learn_tan_structure(pc))


def test_small_attribute_counts():
    empty = learn_tan_structure(PairwiseCounts(np.array([1.0, 2.0]), (), {}, ()))
    assert empty.parents == {} and empty.edges == () and empty.root is None
    one = learn_tan_structure(PairwiseCounts.from_records([{"a": 1}, {"a": 2}], ["+", "-"]))
    assert one.parents == {"a": None} and one.edges == () and one.total_weight == 0.0
    two = learn_tan_structure(PairwiseCounts.from_records(
        [{"a": 1, "b": 1}, {"a": 2, "b": 1}, {"a": 1, "b": 2}], ["+", "-", "-"]))
    check_is_directed_tree(two)
    assert two.root == "a" and two.parents == {"a": None, "b": "a"}   # I(X;C) tie: lowest
    assert chow_liu_tree(np.zeros((1, 1)), ["z"]).parents == {"z": None}


def test_weight_matrix_validation():
    with pytest.raises(ValueError, match="square"):
        chow_liu_tree(np.ones((2, 3)))
    with pytest.raises(ValueError, match="symmetric"):
        chow_liu_tree(np.array([[0, 1], [2, 0.0]]))
    with pytest.raises(ValueError, match="finite"):
        chow_liu_tree(np.array([[0, np.inf], [np.inf, 0.0]]))
    with pytest.raises(ValueError, match="not an attribute"):
        chow_liu_tree(np.zeros((2, 2)), ["a", "b"], root="c")
    with pytest.raises(ValueError, match="weight must be"):
        pairwise_weights(PairwiseCounts(np.ones(1), (), {}, ()), weight="mi")


# -- root policy -------------------------------------------------------------------------------
def _root_data():
    rng = random.Random(10)
    records, labels = [], []
    for _ in range(500):
        y = rng.choice("+-")
        strong = y if rng.random() < 0.9 else rng.choice("+-")     # most informative of C
        weak = y if rng.random() < 0.6 else rng.choice("+-")
        records.append({"noise": rng.choice("xy"), "weak": weak, "strong": strong,
                        "first": rng.choice("xy")})
        labels.append(y)
    return PairwiseCounts.from_records(records, labels,
                                       names=["noise", "weak", "strong", "first"])


def test_root_policy():
    pc = _root_data()
    info = [class_mutual_information(m) for m in pc.marginals]
    assert int(np.argmax(info)) == 2
    default = learn_tan_structure(pc)
    assert default.root == "strong"
    assert learn_tan_structure(pc, root="max-class-information") == default
    check_is_directed_tree(default)
    assert learn_tan_structure(pc, root="weak").root == "weak"
    # An attribute named like a policy wins over the policy.
    assert learn_tan_structure(pc, root="first").root == "first"
    pc2 = PairwiseCounts(pc.class_counts, pc.marginals, pc.joints, ("n", "w", "s", "f"))
    assert learn_tan_structure(pc2, root="first").root == "n"
    with pytest.raises(ValueError, match="root must be"):
        learn_tan_structure(pc, root="nope")
    # Same undirected tree whatever the root; directions point away from it.
    for root in pc.names:
        tree = learn_tan_structure(pc, root=root)
        assert tree.undirected_edges == default.undirected_edges
        check_is_directed_tree(tree)
    # Ties in I(X_i; C) go to the lowest index.
    tie = PairwiseCounts.from_records([{"a": 1, "b": 1}, {"a": 2, "b": 2}], ["+", "-"])
    assert learn_tan_structure(tie).root == "a"


# -- cross-check against pgmpy -----------------------------------------------------------------
@pytest.mark.parametrize(("network", "class_node"),
                         [("asia", "dysp"), ("asia", "either"), ("child", "Disease")])
def test_cmi_tree_matches_pgmpy_tan(network, class_node):
    pytest.importorskip("pgmpy")
    with warnings.catch_warnings():
        # get_example_model reads the network bundled with pgmpy (no download); its successor
        # pgmpy.example_models.load_model fetches from the Hugging Face hub, so keep this one.
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.estimators import TreeSearch
        from pgmpy.sampling import BayesianModelSampling
        from pgmpy.utils import get_example_model

        model = get_example_model(network)
    data = BayesianModelSampling(model).forward_sample(size=5000, seed=42, show_progress=False)
    features = [c for c in data.columns if c != class_node]

    t0 = time.perf_counter()
    counts = PairwiseCounts.from_records(data[features].to_dict("records"),
                                         data[class_node].tolist(), features)
    ours = learn_tan_structure(counts, weight="cmi")
    t1 = time.perf_counter()
    dag = TreeSearch(data, root_node=ours.root, n_jobs=1).estimate(
        estimator_type="tan", class_node=class_node, show_progress=False)
    t2 = time.perf_counter()
    print(f"{network}/{class_node}: streamnb {t1 - t0:.3f}s, pgmpy {t2 - t1:.3f}s")

    assert {(class_node, f) for f in features} <= set(dag.edges())
    theirs = {frozenset(e) for e in dag.edges() if class_node not in e}
    assert len(theirs) == len(features) - 1
    if theirs != ours.undirected_edges:
        # Only ties may separate two maximum spanning trees: pgmpy's tree must then weigh
        # exactly as much under our weights (pgmpy breaks ties by networkx's edge order).
        index = {name: i for i, name in enumerate(ours.names)}
        theirs_total = sum(ours.weights[index[a], index[b]] for a, b in map(tuple, theirs))
        assert theirs_total == pytest.approx(ours.total_weight, rel=1e-12)
    assert ours.parents[ours.root] is None
    for parent, child in ours.edges:   # pgmpy directs away from the same root
        assert dag.has_edge(parent, child)


def test_cmi_weights_match_pgmpy_conditional_weights():
    pytest.importorskip("pgmpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.estimators import TreeSearch
        from pgmpy.sampling import BayesianModelSampling
        from pgmpy.utils import get_example_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        model = get_example_model("asia")
    data = BayesianModelSampling(model).forward_sample(size=5000, seed=1, show_progress=False)
    features = [c for c in data.columns if c != "dysp"]
    counts = PairwiseCounts.from_records(data[features].to_dict("records"),
                                         data["dysp"].tolist(), features)
    ours = pairwise_weights(counts, "cmi")
    # eq. 15 = Σ_c p(c) · I(X_i; X_j | C = c), each term scikit-learn's mutual_info_score on the
    # class-c rows: an independent computation that needs no private API
    from sklearn.metrics import mutual_info_score

    n = len(features)
    by_hand = np.zeros((n, n))
    for _, rows in data.groupby("dysp"):
        share = len(rows) / len(data)
        for i in range(n):
            for j in range(i + 1, n):
                by_hand[i, j] = by_hand[j, i] = by_hand[i, j] + share * mutual_info_score(
                    rows[features[i]], rows[features[j]])
    np.testing.assert_allclose(ours, by_hand, rtol=1e-10, atol=1e-14)
    # and pgmpy's own computation of the same weights, where its (private) API still has it
    if hasattr(TreeSearch, "_get_conditional_weights"):
        theirs = TreeSearch._get_conditional_weights(data, "dysp", "mutual_info", 1, False)
        keep = [list(data.columns).index(f) for f in features]
        theirs = theirs[np.ix_(keep, keep)]
        np.fill_diagonal(theirs, 0.0)
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-14)
