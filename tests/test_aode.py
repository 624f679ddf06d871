"""AODE matches its definition (Webb et al. 2005) on a hand-worked example."""

from __future__ import annotations

from fractions import Fraction as F

import pandas as pd
import pytest
from river import checks

from conftest import labels_and_domains
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
    checks.check_estimator(AODE())
