"""The river classifiers: batch == one-by-one, merge, decay, bad input, river integration."""

from __future__ import annotations

import math
import subprocess
import sys
from fractions import Fraction as F
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from river import checks, compose, datasets, evaluate, feature_extraction, metrics

from conftest import (
    MESSAGES,
    MIXED,
    WEATHER,
    Reference,
    Spec,
    assert_proba_close,
    assert_same_stats,
    snapshot,
)
from streamnb import Dirichlet, IndifferentNB, InvalidRecord, MEstimate, NaiveBayes
from streamnb.stats.encoder import encode_batch

ESTIMATOR_NAMES = ["ml", "laplace", "m-estimate", "bibl", "indifferent"]


def fit(model, data):
    for x, y in data:
        model.learn_one(x, y)
    return model


def xs(data):
    return [x for x, _ in data]


def ys(data):
    return [y for _, y in data]


def token_frame(records):
    """Dense int DataFrame of token presence/counts (0 = absent), no NaN (so no float upcast)."""
    vocab = sorted({w for x in records for w in x})
    return pd.DataFrame([{w: int(x.get(w, 0)) for w in vocab} for x in records])


TEXTS = [
    ("free money now claim your prize", "spam"),
    ("meeting at noon tomorrow", "ham"),
    ("free lunch on friday at noon", "ham"),
    ("win win win free prize money", "spam"),
    ("project meeting notes attached", "ham"),
    ("claim free money today", "spam"),
    ("lunch tomorrow maybe", "ham"),
]
QUERY_TEXTS = ["free prize", "meeting notes", "noon lunch money", "unknown words only here"]

NOMINAL_QUERIES = [
    {"o": "s", "w": "weak", "h": "hi"},
    {"o": "r", "h": None},
    {"o": "zzz", "w": "strong"},
    {"h": "norm"},
]
TOKEN_QUERIES = [
    {"free": 1, "money": 1},
    {"meeting": 2, "noon": 1},
    {"zebra": 1},
    {"claim": 1, "prize": 1, "lunch": 1},
]
MIXED_QUERIES = [
    {"colour": "red", "spam": True, "len": 3.5, "ratio": 0.4},
    {"colour": "blue", "egg": True, "len": 6.0},
    {"colour": "green", "len": 2.2, "ratio": 0.9},
    {"colour": "purple", "spam": 1, "ratio": float("nan")},
]


# -- learn_many == learn_one, predict_proba_many == predict_proba_one ---------------------------
CASES = {
    "nominal": (WEATHER, lambda r: pd.DataFrame(r), NOMINAL_QUERIES),
    "token": (MESSAGES, token_frame, TOKEN_QUERIES),
    "numeric": (
        [({k: v for k, v in x.items() if k in ("len", "ratio")}, y) for x, y in MIXED],
        lambda r: pd.DataFrame(r, dtype=float),
        [{"len": 3.0, "ratio": 0.5}, {"len": 6.5}, {"ratio": 1.1}],
    ),
    "mixed": (MIXED, lambda r: pd.DataFrame(r), MIXED_QUERIES),
}


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
@pytest.mark.parametrize("case", list(CASES))
def test_learn_many_equals_learn_one(case, estimator):
    """learn_many on a DataFrame and on a list of dicts gives the same statistics as
    learn_one in order (counts exactly, moments allclose); predict_proba_many on a DataFrame
    and on a list equals predict_proba_one row by row (1e-12)."""
    data, frame, queries = CASES[case]
    one = fit(NaiveBayes(estimator=estimator), data)
    from_list = NaiveBayes(estimator=estimator)
    from_list.learn_many(xs(data), ys(data))
    from_frame = NaiveBayes(estimator=estimator)
    from_frame.learn_many(frame(xs(data)), pd.Series(ys(data)))
    for model in (from_list, from_frame):
        assert_same_stats(model.stats.to_dict(), one.stats.to_dict(), rtol=1e-12, atol=1e-12)
        assert model.n_learned == len(data)
    queries = queries + xs(data)
    qframe = frame(queries)
    for model in (one, from_list, from_frame):
        for proba in (model.predict_proba_many(qframe), model.predict_proba_many(queries)):
            assert list(proba.columns) == one.classes
            assert len(proba) == len(queries)
            for i, q in enumerate(queries):
                want = one.predict_proba_one(q)
                got = proba.iloc[i].to_dict()
                assert_proba_close(got, want, tol=1e-12)
        labels = model.predict_many(qframe)
        assert labels.tolist() == [one.predict_one(q) for q in queries]


