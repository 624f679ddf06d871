"""Cross-validation splits: partitions, stratification, determinism per seed."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamnb.evaluate import holdout, random_splits, stratified_kfold

label_lists = st.lists(st.sampled_from("abcde"), min_size=2, max_size=200)


def class_counts(labels, indices):
    return Counter(labels[i] for i in indices)


def within_one_of_share(labels, indices):
    """Each class's count in ``indices`` is within one of its share of the data."""
    total = Counter(labels)
    got = class_counts(labels, indices)
    return all(abs(got[c] - len(indices) * n / len(labels)) < 1 + 1e-9 for c, n in total.items())


@settings(max_examples=60, deadline=None)
@given(label_lists, st.integers(2, 12), st.integers(0, 2**32), st.integers(1, 3))
def test_kfold_partitions_and_stratifies(labels, k, seed, repeats):
    k = min(k, len(labels))
    folds = stratified_kfold(labels, k=k, seed=seed, repeats=repeats)
    assert len(folds) == k * repeats
    n = len(labels)
    for r in range(repeats):
        tests = [test for _, test in folds[r * k:(r + 1) * k]]
        assert np.array_equal(np.sort(np.concatenate(tests)), np.arange(n))  # a partition
        assert max(map(len, tests)) - min(map(len, tests)) <= 1
        for train, test in folds[r * k:(r + 1) * k]:
            assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(n))
            assert np.all(np.diff(train) > 0) and np.all(np.diff(test) > 0)
            for c, count in Counter(labels).items():  # each class within one of count/k
                assert abs(class_counts(labels, test)[c] - count / k) < 1


def test_kfold_is_deterministic_per_seed_and_repeat():
    labels = ["x"] * 30 + ["y"] * 20
    first = stratified_kfold(labels, k=5, seed=7, repeats=2)
    again = stratified_kfold(labels, k=5, seed=7, repeats=2)
    other = stratified_kfold(labels, k=5, seed=8, repeats=2)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(first, other, strict=True))
    # the second repeat is a different shuffle, and equals the first repeat of nothing else
    assert not all(np.array_equal(first[i][1], first[5 + i][1]) for i in range(5))


def test_kfold_test_folds_are_shuffled():
    """Not consecutive blocks: the records of one class are spread over the folds at random."""
    labels = ["x"] * 100
    test = stratified_kfold(labels, k=10, seed=0)[0][1]
    assert not np.array_equal(test, np.arange(10)) and len(test) == 10


@settings(max_examples=60, deadline=None)
@given(label_lists, st.data(), st.integers(0, 2**32), st.booleans())
def test_random_splits_sizes_disjoint_stratified(labels, data, seed, stratify):
    n = len(labels)
    train_size = data.draw(st.integers(1, n - 1))
    test_size = data.draw(st.integers(1, n - train_size))
    splits = random_splits(labels, train_size, test_size, repeats=3, seed=seed,
                           stratify=stratify)
    assert len(splits) == 3
    for train, test in splits:
        assert (len(train), len(test)) == (train_size, test_size)
        assert not set(train.tolist()) & set(test.tolist())
        assert len(set(train.tolist())) == train_size
        if stratify:
            assert within_one_of_share(labels, train)
            assert within_one_of_share(labels, np.concatenate([train, test]))


def test_random_splits_default_test_and_determinism():
    labels = ["won"] * 1669 + ["nowin"] * 1527  # kr-vs-kp's classes, Singh & Provan's sizes
    splits = random_splits(labels, train_size=1000, repeats=30, seed=1)
    assert {(len(a), len(b)) for a, b in splits} == {(1000, 2196)}
    assert len({tuple(a.tolist()) for a, _ in splits}) == 30  # 30 different draws
    again = random_splits(labels, train_size=1000, repeats=30, seed=1)
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(splits, again, strict=True))
    assert Counter(labels[i] for i in splits[0][0]) == {"won": 522, "nowin": 478}


@settings(max_examples=60, deadline=None)
@given(label_lists, st.floats(0.01, 0.99), st.integers(0, 2**32))
def test_holdout_parts(labels, fraction, seed):
    fold = np.arange(0, len(labels), 1)
    part, rest = holdout(fold, fraction, labels, seed=seed)
    assert np.array_equal(np.sort(np.concatenate([part, rest])), fold)
    assert len(part) == min(max(1, round(fraction * len(fold))), len(fold) - 1)
    assert within_one_of_share(labels, part)


def test_holdout_of_a_training_fold():
    labels = ["a"] * 60 + ["b"] * 40
    train, _ = stratified_kfold(labels, k=10, seed=0)[3]
    part, _ = holdout(train, 0.1, labels, seed=0)
    assert len(part) == 9 and set(part.tolist()) <= set(train.tolist())
    assert abs(class_counts(labels, part)["a"] - 5.4) < 1
    assert np.array_equal(holdout(train, 0.1, labels, seed=0)[0], part)
    unstratified, _ = holdout(train, 0.5, seed=2)
    assert len(unstratified) == 45


@pytest.mark.parametrize(("call", "message"), [
    (lambda: stratified_kfold(["a", "b"], k=1), "k must be an int >= 2, got 1"),
    (lambda: stratified_kfold(["a", "b"], k=3), r"k must be at most the number of records \(2\)"),
    (lambda: stratified_kfold(["a", "b"], k=2, repeats=0), "repeats must be an int >= 1"),
    (lambda: random_splits(["a"] * 5, 4, 2), r"train_size \+ test_size must be at most"),
    (lambda: random_splits(["a"] * 5, 2.5), "train_size must be an int >= 1, got 2.5"),
    (lambda: holdout([1, 2, 3], 1.0), r"fraction must be a number in \(0, 1\), got 1.0"),
    (lambda: holdout([1], 0.5), "indices must hold at least 2 records"),
])
def test_parameters_are_validated(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@settings(max_examples=200, deadline=None)
@given(label_lists, st.integers(0, 2**32))
def test_every_prefix_of_a_stratified_order_is_stratified(labels, seed):
    """Each class's count in every prefix of length t is ⌊t·p_c⌋ or ⌈t·p_c⌉."""
    from streamnb.evaluate.splits import _codes, _stratified_order

    codes = _codes(labels)
    order = _stratified_order(codes, np.random.default_rng(seed))
    assert sorted(order.tolist()) == list(range(len(labels)))
    n, sizes = len(labels), np.bincount(codes)
    counts = np.cumsum(np.eye(len(sizes), dtype=np.int64)[codes[order]], axis=0)
    t = np.arange(1, n + 1)[:, None]
    assert np.all(counts * n >= (t * sizes) - (t * sizes) % n)       # ≥ ⌊t·n_c/n⌋
    assert np.all(counts <= -(-(t * sizes) // n))                    # ≤ ⌈t·n_c/n⌉
