"""SpamFilter: the score by hand, the monoid operations on its counts, bad input, real streams."""

from __future__ import annotations

import math

import numpy as np
import pytest
from river import checks
from scipy.stats import chi2

from conftest import SMS, assert_same_stats, snapshot
from streamnb import InvalidRecord, SpamFilter, load_model
from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
from streamnb.estimators import RobinsonFisher
from streamnb.evaluate import exact_auc
from streamnb.features import is_email, tokenize_sms


def trained(data=SMS, **params) -> SpamFilter:
    f = SpamFilter(**params)
    for text, label in data:
        f.learn_one(text, label)
    return f


def score_by_hand(data, text, alpha=0.1, w=0.125, s=0.1, x=0.5, min_dev=0.2, k=25) -> float:
    """The documented formula, from a direct count of the training messages' token sets."""
    sets = [(tokenize_sms(t), y) for t, y in data]
    vocabulary = set().union(*(ts for ts, _ in sets))
    n = {c: sum(1 for _, y in sets if y == c) for c in ("spam", "ham")}
    mass = {c: sum(len(ts) for ts, y in sets if y == c) for c in ("spam", "ham")}
    known = [t for t in tokenize_sms(text) if t in vocabulary]
    if not known:
        return 0.0
    ratios, fs = [], []
    for t in known:
        b = {c: sum(1 for ts, y in sets if y == c and t in ts) for c in ("spam", "ham")}
        theta = {c: (b[c] + alpha) / (mass[c] + alpha * len(vocabulary)) for c in b}
        ratios.append(math.log(theta["spam"]) - math.log(theta["ham"]))
        rs, rh = b["spam"] / n["spam"], b["ham"] / n["ham"]
        f = (s * x + (b["spam"] + b["ham"]) * rs / (rs + rh)) / (s + b["spam"] + b["ham"])
        if abs(f - 0.5) >= min_dev:
            fs.append(f)
    fisher = 0.0
    if fs:
        h = chi2.sf(-2 * sum(math.log(f) for f in fs), 2 * len(fs))
        sp = chi2.sf(-2 * sum(math.log(1 - f) for f in fs), 2 * len(fs))
        indicator = min(max((1 + h - sp) / 2, 1e-4), 1 - 1e-4)
        fisher = math.log(indicator / (1 - indicator))
    ratios = sorted(ratios, key=lambda d: (-abs(d), -d))[:k]
    return sum(ratios) / len(ratios) + w * fisher


@pytest.mark.parametrize("text", ["claim your prize now", "lunch at the pub?", "call 09061701461",
                                  "see u tomorrow", "nothing known here: zebra quokka"])
@pytest.mark.parametrize("params", [{}, {"alpha": 1.0, "fisher_weight": 1.0, "min_dev": 0.1},
                                    {"top_tokens": 2}, {"top_tokens": None}])
def test_score_equals_the_formula_by_hand(text, params):
    names = {"alpha": "alpha", "fisher_weight": "w", "min_dev": "min_dev", "top_tokens": "k"}
    want = score_by_hand(SMS, text, **{names[k]: v for k, v in params.items()})
    assert trained(tokenizer="sms", **params).score_one(text) == pytest.approx(want, abs=1e-9)


def test_decisions_probabilities_and_verdicts():
    f = trained()
    z = f.score_one("claim your £500 prize, call 09061701999")
    assert z > 0 and f.predict_one("claim your £500 prize, call 09061701999") == "spam"
    assert f.predict_one("see you at lunch") == "ham"
    p = f.predict_proba_one("see you at lunch")
    assert p["ham"] == pytest.approx(1 / (1 + math.exp(f.score_one("see you at lunch"))))
    assert p["spam"] + p["ham"] == pytest.approx(1.0)
    logs = f.predict_log_proba_one("see you at lunch")
    assert logs["spam"] == pytest.approx(math.log(p["spam"]))
    assert f.verdict_one("claim your £500 prize, call 09061701999") == "spam"
    assert SpamFilter(unsure=100.0).verdict_one("anything") == "unsure"