def test_predict_proba_many_keeps_the_frame_index():
    model = fit(NaiveBayes(), WEATHER)
    frame = pd.DataFrame(NOMINAL_QUERIES, index=[10, 20, 30, 40])
    assert model.predict_proba_many(frame).index.tolist() == [10, 20, 30, 40]
    assert model.predict_many(frame).index.tolist() == [10, 20, 30, 40]


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
def test_learn_many_sparse_bag_of_words(estimator):
    """A pandas sparse DataFrame from river's BagOfWords.transform_many learns the same
    counts as learn_one on BagOfWords.transform_one, and predicts the same."""
    bow = feature_extraction.BagOfWords()
    texts = pd.Series([t for t, _ in TEXTS])
    frame = bow.transform_many(texts)
    assert all(isinstance(t, pd.SparseDtype) for t in frame.dtypes)
    batch = NaiveBayes(estimator=estimator)
    batch.learn_many(frame, pd.Series([y for _, y in TEXTS]))
    one = fit(NaiveBayes(estimator=estimator), [(bow.transform_one(t), y) for t, y in TEXTS])
    assert batch.stats.to_dict() == one.stats.to_dict()
    qframe = bow.transform_many(pd.Series(QUERY_TEXTS))
    proba = batch.predict_proba_many(qframe)
    for i, t in enumerate(QUERY_TEXTS):
        assert_proba_close(proba.iloc[i].to_dict(), one.predict_proba_one(bow.transform_one(t)))


def test_learn_many_int_labels_stay_ints():
    """Labels from a pandas Series keep their type (river coerces them to str; we do not)."""
    model = NaiveBayes()
    model.learn_many(pd.DataFrame(xs(WEATHER)), pd.Series([0, 1, 1, 2, 0, 1, 2, 2]))
    assert model.classes == [0, 1, 2]
    assert all(type(c) is int for c in model.classes)


# -- merge -----------------------------------------------------------------------------------------
DATA = WEATHER + MESSAGES + MIXED
QUERIES = NOMINAL_QUERIES + TOKEN_QUERIES + MIXED_QUERIES


@pytest.mark.parametrize(
    "make",
    [lambda: IndifferentNB()] + [(lambda e=e: NaiveBayes(estimator=e)) for e in ESTIMATOR_NAMES],
    ids=["IndifferentNB", *ESTIMATOR_NAMES],
)
def test_model_merge_equals_learning_everything(make):
    """Model-level merge: shard statistics add up to the model learned on the whole stream."""
    whole = fit(make(), DATA)
    a = fit(make(), DATA[::2])
    b = fit(make(), DATA[1::2])
    assert a.merge(b) is a
    assert a.n_learned == len(DATA)
    assert_same_stats(a.stats.to_dict(), whole.stats.to_dict())
    for q in QUERIES:
        assert_proba_close(a.predict_proba_one(q), whole.predict_proba_one(q), tol=1e-9)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (NaiveBayes(estimator="laplace"), NaiveBayes(estimator="ml")),
        (NaiveBayes(estimator="indifferent"), IndifferentNB()),
        (NaiveBayes(), NaiveBayes(domains={"o": ["s", "c"]})),
        (NaiveBayes(), NaiveBayes(nominal=["o"])),
        (IndifferentNB(), IndifferentNB(var_smoothing=1e-3)),
        (NaiveBayes(), NaiveBayes(numeric="bins")),
    ],
    ids=["estimator", "class", "domains", "nominal", "var_smoothing", "numeric"],
)
def test_merge_models_with_different_params_raises(a, b):
    """Merging models that differ (class or any parameter) raises and changes nothing."""
    fit(a, WEATHER[:4])
    fit(b, WEATHER[4:])
    before = snapshot(a.stats)
    with pytest.raises(ValueError, match="models differ"):
        a.merge(b)
    assert snapshot(a.stats) == before
    assert a.n_learned == 4


def test_merge_models_with_estimator_instances():
    """Models built with an Estimator instance (MEstimate(m=2)) merge like named ones.

    Regression: merge compared ``_get_params()``, where river turns a nested estimator into a
    (class, params) tuple that cannot be encoded (TypeError 'cannot store a type')."""
    a = fit(NaiveBayes(estimator=MEstimate(m=2)), DATA[::2])
    b = fit(NaiveBayes(estimator=MEstimate(m=2)), DATA[1::2])
    whole = fit(NaiveBayes(estimator=MEstimate(m=2)), DATA)
    a.merge(b)
    for q in QUERIES:
        assert_proba_close(a.predict_proba_one(q), whole.predict_proba_one(q), tol=1e-9)
    with pytest.raises(ValueError):
        a.merge(NaiveBayes(estimator=MEstimate(m=3)))


