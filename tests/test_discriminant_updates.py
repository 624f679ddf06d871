"""One-by-one LDA, QDA and KernelNB: the carried-over terms give the batch path's numbers.

``learn_one`` carries the cached terms over to the new state by a rank-one (Sherman–Morrison)
update and ``predict_*_one`` reads the precision matrices; the reference is a copy of the model
(a copy starts with no cache, so its terms come from a fresh factorisation of the state) asked
through the batch path, ``predict_proba_many``.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from streamnb import LDA, QDA
from streamnb.models.discriminant import cholesky_with_jitter, rank_one_update

SHRINKAGES = [None, 0.3, "ledoit-wolf"]


def _prequential(model, stream, every: int) -> tuple[float, int]:
    """Predict then learn each record; every ``every`` records compare the one-record
    log-posteriors with a fresh copy's batch path. The difference is measured relative to
    max(1, |log P(c | x)|): a relative 1e-9 of the probability for every class with
    P(c | x) ≥ e⁻¹, a relative 1e-9 of the log-probability for the improbable ones (whose
    log-likelihoods, hundreds of nats, carry rounding of that relative size in any
    factorisation). Returns the worst difference and how many compared records were predicted
    from rank-one updated terms."""
    worst, updated = 0.0, 0
    for i, (x, y) in enumerate(stream):
        if i % every == 0 and model.stats.n_classes:
            fast = model.predict_log_proba_one(x)
            updated += isinstance(model, LDA | QDA) and model._terms()["updates"] > 0
            batch = copy.deepcopy(model).predict_log_proba_many([x]).iloc[0]
            for label, p in fast.items():
                ref = float(batch[label])
                if math.isinf(ref) or math.isinf(p):
                    assert p == ref
                else:
                    worst = max(worst, abs(p - ref) / max(1.0, abs(ref)))
        else:
            model.predict_proba_one(x)
        model.learn_one(x, y)
    return worst, updated


@pytest.mark.parametrize("name", ["Vehicle", "segment"])
@pytest.mark.parametrize("cls", [LDA, QDA])
@pytest.mark.parametrize("shrinkage", SHRINKAGES)
def test_one_by_one_equals_batch_on_uci(name, cls, shrinkage):
    from streamnb.datasets import load

    data = load(name)
    stream = [({a: r[a] for a in data.numeric}, y) for r, y in data][:600]
    worst, updated = _prequential(cls(shrinkage=shrinkage), stream, every=7)
    assert worst <= 1e-9
    if name == "Vehicle" and shrinkage is None:
        assert updated > 40  # the rank-one path was the one compared


def _synthetic(n: int, d: int, seed: int, collinear: float | None = None):
    rng = np.random.default_rng(seed)
    ys = rng.integers(0, 3, n)
    x = rng.normal(0.0, 1.0, (n, d)) @ rng.normal(0.0, 1.0, (d, d)) + 3.0 * ys[:, None]
    if collinear is not None:  # attribute 1 is attribute 0 plus tiny noise: near-singular
        x[:, 1] = x[:, 0] + collinear * rng.normal(0.0, 1.0, n)
    return [({f"x{j}": float(v) for j, v in enumerate(row)}, int(y))
            for row, y in zip(x, ys, strict=True)]


@pytest.mark.parametrize("cls", [LDA, QDA])
@pytest.mark.parametrize("shrinkage", SHRINKAGES)
@pytest.mark.parametrize("collinear", [None, 1e-3, 1e-6, 0.0])
def test_one_by_one_equals_batch_near_singular(cls, shrinkage, collinear):
    worst, _ = _prequential(cls(shrinkage=shrinkage), _synthetic(300, 6, 1, collinear), 3)
    assert worst <= 1e-9


@pytest.mark.parametrize("cls", [LDA, QDA])
@pytest.mark.parametrize("shrinkage", SHRINKAGES)
def test_tiny_classes_and_missing_values(cls, shrinkage):
    """Classes of one and two records among large ones, and records missing a value."""
    stream = _synthetic(200, 4, 2)
    stream[50] = ({"x0": 1.0, "x1": 2.0, "x2": 0.5, "x3": -1.0}, "rare")
    stream[120] = ({"x0": 1.5, "x1": 2.5, "x2": 0.0, "x3": -2.0}, "rare")
    stream[150] = ({"x0": -4.0, "x1": 0.0, "x2": 1.0, "x3": 1.0}, "single")
    stream[170] = ({"x0": 0.3, "x2": 1.0}, 0)
    worst, _ = _prequential(cls(shrinkage=shrinkage), stream, 1)
    assert worst <= 1e-9


@pytest.mark.parametrize("cls", [LDA, QDA])
def test_updated_terms_track_a_fresh_factorisation_over_10000_records(cls):
    """After 10,000 one-by-one records the carried-over precision matrices and
    log-determinants equal a fresh factorisation's to 1e-9 (the periodic refresh bounds the
    drift), and the one-record log-likelihoods equal the batch path's."""
    model = cls()
    stream = _synthetic(10_000, 5, 3)
    for x, y in stream:
        model.predict_proba_one(x)
        model.learn_one(x, y)
    carried = model._terms()
    assert carried["updates"] > 0
    fresh = copy.deepcopy(model)._terms()
    np.testing.assert_allclose(carried["precisions"], fresh["precisions"], rtol=1e-9, atol=0)
    np.testing.assert_allclose(carried["logdets"], fresh["logdets"], rtol=1e-9)
    x = stream[0][0]
    one = model._log_likelihood_one(x)[0]
    batch = copy.deepcopy(model)._joint_log_likelihood([x], "r")[0][0]
    np.testing.assert_allclose(one, batch, rtol=1e-9)


