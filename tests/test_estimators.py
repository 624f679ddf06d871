"""Exactness of the estimators (science.md §1; Cerquides & López de Màntaras eq. 16–17).

Every expected posterior is computed here from the raw records, either as hand-written
fractions or by ``conftest.Reference`` (own counting code, exact fractions, brute-force product
over the whole vocabulary). Nothing is read back from the implementation.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction as F

import numpy as np
import pytest

from conftest import MESSAGES, MIXED, WEATHER, Reference, Spec, assert_proba_close
from streamnb import (
    Dirichlet,
    Indifferent,
    IndifferentNB,
    Jeffreys,
    Laplace,
    MaximumLikelihood,
    MEstimate,
    NaiveBayes,
)
from streamnb.estimators import make_estimator
from streamnb.stats import CountStatistics


def fit(model, data):
    for x, y in data:
        model.learn_one(x, y)
    return model


def frac_proba(scores: dict) -> dict:
    total = sum(scores.values())
    return {c: float(F(s) / total) for c, s in scores.items()}


# Dirichlet / BIBL hyperparameters used throughout: non-uniform μ and σ.
CLASS_PRIOR = {"no": 2.0, "yes": 0.5, "spam": 3.0, "a": 0.25, "b": 4.0}
VALUE_PRIOR = {
    "o": {"s": 3.0, "r": 0.5},
    "w": 2.0,
    "free": {True: 2.0, False: 0.5},
    "colour": {"red": 1.5},
    "money": 0.75,
}

ESTIMATORS = [
    ("ml", lambda: MaximumLikelihood(), Spec("ml")),
    ("laplace", lambda: Laplace(), Spec("laplace")),
    ("m-estimate m=2", lambda: MEstimate(m=2), Spec("m", m=2)),
    ("jeffreys", lambda: Jeffreys(), Spec("m", m=0.5)),
    ("bibl uniform", lambda: Dirichlet(), Spec("bibl")),
    (
        "bibl non-uniform",
        lambda: Dirichlet(class_prior=CLASS_PRIOR, value_prior=VALUE_PRIOR, default=1.5),
        Spec("bibl", class_prior=CLASS_PRIOR, value_prior=VALUE_PRIOR, default=1.5),
    ),
    ("indifferent", lambda: Indifferent(), Spec("indifferent")),
]
EST_IDS = [e[0] for e in ESTIMATORS]

WEATHER_QUERIES = [
    {"o": "s", "w": "weak", "h": "hi"},
    {"o": "s", "w": "strong", "h": "norm"},  # ML: every class has one zero factor
    {"o": "c", "w": "strong", "h": "hi"},
    {"o": "r"},
    {"h": "norm", "w": None},
    {"o": "c", "w": "weak", "h": float("nan")},
    {"o": "zzz", "w": "weak"},  # unseen value
    {"unknown": "x", "o": "s"},  # unknown attribute
]
MESSAGE_QUERIES = [
    {"money": True},
    {"free": True, "now": 2},
    {"meeting": 1, "noon": True, "lunch": True},
    {"claim": True, "prize": True, "win": True, "free": True},
    {"free": False, "money": 0},
    {"unknown": True, "free": True},
    {"noon": True, "money": True},
]
MIXED_QUERIES = [
    {"colour": "red", "spam": True, "len": 3.5, "ratio": 0.4},
    {"colour": "blue", "egg": True, "len": 6.0},
    {"colour": "green", "len": 2.2, "ratio": 0.9},
    {"spam": True, "egg": True, "ratio": float("nan")},
    {"colour": "purple", "len": 5.0},
]


# -- eq. 16–17 worked by hand ---------------------------------------------------------------------
def test_indifferent_eq16_eq17_by_hand():
    """Eq. 16–17 on WEATHER, query (o=s, w=weak, h=hi), worked out with fractions.

    Σ_i #A_i − n = (3 + 2 + 2) − 3 = 4, so α ∝ N(c) + 5: no 8, yes 9, maybe 6.
    θ = (N_i(v,c) + 1)/(N_i(c) + #A_i), N_h(no) = 2 (one 'no' record lacks h), N_h(maybe) = 0.
    """
    score = {
        "no": F(8) * F(2 + 1, 3 + 3) * F(1 + 1, 3 + 2) * F(2 + 1, 2 + 2),  # 6/5
        "yes": F(9) * F(0 + 1, 4 + 3) * F(3 + 1, 4 + 2) * F(1 + 1, 4 + 2),  # 2/7
        "maybe": F(6) * F(1 + 1, 1 + 3) * F(1 + 1, 1 + 2) * F(0 + 1, 0 + 2),  # 1
    }
    assert score == {"no": F(6, 5), "yes": F(2, 7), "maybe": F(1)}
    want = frac_proba(score)
    assert want == pytest.approx({"no": 14 / 29, "yes": 10 / 87, "maybe": 35 / 87}, abs=1e-15)
    for model in (IndifferentNB(), NaiveBayes(estimator="indifferent")):
        assert_proba_close(
            fit(model, WEATHER).predict_proba_one({"o": "s", "w": "weak", "h": "hi"}), want
        )


def test_indifferent_class_prior_is_not_laplace():
    """Eq. 16: α_c ∝ N(c) + 1 + Σ_i #A_i − n (here 1 + (3+2+2) − 3 = 5), not N(c) + 1."""
    stats = CountStatistics()
    for x, y in WEATHER:
        stats.update(x, y)
    logs, zeros = Indifferent().log_class_prior(stats)
    expected = [F(3 + 5, 23), F(4 + 5, 23), F(1 + 5, 23)]  # no, yes, maybe
    assert stats.labels.values == ["no", "yes", "maybe"]
    np.testing.assert_allclose(np.exp(logs), [float(e) for e in expected], rtol=1e-14)
    assert zeros.tolist() == [0, 0, 0]
    logs, _ = Laplace().log_class_prior(stats)
    np.testing.assert_allclose(np.exp(logs), [4 / 11, 5 / 11, 2 / 11], rtol=1e-14)


def test_indifferent_tokens_by_hand():
    """Eq. 16–17 with token attributes: each token has #A_i = 2, θ(absent|c) = (N(c) − P + 1)
    /(N(c) + 2), and Σ_i (#A_i − 1) counts one per token of the vocabulary."""
    data = [
        ({"free": True, "money": True}, "spam"),
        ({"meeting": True}, "ham"),
        ({"free": True, "meeting": True}, "ham"),
    ]
    # vocabulary {free, money, meeting}: b = 1 + 3 → α ∝ spam 1 + 4, ham 2 + 4
    spam = F(5) * F(1 - 1 + 1, 1 + 2) * F(1 + 1, 1 + 2) * F(1 - 0 + 1, 1 + 2)
    ham = F(6) * F(2 - 1 + 1, 2 + 2) * F(0 + 1, 2 + 2) * F(2 - 2 + 1, 2 + 2)
    want = frac_proba({"spam": spam, "ham": ham})
    assert want["spam"] == pytest.approx(320 / 401, abs=1e-15)
    assert_proba_close(fit(IndifferentNB(), data).predict_proba_one({"money": True}), want)


def test_laplace_tokens_by_hand():
    """Laplace on tokens: α_c = (N(c)+1)/(N+k), θ(present) = (P+1)/(N(c)+2), θ(absent) =
    (N(c)−P+1)/(N(c)+2), product over the whole vocabulary (P(spam | money) = 256/337)."""
    data = [
        ({"free": True, "money": True}, "spam"),
        ({"meeting": True}, "ham"),
        ({"free": True, "meeting": True}, "ham"),
    ]
    spam = F(2, 5) * F(1, 3) * F(2, 3) * F(2, 3)
    ham = F(3, 5) * F(2, 4) * F(1, 4) * F(1, 4)
    want = frac_proba({"spam": spam, "ham": ham})
    assert want["spam"] == pytest.approx(256 / 337, abs=1e-15)
    assert_proba_close(
        fit(NaiveBayes(estimator="laplace"), data).predict_proba_one({"money": True}), want
    )


def test_ml_zero_count_by_hand():
    """ML (MAPNB): α_c = N(c)/N, θ = N_i(v,c)/N_i(c). 'yes' never has o=s → P(yes) = 0; an
    attribute never observed in a class (h in 'maybe') is uninformative, θ = 1/#A_h."""
    no = F(3, 8) * F(2, 3) * F(1, 3) * F(2, 2)
    maybe = F(1, 8) * F(1, 1) * F(1, 1) * F(1, 2)
    want = {"no": float(no / (no + maybe)), "yes": 0.0, "maybe": float(maybe / (no + maybe))}
    assert want == pytest.approx({"no": 4 / 7, "yes": 0.0, "maybe": 3 / 7}, abs=1e-15)
    got = fit(NaiveBayes(estimator="ml"), WEATHER).predict_proba_one(
        {"o": "s", "w": "weak", "h": "hi"}
    )
    assert_proba_close(got, want)
    assert got["yes"] == 0.0


def test_ml_all_classes_zero_fallback_by_hand():
    """ML when every class has a zero factor (o=s, w=strong, h=norm): the limit of vanishing
    softening, ε/N_i(c) per zero factor; all classes have one zero, so they share the mass
    in proportion to α_c · Π(non-zero θ) · Π 1/N_i(c) → 32/65, 9/65, 24/65."""
    no = F(3, 8) * F(2, 3) * F(2, 3) * F(1, 2)  # h=norm: 0/2 → ε/2
    yes = F(4, 8) * F(1, 4) * F(1, 4) * F(3, 4)  # o=s: 0/4 → ε/4
    maybe = F(1, 8) * F(1, 1) * F(1, 1) * F(1, 2)  # w=strong: 0/1 → ε/1; h unseen → 1/2
    total = no + yes + maybe
    want = {"no": float(no / total), "yes": float(yes / total), "maybe": float(maybe / total)}
    assert want == pytest.approx({"no": 32 / 65, "yes": 9 / 65, "maybe": 24 / 65}, abs=1e-15)
    got = fit(NaiveBayes(estimator="ml"), WEATHER).predict_proba_one(
        {"o": "s", "w": "strong", "h": "norm"}
    )
    assert_proba_close(got, want)


def test_ml_is_the_limit_of_vanishing_m():
    """ML's zero rule equals lim_{m→0} of the m-estimate (checked at m = 1e-9)."""
    ml = fit(NaiveBayes(estimator="ml"), WEATHER + MESSAGES)
    tiny = fit(NaiveBayes(estimator=MEstimate(m=1e-9)), WEATHER + MESSAGES)
    for q in WEATHER_QUERIES + MESSAGE_QUERIES + [{"o": "c", "free": True, "noon": True}]:
        p, r = ml.predict_proba_one(q), tiny.predict_proba_one(q)
        assert p.keys() == r.keys()
        for c in p:
            assert p[c] == pytest.approx(r[c], abs=1e-6), (q, c)


def test_m_estimate_by_hand():
    """m-estimate, m=2: θ = (N_i(v,c)+m)/(N_i(c)+m·#A_i), α_c = (N(c)+m)/(N+m·k)."""
    data = [({"a": "x"}, "+"), ({"a": "y"}, "+"), ({"a": "x"}, "-")]
    plus = F(2 + 2, 3 + 4) * F(1 + 2, 2 + 4)
    minus = F(1 + 2, 3 + 4) * F(0 + 2, 1 + 4)
    want = frac_proba({"+": plus, "-": minus})
    got = fit(NaiveBayes(estimator=MEstimate(m=2)), data).predict_proba_one({"a": "y"})
    assert_proba_close(got, want)


def test_dirichlet_by_hand():
    """BIBL: α_c = (N(c)+μ_c)/Σ(N(c')+μ_c'), θ = (N_i(v,c)+σ_v)/(N_i(c)+Σ_v' σ_v') with
    μ = {+: 2, −: default 0.5}, σ_a = {x: 3, y: default 0.5}, tokens σ = {True: 2, False: 0.25}."""
    data = [({"a": "x", "t": True}, "+"), ({"a": "y"}, "+"), ({"a": "x", "t": 1}, "-")]
    est = Dirichlet(
        class_prior={"+": 2.0},
        value_prior={"a": {"x": 3.0}, "t": {True: 2.0, False: 0.25}},
        default=0.5,
    )
    # query a=y, t absent
    plus = F(2 + 2, 5 + F(3, 2)) * F(1 + F(1, 2), 2 + F(7, 2)) * F(1 + F(1, 4), 2 + F(9, 4))
    minus = F(1 + F(1, 2), 5 + F(3, 2)) * F(0 + F(1, 2), 1 + F(7, 2)) * F(0 + F(1, 4), 1 + F(9, 4))
    want = frac_proba({"+": plus, "-": minus})
    got = fit(NaiveBayes(estimator=est), data).predict_proba_one({"a": "y"})
    assert_proba_close(got, want)


# -- the same formulas through the reference implementation ----------------------------------------
@pytest.mark.parametrize(("name", "make", "spec"), ESTIMATORS, ids=EST_IDS)
@pytest.mark.parametrize("query", WEATHER_QUERIES)
def test_nominal_posterior_matches_formula(name, make, spec, query):
    """§1 formulas (missing values: N_i(c) in θ's denominator) on nominal data, every
    estimator, to 1e-12."""
    model = fit(NaiveBayes(estimator=make()), WEATHER)
    want = Reference([x for x, _ in WEATHER], [y for _, y in WEATHER]).posterior(query, spec)
    assert_proba_close(model.predict_proba_one(query), want)


@pytest.mark.parametrize(("name", "make", "spec"), ESTIMATORS, ids=EST_IDS)
@pytest.mark.parametrize("query", MESSAGE_QUERIES)
def test_token_posterior_matches_brute_force(name, make, spec, query):
    """Token attributes: the O(t) baseline + corrections equals the brute-force product of
    θ(present|c) / θ(absent|c) over the whole vocabulary."""
    model = fit(NaiveBayes(estimator=make()), MESSAGES)
    want = Reference([x for x, _ in MESSAGES], [y for _, y in MESSAGES]).posterior(query, spec)
    assert_proba_close(model.predict_proba_one(query), want)


@pytest.mark.parametrize(("name", "make", "spec"), ESTIMATORS, ids=EST_IDS)
@pytest.mark.parametrize("query", MIXED_QUERIES)
def test_mixed_posterior_matches_formula(name, make, spec, query):
    """Nominal + token + Gaussian numeric attributes in one record."""
    model = fit(NaiveBayes(estimator=make()), MIXED)
    ref = Reference([x for x, _ in MIXED], [y for _, y in MIXED])
    assert_proba_close(model.predict_proba_one(query), ref.posterior(query, spec), tol=1e-10)


def test_indifferent_nb_equals_naive_bayes_indifferent():
    """IndifferentNB is NaiveBayes(estimator='indifferent') under its own name."""
    a = fit(IndifferentNB(), MIXED + WEATHER + MESSAGES)
    b = fit(NaiveBayes(estimator="indifferent"), MIXED + WEATHER + MESSAGES)
    for q in MIXED_QUERIES + WEATHER_QUERIES + MESSAGE_QUERIES:
        assert a.predict_proba_one(q) == b.predict_proba_one(q)


@pytest.mark.parametrize(("name", "make", "spec"), ESTIMATORS, ids=EST_IDS)
def test_large_vocabulary_baseline_equals_brute_force(name, make, spec):
    """O(t) token prediction over a 300-word vocabulary equals the brute-force product."""
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(300)]
    data = []
    for i in range(60):
        label = ("spam", "ham", "eggs")[i % 3]
        words = rng.sample(vocab[:200] if label == "ham" else vocab[100:], rng.randint(1, 12))
        data.append(({w: rng.choice([True, 1, 2]) for w in words}, label))
    model = fit(NaiveBayes(estimator=make()), data)
    ref = Reference([x for x, _ in data], [y for _, y in data])
    for _ in range(6):
        q = {w: True for w in rng.sample(vocab, 8)}
        assert_proba_close(model.predict_proba_one(q), ref.posterior(q, spec), tol=1e-10)