# -- decay -----------------------------------------------------------------------------------------
DECAY_SPECS = [
    ("ml", Spec("ml")),
    ("laplace", Spec("laplace")),
    ("m-estimate", Spec("m", m=1)),
    ("bibl", Spec("bibl")),
    ("indifferent", Spec("indifferent")),
]


@pytest.mark.parametrize(("estimator", "spec"), DECAY_SPECS, ids=[e for e, _ in DECAY_SPECS])
@pytest.mark.parametrize("factor", [F(1, 4), F(1, 2), F(3, 8)])
def test_decay_probabilities_equal_scaled_counts(estimator, spec, factor):
    """After decay(f) the posterior is the §1 formula applied to counts × f (pseudo-counts are
    not scaled, so smoothing estimators move towards their prior)."""
    data = WEATHER + MESSAGES
    model = fit(NaiveBayes(estimator=estimator), data)
    model.decay(float(factor))
    ref = Reference(xs(data), ys(data), scale=factor)
    for q in NOMINAL_QUERIES + TOKEN_QUERIES + [{"o": "s", "free": 1, "noon": True}]:
        assert_proba_close(model.predict_proba_one(q), ref.posterior(q, spec))


@pytest.mark.parametrize("data", [WEATHER, MESSAGES, MIXED], ids=["nominal", "token", "mixed"])
def test_laplace_decay_half_of_double_equals_single(data):
    """decay(0.5) on counts learned twice == counts learned once: same statistics (moments
    allclose) and the same Laplace/Indifferent probabilities."""
    for estimator in ("laplace", "indifferent"):
        twice = fit(NaiveBayes(estimator=estimator), data + data)
        twice.decay(0.5)
        once = fit(NaiveBayes(estimator=estimator), data)
        assert_same_stats(twice.stats.to_dict(), once.stats.to_dict(), rtol=1e-12)
        for q in QUERIES:
            assert_proba_close(twice.predict_proba_one(q), once.predict_proba_one(q), tol=1e-9)


def test_ml_probabilities_are_invariant_under_decay():
    """ML estimates are ratios of counts (and Gaussian mean/variance are kept), so decay does
    not change them, zero factors included: the all-zero fallback is still 32/65, 9/65, 24/65
    and a zero-probability class stays exactly 0."""
    model = fit(NaiveBayes(estimator="ml"), DATA)
    queries = [*QUERIES, {"o": "s", "w": "strong", "h": "norm"}, {"o": "s", "w": "weak"}]
    before = [model.predict_proba_one(q) for q in queries]
    for f in (0.5, 0.1, 0.3):
        model.decay(f)
        for q, p in zip(queries, before, strict=True):
            assert_proba_close(model.predict_proba_one(q), p, tol=1e-12)
    weather = fit(NaiveBayes(estimator="ml"), WEATHER)
    weather.decay(0.1)
    assert_proba_close(
        weather.predict_proba_one({"o": "s", "w": "strong", "h": "norm"}),
        {"no": 32 / 65, "yes": 9 / 65, "maybe": 24 / 65},
    )
    assert weather.predict_proba_one({"o": "s", "w": "weak", "h": "hi"})["yes"] == 0.0


def test_ml_token_always_present_after_decay_and_merge():
    """A token present in every record of a class keeps θ(absent|c) = 0 exactly through
    decay and merge (no rounding residue N(c) − P ≠ 0)."""
    data = [({"t": True, "a": "x"}, "p"), ({"t": True}, "p"), ({"u": True}, "q")]
    model = fit(NaiveBayes(estimator="ml"), data)
    model.decay(0.1)
    model.learn_one({"t": 1}, "p")
    model.decay(0.3)
    other = fit(NaiveBayes(estimator="ml"), [({"t": True}, "p")])
    other.decay(0.7)
    model.merge(other)
    p = model.predict_proba_one({"u": True})  # p: θ(t absent|p) = 0 → P(p) = 0
    assert p["p"] == 0.0 and p["q"] == 1.0


def test_model_decay_invalid_factor_raises():
    model = fit(NaiveBayes(), WEATHER)
    before = snapshot(model.stats)
    for bad in (0, -1, 1.01, float("nan")):
        with pytest.raises(ValueError):
            model.decay(bad)
    assert snapshot(model.stats) == before


