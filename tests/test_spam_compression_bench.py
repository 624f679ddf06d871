"""benchmarks/spam_compression.py (docs/spam.md, "Tried in round 3") on made-up messages: the
key table, the PPM-D probabilities against a byte-by-byte reference, what an e-mail is read as."""

from __future__ import annotations

import math
import sys
from collections import Counter

import numpy as np
import pytest
from benchmark_scripts import load_script

MAIL = (b"From a@example.com  Mon Jul  1 10:00:00 2002\n"
        b"Received: from relay.example.net by\n    mx.example.org\n"
        b"Subject: free money\n\n"
        b"Win free money now\n")
TRAINING = [b"hello world hello there", b"abracadabra abracadabra"]


@pytest.fixture(scope="module")
def bench():
    load_script("spam_filter_variants")  # the sibling it imports by name
    yield load_script("spam_compression")
    del sys.modules["spam_compression"], sys.modules["spam_filter_variants"]


def test_key_table_gives_dense_stable_slots(bench):
    table, seen = bench.KeyTable(bits=11), {}
    rng = np.random.default_rng(0)
    for _ in range(40):  # 1,200 keys in 2,048 buckets: probing past taken buckets happens
        keys = rng.integers(0, 400, 50) * (1 << 40) + rng.integers(0, 3, 50)
        for key, slot in zip(keys.tolist(), table.slots(keys).tolist(), strict=True):
            assert seen.setdefault(key, slot) == slot
    assert sorted(seen.values()) == list(range(len(seen))) == list(range(table.count))


def _reference(history: list[bytes], message: bytes, order: int, adaptive: bool) -> float:
    """ln P(message) under interpolated PPM-D, byte by byte with a Counter."""
    counts: Counter = Counter()

    def learn(text: bytes, i: int) -> None:
        for k in range(order + 1):
            if i - k >= 0:
                counts[(text[i - k:i], text[i])] += 1

    for text in history:
        for i in range(len(text)):
            learn(text, i)
    total = 0.0
    for i in range(len(message)):
        p = 1 / 256
        for k in range(min(order, i) + 1):
            h = message[i - k:i]
            n = sum(v for (g, _), v in counts.items() if g == h)
            d = sum(1 for (g, _) in counts if g == h)
            if n:
                p = max(counts[(h, message[i])] - 0.5, 0) / n + d / (2 * n) * p
        total += math.log(p)
        if adaptive:
            learn(message, i)
    return total


@pytest.mark.parametrize("adaptive", [False, True])
def test_ppm_equals_the_byte_by_byte_reference(bench, adaptive):
    model = bench.PPM(3, adaptive)
    for text in TRAINING:
        model.learn(*model._slots(text), 0)
    message = b"abra hello abracadabra hel"
    ham, spam = model.log_likelihoods(*model._slots(message))
    assert ham == pytest.approx(_reference(TRAINING, message, 3, adaptive), rel=1e-12)
    # no spam learned: 1/256 a byte, unless the model learns the message as it reads it
    assert spam == pytest.approx(_reference([], message, 3, adaptive), rel=1e-12)
    assert adaptive or spam == pytest.approx(len(message) * math.log(1 / 256), rel=1e-12)


def test_static_ppm_is_a_distribution_over_the_next_byte(bench):
    model = bench.PPM(3, False)
    for text in TRAINING:
        model.learn(*model._slots(text), 0)
    prefix = model.log_likelihoods(*model._slots(b"hello w"))[0]
    total = sum(math.exp(model.log_likelihoods(*model._slots(b"hello w" + bytes([b])))[0]
                         - prefix) for b in range(256))
    assert total == pytest.approx(1.0, abs=1e-12)


def test_what_an_email_is_read_as(bench):
    m = bench.Message(MAIL, True, frozenset(), [], frozenset())
    assert bench.message_bytes(m, 2500, "raw").startswith(b"Received: from relay")
    assert bench.message_bytes(m, 2500, "sender") == (b"Subject: free money\n\n"
                                                      b"Win free money now\n")
    assert bench.message_bytes(m, 2500, "body") == b"Win free money now\n"
    assert bench.message_bytes(m, 10, "body") == b"Win free m"
    sms = bench.Message("Call 0800 now £", True, frozenset(), [], frozenset())
    assert bench.message_bytes(sms, 2500, "sender") == "Call 0800 now £".encode()


def test_scores_learn_the_classes_apart(bench):
    stream = [bench.Message(raw, spam, frozenset(), [], frozenset())
              for raw, spam in [("WIN a FREE prize now, call 09061701461", True),
                                ("are we still on for lunch tomorrow?", False)] * 4]
    scores = bench.ppm_scores(stream, 3, True, 2500)
    assert scores[0] == 0.0  # nothing learned: both models code it alike
    assert all(scores[2::2] > 0) and all(scores[3::2] < 0)
    truth = np.array([m.spam for m in stream])
    assert bench.post_hoc(truth, scores).startswith("t=")