# -- #A_i policy ----------------------------------------------------------------------------------
def test_value_first_seen_later_grows_size():
    """#A_i is the domain seen so far: a new value raises #A_i from 2 to 3 (Laplace)."""
    data = [({"a": "x"}, "p"), ({"a": "x"}, "p"), ({"a": "y"}, "q")]
    model = fit(NaiveBayes(estimator="laplace"), data)
    # #A_a = 2: α = 3/5, 2/5; θ(x|p) = 3/4, θ(x|q) = 1/3
    want = frac_proba({"p": F(3, 5) * F(3, 4), "q": F(2, 5) * F(1, 3)})
    assert_proba_close(model.predict_proba_one({"a": "x"}), want)
    assert want["p"] == pytest.approx(27 / 35, abs=1e-15)
    model.learn_one({"a": "z"}, "r")
    # #A_a = 3, k = 3: α = 3/7, 2/7, 2/7; θ(x|·) = 3/5, 1/4, 1/4
    want = frac_proba({"p": F(3, 7) * F(3, 5), "q": F(2, 7) * F(1, 4), "r": F(2, 7) * F(1, 4)})
    assert_proba_close(model.predict_proba_one({"a": "x"}), want)


def test_value_first_seen_later_changes_indifferent_prior():
    """Eq. 16's softening 1 + Σ(#A_i − 1) grows when a value (or a token) first appears."""
    stats = CountStatistics()

    def alpha():
        logs, zeros = Indifferent().log_class_prior(stats)
        assert zeros.tolist() == [0] * stats.n_classes
        return np.exp(logs).tolist()

    stats.update({"a": "x", "b": "u"}, "p")
    stats.update({"a": "x", "b": "u"}, "q")
    stats.update({"a": "x", "b": "u"}, "q")
    assert alpha() == pytest.approx([2 / 5, 3 / 5], abs=1e-15)  # b = 1 + 0: (1+1), (2+1)
    stats.update({"a": "y", "b": "u"}, "q")  # #A_a = 2: b = 2
    assert alpha() == pytest.approx([3 / 8, 5 / 8], abs=1e-15)
    stats.update({"a": "z", "b": "w", "t": True}, "q")  # a: 3, b: 2, t: token → b = 1 + 2+1+1
    assert alpha() == pytest.approx([6 / 15, 9 / 15], abs=1e-15)