def test_empty_and_tokenless_texts_are_scored_not_rejected():
    f = trained()
    for text in ("", "   ", b"", "zebra quokka"):  # SMS shape tokens (length, capitals) remain
        assert math.isfinite(f.score_one(text))
    for text in ({}, "Subject: zebra\nX-Foo: bar\n\n"):  # no known token at all: no evidence
        assert f.score_one(text) == 0.0 and f.explain_one(text) == []
        assert f.predict_proba_one(text) == {"spam": 0.5, "ham": 0.5}
    assert SpamFilter().predict_proba_one("before anything is learned") == {"spam": 0.5,
                                                                            "ham": 0.5}
    f.learn_one({}, "ham")  # a token-less message still counts as a ham message
    spam = sum(label == "spam" for _, label in SMS)
    assert f.stats.class_counts.tolist() == [spam, len(SMS) - spam + 1]


def test_bad_input_names_the_record_and_field_and_changes_nothing():
    f = trained()
    before = snapshot(f.stats)
    with pytest.raises(InvalidRecord) as err:
        f.learn_one("hello", "maybe")
    assert err.value.field == "label" and f"record {len(SMS) + 1}" in str(err.value)
    with pytest.raises(InvalidRecord, match="expected the message text"):
        f.learn_one(42, "spam")
    with pytest.raises(InvalidRecord) as err:
        f.learn_many(["a", "b", "c"], ["spam", "ham", "eggs"])
    assert "row 2" in str(err.value) and err.value.field == "label"
    with pytest.raises(InvalidRecord, match="row 1"):
        f.learn_many(["a", None], ["spam", "ham"])
    assert snapshot(f.stats) == before and f.n_learned == len(SMS)


def test_learn_many_equals_learn_one_and_predictions_agree():
    one = trained()
    many = SpamFilter()
    many.learn_many([t for t, _ in SMS[:4]], [y for _, y in SMS[:4]])
    many.learn_many([t for t, _ in SMS[4:]], [y for _, y in SMS[4:]])
    assert_same_stats(many.stats.to_dict(), one.stats.to_dict())
    queries = [t for t, _ in SMS] + ["prize lunch", "zebra"]
    assert many.score_many(queries).tolist() == [one.score_one(q) for q in queries]
    # again: the batch's tokens are kept, scored without being read again
    assert many.score_many(queries).tolist() == [one.score_one(q) for q in queries]
    proba = one.predict_proba_many(queries)
    for i, q in enumerate(queries):
        assert proba.iloc[i].to_dict() == pytest.approx(one.predict_proba_one(q))
    assert one.predict_many(queries).tolist() == [one.predict_one(q) for q in queries]


def test_a_batch_scored_then_learned_is_tokenised_once(monkeypatch):
    """score_many then learn_many of the same texts (prequential batches) tokenises each
    message once and learns what learn_many alone learns; a batch of sets, which could change
    in between, is read again."""
    from streamnb.models import spam_filter

    calls = []
    real = spam_filter._TOKENIZERS["sms"]
    monkeypatch.setitem(spam_filter._TOKENIZERS, "sms",
                        lambda text: calls.append(text) or real(text))
    texts, labels = [t for t, _ in SMS], [y for _, y in SMS]
    model, alone = SpamFilter(tokenizer="sms"), SpamFilter(tokenizer="sms")
    for lo, hi in ((0, 4), (4, len(texts))):
        model.score_many(texts[lo:hi])
        model.learn_many(texts[lo:hi], labels[lo:hi])
        alone.learn_many(list(texts[lo:hi]), labels[lo:hi])
    assert sorted(calls) == sorted(texts + texts)  # once for each model
    assert_same_stats(model.stats.to_dict(), alone.stats.to_dict())
    bags = [set(tokenize_sms("claim your prize")), set(tokenize_sms("see you at lunch"))]
    before = model.score_many(bags)
    bags[0].add("zebra-token")
    model.learn_many(bags, ["spam", "ham"])
    assert "zebra-token" in model.stats.schema.text_values[0]
    assert len(before) == 2


