"""Info-AS attribute selection (Singh & Provan 1995, §4; docs/science.md §3): weighted records in
(:class:`~.discrete_data.DiscreteData`), the selected attributes out (:class:`Selection`, also the
outcome of the wrappers' selections).

Each step builds, with the index tree (:mod:`.index_tree`), the class × A × instantiation-of-Π
table of every candidate A and adds the one with the largest metric (:mod:`.conditional_metrics`:
CIG, CGR or CDC), optionally only while a G-test finds it dependent on the class given Π.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from streamnb.structure.conditional_metrics import (
    METRICS,
    conditional_independence_test,
    metric_of_tables,
)
from streamnb.structure.discrete_data import DiscreteData
from streamnb.structure.index_tree import IndexTree

__all__ = ["Selection", "info_as"]

MetricName = Literal["cig", "cgr", "cdc"]


@dataclass(frozen=True)
class Selection:
    """The outcome of a forward attribute selection.

    Attributes
    ----------
    selected
        Attribute names in the order they were added.
    indices
        Their column indices in the data.
    scores
        The criterion of each when it was added (the metric for Info-AS, the subset-eval
        accuracy for the wrappers).
    p_values
        The G-test p-value of each added attribute (Info-AS with a ``significance``), else None.
    method
        ``"info-as/cgr"``, ``"naive-as"``, ...
    stop
        Why the selection stopped.
    """

    selected: tuple[Hashable, ...]
    indices: tuple[int, ...]
    scores: tuple[float, ...]
    p_values: tuple[float, ...] | None
    method: str
    stop: str


def info_as(data: DiscreteData, metric: MetricName = "cgr", significance: float | None = None,
            max_selected: int | None = None, candidates: Sequence[int] | None = None
            ) -> Selection:
    """Info-AS's node-selection phase: forward selection by an information metric (§4.2).

    Start with Π = ∅; at each step compute IM(Π; A) for every candidate A not yet selected
    (one index-tree table each) and add the argmax (ties: the lowest index) while the maximum is
    > 0. Cost O(m r n² (r + n)) for m records, n attributes, r values (§4.3).

    The paper's future work (§6): as Π grows its instantiations thin out and the metric becomes
    unreliable. With ``significance`` set, the argmax is added only if the G-test rejects
    C ⊥ A | Π at that level (:func:`conditional_independence_test`, with the records' effective
    size), and the selection stops at the first one that does not.

    Parameters
    ----------
    data
        The records.
    metric
        ``"cig"``, ``"cgr"`` or ``"cdc"`` (Definitions 4.1–4.3).
    significance
        Level of the χ² stopping test, in (0, 1); None for the paper's rule (> 0) alone.
    max_selected
        Stop after this many attributes (None: no limit).
    candidates
        Column indices that may be selected (default: all).

    Returns
    -------
    Selection

    Examples
    --------
    >>> records = [{"a": a, "b": b, "noise": n} for a, b, n in
    ...            [("x", "u", 1), ("x", "w", 2), ("y", "u", 1), ("y", "w", 2)] * 5]
    >>> labels = ["+" if r["a"] == "x" else "-" for r in records]
    >>> info_as(DiscreteData.from_records(records, labels)).selected
    ('a',)

    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {sorted(METRICS)}, got {metric!r}")
    if significance is not None and not (isinstance(significance, float | int)
                                         and 0 < significance < 1):
        raise ValueError(f"significance must be in (0, 1) or None, got {significance!r}")
    if max_selected is not None and not (isinstance(max_selected, int) and max_selected >= 0):
        raise ValueError(f"max_selected must be a non-negative int or None, got "
                         f"{max_selected!r}")
    remaining = list(range(data.n_attributes) if candidates is None else candidates)
    for c in remaining:
        if not 0 <= c < data.n_attributes:
            raise ValueError(f"candidate {c} is not a column of the data "
                             f"({data.n_attributes} attributes)")
    y, k, w = data.classes, data.n_classes, data.weights
    tree = IndexTree(data.n_records)
    chosen: list[int] = []
    scores: list[float] = []
    p_values: list[float] = []
    stop = "no candidate left"
    while remaining:
        if max_selected is not None and len(chosen) >= max_selected:
            stop = "max_selected reached"
            break
        values = _candidate_metrics(tree, data, remaining, metric)
        at = int(np.argmax(values))  # the first maximum: ties keep the earlier candidate
        if not values[at] > 0:
            stop = "no candidate has a positive metric"
            break
        best, best_value = remaining[at], float(values[at])
        if significance is not None:
            table = tree.table(y, k, data.values[:, best], int(data.cardinalities[best]), w)
            observed = (tree.leaf >= 0) & (data.values[:, best] >= 0)
            _, _, p = conditional_independence_test(table, data.effective_size(observed))
            if not p < significance:
                stop = f"G-test not significant at {significance} (p = {p:.3g})"
                break
            p_values.append(p)
        chosen.append(best)
        scores.append(best_value)
        remaining.remove(best)
        tree = tree.extend(data.values[:, best], int(data.cardinalities[best]))
    return Selection(tuple(data.names[a] for a in chosen), tuple(chosen), tuple(scores),
                     tuple(p_values) if significance is not None else None,
                     f"info-as/{metric}", stop)


#: Cells of the stacked candidate tables built at once (bounds Info-AS's working memory).
_CELLS_PER_PASS = 1 << 22


def _candidate_metrics(tree: IndexTree, data: DiscreteData, candidates: list[int],
                       metric: str) -> np.ndarray:
    """IM(Π; A) of every candidate A, candidates of one cardinality stacked into one table."""
    out = np.zeros(len(candidates))
    k = data.n_classes
    by_size: dict[int, list[int]] = {}
    for i, a in enumerate(candidates):
        by_size.setdefault(int(data.cardinalities[a]), []).append(i)
    for r, positions in by_size.items():
        per_pass = max(_CELLS_PER_PASS // max(tree.n_leaves * k * r, 1), 1)
        for lo in range(0, len(positions), per_pass):
            part = positions[lo: lo + per_pass]
            columns = data.values[:, [candidates[i] for i in part]]
            tables = tree.tables(data.classes, k, columns, r, data.weights)
            out[part] = metric_of_tables(metric, tables)
    return out