def test_declared_domains_fix_size_from_the_start():
    """``domains=`` fixes #A_i up front: with a = {x, y, z} declared, θ(x|p) = 3/5 from the
    first records on; it equals an undeclared model once z has been seen."""
    data = [({"a": "x"}, "p"), ({"a": "x"}, "p"), ({"a": "y"}, "q")]
    declared = fit(NaiveBayes(estimator="laplace", domains={"a": ["x", "y", "z"]}), data)
    want = frac_proba({"p": F(3, 5) * F(3, 5), "q": F(2, 5) * F(1, 4)})  # 18/23
    assert_proba_close(declared.predict_proba_one({"a": "x"}), want)
    assert want["p"] == pytest.approx(18 / 23, abs=1e-15)
    undeclared = fit(NaiveBayes(estimator="laplace"), data)
    assert undeclared.predict_proba_one({"a": "x"})["p"] != pytest.approx(18 / 23)
    for model in (declared, undeclared):
        model.learn_one({"a": "z"}, "q")
    assert_proba_close(
        declared.predict_proba_one({"a": "x"}), undeclared.predict_proba_one({"a": "x"}), tol=1e-15
    )


@pytest.mark.parametrize(("name", "make", "spec"), ESTIMATORS, ids=EST_IDS)
def test_declared_domains_match_formula(name, make, spec):
    """Declared domains (including values never seen) enter #A_i and eq. 16's softening."""
    domains = {"o": ["s", "c", "r", "fog"], "h": ["hi", "norm", "low"]}
    model = fit(NaiveBayes(estimator=make(), domains=domains), WEATHER)
    ref = Reference([x for x, _ in WEATHER], [y for _, y in WEATHER], domains=domains)
    for q in [*WEATHER_QUERIES, {"o": "fog", "h": "low"}]:
        assert_proba_close(model.predict_proba_one(q), ref.posterior(q, spec))