def test_save_load_merge_decay(tmp_path):
    f = trained()
    f.save(tmp_path / "filter.snb")
    g = load_model(tmp_path / "filter.snb")
    assert isinstance(g, SpamFilter) and g.fisher_weight == f.fisher_weight
    queries = [t for t, _ in SMS] + ["prize lunch"]
    assert [g.score_one(q) for q in queries] == [f.score_one(q) for q in queries]
    # two shards merged == one filter that learned both
    a, b = trained(SMS[:3]), trained(SMS[3:])
    a.merge(b)
    assert_same_stats(a.stats.to_dict(), f.stats.to_dict())
    assert [a.score_one(q) for q in queries] == pytest.approx([f.score_one(q) for q in queries],
                                                              abs=1e-12)
    with pytest.raises(ValueError, match="models differ"):
        a.merge(SpamFilter(alpha=1.0))
    counts = f.stats.value_counts.copy()
    f.decay(0.5)
    assert np.array_equal(f.stats.value_counts, counts * 0.5)


def test_bytes_mappings_and_custom_labels():
    f = SpamFilter(spam_label=True, ham_label=False)
    f.learn_one(b"Subject: cheap meds\nFrom: x@pills.biz\n\nbuy cheap meds now", True)
    f.learn_one({"minutes": 1, "meeting": 2, "zero": 0}, False)
    assert f.tokens({"minutes": 1, "zero": 0, "nan": float("nan")}) == {"minutes"}
    assert f.predict_one("Subject: cheap meds\nFrom: y@pills.biz\n\ncheap meds") is True
    assert f.predict_one({"meeting": 1}) is False


@pytest.mark.parametrize("params", list(SpamFilter._unit_test_params()))
def test_river_check_estimator(params):
    checks.check_estimator(SpamFilter(**params))


def test_parameters_are_validated():
    for bad in ({"alpha": 0}, {"alpha": float("nan")}, {"fisher_weight": -1},
                {"tokenizer": "html"}, {"spam_label": "x", "ham_label": "x"}, {"min_dev": 0.7},
                {"max_tokens": 0}, {"threshold": float("inf")}, {"top_tokens": 0}):
        with pytest.raises(ValueError):
            SpamFilter(**bad)


def prequential_scores(messages, text_of):
    f = SpamFilter()
    scores, spam = [], []
    for m in messages:
        text = text_of(m)
        scores.append(f.score_one(text))
        spam.append(m.label == "spam")
        f.learn_one(text, m.label)
    return np.array(scores), np.array(spam)


def measures(scores, spam) -> tuple[float, float, float]:
    called = scores > 0
    return (round(float(np.mean(called == spam)), 4), round(exact_auc(spam, scores), 5),
            round(100 * float(called[~spam].mean()), 2))



def numpy_score(f: SpamFilter, text) -> float:
    """The score as the numpy path read it before the one-pass kernel: each known token's
    log-ratio and message counts (``explain_one``), the top ``top_tokens`` by the same order,
    ndarray sums, ``RobinsonFisher.log_odds``."""
    rows = f.explain_one(text)
    if not rows:
        return 0.0
    ratio = np.array([r["log_ratio"] for r in rows])
    ratio = ratio[np.lexsort((-ratio, -np.abs(ratio)))[: f.top_tokens]]
    messages = f.stats.class_counts
    index = f.stats.labels.index
    n_spam, n_ham = (float(messages[index[c]]) if c in index else 0.0
                     for c in (f.spam_label, f.ham_label))
    fisher = RobinsonFisher(s=f.s, x=f.x, min_dev=f.min_dev,
                            max_tokens=f.max_tokens or 2**62).log_odds(
        np.array([r["spam_messages"] for r in rows]), np.array([r["ham_messages"] for r in rows]),
        n_spam, n_ham)
    clip = math.log((1 - 1e-4) / 1e-4)
    return float(ratio.sum()) / len(ratio) + f.fisher_weight * min(max(fisher, -clip), clip)


