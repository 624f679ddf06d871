"""Property-based tests (hypothesis) of the statistics' monoid invariants and the posteriors.

Streams mix nominal (str), token (bool/int), numeric (float) and text (bags of tokens: a list
with repeats, a set, a {token: count}) values with random missing keys, None and NaN, and random
labels.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import (
    TEXT,
    TOKEN,
    Reference,
    Spec,
    assert_proba_close,
    assert_same_stats,
    assert_stats_close,
    snapshot,
    text_draws,
)
from streamnb import (
    CountStatistics,
    Dirichlet,
    Indifferent,
    InvalidRecord,
    Laplace,
    MaximumLikelihood,
    MEstimate,
    NaiveBayes,
)
from streamnb.stats.persist import dumps_state, loads_state

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NOMINAL_NAMES = ["n0", "n1", "n2"]
TOKEN_NAMES = ["t0", "t1", "t2", "t3"]
NUMERIC_NAMES = ["x0", "x1"]
TEXT_NAMES = ["body"]
VOCABULARY = ["free", "money", "lunch", "noon", "win"]
LABELS = ["p", "q", "r", "s"]
NAN = float("nan")
ABSENT = object()  # the key is left out

nominal_value = st.sampled_from(["a", "b", "c", "d", None, NAN, ABSENT, ABSENT])
token_value = st.sampled_from([True, False, 1, 0, 2, 5, None, ABSENT, ABSENT])
numeric_value = st.one_of(
    st.floats(min_value=-100, max_value=100, allow_nan=False, allow_infinity=False),
    st.sampled_from([NAN, None, ABSENT, ABSENT]),
)
words = st.sampled_from(VOCABULARY)
text_value = st.one_of(
    st.lists(words, max_size=5),
    st.frozensets(words, max_size=4),
    st.dictionaries(words, st.integers(min_value=0, max_value=3), max_size=4),
    st.sampled_from([None, ABSENT, ABSENT]),
)


@st.composite
def records(draw, numeric=True):
    x = {}
    for names, strategy in (
        (NOMINAL_NAMES, nominal_value),
        (TOKEN_NAMES, token_value),
        (NUMERIC_NAMES if numeric else [], numeric_value),
        (TEXT_NAMES, text_value),
    ):
        for name in names:
            v = draw(strategy)
            if v is not ABSENT:
                x[name] = v
    if not x:  # {} is rejected by design; an all-missing record is fine
        x[draw(st.sampled_from(NOMINAL_NAMES))] = None
    return x


def streams(numeric=True, min_size=0, max_size=25):
    return st.lists(
        st.tuples(records(numeric), st.sampled_from(LABELS)), min_size=min_size, max_size=max_size
    )


def learn(data, stats=None):
    stats = stats if stats is not None else CountStatistics()
    for x, y in data:
        stats.update(x, y)
    return stats


ESTIMATORS = {
    "ml": (MaximumLikelihood, Spec("ml")),
    "laplace": (Laplace, Spec("laplace")),
    "m-estimate": (lambda: MEstimate(m=2), Spec("m", m=2)),
    "bibl": (
        lambda: Dirichlet(
            class_prior={"p": 2.0, "q": 0.5},
            value_prior={"n0": {"a": 3.0}, "t0": {True: 0.5}, "n1": 2.0},
            default=0.75,
        ),
        Spec(
            "bibl",
            class_prior={"p": 2.0, "q": 0.5},
            value_prior={"n0": {"a": 3.0}, "t0": {True: 0.5}, "n1": 2.0},
            default=0.75,
        ),
    ),
    "indifferent": (Indifferent, Spec("indifferent")),
}


# -- count invariants ------------------------------------------------------------------------------
@SETTINGS
@given(streams(min_size=1))
def test_count_invariants(data):
    """Σ_v N_i(v,c) = N_i(c) ≤ N(c) for nominal attributes; token present counts ≤ N(c);
    numeric weights ≤ N(c); Σ_c N(c) = records learned; the counts equal a direct count."""
    s = learn(data)
    d = s.to_dict()
    assert sum(d["classes"].values()) == len(data) == s.n_records
    for label in d["classes"]:
        assert d["classes"][label] == sum(1 for _, y in data if y == label)
    for (name, label), observed in d["observed"].items():
        total = sum(v for (n, _, c), v in d["cells"].items() if n == name and c == label)
        assert total == observed <= d["classes"][label]
        assert observed == sum(
            1 for x, y in data if y == label and name in x and isinstance(x[name], str)
        )
    for (name, label), drawn in d["draws"].items():
        total = sum(v for (n, _, c), v in d["cells"].items() if n == name and c == label)
        assert total == drawn
    for (name, value, label), v in d["cells"].items():
        if d["kinds"][name] == TEXT:
            assert v == sum(text_draws(x[name]).get(value, 0) for x, y in data
                            if y == label and x.get(name) is not None)
        elif d["kinds"][name] == TOKEN:
            assert value is True
            assert v == sum(1 for x, y in data if y == label and x.get(name))
            assert v <= d["classes"][label]
        else:
            assert v == sum(1 for x, y in data if y == label and x.get(name) == value)
    for (name, label), (w, mean, m2) in d["moments"].items():
        vals = [
            x[name]
            for x, y in data
            if y == label and isinstance(x.get(name), float) and not math.isnan(x[name])
        ]
        assert w == len(vals) <= d["classes"][label]
        if vals:
            assert mean == pytest.approx(np.mean(vals), abs=1e-9)
            assert m2 == pytest.approx(np.var(vals) * len(vals), rel=1e-9, abs=1e-7)
        assert m2 >= -1e-9


@SETTINGS
@given(streams(), st.integers(min_value=1, max_value=7))
def test_update_many_equals_update_sequence(data, chunk):
    """update_many (in chunks of any size) == update on each record in order."""
    one = learn(data)
    many = CountStatistics()
    for i in range(0, len(data), chunk):
        part = data[i : i + chunk]
        many.update_many([x for x, _ in part], [y for _, y in part])
    assert_same_stats(many.to_dict(), one.to_dict())
    assert many.schema.to_json() == one.schema.to_json()


# -- merge -----------------------------------------------------------------------------------------
@SETTINGS
@given(streams(), streams())
def test_merge_equals_learning_the_concatenation(a, b):
    """merge(A, B) == learning A + B (counts exactly, moments allclose)."""
    assert_same_stats(learn(a).merge(learn(b)).to_dict(), learn(a + b).to_dict())


@SETTINGS
@given(streams(), streams())
def test_merge_is_commutative(a, b):
    assert_same_stats(learn(a).merge(learn(b)).to_dict(), learn(b).merge(learn(a)).to_dict())


@SETTINGS
@given(streams(max_size=12), streams(max_size=12), streams(max_size=12))
def test_merge_is_associative(a, b, c):
    left = learn(a).merge(learn(b)).merge(learn(c))
    right = learn(a).merge(learn(b).merge(learn(c)))
    assert_same_stats(left.to_dict(), right.to_dict())


# -- decay -----------------------------------------------------------------------------------------
factors = st.floats(min_value=1e-3, max_value=1.0, exclude_min=False)


@SETTINGS
@given(streams(min_size=1), factors, factors)
def test_decay_composes(data, f, g):
    """decay(f) then decay(g) == decay(f·g)."""
    a, b = learn(data), learn(data)
    a.decay(f)
    a.decay(g)
    b.decay(f * g)
    assert_stats_close(a.to_dict(), b.to_dict(), rtol=1e-12, atol=1e-300)


@SETTINGS
@given(
    streams(min_size=1),
    st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0, exclude_min=True), st.just(NAN)),
)
def test_decay_rejects_factors_outside_unit_interval(data, bad):
    s = learn(data)
    before = snapshot(s)
    with pytest.raises(ValueError):
        s.decay(bad)
    assert snapshot(s) == before


# -- persistence -----------------------------------------------------------------------------------
@SETTINGS
@given(streams(), factors)
def test_state_round_trip(data, f):
    """to_state → bytes → from_state is the identity on the statistics."""
    s = learn(data)
    s.decay(f)
    meta, arrays = s.to_state()
    t = CountStatistics.from_state(*loads_state(dumps_state(meta, arrays)))
    assert t.to_dict() == s.to_dict()
    assert t.schema.to_json() == s.schema.to_json()


# -- posteriors ------------------------------------------------------------------------------------
@SETTINGS
@given(streams(min_size=1), st.lists(records(), min_size=1, max_size=5))
def test_probabilities_are_distributions(data, queries):
    """For every estimator P(c | x) ∈ [0, 1] over the classes seen, summing to 1."""
    for name, (make, _) in ESTIMATORS.items():
        model = NaiveBayes(estimator=make())
        for x, y in data:
            model.learn_one(x, y)
        labels = list(dict.fromkeys(y for _, y in data))
        for q in queries:
            p = model.predict_proba_one(q)
            assert list(p) == labels, name
            assert all(0.0 <= v <= 1.0 and not math.isnan(v) for v in p.values()), (name, p)
            assert sum(p.values()) == pytest.approx(1.0, abs=1e-12), (name, p)
        batch = model.predict_proba_many(queries).to_numpy()
        assert np.all((batch >= 0) & (batch <= 1)) and np.allclose(batch.sum(axis=1), 1.0)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(streams(numeric=False, min_size=1), st.lists(records(numeric=False), min_size=1, max_size=4))
def test_posterior_matches_reference_formula(data, queries):
    """On random discrete streams (nominal with missing values, tokens) every estimator's
    posterior equals the §1 formula evaluated by brute force with exact fractions."""
    ref = Reference([x for x, _ in data], [y for _, y in data])
    for _name, (make, spec) in ESTIMATORS.items():
        model = NaiveBayes(estimator=make())
        for x, y in data:
            model.learn_one(x, y)
        for q in queries:
            assert_proba_close(model.predict_proba_one(q), ref.posterior(q, spec), tol=1e-9)


# -- rejected input --------------------------------------------------------------------------------
bad_values = st.sampled_from(
    [[1], {"a": "1"}, 1 + 2j, object(), float("inf"), -float("inf"), (1, 2), b"bytes"]
)


@SETTINGS
@given(
    streams(),
    records(),
    st.sampled_from(NOMINAL_NAMES + TOKEN_NAMES + NUMERIC_NAMES + ["fresh"]),
    bad_values,
    st.sampled_from([None, NAN, 1.5, ["p"]]),
    st.integers(min_value=0, max_value=3),
)
def test_rejected_record_leaves_state_unchanged(data, good, field, bad, bad_label, position):
    """A record with a bad field value (or a bad label) raises InvalidRecord naming the field
    and changes nothing, also in a batch whose earlier rows were good."""
    s = learn(data)
    before = snapshot(s)
    x = dict(good, fresh_nominal="v", fresh_token=True, fresh_numeric=0.5)
    x[field] = bad
    with pytest.raises(InvalidRecord) as err:
        s.update(x, "new-label")
    assert err.value.field == field
    assert snapshot(s) == before
    with pytest.raises(InvalidRecord) as err:
        s.update(good, bad_label)
    assert err.value.field == "label"
    assert snapshot(s) == before
    batch = [dict(good, **{f"new{i}": f"v{i}", f"tok{i}": 1}) for i in range(4)]
    batch.insert(position, x)
    with pytest.raises(InvalidRecord, match=f"row {position}"):
        s.update_many(batch, ["new-label"] * len(batch))
    assert snapshot(s) == before
    # and the state still learns exactly as before
    assert_same_stats(learn([(good, "p")], s).to_dict(), learn([*data, (good, "p")]).to_dict())


# -- interleaved learning, forgetting, merging and predicting -------------------------------------
@st.composite
def records_mixing_tokens(draw):
    # records with and without a present token: both change N(c), hence θ(absent | c)
    record = draw(records())
    return dict(record, tok=True) if draw(st.booleans()) or not record else record


labelled = st.tuples(records_mixing_tokens(), st.sampled_from(LABELS))
operations = st.lists(
    st.one_of(
        st.tuples(st.just("learn_one"), labelled),
        st.tuples(st.just("learn_many"), st.lists(labelled, min_size=1, max_size=4)),
        st.tuples(st.just("decay"), factors),
        st.tuples(st.just("merge"), st.lists(labelled, min_size=1, max_size=4)),
    ),
    min_size=1,
    max_size=12,
)


@SETTINGS
@given(st.sampled_from(sorted(ESTIMATORS)), operations, st.lists(records(), min_size=1, max_size=3))
def test_interleaved_operations_match_a_model_rebuilt_from_counts(name, ops, queries):
    """Whatever sequence of learn_one / learn_many / decay / merge, each prediction equals
    that of a model rebuilt from the saved counts alone (no cached term goes stale), and
    predict_proba_many equals predict_proba_one."""
    # by name where there is no hyperparameter (instances of those cannot be saved yet, see
    # test_persistence.py::test_round_trip_estimator_instance)
    make = ESTIMATORS[name][0] if name in ("m-estimate", "bibl") else (lambda: name)
    model = NaiveBayes(estimator=make())
    for op, arg in ops:
        if op == "learn_one":
            model.learn_one(*arg)
        elif op == "learn_many":
            model.learn_many([x for x, _ in arg], [y for _, y in arg])
        elif op == "decay":
            model.decay(arg)
        else:
            other = NaiveBayes(estimator=make())
            for x, y in arg:
                other.learn_one(x, y)
            model.merge(other)
        if not model.classes:
            continue
        again = NaiveBayes.from_state(*model.to_state())
        batch = model.predict_proba_many(queries)
        for i, q in enumerate(queries):
            p = model.predict_proba_one(q)
            assert_proba_close(p, again.predict_proba_one(q), tol=1e-9)
            assert_proba_close(batch.iloc[i].to_dict(), p, tol=1e-9)


# -- the token histogram: kept incrementally, always equal to a rebuild from the counts -----------
@st.composite
def token_messages(draw):
    # many distinct tokens, some frequent enough to pass a small threshold, mixed with the
    # other kinds (which must not disturb the histogram)
    words = draw(st.lists(st.integers(min_value=0, max_value=40), max_size=6))
    x = {f"w{w}": True for w in words}
    if draw(st.booleans()):
        x.update(draw(records()))
    return x or {"w0": True}


histogram_operations = st.lists(
    st.one_of(
        st.tuples(st.just("update"), st.tuples(token_messages(), st.sampled_from(LABELS))),
        st.tuples(st.just("update_many"), st.lists(
            st.tuples(token_messages(), st.sampled_from(LABELS)), min_size=1, max_size=8)),
        st.tuples(st.just("merge"), st.lists(
            st.tuples(token_messages(), st.sampled_from(LABELS)), min_size=1, max_size=8)),
        st.tuples(st.just("decay"), st.sampled_from([1.0, 0.5, 0.25])),
    ),
    min_size=1,
    max_size=15,
)


def assert_histogram_is_rebuilt(s: CountStatistics, threshold: int) -> None:
    from streamnb.stats.token_histogram import TokenHistogram

    columns = s.schema.token_columns()
    want = TokenHistogram(threshold)
    want.rebuild(s.class_counts, s.value_counts[:, columns], columns, s.schema.n_columns)
    got, k, n = s.tokens, s.n_classes, s.schema.n_columns
    assert got.exact == want.exact
    if not want.exact:
        return
    assert (got.n_tokens, got.n_classes) == (want.n_tokens, want.n_classes) == (len(columns), k)
    assert got.bins[:k].tolist() == want.bins.tolist()
    assert got.head == want.head
    assert got.is_head[:n].tolist() == want.is_head[:n].tolist()
    assert not got.is_head[n:].any()


@SETTINGS
@given(histogram_operations, st.sampled_from([1, 2, 3, 1024]))
def test_incremental_histogram_equals_a_rebuild(ops, threshold):
    """After any sequence of one-record updates, batches, merges and decays, the histogram
    kept incrementally (O(tokens) per update or batch) equals one rebuilt from the counts."""
    from streamnb.stats.token_histogram import TokenHistogram

    s = CountStatistics()
    s.tokens = TokenHistogram(threshold)
    for op, arg in ops:
        if op == "update":
            s.update(*arg)
        elif op == "update_many":
            s.update_many([x for x, _ in arg], [y for _, y in arg])
        elif op == "merge":
            s.merge(learn(arg))
        else:
            s.decay(arg)
        assert_histogram_is_rebuilt(s, threshold)


@SETTINGS
@given(st.lists(st.tuples(token_messages(), st.sampled_from(LABELS)), min_size=1,
                max_size=30),
       st.integers(min_value=1, max_value=9), st.lists(token_messages(), min_size=1,
                                                       max_size=4))
def test_learn_many_equals_learn_one_with_the_same_predictions(data, chunk, queries):
    """learn_many in batches of any size gives the counts, histogram and predictions (to the
    last bit) of learn_one on each record in order; with numeric attributes the Gaussian
    moments (a batch's Chan update against Welford's one by one) and so the predictions agree
    to rounding."""
    one, many = NaiveBayes(), NaiveBayes()
    for x, y in data:
        one.learn_one(x, y)
    for i in range(0, len(data), chunk):
        part = data[i : i + chunk]
        many.learn_many([x for x, _ in part], [y for _, y in part])
    assert_same_stats(many.stats.to_dict(), one.stats.to_dict())
    assert many.stats.tokens.head == one.stats.tokens.head
    assert many.stats.tokens.bins.tolist() == one.stats.tokens.bins.tolist()
    numeric = any(isinstance(v, float) for x, _ in data for v in x.values())
    rel = 1e-12 if numeric else 0.0
    for q in queries:
        assert many.predict_proba_one(q) == pytest.approx(one.predict_proba_one(q), rel=rel,
                                                          abs=rel)
    np.testing.assert_allclose(many.predict_proba_many(queries).to_numpy(),
                               one.predict_proba_many(queries).to_numpy(), rtol=rel, atol=rel)


@SETTINGS
@given(st.sampled_from(sorted(ESTIMATORS)),
       st.lists(st.lists(labelled, min_size=1, max_size=6), min_size=1, max_size=6))
def test_one_encoding_for_predict_then_learn(name, batches):
    """Prequential batches encoded once (``encode_many``, then ``predict_proba_many`` and
    ``learn_many`` of the same batch) give the predictions, to the last bit, and the counts
    and schema of the records predicted and learned as they are."""
    make = ESTIMATORS[name][0] if name in ("m-estimate", "bibl") else (lambda: name)
    plain, shared = NaiveBayes(estimator=make()), NaiveBayes(estimator=make())
    for batch in batches:
        xs, ys = [x for x, _ in batch], [y for _, y in batch]
        encoded = shared.encode_many(xs)
        if plain.classes:
            want = plain.predict_proba_many(xs).to_numpy()
            assert (shared.predict_proba_many(encoded).to_numpy() == want).all()
            want = plain.predict_log_proba_many(xs).to_numpy()
            assert (shared.predict_log_proba_many(encoded).to_numpy() == want).all()
        plain.learn_many(xs, ys)
        shared.learn_many(encoded, ys)
        assert_same_stats(shared.stats.to_dict(), plain.stats.to_dict())
        assert shared.stats.schema.to_json() == plain.stats.schema.to_json()
        if any(encoded.registrations):  # the schema grew: the batch is stale
            with pytest.raises(ValueError, match="encode it again"):
                shared.predict_proba_many(encoded)
