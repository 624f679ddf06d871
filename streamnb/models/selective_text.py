"""The tokens of text attributes *outside* a selective network: they enter through the text
attribute's multinomial, renormalised over the tokens outside the network Π::

    Σ_{w ∈ x, w ∉ Π} n_w log θ'_{w,c},
    θ'_{w,c} = (N(w, c) + α) / (N(c) − Σ_{v∈Π} N(v, c) + α (|V| − |Π ∩ V|)),

N(w, c) the draws of w in class c, N(c) the class's draws, α the model's ``alpha``: O(tokens in
the message) per prediction, never O(vocabulary).
"""

from __future__ import annotations

import numpy as np

from streamnb.stats import CountStatistics

__all__ = ["add_text_terms", "text_log_denominators"]


def text_log_denominators(stats: CountStatistics, network_columns: np.ndarray,
                          alpha: float) -> np.ndarray:
    """log of θ'’s denominator, ``(classes, text slots)``; ``network_columns``: the columns of
    the text tokens inside the network."""
    schema = stats.schema
    in_network = np.zeros((stats.n_classes, schema.n_text))
    n_network = np.zeros(schema.n_text)
    if len(network_columns):
        slots = schema.text_slots(network_columns)
        np.add.at(in_network.T, slots, stats.cells(network_columns).T)
        np.add.at(n_network, slots, 1.0)
    vocabulary = np.array([schema.attribute_size(t) for t in schema.text_attributes],
                          dtype=float)
    rest = (np.maximum(stats.draw_counts - in_network, 0.0)
            + float(alpha) * (vocabulary - n_network))
    return np.log(np.maximum(rest, 1e-300))


def add_text_terms(scores: np.ndarray, stats: CountStatistics, log_denominators: np.ndarray,
                   network_columns: np.ndarray, alpha: float, rows: np.ndarray,
                   columns: np.ndarray, counts: np.ndarray) -> None:
    """Add Σ n_w log θ'_{w,c} over the drawn tokens (cells ``rows``, ``columns``, drawn
    ``counts`` times) outside the network to ``scores`` ``(records, classes)``, per record."""
    if len(network_columns):
        at = np.minimum(np.searchsorted(network_columns, columns), len(network_columns) - 1)
        keep = network_columns[at] != columns
        rows, columns, counts = rows[keep], columns[keep], counts[keep]
    if not len(columns):
        return
    slots = stats.schema.text_slots(columns)
    terms = counts * (np.log(stats.cells(columns) + float(alpha))
                      - log_denominators[:, slots])  # (k, cells)
    n = scores.shape[0]
    for c in range(scores.shape[1]):
        scores[:, c] += np.bincount(rows, weights=terms[c], minlength=n)
