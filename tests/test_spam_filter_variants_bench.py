"""benchmarks/spam_filter_variants.py (docs/spam.md's default, sensitivity and variant tables)
on a few made-up messages, so that the harness cannot rot unnoticed: its helpers, every variant
runs, and the results file holds the tables the docs show."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from benchmark_scripts import load_script

from streamnb import SpamFilter

MAIL = (b"From a@example.com  Mon Jul  1 10:00:00 2002\n"
        b"Received: from relay.example.net by mx.example.org\n"
        b"Delivered-To: me@example.org\n"
        b"From: Deals <offers@promo.example.com>\n"
        b"List-Id: <deals.example.com>\n"
        b"Subject: free money\n"
        b"Content-Type: text/html\n\n"
        b"<p>Win <b>free</b> money now</p>\n")


@pytest.fixture(scope="module")
def bench():
    yield load_script("spam_filter_variants")
    del sys.modules["spam_filter_variants"]


def test_word_pairs_and_character_grams(bench):
    assert bench.word_pairs(["a", "b", "c"], 1) == {"a~1~b", "b~1~c"}
    assert bench.word_pairs(["a", "b", "c"], 4) == {"a~1~b", "b~1~c", "a~2~c"}
    assert bench.word_pairs(["a", "b", "c"], 1, limit=2) == {"a~1~b"}
    assert bench.char_grams(["ab", "cd"]) == {"c4:ab c", "c4:b cd"}


def test_visible_words_and_sender_header_names(bench):
    words, names = bench._words_and_headers(MAIL)
    assert words == ["win", "free", "money", "now"]
    assert names == {"from", "list-id", "subject", "content-type"}  # not the delivery fields
    words, names = bench._words_and_headers("Call 0800 now!")
    assert words == ["call", "0800", "now"] and names == frozenset()


def _stream(bench):
    texts = [("WIN a FREE prize now, call 09061701461", True),
             ("are we still on for lunch tomorrow?", False), (MAIL, True),
             ("free entry to win cash, text WIN now", True), ("see you at lunch then", False),
             ("ok call me when you land tomorrow", False)] * 3
    return [bench.Message(raw, spam, bench.tokenize_text(raw), *bench._words_and_headers(raw))
            for raw, spam in texts]


def test_every_variant_runs_and_the_default_is_spam_filter(bench):
    stream = _stream(bench)
    f, expected = SpamFilter(), []
    for m in stream:
        expected.append(f.score_one(m.raw))
        f.learn_one(m.raw, "spam" if m.spam else "ham")
    for name, (_, variant) in {**bench.SETTINGS, **bench.VARIANTS}.items():
        metrics, seconds = bench.run(stream, variant)
        assert 0.0 <= metrics["accuracy"] <= 1.0 and seconds >= 0, name
    summary, scores, _ = bench.default_run(stream)
    # prequential's log-odds come back from the posterior: equal to rounding
    np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12)
    # the settings' family is SpamFilter itself: its defaults give the default's scores
    same = np.fromiter(bench.setting()(stream), dtype=np.float64)
    np.testing.assert_array_equal(same, expected)
    truth = np.array([m.spam for m in stream])
    assert summary["accuracy"] == np.mean((scores > 0) == truth)


def test_the_results_file_holds_the_docs_tables_and_parts_merge(bench, tmp_path,
                                                                monkeypatch):
    monkeypatch.setattr(bench, "messages", lambda corpus: _stream(bench))
    path = tmp_path / "variants.json"
    bench.main(["--variants", "default,K/2", "--results", str(path)])
    record = json.loads(path.read_text())
    assert set(record["tables"]) == {"default", "sensitivity", "variants"}
    sensitivity = [r["variant"] for r in record["tables"]["sensitivity"]["rows"]]
    assert sensitivity == [bench.DEFAULT, "threshold t = +0.25", "threshold t = −0.25",
                           "threshold t = +0.5", bench.SETTINGS["K/2"][0]]
    assert {"SA accuracy", "SMS AUC", "SA spam→ham %"} <= set(
        record["tables"]["sensitivity"]["rows"][0])
    bench.main(["--variants", "thick-wrong-2x", "--merge", "--results", str(path)])
    record = json.loads(path.read_text())
    assert [r["variant"] for r in record["tables"]["variants"]["rows"]] == [
        bench.DEFAULT, bench.VARIANTS["thick-wrong-2x"][0]]
    assert record["command"].count("&&") == 1
    with pytest.raises(SystemExit):
        bench.main(["--variants", "nonesuch", "--no-results"])