def test_rank_one_update_does_not_drift_without_refresh():
    """10,000 chained updates of one precision matrix (no refresh) against the inverse of the
    covariance they describe: Sherman–Morrison with a denominator ≥ 1 stays within 1e-9."""
    rng = np.random.default_rng(4)
    d = 8
    mixer = rng.normal(0.0, 1.0, (d, d))
    x0 = rng.normal(0.0, 1.0, (d + 2, d)) @ mixer
    n, mean = len(x0), x0.mean(axis=0)
    scatter = (x0 - mean).T @ (x0 - mean)
    factor, logdet, exact = cholesky_with_jitter(scatter / n)
    assert exact
    inverse = np.linalg.inv(factor)
    precision, diag = inverse.T @ inverse, np.diagonal(scatter / n).copy()
    for x in rng.normal(0.0, 1.0, (10_000, d)) @ mixer:
        delta = x - mean
        u = delta * math.sqrt(1.0 / (n + 1.0))  # Σ' = n/(n+1) (Σ + δδᵀ/(n+1))
        precision, logdet, diag = rank_one_update(precision, logdet, diag, u, n / (n + 1.0))
        scatter += (n / (n + 1.0)) * np.outer(delta, delta)
        mean += delta / (n + 1.0)
        n += 1
    sigma = scatter / n
    np.testing.assert_allclose(precision, np.linalg.inv(sigma), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(logdet, np.linalg.slogdet(sigma)[1], rtol=1e-9)
    np.testing.assert_allclose(diag, np.diagonal(sigma), rtol=1e-9)


def test_merge_decay_and_learn_many_invalidate_the_carried_terms():
    """Any other change of the state (merge, decay, learn_many) is followed by a fresh
    factorisation: the one-record path still equals the batch path."""
    stream = _synthetic(400, 4, 5)
    model, other = LDA(), LDA()
    for x, y in stream[:200]:
        model.predict_proba_one(x)
        model.learn_one(x, y)
    other.learn_many([x for x, _ in stream[200:300]], [y for _, y in stream[200:300]])
    for change in (lambda: model.merge(other), lambda: model.decay(0.5),
                   lambda: model.learn_many([stream[300][0]], [stream[300][1]])):
        model.predict_proba_one(stream[0][0])
        change()
        worst, _ = _prequential(model, stream[301:320], 1)
        assert worst <= 1e-9


@pytest.mark.parametrize("name", ["Vehicle", "segment"])
def test_kernel_nb_one_by_one_equals_batch(name):
    """KernelNB recomputes only the learned class's kernel terms after ``learn_one`` and
    predicts one record in one vectorised step: the batch path's numbers."""
    from streamnb import KernelNB
    from streamnb.datasets import load

    data = load(name)
    stream = [({a: r[a] for a in data.numeric}, y) for r, y in data][:400]
    stream[10] = ({a: v for a, v in list(stream[10][0].items())[:3]}, stream[10][1])
    worst, _ = _prequential(KernelNB(n_bins=32), stream, 3)
    assert worst <= 1e-9


@pytest.mark.parametrize("d", [8, 50])
def test_kernel_nb_one_by_one_equals_batch_at_the_benchmark_dimensions(d):
    """The default KernelNB (128 bins) one by one at the dimensions of
    benchmarks/bench_discriminant_one.py: each one-record prediction, made straight from the
    bins the records so far filled, equals a fresh copy's batch path to 1e-9."""
    from streamnb import KernelNB

    worst, _ = _prequential(KernelNB(), _synthetic(300, d, 6), 3)
    assert worst <= 1e-9


@pytest.mark.parametrize("cls", ["LDA", "QDA", "KernelNB"])
@pytest.mark.parametrize("change", ["value", "equal value of another type", "bool", "key added",
                                    "key removed", "key renamed", "none"])
def test_learn_one_after_predict_one_learns_the_record_as_it_is_then(cls, change):
    """``learn_one`` reuses the encoding ``predict_proba_one`` made of the same record only
    while the mapping holds the same keys and values: a record changed in between (even to an
    equal value of another type, 2 for 2.0, or to True, which a continuous model refuses) is
    learned as it is when ``learn_one`` sees it, so the state equals that of a model that
    learned it without predicting first."""
    import streamnb
    from streamnb import InvalidRecord

    rng = np.random.default_rng(1)
    stream = [({"a": float(a), "b": float(b)}, int(a > 0)) for a, b in rng.normal(size=(60, 2))]
    predicted, plain = getattr(streamnb, cls)(), getattr(streamnb, cls)()
    for x, y in stream:
        predicted.predict_proba_one(x)
        predicted.learn_one(x, y)
        plain.learn_one(dict(x), y)
    x = {"a": 2.0, "b": -1.0}
    predicted.predict_proba_one(x)
    if change == "value":
        x["a"] = 3.0
    elif change == "equal value of another type":
        x["a"] = 2
    elif change == "bool":
        x["a"] = True
    elif change == "key added":
        x["c"] = 5.0
    elif change == "key removed":
        del x["b"]
    elif change == "key renamed":
        x["c"] = x.pop("b")
    if change == "bool":
        with pytest.raises(InvalidRecord, match="bool"):
            predicted.learn_one(x, 1)
        with pytest.raises(InvalidRecord, match="bool"):
            plain.learn_one(dict(x), 1)
    else:
        predicted.learn_one(x, 1)
        plain.learn_one(dict(x), 1)
    assert predicted.stats.attributes.names() == plain.stats.attributes.names()
    meta, arrays = predicted.stats.to_state()
    meta_plain, arrays_plain = plain.stats.to_state()
    assert meta == meta_plain
    for name, array in arrays.items():
        np.testing.assert_array_equal(array, arrays_plain[name], err_msg=name)
    probe = {"a": 0.5, "b": 0.25, "c": 1.0}
    assert predicted.predict_proba_one(probe) == pytest.approx(plain.predict_proba_one(probe),
                                                               rel=1e-9)
