"""The TREC spam track's operating points (streamnb.evaluate.operating_points): spam miss at a
ham loss and ham loss at a spam miss, read off the exact ROC curve."""

from __future__ import annotations

import math

import numpy as np
import pytest

from streamnb.evaluate import exact_auc, operating_points

# 4 spam, 5 ham. From the top score down (S = spam, H = ham):
#   0.95 S, 0.90 H, 0.80 S, 0.70 S | 0.60 H and 0.60 S tied | 0.30 H, 0.20 H, 0.10 H
SPAM = [True, False, True, True, False, True, False, False, False]
SCORES = [0.95, 0.90, 0.80, 0.70, 0.60, 0.60, 0.30, 0.20, 0.10]
# The ROC's cutoffs (score ≥ cutoff called spam), as (ham lost, spam missed) counts:
#   ∞ (0, 4), 0.95 (0, 3), 0.90 (1, 3), 0.80 (1, 2), 0.70 (1, 1), 0.60 (2, 0), 0.30 (3, 0), …


def test_hand_computed_points_of_a_small_roc():
    points = operating_points(SPAM, SCORES, ham_losses=[0, 19, 20, 40],
                              spam_misses=[0, 25, 50, 74])
    assert points == pytest.approx({
        "spam miss % at ham loss 0 %": 75.0,  # cutoff 0.95: 3 of 4 spam missed, no ham lost
        "spam miss % at ham loss 19 %": 75.0,  # one ham is 20 %: still no ham may be lost
        "spam miss % at ham loss 20 %": 25.0,  # cutoff 0.70: 1 ham of 5 lost, 1 spam missed
        "spam miss % at ham loss 40 %": 0.0,  # the tie at 0.60 loses the 2nd ham, catches all
        "ham loss % at spam miss 0 %": 40.0,
        "ham loss % at spam miss 25 %": 20.0,
        "ham loss % at spam miss 50 %": 20.0,
        "ham loss % at spam miss 74 %": 20.0,  # 3 missed (75 %) is too many: cutoff 0.80
        "1-ROCA %": 100 * (1 - exact_auc(SPAM, SCORES)),
    })
    # pairs: 0.95 beats 5 ham, 0.80 and 0.70 beat 4, 0.60 beats 3 and ties 1 -> 16.5 of 20
    assert points["1-ROCA %"] == pytest.approx(17.5)


def test_default_points_are_the_trec_ones():
    assert list(operating_points(SPAM, SCORES)) == [
        "spam miss % at ham loss 0.1 %", "spam miss % at ham loss 0.5 %",
        "spam miss % at ham loss 1 %", "ham loss % at spam miss 1 %",
        "ham loss % at spam miss 3 %", "ham loss % at spam miss 5 %", "1-ROCA %"]


def test_a_rate_equal_to_the_target_counts_as_within_it():
    """1 ham in 1,000 is exactly 0.1 %: the cutoff that loses it is allowed."""
    spam = [True] * 10 + [False] * 1000
    scores = [1.0] * 9 + [0.0] + [0.5] + [-1.0] * 999  # one ham above the last spam
    points = operating_points(spam, scores, ham_losses=[0.1], spam_misses=[10])
    assert points["spam miss % at ham loss 0.1 %"] == 0.0
    assert points["ham loss % at spam miss 10 %"] == 0.0


def test_infinite_scores_and_a_perfect_ranking():
    points = operating_points([True, True, False], [math.inf, 3.0, -math.inf])
    assert all(v == 0 for v in points.values())


@pytest.mark.parametrize("spam", [[True, True], [False, False]])
def test_one_class_gives_nan(spam):
    assert all(math.isnan(v) for v in operating_points(spam, [0.2, 0.4]).values())


def test_equals_a_search_over_every_cutoff():
    """The definition, checked against a brute-force search on random scores with ties."""
    rng = np.random.default_rng(7)
    spam = rng.random(400) < 0.3
    scores = np.round(rng.normal(spam * 1.5, 1.0), 1)  # rounded: many ties
    cutoffs = np.r_[np.inf, np.unique(scores)]
    ham_loss = np.array([100 * np.mean(scores[~spam] >= c) for c in cutoffs])
    spam_miss = np.array([100 * np.mean(scores[spam] < c) for c in cutoffs])
    points = operating_points(spam, scores, ham_losses=[0.5, 5, 20], spam_misses=[2, 10, 30])
    for h in (0.5, 5, 20):
        assert points[f"spam miss % at ham loss {h:g} %"] == pytest.approx(
            spam_miss[ham_loss <= h].min())
    for m in (2, 10, 30):
        assert points[f"ham loss % at spam miss {m:g} %"] == pytest.approx(
            ham_loss[spam_miss <= m].min())
