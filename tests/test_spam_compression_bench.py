"""benchmarks/spam_compression.py (docs/spam.md, "Adaptive character-level compression models")
on made-up messages: its PPM ratios learn the classes apart, and its combination is
SpamFilter's own score with ``ppm_order`` (the grid it writes is the option's)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from benchmark_scripts import load_script

from streamnb import SpamFilter

MESSAGES = [("WIN a FREE prize now, call 09061701461", True),
            ("are we still on for lunch tomorrow?", False)] * 4


@pytest.fixture(scope="module")
def bench():
    load_script("spam_filter_variants")  # the sibling it imports by name
    yield load_script("spam_compression")
    del sys.modules["spam_compression"], sys.modules["spam_filter_variants"]


def _stream(bench):
    return [bench.Message(raw, spam, frozenset(), [], frozenset()) for raw, spam in MESSAGES]


def test_ratios_learn_the_classes_apart(bench):
    ratios = bench.ppm_ratios(_stream(bench), 3)
    assert ratios[0] == 0.0  # nothing learned: both models code it alike
    assert all(ratios[2::2] > 0) and all(ratios[3::2] < 0)


def test_the_combination_is_spam_filters_score(bench):
    stream = _stream(bench)
    combined = bench.default_scores(stream) + 2.0 * bench.ppm_ratios(stream, 4) / bench.PPM_BYTES
    f = SpamFilter(ppm_order=4, ppm_weight=2.0, ppm_memory=bench.MEMORY)
    for m, want in zip(stream, combined, strict=True):
        assert f.score_one(m.raw) == pytest.approx(want, abs=1e-12)
        f.learn_one(m.raw, "spam" if m.spam else "ham")
    assert np.isfinite(combined).all()