def test_declared_value_at_prediction_is_a_zero_count_not_missing():
    """A declared but never-learned value is in the domain: it is counted as N = 0
    (θ = 1/(N_i(c)+#A_i) under Laplace), not dropped like an unseen value."""
    data = [({"a": "x"}, "p"), ({"a": "x"}, "p"), ({"a": "y"}, "q")]
    model = fit(NaiveBayes(estimator="laplace", domains={"a": ["x", "y", "z"]}), data)
    want = frac_proba({"p": F(3, 5) * F(1, 5), "q": F(2, 5) * F(1, 4)})
    assert_proba_close(model.predict_proba_one({"a": "z"}), want)


@pytest.mark.parametrize(("name", "make", "spec"), ESTIMATORS, ids=EST_IDS)
def test_unseen_value_at_prediction_is_missing(name, make, spec):
    """A value never learned is treated as missing: same probabilities as dropping the key,
    and the domain (#A_i) does not grow."""
    model = fit(NaiveBayes(estimator=make()), WEATHER + MIXED)
    before = model.stats.schema.to_json()
    for q in [{"o": "s", "w": "weak"}, {"h": "hi", "colour": "red", "len": 3.0}]:
        for bad in ("never-seen", "zzz"):
            with_unseen = {**q, "o": bad}
            without = {k: v for k, v in q.items() if k != "o"}
            assert model.predict_proba_one(with_unseen) == model.predict_proba_one(without)
    assert model.stats.schema.to_json() == before


