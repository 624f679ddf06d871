"""benchmarks/spam_filter_variants.py (docs/spam.md, "Tried in round 2") on a few made-up
messages, so that the harness cannot rot unnoticed: its helpers, and every variant runs."""

from __future__ import annotations

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
    for name, variant in bench.VARIANTS.items():
        metrics, seconds = bench.measure(stream, variant)
        assert 0.0 <= metrics["accuracy"] <= 1.0 and seconds >= 0, name
    scores = np.fromiter(bench.VARIANTS["default"](stream), dtype=np.float64)
    np.testing.assert_array_equal(scores, expected)
