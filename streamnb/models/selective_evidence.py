"""What a selective network sees of a record: the value index of each of its nodes
(:class:`NetworkEvidence`), from records given as cells (row, column) of a schema's columns.

Node 0 is the class (its column is −1 here: the caller sets it when learning). A nominal
attribute of the network missing from a record, or with a value never learned, is −1 (the
network marginalises it); a token attribute is never missing: absent is value 1, present 0. A
text token selected into the network (key ``-1 - column``) is present when its column is drawn.
"""

from __future__ import annotations

import numpy as np

from streamnb.stats import EncodedBatch, Schema
from streamnb.stats.reservoir import ColumnValues
from streamnb.stats.values import TOKEN

__all__ = ["NetworkEvidence", "batch_cells"]


def batch_cells(batch: EncodedBatch) -> tuple[np.ndarray, np.ndarray]:
    """The (row, column) cells of an encoded batch's discrete values and drawn tokens."""
    return (np.concatenate([batch.nominal_rows, batch.token_rows,
                            batch.text_rows]).astype(np.int64),
            np.concatenate([batch.nominal_columns, batch.token_columns,
                            batch.text_columns]).astype(np.int64))


class NetworkEvidence:
    """The evidence of a network over ``attributes`` (schema indices, or ``-1 - column`` for a
    text token), node i + 1 being ``attributes[i]``.

    Attributes
    ----------
    text_columns
        The text-token nodes' columns, sorted (the tokens inside the network).
    text_nodes
        Their nodes, in the same order.
    """

    def __init__(self, schema: Schema, attributes: list[int]) -> None:
        self.attributes = attributes
        self._default = np.array([-1] + [1 if a < 0 or schema.kinds[a] == TOKEN else -1
                                         for a in attributes], dtype=np.int64)
        text = sorted((-1 - a, node) for node, a in enumerate(attributes, 1) if a < 0)
        self.text_columns = np.array([j for j, _ in text], dtype=np.int64)
        self.text_nodes = np.array([node for _, node in text], dtype=np.int64)
        self._position = np.zeros(0, dtype=np.int64)

    def _positions(self, n_attributes: int) -> np.ndarray:
        """Network node of each schema attribute (0: not in the network)."""
        if len(self._position) < n_attributes:
            position = np.zeros(max(n_attributes, 2 * len(self._position)), dtype=np.int64)
            keys = np.asarray(self.attributes, dtype=np.int64)
            plain = np.flatnonzero(keys >= 0)  # text tokens' nodes: see of_cells
            position[keys[plain]] = plain + 1
            self._position = position
        return self._position

    def of_cells(self, values: ColumnValues, rows: np.ndarray, columns: np.ndarray,
                 n: int) -> np.ndarray:
        """``(n, nodes)`` value indices of the network's nodes in ``n`` records given as cells
        of ``values.schema``'s columns (module docstring)."""
        evidence = np.repeat(self._default[None], n, axis=0)
        if len(columns) and self.attributes:
            node = self._positions(values.schema.n_attributes)[values.attribute()[columns]]
            keep = node > 0
            evidence[rows[keep], node[keep]] = values.rank()[columns[keep]]
            text = self.text_columns
            if len(text):  # a text token of the network: present
                at = np.minimum(np.searchsorted(text, columns), len(text) - 1)
                hit = text[at] == columns
                evidence[rows[hit], self.text_nodes[at[hit]]] = 0
        return evidence