# -- learning and predicting interleaved (prequential use) ---------------------------------------
WITH_TOKEN = [(dict(x, tok=True), y) for x, y in MIXED + WEATHER + MESSAGES]


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
@pytest.mark.parametrize("data", [WEATHER, MESSAGES, WITH_TOKEN], ids=["nominal", "token", "mixed"])
def test_interleaved_learn_predict_equals_fresh_model(data, estimator):
    """Prequential use: after every learn_one (and a decay, a learn_many and a merge in
    between), predictions equal those of a model that learned the same prefix and predicts
    for the first time — no cached term may go stale."""
    model = NaiveBayes(estimator=estimator)
    queries = [*QUERIES, {"tok": True, "o": "s"}]
    for i, (x, y) in enumerate(data):
        model.learn_one(x, y)
        fresh = fit(NaiveBayes(estimator=estimator), data[: i + 1])
        for q in queries:
            assert_proba_close(model.predict_proba_one(q), fresh.predict_proba_one(q), tol=1e-12)
    for step in range(8):
        if step == 1:
            model.decay(0.5)
        elif step == 3:
            model.learn_many(xs(data[:3]), ys(data[:3]))
        elif step == 5:
            model.merge(fit(NaiveBayes(estimator=estimator), data[3:6]))
        else:
            model.learn_one(*data[step % len(data)])
        again = NaiveBayes.from_state(*model.to_state())  # rebuilt from the counts alone
        for q in queries:
            assert_proba_close(model.predict_proba_one(q), again.predict_proba_one(q), tol=1e-12)


@pytest.mark.parametrize("estimator", ["laplace", "indifferent"])
def test_token_baseline_refreshed_after_record_without_tokens(estimator):
    """θ(absent|c) = (N(c) − P + 1)/(N(c) + 2) depends on N(c): learning a record of class c
    with no present token after a prediction must change the next prediction.

    Laplace after the 3 records: α = 3/5, 2/5; spam: θ(free) = 2/4, θ(¬meet) = 3/4; ham:
    θ(free) = 1/3, θ(¬meet) = 1/3 → P(spam | free) = 81/97 (Indifferent: 81/101 by eq. 16–17)."""
    model = fit(
        NaiveBayes(estimator=estimator),
        [({"free": True, "a": "x"}, "spam"), ({"meet": True, "a": "y"}, "ham")],
    )
    model.predict_proba_one({"free": True})  # computes and caches the token baseline
    model.learn_one({"a": "x"}, "spam")  # N(spam) grows; no token present
    if estimator == "laplace":
        spam, ham = F(3, 5) * F(2, 4) * F(3, 4), F(2, 5) * F(1, 3) * F(1, 3)
    else:  # b = 1 + (#A_a − 1) + 2 tokens = 4: α ∝ 6, 5; same θ
        spam, ham = F(6) * F(2, 4) * F(3, 4), F(5) * F(1, 3) * F(1, 3)
    want = float(spam / (spam + ham))
    assert model.predict_proba_one({"free": True})["spam"] == pytest.approx(want, abs=1e-12)


def test_token_counts_beyond_histogram_threshold():
    """Tokens present in more than a thousand records of a class (the frequent-token path of
    the O(t) baseline) give the same posterior as a model rebuilt from the counts."""
    model = NaiveBayes(estimator="laplace")
    queries = [{"free": True}, {"w1": True, "meet": True}, {"w3": 1}, {"new": True}]
    for i in range(2300):
        if i % 2:
            x, y = {"free": True, f"w{i % 5}": True}, "spam"
        else:
            x, y = {"meet": True, f"w{i % 4}": 1, "free": i % 4 == 0}, "ham"
        model.learn_one(x, y)
        if 2040 < i < 2056 or i == 2299:
            again = NaiveBayes.from_state(*model.to_state())
            for q in queries:
                assert_proba_close(model.predict_proba_one(q), again.predict_proba_one(q), tol=1e-9)
    model.learn_one({"free": True, "new": True}, "eggs")
    again = NaiveBayes.from_state(*model.to_state())
    for q in queries:
        assert_proba_close(model.predict_proba_one(q), again.predict_proba_one(q), tol=1e-9)
    assert model.stats.count("free", True) == {"spam": 1150.0, "ham": 575.0, "eggs": 1.0}


