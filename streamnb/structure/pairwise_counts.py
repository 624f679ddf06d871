"""TAN's sufficient statistics as one container, :class:`PairwiseCounts`: class counts N(c),
attribute × class counts N_i(u, c) and attribute-pair × class counts N_ij(u, v, c), checked once
at the boundary; the statistics layer fills it, the edge weights (:mod:`.weights`) and the tree
search (:mod:`.chow_liu`) read it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from streamnb.structure.discrete_data import index_records

__all__ = ["PairwiseCounts"]


@dataclass(frozen=True, eq=False)
class PairwiseCounts:
    """Class, attribute × class and attribute-pair × class counts: TAN's sufficient statistics.

    Parameters
    ----------
    class_counts
        Shape ``(k,)``: N(c).
    marginals
        One array per attribute, shape ``(r_i, k)``: N_i(u, c), the records where attribute
        ``i`` was observed.
    joints
        ``joints[i, j]`` for ``i < j``, shape ``(r_i, r_j, k)``: N_ij(u, v, c), the records where
        both attributes were observed. A pair may be absent (e.g. outside a candidate set); its
        weight is then "unmeasured" (NaN, see :func:`.weights.pairwise_weights`).
    names
        Attribute names, one per marginal, in index order.
    classes
        Optional class labels, one per entry of ``class_counts``.
    values
        Optional per-attribute value domains, ``values[i][u]`` being the value of row ``u``.

    Notes
    -----
    All arrays are converted to float64 (counts may be fractional after forgetting) and checked
    for shape consistency once, here at the boundary. The container is frozen; its arrays are
    not copied beyond the float64 conversion, so treat them as read-only.

    Examples
    --------
    >>> pc = PairwiseCounts.from_records(
    ...     [{"a": "x", "b": 1}, {"a": "y", "b": 1}, {"a": "x", "b": None}],
    ...     ["+", "-", "+"],
    ... )
    >>> pc.names, pc.classes, pc.values
    (('a', 'b'), ('+', '-'), (('x', 'y'), (1,)))
    >>> pc.class_counts.tolist(), pc.marginals[1].tolist()
    ([2.0, 1.0], [[1.0, 1.0]])
    >>> pc.joint(0, 1)[:, :, 0].tolist()   # N_ab(u, v, '+'): the record with b missing is skipped
    [[1.0], [0.0]]

    """

    class_counts: np.ndarray
    marginals: tuple[np.ndarray, ...]
    joints: Mapping[tuple[int, int], np.ndarray]
    names: tuple[Hashable, ...]
    classes: tuple[Hashable, ...] | None = None
    values: tuple[tuple[Hashable, ...], ...] | None = field(default=None)

    def __post_init__(self) -> None:
        cc = _as_counts(self.class_counts, "class_counts")
        if cc.ndim != 1:
            raise ValueError(f"class_counts must be 1-d (k,), got shape {cc.shape}")
        k = cc.shape[0]
        marginals = tuple(_as_counts(m, f"marginals[{i}]") for i, m in enumerate(self.marginals))
        for i, m in enumerate(marginals):
            if m.ndim != 2 or m.shape[1] != k:
                raise ValueError(f"marginals[{i}] must have shape (r_{i}, k={k}), got {m.shape}")
        names = tuple(self.names)
        n = len(marginals)
        if len(names) != n:
            raise ValueError(f"names has {len(names)} entries but there are {n} marginals")
        if len(set(names)) != n:
            raise ValueError(f"names must be distinct, got {names!r}")
        joints: dict[tuple[int, int], np.ndarray] = {}
        for key, table in self.joints.items():
            i, j = key
            if not (0 <= i < j < n):
                raise ValueError(f"joints keys must be (i, j) with 0 <= i < j < {n}, got {key!r}")
            t = _as_counts(table, f"joints[{i}, {j}]")
            expected = (marginals[i].shape[0], marginals[j].shape[0], k)
            if t.shape != expected:
                raise ValueError(f"joints[{i}, {j}] must have shape {expected}, got {t.shape}")
            joints[int(i), int(j)] = t
        if self.classes is not None and len(self.classes) != k:
            raise ValueError(f"classes has {len(self.classes)} labels but k={k}")
        if self.values is not None:
            if len(self.values) != n:
                raise ValueError(f"values has {len(self.values)} domains but n={n}")
            for i, dom in enumerate(self.values):
                if len(dom) != marginals[i].shape[0]:
                    raise ValueError(f"values[{i}] has {len(dom)} entries, marginal has "
                                     f"{marginals[i].shape[0]} rows")
        object.__setattr__(self, "class_counts", cc)
        object.__setattr__(self, "marginals", marginals)
        object.__setattr__(self, "joints", joints)
        object.__setattr__(self, "names", names)
        if self.classes is not None:
            object.__setattr__(self, "classes", tuple(self.classes))
        if self.values is not None:
            object.__setattr__(self, "values", tuple(tuple(d) for d in self.values))

    @property
    def n_attributes(self) -> int:
        return len(self.names)

    @property
    def n_classes(self) -> int:
        return int(self.class_counts.shape[0])

    def joint(self, i: int, j: int) -> np.ndarray:
        """N_ij(u, v, c) oriented as ``(r_i, r_j, k)`` for any ``i != j``.

        Raises ``KeyError`` when the pair was not counted.
        """
        if i == j:
            raise ValueError(f"a pair needs two different attributes, got i = j = {i}")
        if i < j:
            return self.joints[i, j]
        return self.joints[j, i].transpose(1, 0, 2)

    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[Hashable, Any]],
        labels: Iterable[Hashable],
        names: Sequence[Hashable] | None = None,
    ) -> PairwiseCounts:
        """Count nominal records: the reference implementation of the statistics layer.

        Parameters
        ----------
        records
            One mapping attribute → nominal value per record. A missing key, ``None`` or a float
            NaN is a missing value (as in :mod:`streamnb.stats`): the record is skipped in that
            attribute's marginal and in every joint table involving it (it still counts in
            ``class_counts``).
        labels
            The class of each record (``None`` is not a class).
        names
            Attributes to count, in index order. Default: every key seen, in order of first
            appearance. Keys not in ``names`` are ignored.

        Notes
        -----
        Class labels and each attribute's values are indexed in order of first appearance, so
        the same records always give the same arrays.
        """
        records = list(records)
        labels = list(labels)
        if len(records) != len(labels):
            raise ValueError(f"records and labels differ in length: {len(records)} != "
                             f"{len(labels)}")
        # Encode once to an (m, n) index matrix, -1 marking a missing value, so that every
        # table below is a single bincount over the rows where its attributes were observed.
        names, x, domains = index_records(records, names)
        n, m = len(names), len(records)

        class_index: dict[Hashable, int] = {}
        y = np.empty(m, dtype=np.intp)
        for row, label in enumerate(labels):
            if label is None:
                raise ValueError(f"labels[{row}] is None; every record needs a class")
            y[row] = class_index.setdefault(label, len(class_index))
        k = len(class_index)

        r = [len(d) for d in domains]

        class_counts = np.bincount(y, minlength=k).astype(np.float64)
        marginals = []
        for i in range(n):
            ok = x[:, i] >= 0
            flat = x[ok, i] * k + y[ok]
            marginals.append(np.bincount(flat, minlength=r[i] * k).reshape(r[i], k).astype(float))
        joints = {}
        for i in range(n):
            for j in range(i + 1, n):
                ok = (x[:, i] >= 0) & (x[:, j] >= 0)
                flat = (x[ok, i] * r[j] + x[ok, j]) * k + y[ok]
                size = r[i] * r[j] * k
                joints[i, j] = np.bincount(flat, minlength=size).reshape(r[i], r[j], k).astype(
                    np.float64)
        return cls(class_counts=class_counts, marginals=tuple(marginals), joints=joints,
                   names=tuple(names), classes=tuple(class_index),
                   values=tuple(tuple(d) for d in domains))


def _as_counts(table: Any, what: str) -> np.ndarray:
    arr = np.asarray(table, dtype=np.float64)
    if arr.size and not (np.isfinite(arr).all() and (arr >= 0).all()):
        raise ValueError(f"{what} must hold finite non-negative counts")
    return arr
