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