# -- bad input ------------------------------------------------------------------------------------
BAD_LEARN = [
    ("x not a mapping", ["o", "s"], "no", None),
    ("x is a string", "o=s", "no", None),
    ("NaN label", {"o": "s"}, float("nan"), "label"),
    ("None label", {"o": "s"}, None, "label"),
    ("float label 1.5", {"o": "s"}, 1.5, "label"),
    ("list label", {"o": "s"}, ["no"], "label"),
    ("list value", {"o": "s", "bad": [1, 2]}, "no", "bad"),
    ("dict value with a str count", {"o": "s", "bad": {"a": "1"}}, "no", "bad"),
    ("object value", {"o": "s", "bad": object()}, "no", "bad"),
    ("complex value", {"o": "s", "bad": 1 + 2j}, "no", "bad"),
    ("list for nominal", {"o": ["s"]}, "no", "o"),
    ("str for token", {"o": "s", "spam": "yes"}, "no", "spam"),
    ("float 0.5 for token", {"o": "s", "spam": 0.5}, "no", "spam"),
    ("str for numeric", {"o": "s", "len": "3"}, "no", "len"),
    ("bool for numeric", {"len": True}, "no", "len"),
    ("inf numeric", {"o": "s", "len": float("inf")}, "no", "len"),
    ("-inf new numeric", {"o": "s", "brand_new": -float("inf")}, "no", "brand_new"),
    ("float for nominal", {"o": 0.5}, "no", "o"),
    ("bad feature name", {1.5: "x"}, "no", 1.5),
    ("empty record", {}, "no", None),
]


def _trained():
    return fit(NaiveBayes(), WEATHER + MIXED)


@pytest.mark.parametrize("case", BAD_LEARN, ids=[c[0] for c in BAD_LEARN])
def test_learn_one_rejects_bad_input_and_keeps_state(case):
    """learn_one raises InvalidRecord naming the record and the field; nothing changes (no
    attribute, value, token or label registered by the fields before the bad one)."""
    _, x, y, field = case
    model = _trained()
    if isinstance(x, dict) and x:
        x = {"new_attr": "new", "new_token": True, "new_num": 1.0, "o": "new_value", **x}
    before = snapshot(model.stats), model.n_learned
    with pytest.raises(InvalidRecord) as err:
        model.learn_one(x, y)
    assert isinstance(err.value, ValueError)
    message = str(err.value)
    assert f"record {len(WEATHER + MIXED) + 1}" in message
    assert err.value.field == field
    if field is not None:
        assert repr(field) in message
    assert (snapshot(model.stats), model.n_learned) == before
    # the model is still usable and learns the next good record normally
    model.learn_one({"o": "s"}, "no")
    assert model.n_learned == before[1] + 1


# an empty record is learned by nobody but predicted as the class prior (below)
BAD_PREDICT = [c for c in BAD_LEARN if c[3] != "label" and c[0] != "-inf new numeric"
               and c[0] != "empty record"]


def test_an_empty_record_is_predicted_as_the_class_prior():
    """A token-less text in a river pipeline becomes {}: every message model predicts the
    class prior for it, one record or in a batch — what it predicts for a record of unknown
    attributes — and learning {} is still refused."""
    from streamnb.datasets import load
    from streamnb.models.registry import CONTINUOUS, MODELS, make_model

    vote = load("vote")
    for name in sorted(set(MODELS) - CONTINUOUS - {"spam-filter"}):
        model = make_model(name)
        model.learn_many([x for x, _ in vote][:200], [y for _, y in vote][:200])
        prior = model.predict_proba_one({"never-seen": "value"})
        assert model.predict_proba_one({}) == prior, name
        assert model.predict_proba_many([{}]).iloc[0].to_dict() == pytest.approx(prior), name
        with pytest.raises(InvalidRecord, match="no features"):
            model.learn_one({}, "democrat")


@pytest.mark.parametrize("case", BAD_PREDICT, ids=[c[0] for c in BAD_PREDICT])
def test_predict_proba_one_rejects_bad_input(case):
    """predict_proba_one raises InvalidRecord naming the field; state unchanged."""
    _, x, _, field = case
    model = _trained()
    before = snapshot(model.stats)
    with pytest.raises(InvalidRecord) as err:
        model.predict_proba_one(x)
    assert "record to predict" in str(err.value)
    assert err.value.field == field
    with pytest.raises(InvalidRecord):
        model.predict_one(x)
    assert snapshot(model.stats) == before


