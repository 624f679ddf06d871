"""The family tables of a selective network (:class:`FamilyTables`): N(pa(X), X) for the class
and each selected attribute X, node i's family being its parents then i, counted over the
records where the whole family is observed. Where a table starts from (exact counts or the
reservoir) is the model's choice; from then on every learned record adds to them exactly, so
the parameters read from them are current between relearns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from streamnb.structure import DiscreteNetwork

__all__ = ["FamilyTables"]


class FamilyTables:
    """One count table per node, axes ``(*parents, node)``; ``parents[i]`` are node positions
    (0: the class)."""

    def __init__(self, parents: list[tuple[int, ...]], tables: list[np.ndarray]) -> None:
        self.parents = parents
        self.tables = tables
        self._nodes = [np.array(self.family(i), dtype=np.int64) for i in range(len(parents))]

    def family(self, i: int) -> tuple[int, ...]:
        """Node i's family: its parents, then i."""
        return (*self.parents[i], i)

    def grow(self, sizes: Sequence[int]) -> bool:
        """Zero-pad the tables to the nodes' current ``sizes`` (a class or a value that
        appeared had no records, exactly); whether any table grew."""
        grew = False
        for i, table in enumerate(self.tables):
            shape = tuple(sizes[v] for v in self.family(i))
            if shape != table.shape:
                grown = np.zeros(shape)
                grown[tuple(slice(0, s) for s in table.shape)] = table
                self.tables[i] = grown
                grew = True
        return grew

    def add_one(self, evidence: np.ndarray) -> list[tuple[int, tuple[int, ...]]]:
        """Count one record (its value index per node, −1 missing) into every family it
        observes; the ``(node, parent values)`` rows that changed."""
        changed = []
        for i, table in enumerate(self.tables):
            cell = evidence[self._nodes[i]]
            if (cell >= 0).all():
                table[tuple(cell)] += 1.0
                changed.append((i, tuple(cell[:-1])))
        return changed

    def add_batch(self, evidence: np.ndarray) -> None:
        """Count ``(records, nodes)`` evidence, as :meth:`add_one` on each row."""
        for i, table in enumerate(self.tables):
            cells = evidence[:, self._nodes[i]]
            cells = cells[(cells >= 0).all(axis=1)]
            flat = np.ravel_multi_index(tuple(cells.T), table.shape)
            table += np.bincount(flat, minlength=table.size).reshape(table.shape)

    def scale(self, factor: float) -> None:
        """Forget exponentially: every count × ``factor``."""
        for table in self.tables:
            table *= factor

    def network(self, sizes: Sequence[int], alpha: float) -> DiscreteNetwork:
        """The network with log-CPTs read from the tables (Dirichlet(α) posterior means)."""
        return DiscreteNetwork(self.parents, list(sizes),
                               [DiscreteNetwork.log_cpt(t, alpha) for t in self.tables],
                               class_node=0)
