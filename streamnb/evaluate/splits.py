"""Train/test index splits for the papers' protocols: stratified k-fold cross-validation
(repeated, seeded), R random splits of fixed train/test sizes, and a holdout fraction of a
training fold.

Every function takes the labels (any hashable values) and returns numpy index arrays, sorted
ascending; the same arguments give the same splits on every machine (numpy's PCG64 generator
seeded with ``(seed, repeat)``).
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Sequence

import numpy as np

__all__ = ["holdout", "random_splits", "stratified_kfold"]

Split = tuple[np.ndarray, np.ndarray]


def _codes(labels: Sequence[Hashable]) -> np.ndarray:
    index: dict[Hashable, int] = {}
    return np.fromiter((index.setdefault(label, len(index)) for label in labels), dtype=np.intp,
                       count=len(labels))


def _positive_int(value: object, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def _stratified_order(codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation in which every prefix of length t holds ⌊t·p_c⌋ or ⌈t·p_c⌉ records of
    each class c (p_c its share of the data), so any prefix is stratified within one record.

    The j-th (shuffled) record of a class of n_c records out of n gets the window of
    positions [⌊(j − 1)·n/n_c⌋ + 1, ⌈j·n/n_c⌉]; any interval of L positions contains the whole
    windows of at most L·n_c/n records of each class, so of at most L records in all (Hall's
    condition), and earliest-deadline-first — at each position, of the records whose window
    has opened, the one whose window closes first, ties at random — places every record inside
    its window (unit jobs with release times and deadlines on one machine). A record in its
    window is what keeps each class's count between ⌊t·p_c⌋ and ⌈t·p_c⌉."""
    n = len(codes)
    shuffled = rng.permutation(n)
    by_class = shuffled[np.argsort(codes[shuffled], kind="stable")]
    sizes = np.bincount(codes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    size = sizes[codes[by_class]]
    j = np.arange(n) - starts[codes[by_class]] + 1        # 1-based rank within its class
    release = (j - 1) * n // size + 1
    deadline = -(-j * n // size)
    tiebreak = rng.random(n)
    by_release = np.argsort(release, kind="stable")
    order = np.empty(n, dtype=np.intp)
    waiting: list[tuple[int, float, int]] = []
    k = 0
    for t in range(1, n + 1):
        while k < n and release[by_release[k]] <= t:
            i = int(by_release[k])
            heapq.heappush(waiting, (int(deadline[i]), float(tiebreak[i]), i))
            k += 1
        order[t - 1] = by_class[heapq.heappop(waiting)[2]]
    return order


def stratified_kfold(labels: Sequence[Hashable], k: int = 10, seed: int = 0,
                     repeats: int = 1) -> list[Split]:
    """``repeats`` × ``k`` stratified folds: (train indices, test indices) per fold.

    In each repeat the records are shuffled, grouped by class and dealt to the folds in turn
    (as Weka's ``Instances.stratify`` does), so every test fold holds each class's records
    within one of ``count/k``, and fold sizes differ by at most one. Each repeat's test folds
    partition the records.

    Parameters
    ----------
    labels
        The class of each record.
    k
        Folds per repeat, 2 ≤ k ≤ number of records.
    seed
        Seed of the shuffles; repeat r uses the generator seeded with ``(seed, r)``.
    repeats
        How many times to shuffle and split (folds of repeat r come at positions r·k .. r·k+k-1).

    Examples
    --------
    >>> from streamnb.evaluate import stratified_kfold
    >>> labels = ["a"] * 6 + ["b"] * 3
    >>> folds = stratified_kfold(labels, k=3, seed=1)
    >>> [sorted(labels[i] for i in test) for _, test in folds]
    [['a', 'a', 'b'], ['a', 'a', 'b'], ['a', 'a', 'b']]
    >>> sorted(int(i) for _, test in folds for i in test) == list(range(9))
    True

    """
    codes = _codes(labels)
    k = _positive_int(k, "k", 2)
    repeats = _positive_int(repeats, "repeats")
    if k > len(codes):
        raise ValueError(f"k must be at most the number of records ({len(codes)}), got {k}")
    everything = np.arange(len(codes))
    splits = []
    for r in range(repeats):
        rng = np.random.default_rng((seed, r))
        shuffled = rng.permutation(len(codes))
        order = shuffled[np.argsort(codes[shuffled], kind="stable")]
        fold_of = np.empty(len(codes), dtype=np.intp)
        fold_of[order] = everything % k
        for fold in range(k):
            test = np.flatnonzero(fold_of == fold)
            splits.append((np.flatnonzero(fold_of != fold), test))
    return splits


def random_splits(labels: Sequence[Hashable], train_size: int, test_size: int | None = None,
                  repeats: int = 30, seed: int = 0, stratify: bool = True) -> list[Split]:
    """``repeats`` random splits into disjoint train and test sets of fixed sizes (Singh &
    Provan's protocol: e.g. 1000 training and 2196 test records of Chess, 30 times).

    Parameters
    ----------
    labels
        The class of each record.
    train_size, test_size
        Records in each part; ``test_size`` defaults to all the others.
    repeats
        Number of splits; split r uses the generator seeded with ``(seed, r)``.
    stratify
        If True, each class's count in the training set (and in the training and test sets
        together) is its share of the data rounded down or up: within one record.

    Examples
    --------
    >>> from streamnb.evaluate import random_splits
    >>> labels = ["a"] * 8 + ["b"] * 4
    >>> splits = random_splits(labels, train_size=6, test_size=3, repeats=2, seed=0)
    >>> [(len(train), len(test)) for train, test in splits]
    [(6, 3), (6, 3)]
    >>> [sorted(labels[i] for i in train) for train, _ in splits]
    [['a', 'a', 'a', 'a', 'b', 'b'], ['a', 'a', 'a', 'a', 'b', 'b']]

    """
    codes = _codes(labels)
    n = len(codes)
    train_size = _positive_int(train_size, "train_size")
    test_size = n - train_size if test_size is None else _positive_int(test_size, "test_size")
    repeats = _positive_int(repeats, "repeats")
    if train_size + test_size > n:
        raise ValueError(f"train_size + test_size must be at most the number of records ({n}), "
                         f"got {train_size} + {test_size}")
    splits = []
    for r in range(repeats):
        rng = np.random.default_rng((seed, r))
        order = _stratified_order(codes, rng) if stratify else rng.permutation(n)
        splits.append((np.sort(order[:train_size]),
                       np.sort(order[train_size:train_size + test_size])))
    return splits


def holdout(indices: Sequence[int] | np.ndarray, fraction: float,
            labels: Sequence[Hashable] | None = None, seed: int = 0) -> Split:
    """Split a training fold's ``indices`` into a part of ``fraction`` of them and the rest
    (Cerquides' "10% of the learning fold"; half/half for a wrapper's inner evaluation).

    Parameters
    ----------
    indices
        Record indices (e.g. a fold's training indices).
    fraction
        Share of ``indices`` in the first part, 0 < fraction < 1; the part has
        ``round(fraction·len(indices))`` records, at least one.
    labels
        The labels of all records (indexed by ``indices``); if given, the part is stratified.
    seed
        Seed of the random choice.

    Examples
    --------
    >>> from streamnb.evaluate import holdout
    >>> labels = ["a"] * 10 + ["b"] * 10
    >>> part, rest = holdout(range(20), 0.2, labels, seed=3)
    >>> len(part), len(rest), sorted(labels[i] for i in part)
    (4, 16, ['a', 'a', 'b', 'b'])

    """
    indices = np.asarray(indices, dtype=np.intp)
    if not (isinstance(fraction, float | int) and 0 < fraction < 1):
        raise ValueError(f"fraction must be a number in (0, 1), got {fraction!r}")
    if len(indices) < 2:
        raise ValueError(f"indices must hold at least 2 records, got {len(indices)}")
    size = min(max(1, round(fraction * len(indices))), len(indices) - 1)
    rng = np.random.default_rng(seed)
    if labels is None:
        order = rng.permutation(len(indices))
    else:
        order = _stratified_order(_codes([labels[i] for i in indices]), rng)
    return np.sort(indices[order[:size]]), np.sort(indices[order[size:]])