@pytest.mark.parametrize("as_frame", [False, True], ids=["list", "DataFrame"])
@pytest.mark.parametrize(
    ("bad_x", "bad_y", "field"),
    [
        ({"colour": [1]}, "a", "colour"),
        ({"len": "long"}, "a", "len"),
        ({"spam": "yes"}, "b", "spam"),
        ({"len": 1.0}, float("nan"), "label"),
        ({"len": 1.0}, None, "label"),
    ],
    ids=["list value", "str numeric", "str token", "NaN label", "None label"],
)
def test_learn_many_bad_row_rejects_whole_batch(as_frame, bad_x, bad_y, field):
    """A bad row in the middle of learn_many rejects the whole batch with the row index in
    the message; nothing from the earlier good rows (new attributes, values, tokens, labels)
    is kept."""
    model = fit(NaiveBayes(), MIXED)
    before = snapshot(model.stats), model.n_learned
    rows = [
        {"colour": "mauve", "fresh": "v", "len": 2.0},
        {"colour": "red", "newtok": 1, "spam": 1},
        {"colour": "teal", **bad_x},
        {"colour": "red", "len": 3.0},
    ]
    labels = ["a", "brand-new-label", bad_y, "b"]
    X = pd.DataFrame(rows) if as_frame else rows
    if as_frame and field == "spam":  # keep the column object-typed so "yes" reaches us
        X["spam"] = X["spam"].astype(object)
    with pytest.raises(InvalidRecord) as err:
        model.learn_many(X, labels if not as_frame else pd.Series(labels, dtype=object))
    assert "row 2" in str(err.value)
    assert err.value.field == field
    assert (snapshot(model.stats), model.n_learned) == before


def test_predict_proba_many_bad_row_names_the_row():
    model = _trained()
    with pytest.raises(InvalidRecord, match="row 1"):
        model.predict_proba_many([{"o": "s"}, {"len": "x"}])
    with pytest.raises(InvalidRecord, match="row 1"):
        model.predict_proba_many([{"o": "s"}, 17])


def test_invalid_constructor_parameters():
    """Parameter validation names the parameter and the bad value."""
    with pytest.raises(ValueError, match="var_smoothing"):
        NaiveBayes(var_smoothing=-1)
    with pytest.raises(ValueError, match="nominal"):
        NaiveBayes(nominal="abc")
    with pytest.raises(ValueError, match="domains"):
        NaiveBayes(domains=["a"])


def test_predict_before_learning():
    model = IndifferentNB()
    assert model.predict_proba_one({"a": "x"}) == {}
    assert model.predict_one({"a": "x"}) is None
    assert model.predict_proba_many([{"a": "x"}]).shape == (1, 0)
    assert model.predict_many([{"a": "x"}]).tolist() == [None]


def test_classes_in_order_of_appearance():
    model = fit(IndifferentNB(), WEATHER)
    assert model.classes == ["no", "yes", "maybe"]
    assert model.predict_one({"o": "s", "w": "weak", "h": "hi"}) == "no"  # P = 14/29


# -- river integration --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "model",
    [NaiveBayes(estimator=e) for e in ESTIMATOR_NAMES]
    + [
        NaiveBayes(estimator=MEstimate(m=2)),
        NaiveBayes(estimator=Dirichlet(class_prior=2.0)),
        IndifferentNB(),
        NaiveBayes(numeric="bins"),
        IndifferentNB(numeric="bins"),
        NaiveBayes(numeric="mdl", relearn_every=20),
        IndifferentNB(numeric="mdl"),
    ],
    ids=[*ESTIMATOR_NAMES, "MEstimate(2)", "Dirichlet(2)", "IndifferentNB", "NaiveBayes-bins",
         "IndifferentNB-bins", "NaiveBayes-mdl", "IndifferentNB-mdl"],
)
def test_river_check_estimator(model):
    """river's own estimator checks (interfaces.md: every model passes them)."""
    checks.check_estimator(model)


def test_pipeline_bag_of_words_indifferent():
    """compose.Pipeline(BagOfWords(), IndifferentNB()) learns and predicts, one by one and in
    batches, with the same statistics."""
    model = compose.Pipeline(feature_extraction.BagOfWords(), IndifferentNB())
    for text, label in TEXTS:
        model.learn_one(text, label)
    assert model.predict_one("claim your free prize money") == "spam"
    assert model.predict_one("meeting at noon") == "ham"
    p = model.predict_proba_one("free lunch meeting")
    assert set(p) == {"spam", "ham"} and math.isclose(sum(p.values()), 1.0)
    batch = compose.Pipeline(feature_extraction.BagOfWords(), IndifferentNB())
    batch.learn_many(pd.Series([t for t, _ in TEXTS]), pd.Series([y for _, y in TEXTS]))
    nb_one, nb_batch = model.steps["IndifferentNB"], batch.steps["IndifferentNB"]
    assert nb_batch.stats.to_dict() == nb_one.stats.to_dict()
    proba = batch.predict_proba_many(pd.Series(QUERY_TEXTS))
    for i, t in enumerate(QUERY_TEXTS):
        assert_proba_close(proba.iloc[i].to_dict(), model.predict_proba_one(t))