@pytest.mark.parametrize(("corpus", "limit", "params"), [
    ("sms", None, {}), ("spamassassin", 800, {}),
    ("sms", 1500, {"top_tokens": None, "max_tokens": 5, "alpha": 1.0, "min_dev": 0.0})])
def test_kernel_scores_equal_the_numpy_path(corpus, limit, params):
    """score_one's one-pass kernel gives the numpy path's score of every message of a
    prequential run to 1e-12 (the same arithmetic and summation order; only libm's and numpy's
    log may differ in the last bit)."""
    if corpus == "sms":
        messages, text_of = list(iter_sms_spam_stream())[:limit], (lambda m: m.text)
    else:
        messages, text_of = list(iter_spamassassin_stream())[:limit], (lambda m: m.raw)
    f = SpamFilter(**params)
    for m in messages:
        text = text_of(m)
        assert f.score_one(text) == pytest.approx(numpy_score(f, text), rel=1e-12, abs=1e-12)
        f.learn_one(text, m.label)

def test_prequential_spamassassin_as_documented():
    """docs/spam.md: every message of SpamAssassin in time order, score then learn."""
    scores, spam = prequential_scores(list(iter_spamassassin_stream()), lambda m: m.raw)
    assert measures(scores, spam) == (0.9889, 0.99901, 0.72)
    assert np.all(np.isfinite(scores)) and np.abs(scores).max() < 50


def test_prequential_sms_as_documented():
    """docs/spam.md: every SMS of the SMS Spam Collection in file order; no message is read as
    e-mail by the detector."""
    messages = list(iter_sms_spam_stream())
    assert not any(is_email(m.text) for m in messages)
    scores, spam = prequential_scores(messages, lambda m: m.text)
    assert measures(scores, spam) == (0.9926, 0.99737, 0.21)


def test_presence_dicts_are_read_as_the_per_token_rule_reads_them():
    """``{token: True}`` (the service's decoded text messages) takes a shortcut in ``tokens``:
    the same token sets, counts and scores as counts of 1.0 read token by token, and the same
    rejections of what is not such a dict."""
    fast, slow = SpamFilter(), SpamFilter()
    for text, label in SMS:
        tokens = tokenize_sms(text)
        fast.learn_many([dict.fromkeys(tokens, True)], [label])
        slow.learn_many([dict.fromkeys(tokens, 1.0)], [label])
    assert_same_stats(fast.stats.to_dict(), slow.stats.to_dict())
    probe = dict.fromkeys(tokenize_sms("claim your free prize now, see u at lunch"), True)
    assert fast.tokens(probe) == slow.tokens(dict.fromkeys(probe, 1.0)) == frozenset(probe)
    assert fast.score_many([probe])[0] == slow.score_many([dict.fromkeys(probe, 1.0)])[0]
    assert fast.tokens({"a": True, "b": False}) == frozenset({"a"})
    assert fast.tokens({}) == frozenset()
    with pytest.raises(InvalidRecord):
        fast.tokens({1: True})
    with pytest.raises(InvalidRecord):
        fast.tokens({"a": True, "b": -1})