@pytest.mark.parametrize(("name", "make", "spec"), ESTIMATORS, ids=EST_IDS)
def test_unknown_token_at_prediction_is_ignored(name, make, spec):
    """An unknown token (or attribute) carries no information and does not grow the schema;
    a known token given as False/0 is the same as absent."""
    model = fit(NaiveBayes(estimator=make()), MESSAGES)
    before = model.stats.schema.to_json()
    base = {"free": True, "noon": True}
    p = model.predict_proba_one(base)
    assert model.predict_proba_one({**base, "zebra": True, "quux": 3}) == p
    assert model.predict_proba_one({**base, "money": False, "win": 0, "now": None}) == p
    assert model.stats.schema.to_json() == before


def test_nominal_parameter_makes_int_codes_nominal():
    """``nominal=`` reads int codes as categories: #A_i = distinct codes (3), not a token."""
    data = [({"code": 1}, "p"), ({"code": 2}, "p"), ({"code": 3}, "q"), ({"code": 1}, "q")]
    model = fit(NaiveBayes(estimator="laplace", nominal=["code"]), data)
    # α = 1/2 each; θ(2|p) = (1+1)/(2+3), θ(2|q) = (0+1)/(2+3)
    want = frac_proba({"p": F(2, 5), "q": F(1, 5)})
    assert_proba_close(model.predict_proba_one({"code": 2}), want)
    assert model.stats.to_dict()["kinds"] == {"code": 0}
    ref = Reference([x for x, _ in data], [y for _, y in data], nominal=["code"])
    assert_proba_close(
        model.predict_proba_one({"code": 3}), ref.posterior({"code": 3}, Spec("laplace"))
    )