@pytest.mark.parametrize(
    "make",
    [IndifferentNB, lambda: NaiveBayes(estimator="laplace"), lambda: NaiveBayes(estimator="ml")],
    ids=["IndifferentNB", "laplace", "ml"],
)
def test_progressive_val_score_phishing(make):
    """Prequential accuracy on river's Phishing (measured 0.890 for Indifferent/Laplace,
    0.889 for ML; river's GaussianNB is in the same range)."""
    metric = evaluate.progressive_val_score(datasets.Phishing(), make(), metrics.Accuracy())
    assert metric.get() > 0.85


def test_clone_gives_a_fresh_model():
    model = fit(NaiveBayes(estimator="bibl", domains={"o": ["s", "c", "r"]}), WEATHER)
    fresh = model.clone()
    assert type(fresh) is NaiveBayes
    assert fresh._get_params() == model._get_params()
    assert fresh.classes == [] and fresh.n_learned == 0
    assert fresh.stats is not model.stats
    assert fresh.stats.to_dict()["classes"] == {}
    fit(fresh, WEATHER[:2])
    assert model.n_learned == len(WEATHER)
    assert model.stats.class_counts.tolist() == [3.0, 4.0, 1.0]
    # the clone is the model it was cloned from, retrained
    fit(fresh, WEATHER[2:])
    assert fresh.stats.to_dict() == model.stats.to_dict()
    ind = fit(IndifferentNB(), WEATHER).clone()
    assert type(ind) is IndifferentNB and ind.n_learned == 0


def test_numpy_records_are_accepted():
    """numpy scalar values (as from a numpy-backed frame) count like Python ones."""
    a = fit(
        NaiveBayes(),
        [
            ({"o": np.str_("s"), "t": np.int64(2), "n": np.float64(1.5)}, "p"),
            ({"o": "c", "t": np.bool_(False), "n": 2.5}, np.int64(3)),
        ],
    )
    b = fit(NaiveBayes(), [({"o": "s", "t": 2, "n": 1.5}, "p"), ({"o": "c", "n": 2.5}, 3)])
    assert a.stats.to_dict() == b.stats.to_dict()


def test_any_mapping_and_numpy_scalars_predict_like_plain_dicts():
    """Counter / OrderedDict / MappingProxy records and numpy scalar values (as river's
    transformers and numpy-backed frames produce) are read like plain dicts of Python values."""
    import collections
    import types

    model = fit(NaiveBayes(), MESSAGES + MIXED)
    plain = {"free": 2, "money": True, "colour": "red", "len": 3.5}
    want = model.predict_proba_one(plain)
    for x in (collections.Counter(plain), collections.OrderedDict(plain),
              types.MappingProxyType(plain),
              {"free": np.int64(2), "money": np.bool_(True), "colour": np.str_("red"),
               "len": np.float64(3.5)}):
        assert_proba_close(model.predict_proba_one(x), want, tol=1e-12)
    counter = fit(NaiveBayes(), [(collections.Counter(x), y) for x, y in MESSAGES])
    assert counter.stats.to_dict() == fit(NaiveBayes(), MESSAGES).stats.to_dict()


