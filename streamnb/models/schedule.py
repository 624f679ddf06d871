"""When a structure is re-learned from the counts: one schedule for every model and for the
service's shared candidate lists, and one way to feed a drift detector."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from streamnb.stats import InvalidRecord
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.forgetting import check_decay_factor
from streamnb.stats.frames import batch_rows, is_frame, is_sparse, n_rows

__all__ = ["learn_in_pieces", "learn_watching_drift", "next_relearn", "react_to_drift",
           "relearn_due", "relearn_pieces", "relearn_point"]


def relearn_point(k: int, every: int) -> int:
    """The number of learned records at the ``k``-th structure update (``k`` = 1, 2, …):
    1, 2, 4, … while below ``every``, then the multiples of ``every``. Points are counts of
    records, never "so many after the last update", so where they fall does not depend on how
    the records were batched.

    >>> [relearn_point(k, 100) for k in range(1, 11)]
    [1, 2, 4, 8, 16, 32, 64, 100, 200, 300]
    >>> [relearn_point(k, 1) for k in range(1, 5)], [relearn_point(k, 8) for k in range(1, 6)]
    ([1, 2, 3, 4], [1, 2, 4, 8, 16])
    """
    if not (type(k) is int and k >= 1 and type(every) is int and every >= 1):
        raise ValueError(f"need k >= 1 and every >= 1, got k={k!r}, every={every!r}")
    doubling = (every - 1).bit_length()  # the powers of two below every
    return 2 ** (k - 1) if k <= doubling else (k - doubling) * every


def next_relearn(last: int, every: int) -> int:
    """The first :func:`relearn_point` after ``last`` learned records.

    >>> next_relearn(0, 100), next_relearn(64, 100), next_relearn(150, 100), next_relearn(5, 100)
    (1, 100, 200, 8)
    """
    power = 1 << max(last, 0).bit_length()  # the first power of two past last
    return power if power < every else (last // every + 1) * every


def relearn_due(since: int, every: int, learned: int) -> bool:
    """Whether a structure update is due with ``learned`` records learned in all, ``since`` of
    them after the last update: once ``learned`` reaches the first :func:`relearn_point` past
    the last update (``every`` 0: never, only on demand). The first structure comes as soon as
    there are counts — a model trained on fewer than ``every`` records is never left without
    one — and it is refined while the counts are young, at the powers of two below ``every``.

    >>> done, last = [], 0
    >>> for n in range(1, 400):
    ...     if relearn_due(n - last, 100, n):
    ...         done.append(n)
    ...         last = n
    >>> done
    [1, 2, 4, 8, 16, 32, 64, 100, 200, 300]
    """
    if not every:
        return False
    return since > 0 and learned >= next_relearn(learned - since, every)


def relearn_pieces(since: int, every: int, learned: int, n: int) -> list[int]:
    """The record counts inside a batch of ``n`` records (``learned`` learned before it) at
    which its pieces must end so that every update :func:`relearn_due` would make while the
    records are learned one by one falls between two pieces (``[]``: none falls inside).

    >>> relearn_pieces(0, 50, 0, 60), relearn_pieces(0, 50, 12, 12), relearn_pieces(0, 0, 9, 5)
    ([1, 2, 4, 8, 16, 32, 50], [16], [])
    """
    ends = []
    last = learned - since  # records learned at the last update
    while every:
        point = max(next_relearn(last, every), last + 1, learned + 1)  # overdue: the next record
        if point >= learned + n:
            break
        ends.append(point)
        last = point
    return ends


def learn_in_pieces(model: Any, X: Any, labels: list, ends: Iterable[int],
                    learn: Callable[[Any, list], None]) -> None:
    """Learn the batch ``X, labels`` into ``model`` with ``learn(piece, piece_labels)`` on
    consecutive pieces ending at the record counts ``ends`` (a structure schedule's points,
    :func:`relearn_pieces`) and at the decay points of the model's ``half_life``, each piece
    after the decays before its first record: the batch learns what its records one by one
    would, the structure updates and the forgetting included. Every model's ``learn_many``
    goes through here (``models/base.py``).

    A batch that is cut is checked whole first (the model's ``_check_many``): a bad record or
    label rejects it before any piece is learned (its row named in the batch, as
    ``learn_many`` names it), so the model is left as it was; the pieces are cut from the
    batch as the check gives it back, with what it read of the records. An
    :class:`~streamnb.stats.encoded.EncodedBatch` carries its registrations whole: it is
    learned whole between decay points (and refused if one falls inside it)."""
    forgetting = model._forgetting
    if isinstance(X, EncodedBatch):
        ends = ()
    elif not (is_frame(X) or is_sparse(X) or isinstance(X, Sequence)):
        X = list(X)  # a one-pass iterable, which a cut reads twice
    n, start = n_rows(X), model.n_learned
    cuts = {end for end in ends if start < end < start + n}
    if forgetting is not None:
        cuts.update(start + end for _, end in forgetting.segments(range(start, start + n)))
        cuts.discard(start + n)
    if cuts and not isinstance(X, EncodedBatch):
        if n != len(labels):
            raise ValueError(f"{n} records but {len(labels)} labels")
        X = model._check_many(X, labels)
    done = first = start  # decayed to done; the piece begins at record count first
    for end in [*sorted(cuts), start + n]:
        if forgetting is not None:
            forgetting.decay(model, done, first)
            done = max(done, first)
        a, b = first - start, end - start
        learn(*((X, labels) if b - a == n else (batch_rows(X, a, b), labels[a:b])))
        first = end
    if forgetting is not None:
        forgetting.decay(model, done, start + n)


def learn_watching_drift(model: Any, detector: Any, x: Any, y: Any,
                         learn: Callable[[], None]) -> bool:
    """Learn one record with ``learn()`` and give ``detector`` (a river drift detector, or
    ``None``) ``model``'s prequential error on it: 1 unless the model, predicting before it
    learned the record, said ``y``. The error is given once the record is learned (a record
    the model refuses raises and changes nothing, detector included) and once the model knows
    a class. Whether the detector now signals a drift. Every model's ``drift_detector`` and the
    service's ``--drift-detector`` are fed here.

    >>> from river import drift
    >>> from streamnb import IndifferentNB
    >>> model, detector = IndifferentNB(), drift.binary.DDM(warm_start=5)
    >>> flips = [learn_watching_drift(model, detector, {"w": i % 2 == 0}, i % 2 == (i < 40),
    ...                               lambda i=i: model.learn_one({"w": i % 2 == 0},
    ...                                                           i % 2 == (i < 40)))
    ...          for i in range(60)]
    >>> flips.index(True) > 40  # the labels invert at record 40
    True
    """
    if detector is None:
        learn()
        return False
    fed = bool(model.stats.n_classes)
    predicted = None
    if fed:
        try:
            predicted = model.predict_one(x)
        except InvalidRecord:
            predicted = None  # an error, if the record can still be learned
    learn()
    if not fed:
        return False
    detector.update(int(predicted != y))
    return bool(detector.drift_detected)


def react_to_drift(model: Any, decay: float, relearn: bool = True) -> None:
    """What a drift does to ``model``, for every model's ``drift_detector`` and the service's
    ``--drift-detector``: its counts are multiplied by ``decay`` in (0, 1] (the evidence of the
    old concept weighs less, so the records after the drift soon outweigh it), then its
    structure is re-learned from them (a model with ``relearn``, unless ``relearn`` is False:
    the service's shared candidate lists re-learn the sum's instead).

    >>> from streamnb import TAN
    >>> model = TAN(relearn_every=0)
    >>> model.learn_one({"a": "x", "b": "x"}, "+")
    >>> react_to_drift(model, 0.25)
    >>> model.stats.class_counts.tolist(), model.structure_version
    ([0.25], 1)
    """
    if check_decay_factor(decay) < 1:
        model.decay(decay)
    if relearn and hasattr(model, "relearn"):
        model.relearn()
