"""AODE matches its definition (Webb et al. 2005) on a hand-worked example."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from conftest import check_discrete_estimator, labels_and_domains
from streamnb import AODE, load_model

DATA = [({"a": "x", "b": "x", "c": "u"}, "+"), ({"a": "y", "b": "y", "c": "u"}, "+"),
        ({"a": "x", "b": "y", "c": "w"}, "-"), ({"a": "y", "b": "x", "c": "w"}, "-"),
        ({"a": "x", "b": "x", "c": "w"}, "+"), ({"a": "x", "c": "u"}, "-")]
QUERIES = [{"a": "x", "b": "x", "c": "u"}, {"a": "y", "b": "x", "c": "w"}, {"a": "x"},
           {"b": "y", "c": "z"}]


def fit(model, data=DATA):
    for x, y in data:
        model.learn_one(x, y)
    return model


def webb(data, x, m=1):
    """Σ_i P(c, x_i) Π_{j≠i} P(x_j | c, x_i) with Laplace estimates, by counting records:
    P(c, x_i) = (N(c, x_i) + 1)/(N_i + k·#A_i), N_i = records with i observed;
    P(x_j | c, x_i) = (N(c, x_i, x_j) + 1)/(N(c, x_i; j observed) + #A_j)."""
    labels, domains = labels_and_domains(data)
    observed = [a for a in x if a in domains and x[a] in domains[a]]
    parents = [i for i in observed if sum(r.get(i) == x[i] for r, _ in data) >= m]
    if not parents:
        return None  # the model falls back to naive Bayes
    scores = {}
    for c in labels:
        total = F(0)
        for i in parents:
            n_i = sum(1 for r, _ in data if i in r)
            p = F(sum(1 for r, y in data if y == c and r.get(i) == x[i]) + 1,
                  n_i + len(labels) * len(domains[i]))
            for j in observed:
                if j == i:
                    continue
                both = [r for r, y in data if y == c and i in r and j in r and r[i] == x[i]]
                p *= F(sum(1 for r in both if r[j] == x[j]) + 1, len(both) + len(domains[j]))
            total += p
        scores[c] = total
    norm = sum(scores.values())
    return {c: float(s / norm) for c, s in scores.items()}


@pytest.mark.parametrize("m", [1, 3])
def test_matches_webb_definition(m):
    model = fit(AODE(min_frequency=m))
    for q in QUERIES:
        want = webb(DATA, q, m)
        if want is None:
            continue
        assert model.predict_proba_one(q) == pytest.approx(want, abs=1e-12), q


def test_docstring_example_is_webb():
    data = [({"a": "x", "b": "x"}, "+"), ({"a": "y", "b": "y"}, "+"),
            ({"a": "x", "b": "y"}, "-"), ({"a": "y", "b": "x"}, "-"), ({"a": "x", "b": "x"}, "+")]
    assert webb(data, {"a": "x", "b": "x"})["+"] == pytest.approx(0.7714, abs=5e-5)


def test_batch_equals_one_by_one_and_round_trip(tmp_path):
    one = fit(AODE())
    many = AODE()
    many.learn_many(pd.DataFrame([x for x, _ in DATA]), [y for _, y in DATA])
    batch = many.predict_proba_many(QUERIES)
    for i, q in enumerate(QUERIES):
        assert one.predict_proba_one(q) == pytest.approx(dict(batch.iloc[i]), abs=1e-12)
    one.save(tmp_path / "aode.snb")
    loaded = load_model(tmp_path / "aode.snb")
    assert isinstance(loaded, AODE)
    for q in QUERIES:
        assert loaded.predict_proba_one(q) == one.predict_proba_one(q)


def test_merge_equals_learning_everything():
    a, b, whole = fit(AODE(), DATA[::2]), fit(AODE(), DATA[1::2]), fit(AODE())
    a.merge(b)
    for q in QUERIES:
        assert a.predict_proba_one(q) == pytest.approx(whole.predict_proba_one(q), abs=1e-12)


def test_river_check_estimator():
    check_discrete_estimator(AODE())


TOKEN_DATA = [({"free": True, "money": True}, "spam"), ({"meeting": True}, "ham"),
              ({"free": True, "meeting": True, "now": 1}, "ham"),
              ({"money": True, "now": 2}, "spam"), ({"now": True}, "spam"),
              ({"free": True}, "ham"), ({"money": True, "win": True}, "spam"),
              ({"meeting": True, "win": True, "free": True}, "ham"),
              ({"win": True, "now": True}, "spam"), ({"meeting": True, "now": True}, "ham")]
TOKEN_QUERIES = [{"free": True, "money": True}, {"meeting": True, "now": True}, {"other": 1},
                 {"win": True, "unseen": True}, {"free": True, "meeting": True, "win": True}]


def test_tokens_equal_explicit_present_absent_values():
    """A token's absent cells, derived from the present-present counts and the marginals, give
    the posteriors of the same data with every token written out as a two-valued attribute."""
    vocabulary = sorted({t for x, _ in TOKEN_DATA for t in x})

    def explicit(x):
        return {t: "1" if x.get(t) else "0" for t in vocabulary}

    tokens = fit(AODE(refresh_every=0), TOKEN_DATA)
    values = fit(AODE(refresh_every=0, domains={t: ["1", "0"] for t in vocabulary}),
                 [(explicit(x), y) for x, y in TOKEN_DATA])
    for q in TOKEN_QUERIES:
        assert tokens.predict_proba_one(q) == pytest.approx(
            values.predict_proba_one(explicit(q)), abs=1e-12), q


def reference_aode(model, x):
    """AODE's posterior from PairCounts.joint_table pair by pair (the tables are checked
    against brute-force counting, snapshots included, in tests/test_pairs.py)."""
    import math

    import numpy as np

    stats, pairs = model.stats, model.pairs
    schema, k = stats.schema, stats.n_classes
    names = schema.attributes.names()
    observed = []
    for a in pairs.candidates:
        if schema.kinds[a] == 1:
            observed.append((a, 0 if x.get(names[a]) else 1, 2))
    logs = []
    for i, u, size_i in observed:
        marginal = model._marginal(i)
        if marginal[u].sum() < model.min_frequency:
            continue
        log_p = np.log(marginal[u] + 1) - math.log(marginal.sum() + k * size_i)
        for j, v, size_j in observed:
            if j != i:
                table = pairs.joint_table(stats, names[i], names[j])[0]
                log_p = log_p + np.log(table[u, v] + 1) - np.log(table[u].sum(axis=0) + size_j)
        logs.append(log_p)
    naive = sum(model._naive_log_theta(a, [True, False])[u] for a, u, _ in observed)
    others = np.frombuffer(super(AODE, model)._fine_log_likelihood_one(x)[0])  # naive Bayes
    prior, _ = model._estimator.log_class_prior(stats)
    spodes = np.array(logs)
    top = spodes.max(axis=0)
    score = others - prior - naive + top + np.log(np.exp(spodes - top).sum(axis=0)) - math.log(
        len(logs))
    p = np.exp(score - score.max())
    return dict(zip(stats.labels.values, p / p.sum(), strict=True))


def test_refreshed_candidates_read_their_own_period():
    """With candidates re-chosen every 3 records (top 3 by I(X; C)), pairs cover different
    periods; the vectorised cells equal the pair-by-pair tables, one by one and in batches."""
    model = AODE(max_candidates=3, refresh_every=3)
    for x, y in TOKEN_DATA * 2:
        model.learn_one(x, y)
    assert any(e >= 0 for e in model.pairs.epoch.values())
    batch = model.predict_proba_many(TOKEN_QUERIES)
    for r, q in enumerate(TOKEN_QUERIES):
        want = reference_aode(model, q)
        assert model.predict_proba_one(q) == pytest.approx(want, abs=1e-12), q
        assert dict(batch.iloc[r]) == pytest.approx(want, abs=1e-12), q


def test_candidates_refreshed_during_a_batch_count_what_one_by_one_would():
    """On DNA (180 attributes) with 50 candidates, a batch is learned in pieces that end at the
    refresh points, so each candidate's pairs count the records from the point it was chosen,
    as one-by-one learning counts them — never none of the batch, which would replace their
    naive factors by uniform conditionals (this once gave 60% accuracy against naive Bayes'
    94%)."""
    from streamnb import IndifferentNB
    from streamnb.datasets import load
    from streamnb.evaluate import validate_holdout

    dna = load("DNA")
    result = validate_holdout({"nb": IndifferentNB, "aode": lambda: AODE(max_candidates=50)},
                              dna.records, dna.labels, test_fraction=0.2)
    model, one = AODE(max_candidates=50), AODE(max_candidates=50)
    model.learn_many(dna.records[:500], dna.labels[:500])
    for x, y in zip(dna.records[:500], dna.labels[:500], strict=True):
        one.learn_one(x, y)
    names = model.stats.schema.attributes.names()
    assert [names[a] for a in model.pairs.candidates] == [
        one.stats.schema.attributes.names()[a] for a in one.pairs.candidates]
    first, second = names[model.pairs.candidates[0]], names[model.pairs.candidates[1]]
    table, *_ = model.pairs.joint_table(model.stats, first, second)
    want, *_ = one.pairs.joint_table(one.stats, first, second)
    assert table.sum() > 0 and np.array_equal(table, want)
    accuracy = result.summary("accuracy")
    assert accuracy["aode"][0] > accuracy["nb"][0] - 0.02