# -- the estimator layer directly ------------------------------------------------------------------
def test_log_theta_uses_observed_count_denominator():
    """θ's denominator is N_i(c) (records where A_i was observed), so θ_{i,·,c} sums to 1
    under missing values, for every smoothing estimator."""
    stats = CountStatistics()
    for x, y in WEATHER:
        stats.update(x, y)
    columns = np.array(
        [
            stats.schema.nominal_values[stats.schema.slots[stats.schema.attributes.get("h")]][v]
            for v in ("hi", "norm")
        ]
    )
    for est in (
        Laplace(),
        MEstimate(m=2),
        Indifferent(),
        Dirichlet(value_prior={"h": 0.5}),
        MaximumLikelihood(),
    ):
        logs, zeros = est.log_theta(stats, columns)
        theta = np.where(zeros > 0, 0.0, np.exp(logs))
        # maybe never observed h: ML falls back to 1/#A_h for every value
        np.testing.assert_allclose(theta.sum(axis=1), 1.0, rtol=1e-14)
    logs, _ = Laplace().log_theta(stats, columns)
    # no: N_h(hi)=2, N_h(no)=2 → 3/4, 1/4
    np.testing.assert_allclose(np.exp(logs[0]), [3 / 4, 1 / 4], rtol=1e-14)