def test_token_sets_are_read_as_the_raw_texts_they_come_from():
    """A token set (what the service decodes a text message into for SpamFilter) is the
    message: the counts and every score equal those of the raw texts, scored then learned one
    by one on real e-mail, and in batches; a set with a token that is not a str is rejected
    naming the record, with nothing learned."""
    from streamnb.features import tokenize_text

    messages = [m for _, m in zip(range(400), iter_spamassassin_stream(), strict=False)]
    raw, sets = SpamFilter(), SpamFilter()
    for m in messages:
        tokens = tokenize_text(m.raw)
        assert sets.tokens(tokens) is tokens  # taken as it is, no copy
        assert sets.score_one(tokens) == raw.score_one(m.raw)
        raw.learn_one(m.raw, m.label)
        sets.learn_one(set(tokens), m.label)  # a set: read as its frozenset
    assert_same_stats(raw.stats.to_dict(), sets.stats.to_dict())
    assert len({raw.score_one(m.raw) for m in messages}) > 100  # scores that differ
    batch = SpamFilter()
    batch.learn_many([tokenize_text(m.raw) for m in messages], [m.label for m in messages])
    assert_same_stats(raw.stats.to_dict(), batch.stats.to_dict())
    probes = [tokenize_text(m.raw) for m in messages[:50]]
    assert batch.score_many(probes).tolist() == [raw.score_one(m.raw) for m in messages[:50]]
    class Tokens(frozenset):
        pass

    assert batch.tokens(Tokens({"a", "b"})) == frozenset({"a", "b"})  # a subclass: copied
    before = batch.stats.to_dict()
    with pytest.raises(InvalidRecord, match=r"row 1: a token set holds str tokens only, got int"):
        batch.learn_many([frozenset({"a"}), frozenset({"b", 3})], ["spam", "ham"])
    assert_same_stats(before, batch.stats.to_dict())


def test_chi2_tails_in_closed_form_equal_scipy():
    """The χ² tails of even degrees of freedom in closed form (a Poisson sum) equal scipy's
    ``chdtrc``/``chdtr`` to 1e-12 in their logs, from Q ≈ ½ to tails that underflow, and so
    Fisher's log-odds equals the computation through scipy's ufuncs."""
    from scipy.special import chdtr, chdtrc

    from streamnb._accel.kernels import _log_tails  # the twin's; the C kernel's equal it
    from streamnb.estimators.robinson_fisher import fisher_log_odds

    def scipy_tails(stat: float, dof: int) -> tuple[float, float]:
        sf = float(chdtrc(dof, stat))
        if sf < 0.5:
            return (math.log(sf) if sf > 0 else -math.inf), math.log1p(-sf)
        cdf = float(chdtr(dof, stat))
        return math.log1p(-cdf), (math.log(cdf) if cdf > 0 else -math.inf)

    def close(a: float, b: float) -> bool:
        return a == b or abs(a - b) <= 1e-12 * max(1.0, abs(b))

    rng = np.random.default_rng(5)
    for m in range(1, 301):
        for stat in [*rng.uniform(0, 4 * m + 40, 20), 1e-300, 1e-3, 2 * m - 1e-9, 2 * m,
                     2 * m + 1e-9, 1e3, 1e5, 4e5]:
            ours, theirs = _log_tails(float(stat), m), scipy_tails(float(stat), 2 * m)
            assert all(close(a, b) for a, b in zip(ours, theirs, strict=True)), (m, stat)

    def by_ufuncs(f: np.ndarray) -> float:
        dof = 2 * len(f)
        log_h, log_not_h = scipy_tails(-2.0 * float(np.log(f).sum()), dof)
        log_s, log_not_s = scipy_tails(-2.0 * float(np.log1p(-f).sum()), dof)
        return float(np.logaddexp(log_h, log_not_s) - np.logaddexp(log_not_h, log_s))

    for _ in range(3000):
        n = int(rng.integers(1, 300))
        f = np.clip(rng.beta(*rng.uniform(0.05, 3, size=2), size=n), 1e-300, 1 - 1e-16)
        if rng.random() < 0.1:
            f[:] = [1e-300, 1 - 1e-16, 0.5][rng.integers(0, 3)]
        assert close(fisher_log_odds(f), by_ufuncs(f)), f
