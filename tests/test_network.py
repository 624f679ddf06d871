"""Exact inference of the class in a discrete network: Markov blanket and variable elimination
against brute-force enumeration of the joint, and against pgmpy on the asia network."""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pytest

from streamnb.structure.network import CLASS, DiscreteNetwork, NetworkStructure, family_counts


def random_network(seed, n_nodes=6, max_parents=3):
    rng = np.random.default_rng(seed)
    order = rng.permutation(n_nodes)
    cards = rng.integers(2, 4, n_nodes).tolist()
    parents = [()] * n_nodes
    for position, node in enumerate(order):
        earlier = order[:position]
        size = int(rng.integers(0, min(max_parents, len(earlier)) + 1))
        parents[node] = tuple(int(v) for v in rng.choice(earlier, size, replace=False))
    cpts = []
    for i in range(n_nodes):
        shape = (*(cards[p] for p in parents[i]), cards[i])
        cpts.append(np.log(rng.dirichlet(np.ones(cards[i]) * 0.7, size=shape[:-1])
                           .reshape(shape)))
    return DiscreteNetwork(parents, cards, cpts, int(rng.integers(n_nodes))), rng


def brute_force_posterior(net, evidence_row):
    k = net.cardinalities[net.class_node]
    scores = np.zeros(k)
    for assignment in itertools.product(*(range(r) for r in net.cardinalities)):
        if any(e >= 0 and e != a for i, (e, a) in enumerate(zip(evidence_row, assignment,
                                                                strict=True))
               if i != net.class_node):
            continue
        p = 1.0
        for i, pa in enumerate(net.parents):
            p *= np.exp(net.log_cpts[i][(*(assignment[v] for v in pa), assignment[i])])
        scores[assignment[net.class_node]] += p
    return scores / scores.sum()


@pytest.mark.parametrize("seed", range(25))
def test_posterior_equals_enumerating_the_joint(seed):
    net, rng = random_network(seed)
    rows = []
    for _ in range(40):
        row = [int(rng.integers(r)) for r in net.cardinalities]
        rows.append([v if rng.random() > 0.4 else -1 for v in row])
    rows.append([-1] * len(net.cardinalities))  # nothing observed: the class marginal
    evidence = np.array(rows)
    got = np.exp(net.predict_log_proba(evidence))
    for row, p in zip(rows, got, strict=True):
        np.testing.assert_allclose(p, brute_force_posterior(net, row), rtol=1e-10, atol=1e-13)


def test_one_row_and_batch_agree():
    net, rng = random_network(3)
    evidence = np.array([[int(rng.integers(r)) if rng.random() > 0.3 else -1
                          for r in net.cardinalities] for _ in range(30)])
    batch = net.class_log_scores(evidence)
    for i, row in enumerate(evidence):
        single = net.class_log_scores(row[None])
        np.testing.assert_allclose(single - single.max(), batch[i:i + 1] - batch[i].max(),
                                   atol=1e-12)


def test_no_underflow_with_hundreds_of_factors():
    """Naive Bayes with 400 children: every complete record's likelihood is far below the
    smallest float; a missing child must give the same posterior as leaving it out."""
    rng = np.random.default_rng(0)
    n = 400
    k = 3
    cpts = [np.log(np.full(k, 1 / k))]
    for _ in range(n):
        cpts.append(np.log(rng.dirichlet(np.full(30, 0.3), size=k)))
    net = DiscreteNetwork([(), *[(0,)] * n], [k, *[30] * n], cpts, class_node=0)
    row = np.array([-1, *rng.integers(0, 30, n)])
    with_missing = row.copy()
    with_missing[5] = -1
    dropped = DiscreteNetwork([(), *[(0,)] * (n - 1)], [k, *[30] * (n - 1)],
                              [cpts[0], *cpts[1:5], *cpts[6:]], class_node=0)
    want = dropped.predict_log_proba(np.delete(row, 5)[None])
    got = net.predict_log_proba(with_missing[None])
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, atol=1e-9)
    # a missing *parent* of 400 observed children (a chain through the class)
    cpts2 = [np.log(np.full(k, 1 / k)), np.log(rng.dirichlet(np.ones(4), size=k))]
    parents2 = [(), (0,)]
    for _ in range(n):
        cpts2.append(np.log(rng.dirichlet(np.full(5, 0.3), size=(k, 4))))
        parents2.append((0, 1))
    chain = DiscreteNetwork(parents2, [k, 4, *[5] * n], cpts2, class_node=0)
    ev = np.array([-1, -1, *rng.integers(0, 5, n)])
    assert np.isfinite(chain.predict_log_proba(ev[None])).all()