def test_every_model_runs_without_pandas():
    """pandas is an optional extra (DataFrame input, the *_many methods): the core install
    must import streamnb and learn and predict one record at a time with every model."""
    script = (
        "import sys\n"
        "sys.modules['pandas'] = None  # import pandas now fails\n"
        "from streamnb.models.registry import MODELS, CONTINUOUS, make_model\n"
        "for name in MODELS:\n"
        "    model = make_model(name)\n"
        "    data = [({'a': 'x', 'b': 'u'}, 1), ({'a': 'y', 'b': None}, 0)]\n"
        "    query, labels = {'a': 'x'}, (0, 1)\n"
        "    if name in CONTINUOUS:  # continuous models: numeric vectors\n"
        "        data = [({'a': 1.0, 'b': 2.5}, 1), ({'a': 4.0, 'b': 0.5}, 0),\n"
        "                ({'a': 1.5, 'b': 2.0}, 1), ({'a': 3.5, 'b': 1.0}, 0)]\n"
        "        query = {'a': 1.2, 'b': 2.2}\n"
        "    if name == 'spam-filter':  # raw text, two labels\n"
        "        data = [('win money now', 'spam'), ('lunch at noon?', 'ham')]\n"
        "        query, labels = 'win money', ('spam', 'ham')\n"
        "    for x, y in data * 3:\n"
        "        model.learn_one(x, y)\n"
        "    assert model.predict_one(query) in labels, name\n"
        "print(len(MODELS))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 10  # every registered model ran


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
def test_large_batches_read_nominal_theta_from_a_table_bit_for_bit(estimator):
    """A batch with more nominal cells than the schema has values reads log θ from a table of
    every value (once per state version): the same bits as computing the cells directly."""
    from streamnb.datasets import load

    vote = load("vote")
    model = NaiveBayes(estimator=estimator)
    model.learn_many(vote.records[:300], vote.labels[:300])
    columns = encode_batch(model.stats.schema, vote.records[300:], "row",
                           grow=False).nominal_columns
    assert len(columns) >= 4 * sum(len(v) for v in model.stats.schema.nominal_values)
    via_table = model._nominal_log_theta(columns)
    direct = model._estimator.log_theta(model.stats, columns)
    assert np.array_equal(via_table[0], direct[0]) and np.array_equal(via_table[1], direct[1])


def test_one_record_and_batch_predictions_are_one_path():
    """Every registry model predicts one record through one path (``_log_likelihood_one``, or
    SpamFilter's score) and one posterior rule: ``predict_proba_one`` is
    exp(``predict_log_proba_one``) and both equal the batch rows, on data the model has not
    seen (nominal with missing values for the count models, numbers for the continuous ones,
    texts for SpamFilter)."""
    from streamnb.datasets import load, load_sms_spam
    from streamnb.models.registry import CONTINUOUS, MODELS, make_model

    sms = load_sms_spam()
    data = {"count": list(load("soybean")), "numeric": list(load("diabetes")),
            "text": [(m.text, m.label) for m in sms[:400]]}
    for name in sorted(MODELS):
        kind = ("text" if name == "spam-filter" else
                "numeric" if name in CONTINUOUS else "count")
        records = data[kind]
        model = make_model(name)
        model.learn_many([x for x, _ in records[:300]], [y for _, y in records[:300]])
        test = [x for x, _ in records[300:360]]
        proba = model.predict_proba_many(test)
        logs = model.predict_log_proba_many(test)
        for r, x in enumerate(test):
            one, log_one = model.predict_proba_one(x), model.predict_log_proba_one(x)
            assert list(one) == list(log_one) == list(proba.columns), name
            np.testing.assert_allclose(list(one.values()), np.exp(list(log_one.values())),
                                       rtol=1e-12, atol=1e-300, err_msg=name)
            np.testing.assert_allclose(list(log_one.values()), logs.iloc[r].to_numpy(),
                                       rtol=1e-9, atol=1e-9, err_msg=name)
            np.testing.assert_allclose(list(one.values()), proba.iloc[r].to_numpy(),
                                       rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("estimator", ESTIMATOR_NAMES)
def test_batch_token_log_odds_from_the_log_table_equal_the_logs(estimator, monkeypatch):
    """The batch path reads a token's log θ(present) − log θ(absent) from the histogram's log
    table (one pseudo-count a > 0 on both cells, integer counts): it is taken, and its
    probabilities equal the logs' (the table switched off) and predict_proba_one's, on SMS
    messages the model has not seen; the predictions beat the majority class."""
    from streamnb._accel import kernels
    from streamnb.datasets import load_sms_spam
    from streamnb.estimators import base as estimator_base

    sms = load_sms_spam()[:1500]
    records = [({w: True for w in m.text.lower().split()}, m.label) for m in sms]
    model = NaiveBayes(estimator=estimator)
    model.learn_many([x for x, _ in records[:1000]], [y for _, y in records[:1000]])
    test, labels = [x for x, _ in records[1000:]], [y for _, y in records[1000:]]
    taken = []

    def spy(*args):
        taken.append(kernels.token_odds_rows(*args))
        return taken[-1]

    monkeypatch.setattr(estimator_base, "token_odds_rows", spy)
    table = model.predict_proba_many(test)
    a, a_absent = model._estimator.cell_pseudocounts(model.stats)
    assert taken == ([True] if isinstance(a, float) and a == a_absent > 0.0 else [])
    monkeypatch.setattr(type(model.stats.tokens), "log_table", lambda self, a: None)
    logs = model.predict_proba_many(test)
    np.testing.assert_allclose(table.to_numpy(), logs.to_numpy(), rtol=1e-12, atol=1e-300)
    for r, x in enumerate(test[:100]):
        np.testing.assert_allclose(list(model.predict_proba_one(x).values()),
                                   table.iloc[r].to_numpy(), rtol=1e-9, atol=1e-12)
    predicted = table.idxmax(axis=1).tolist()
    accuracy = np.mean([p == y for p, y in zip(predicted, labels, strict=True)])
    majority = max(labels.count(y) for y in set(labels)) / len(labels)
    assert accuracy > majority + 0.03, (accuracy, majority)