def test_make_estimator():
    """Estimator names map to the §1 estimators; bad names raise naming the choices."""
    assert isinstance(make_estimator("ml"), MaximumLikelihood)
    assert isinstance(make_estimator("laplace"), Laplace)
    assert isinstance(make_estimator("m-estimate"), MEstimate)
    assert isinstance(make_estimator("bibl"), Dirichlet)
    assert isinstance(make_estimator("indifferent"), Indifferent)
    e = MEstimate(m=3)
    assert make_estimator(e) is e
    with pytest.raises(ValueError, match="laplace"):
        make_estimator("lapalce")
    with pytest.raises(ValueError, match="estimator must be one of"):
        NaiveBayes(estimator="nope")


@pytest.mark.parametrize("bad", [0, -1, float("nan"), "2"])
def test_invalid_hyperparameters_raise(bad):
    """m and Dirichlet priors must be positive numbers."""
    with pytest.raises(ValueError):
        MEstimate(m=bad)
    with pytest.raises(ValueError):
        Dirichlet(class_prior=bad)
    with pytest.raises(ValueError):
        Dirichlet(value_prior={"a": {"x": bad}})
    with pytest.raises(ValueError):
        Dirichlet(class_prior={"c": bad})


# -- numeric attributes (Gaussian, science.md §4) --------------------------------------------------
def test_gaussian_by_hand():
    """A float attribute contributes N(x; mean_c, var_c + ε) with the ML variance M2/w and
    ε = var_smoothing · max(largest pooled variance, 1): p: {1, 3} → N(2, 1); q: {4, 8} → N(6, 4);
    pooled variance of {1, 3, 4, 8} = 6.5."""
    data = [({"x": 1.0}, "p"), ({"x": 3.0}, "p"), ({"x": 4.0}, "q"), ({"x": 8.0}, "q")]
    eps = 1e-9 * 6.5

    def density(x, mean, var):
        var += eps
        return math.exp(-((x - mean) ** 2) / (2 * var)) / math.sqrt(2 * math.pi * var)

    for estimator in ("laplace", "ml", "indifferent"):
        model = fit(NaiveBayes(estimator=estimator), data)
        for x in (3.0, 4.5, -2.0):
            p, q = density(x, 2.0, 1.0), density(x, 6.0, 4.0)  # equal class priors
            assert_proba_close(
                model.predict_proba_one({"x": x}), {"p": p / (p + q), "q": q / (p + q)}, tol=1e-12
            )
        assert model.predict_proba_one({"x": float("nan")}) == {"p": 0.5, "q": 0.5}


def test_numeric_attribute_unseen_in_a_class_uses_pooled_gaussian():
    """A class that never observed a numeric attribute gets the pooled Gaussian for it (so
    the factor stays comparable across classes instead of being dropped)."""
    data = [
        ({"x": 1.0, "a": "u"}, "p"),
        ({"x": 3.0, "a": "v"}, "p"),
        ({"a": "u"}, "q"),
        ({"a": "u", "x": float("nan")}, "q"),
        ({"x": 2.5, "a": "v"}, "r"),
        ({"x": 4.0, "a": "v"}, "r"),
    ]
    ref = Reference([x for x, _ in data], [y for _, y in data])
    for _name, make, spec in ESTIMATORS:
        model = fit(NaiveBayes(estimator=make()), data)
        for q in ({"x": 2.0, "a": "u"}, {"x": 10.0}, {"a": "v", "x": 3.5}):
            assert_proba_close(model.predict_proba_one(q), ref.posterior(q, spec), tol=1e-10)