def test_family_counts_and_fit():
    values = np.array([[0, 1, 0], [0, 1, 1], [1, 0, 1], [1, -1, 1], [0, 1, 1]])
    counts = family_counts(values, [2, 2, 2], child=2, parents=[0, 1])
    assert counts.shape == (2, 2, 2)
    assert counts[0, 1].tolist() == [1.0, 2.0] and counts[1, 0].tolist() == [0.0, 1.0]
    assert counts.sum() == 4  # the record with a missing parent is left out
    log_cpt = DiscreteNetwork.log_cpt(counts, alpha=1.0)
    np.testing.assert_allclose(np.exp(log_cpt[0, 1]), [2 / 5, 3 / 5])
    np.testing.assert_allclose(np.exp(log_cpt).sum(axis=-1), 1.0)
    with pytest.raises(ValueError, match="alpha"):
        DiscreteNetwork.log_cpt(counts, alpha=0.0)


def test_matches_pgmpy_variable_elimination_on_asia():
    pytest.importorskip("pgmpy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.inference import VariableElimination
        from pgmpy.utils import get_example_model

        model = get_example_model("asia")
    names = list(model.nodes())
    index = {v: i for i, v in enumerate(names)}
    states = {v: model.get_cpds(v).state_names[v] for v in names}
    parents, cpts = [], []
    for v in names:
        cpd = model.get_cpds(v)
        evidence = list(cpd.variables[1:])
        parents.append(tuple(index[p] for p in evidence))
        # TabularCPD values: (card_v, card_e1, ..., card_ek) with state orders of state_names
        values = cpd.values
        for e in evidence:
            assert cpd.state_names[e] == states[e]
        with np.errstate(divide="ignore"):  # asia's "either" is deterministic: log 0 = -inf
            cpts.append(np.log(np.moveaxis(values, 0, -1)))
    cards = [len(states[v]) for v in names]
    target = "dysp"
    net = DiscreteNetwork(parents, cards, cpts, index[target])
    inference = VariableElimination(model)
    rng = np.random.default_rng(0)
    for _ in range(12):
        observed = {v: states[v][int(rng.integers(len(states[v])))] for v in names
                    if v != target and rng.random() < 0.5}
        row = np.array([states[v].index(observed[v]) if v in observed else -1 for v in names])
        ours = np.exp(net.predict_log_proba(row[None]))[0]
        theirs = inference.query([target], evidence=observed, show_progress=False)
        np.testing.assert_allclose(ours, theirs.values, rtol=1e-9)


def test_structure_validation_and_serialisation():
    s = NetworkStructure(("a", ("bi", "gram"), 3),
                         {CLASS: ("a",), "a": (), ("bi", "gram"): (CLASS,), 3: (CLASS, "a")},
                         method="test", scores=(0.5, 0.25, 0.1), p_values=(0.01, 0.02, 0.03),
                         stop="why")
    assert s.markov_blanket == frozenset({"a", ("bi", "gram"), 3})
    assert s.order == ("a", CLASS, ("bi", "gram"), 3)
    assert NetworkStructure.from_json(s.to_json()) == s
    assert pickle.loads(pickle.dumps(s)) == s and pickle.loads(pickle.dumps(CLASS)) is CLASS
    with pytest.raises(ValueError, match="cycle"):
        NetworkStructure(("a",), {CLASS: ("a",), "a": (CLASS,)})
    with pytest.raises(ValueError, match="exactly"):
        NetworkStructure(("a",), {CLASS: ()})
    with pytest.raises(ValueError, match="cycle"):
        DiscreteNetwork([(1,), (0,)], [2, 2], [np.zeros((2, 2)), np.zeros((2, 2))], 0)
