"""benchmarks/spam_ceiling.py (docs/spam.md, "How far the 0.1 % operating point can go"): its
online references are prequential, its ham lists rank what they claim, a small slice runs end to
end, and the page's claims hold in the committed results file."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from benchmark_scripts import load_script

TEXTS = ["WIN a FREE prize now, call 09061701461", "are we still on for lunch tomorrow?",
         "URGENT! claim your FREE cash prize", "thanks for the notes from the meeting"]


@pytest.fixture(scope="module")
def bench():
    load_script("spam_filters")  # the sibling it imports by name
    yield load_script("spam_ceiling")
    del sys.modules["spam_ceiling"], sys.modules["spam_filters"]


def test_online_scores_use_no_label_of_the_batch_or_later(bench):
    texts = TEXTS * 6
    spam = np.array([i % 2 == 0 for i in range(len(texts))])
    rows = bench.features(texts, "words")
    scores = bench.online_sgd(rows, spam, "log_loss", batch=4)
    assert (scores[:4] == 0).all()  # nothing learned yet
    assert (scores[4:][spam[4:]] > 0).all() and (scores[4:][~spam[4:]] < 0).all()
    flipped = spam.copy()
    flipped[12:] = ~flipped[12:]  # labels from batch 3 on: the scores before it cannot move
    again = bench.online_sgd(rows, flipped, "log_loss", batch=4)
    assert np.array_equal(again[:16], scores[:16])
    assert not np.array_equal(again[16:], scores[16:])


def test_refitted_scores_use_no_label_of_the_block_or_later(bench):
    texts = TEXTS * 6
    spam = np.array([i % 2 == 0 for i in range(len(texts))])
    rows = bench.features(texts, "char4")
    scores = bench.refitted(rows, spam, bench._linear_svc, every=4, warm_up=0, step=4)
    assert (scores[:4] == 0).all()  # nothing fitted yet
    assert (scores[4:][spam[4:]] > 0).all() and (scores[4:][~spam[4:]] < 0).all()
    flipped = spam.copy()
    flipped[12:] = ~flipped[12:]
    again = bench.refitted(rows, flipped, bench._linear_svc, every=4, warm_up=0, step=4)
    assert np.array_equal(again[:16], scores[:16])
    assert not np.array_equal(again[16:], scores[16:])
    # no model from one class: the margin of one that calls everything that class
    one_class = bench.refitted(rows[:8], np.ones(8, dtype=bool), bench._linear_svc, every=4,
                               warm_up=0, step=4)
    assert one_class.tolist() == [0] * 4 + [1] * 4
    # refitted every `step` during the warm-up, every `every` after
    scores = bench.refitted(rows, spam, bench._linear_svc, every=8, warm_up=8, step=2)
    assert (scores[:2] == 0).all() and (scores[2:][spam[2:]] > 0).all()
    assert np.array_equal(scores[8:12], scores[12:16])  # one model from message 8 on
    assert not np.array_equal(scores[4:8], scores[8:12])  # the same texts, younger models


def test_features_are_binary_l2_normalised_rows(bench):
    for kind in bench.FEATURE_SETS:
        rows = bench.features(TEXTS, kind)
        width = 2 * bench.N_FEATURES if kind == "words+char4" else bench.N_FEATURES
        assert rows.shape == (len(TEXTS), width)
        assert np.allclose(np.sqrt(rows.multiply(rows).sum(axis=1)), 1.0)
        if kind != "words+char4":  # one value per row: binary before normalising
            assert all(len(set(np.round(rows[i].data, 12))) == 1 for i in range(len(TEXTS)))


def test_ham_ranks_count_hams_only_from_the_most_spam_like(bench):
    scores = np.array([5.0, 1.0, 9.0, 3.0, -2.0])
    spam = np.array([True, False, True, False, False])
    assert bench.ham_ranks(scores, spam).tolist() == [0, 2, 0, 1, 3]


def test_headline_is_the_subject_or_the_text(bench):
    sample = bench.sf.Sample(0, b"", "From: a@b\nSubject: Re: lunch\n  tomorrow\n\nbody", "ham",
                             None)
    assert bench.headline(sample) == "Re: lunch tomorrow"
    sms = bench.sf.Sample(0, b"", "are we still on for lunch?", "ham", None)
    assert bench.headline(sms) == "are we still on for lunch?"


def test_a_slice_runs_end_to_end(bench, tmp_path):
    out = tmp_path / "ceiling.json"
    bench.main(["--corpus", "sms", "--limit", "400", "--systems",
                "spamfilter,sgd-log-loss-words,cv-svm-char4", "--results", str(out)])
    record = json.loads(out.read_text())
    rows = record["tables"]["ceiling"]["rows"]
    assert [r["family"] for r in rows] == ["SpamFilter", "online", "look-ahead"]
    for row in rows:
        assert 0 <= row["sms: spam miss % at ham loss 0.1 %"] <= 100
        assert 0 <= row["sms: 1-ROCA %"] < 50  # each ranks spam above ham far better than chance
    hams = record["tables"]["top_hams"]["rows"]
    assert {(r["role"], r["system"]) for r in hams} == {
        ("SpamFilter", "spamfilter"), ("best online", "sgd-log-loss-words"),
        ("best look-ahead", "cv-svm-char4")}
    assert all(r[f"rank under {r['role']}"] == r["rank"] for r in hams)
    assert all(r["hams before"] <= r["index"] for r in hams)
    assert len(record["tables"]["top_hams_shared"]["rows"]) == 3
    assert "first 400 messages" in record["notes"]


# -- the claims of docs/spam.md ("How far the 0.1 % operating point can go") against the
# committed results file
MISS = "spam miss % at ham loss 0.1 %"


@pytest.fixture(scope="module")
def record():
    from benchmark_scripts import BENCHMARKS

    return json.loads((BENCHMARKS / "results" / "spam_ceiling.json").read_text())


def _rows(record, family=None):
    return [r for r in record["tables"]["ceiling"]["rows"]
            if family is None or r["family"] == family]


def _by_name(record, start):
    (row,) = [r for r in _rows(record) if r["system"].startswith(start)]
    return row


def test_the_run_is_whole(record):
    assert not record["notes"]  # every message of both corpora, every system
    assert {r["family"] for r in _rows(record)} == {"SpamFilter", "online", "refitted",
                                                     "look-ahead"}
    assert len(_rows(record, "online")) == 12 and len(_rows(record, "look-ahead")) == 6
    assert len(_rows(record, "refitted")) == 3


def test_no_filter_reaches_the_target_and_spamfilter_ppm_is_the_best_online(record):
    ppm = _by_name(record, "streamnb SpamFilter(ppm_order")
    default = _by_name(record, "streamnb SpamFilter()")
    streaming = _rows(record, "SpamFilter") + _rows(record, "online")
    for corpus in ("spamassassin", "sms"):
        assert min(r[f"{corpus}: {MISS}"] for r in streaming) == ppm[f"{corpus}: {MISS}"]
    assert min(r[f"spamassassin: {MISS}"] for r in streaming) > 5
    assert round(ppm[f"spamassassin: {MISS}"], 1) == 10.0 and round(ppm[f"sms: {MISS}"], 1) == 5.1
    assert round(default[f"sms: {MISS}"], 1) == 5.2
    online = _rows(record, "online") + _rows(record, "refitted")
    # three times SpamFilter's miss or more on both corpora
    for corpus, at_best in (("spamassassin", 33), ("sms", 16)):
        assert min(r[f"{corpus}: {MISS}"] for r in online) >= 3 * ppm[f"{corpus}: {MISS}"]
        assert round(min(r[f"{corpus}: {MISS}"] for r in online)) == at_best
    assert round(min(r["spamassassin: 1-ROCA %"] for r in online), 2) == 0.30
    assert round(default["spamassassin: 1-ROCA %"], 2) == 0.10


def test_the_look_ahead_bound_reaches_it_on_spamassassin_not_on_sms(record):
    ahead = _rows(record, "look-ahead")
    best = min(ahead, key=lambda r: r[f"spamassassin: {MISS}"])
    assert best["system"].startswith("LinearSVC(C=1), words+char4")
    assert round(best[f"spamassassin: {MISS}"], 1) == 4.0
    svc = [r for r in ahead if r["system"].startswith("LinearSVC")]
    assert sorted(round(r[f"spamassassin: {MISS}"], 1) for r in svc) == [4.0, 4.5, 4.5]
    logistic = [r[f"spamassassin: {MISS}"] for r in ahead if r["system"].startswith("Logistic")]
    assert min(logistic) >= 6 and max(logistic) < 9.5  # "6–9 %"
    # the setting chosen on SpamAssassin, read on SMS, and every look-ahead reference there
    assert round(best[f"sms: {MISS}"], 1) == 7.5
    spamfilter = _by_name(record, "streamnb SpamFilter()")[f"sms: {MISS}"]
    assert min(r[f"sms: {MISS}"] for r in ahead) > spamfilter


def test_the_first_hams_decide_spamfilters_operating_point(record):
    hams = [r for r in record["tables"]["top_hams"]["rows"] if r["corpus"] == "spamassassin"]
    mine = sorted((r for r in hams if r["role"] == "SpamFilter"), key=lambda r: r["rank"])
    assert [r["hams before"] for r in mine[:3]] == [0, 2, 1]  # the stream's first three hams
    assert min(r["index"] for r in mine[:3]) == 134  # after the 134 spam that open the stream
    assert all(r["id"].startswith("hard-ham") for r in mine[:3])
    ranks = [r["rank under best look-ahead"] for r in mine[:3]]
    assert min(ranks) == 8 and max(ranks) == 68
    # the refitted LinearSVC (no look-ahead) has the same three at its top
    assert {r["system"] for r in hams if r["role"] == "best online"} == {"refit-svm-words+char4"}
    assert sorted(r["rank under best online"] for r in mine[:3]) == [1, 2, 3]
    refit = _by_name(record, "LinearSVC(C=1), words+char4, refitted")
    assert round(refit[f"spamassassin: {MISS}"]) == 33
    (shared,) = [r for r in record["tables"]["top_hams_shared"]["rows"]
                 if r["corpus"] == "spamassassin"
                 and r["systems"] == "spamfilter & cv-svm-words+char4"]
    assert shared["same messages"] == 3 and shared["top"] == 10
