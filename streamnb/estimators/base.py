"""Probabilities from counts: the part every estimator shares.

An estimator is a set of Dirichlet pseudo-counts. For attribute ``i`` with value ``v`` in class
``c``::

    θ_{i,v,c} = (N_i(v,c) + a_{i,v}) / (N_i(c) + A_i),   A_i = Σ_v' a_{i,v'}
    α_c      ∝ N(c) + b_c

where ``N_i(c)`` counts the class-c records in which attribute ``i`` was observed (so the
θ_{i,·,c} sum to one under missing values; it is ``N(c)`` when nothing is missing) and the sum
over ``v'`` runs over the attribute's current domain. Subclasses only say what ``a``, ``A`` and
``b`` are; everything is computed in log space here, once.

Zero probabilities (only the maximum-likelihood estimator produces them) are not folded into
``-inf``: each log-probability comes with a count of zero factors, so that a posterior can be
taken as the limit of a vanishing softening (the classes with the fewest zero factors win).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import ClassVar

import numpy as np
from river import base

from streamnb._accel.kernels import token_log_odds, token_odds_rows
from streamnb.stats import CountStatistics

__all__ = ["Estimator", "LogProb"]

LogProb = tuple[np.ndarray, np.ndarray]  # (finite part of log p, number of zero factors)


def _log_with_zeros(values: np.ndarray) -> LogProb:
    if values.size and values.min() > 0.0:  # the common case (pseudo-counts > 0): one pass
        return np.log(values), np.zeros(values.shape, dtype=np.int64)
    zeros = values <= 0.0
    with np.errstate(divide="ignore"):
        logs = np.log(np.where(zeros, 1.0, values))
    return logs, zeros.astype(np.int64)


class Estimator(base.Base):
    """Base class: Dirichlet pseudo-counts → log-probabilities (see module docstring)."""

    name: ClassVar[str] = ""

    # -- what a subclass defines --------------------------------------------------------------
    def class_pseudocounts(self, stats: CountStatistics) -> np.ndarray:
        """``b_c`` for each class."""
        raise NotImplementedError

    def cell_pseudocounts(self, stats: CountStatistics
                          ) -> tuple[np.ndarray | float, np.ndarray | float]:
        """``a`` per column (nominal value or token presence) and, per column, ``a`` of the
        token's absent cell (ignored for nominal columns). Scalars mean "the same everywhere"."""
        raise NotImplementedError

    def attribute_pseudocounts(self, stats: CountStatistics, columns: np.ndarray
                               ) -> np.ndarray:
        """``A_i`` of the attributes of ``columns``."""
        a, a_absent = self.cell_pseudocounts(stats)
        schema = stats.schema
        if np.ndim(a) == 0 and np.ndim(a_absent) == 0:
            # one pseudo-count for every cell: A_i = a·#A_i (a token: a + a_absent), read for
            # these columns only — summing over every column would cost O(vocabulary) a record
            sizes = schema.column_sizes(columns)
            if a == a_absent:
                return a * sizes
            token = (schema.nominal_slots(columns) < 0) & (schema.text_slots(columns) < 0)
            return np.where(token, a + a_absent, a * sizes)
        cols = stats.schema.arrays()
        n_cols = stats.schema.n_columns
        a = np.broadcast_to(np.asarray(a, dtype=np.float64), (n_cols,))
        a_absent = np.broadcast_to(np.asarray(a_absent, dtype=np.float64), (n_cols,))
        per_column = np.where(cols["is_token"], a + a_absent, a)
        totals = np.bincount(cols["attribute"], weights=per_column,
                             minlength=stats.schema.n_attributes)
        return totals[cols["attribute"][columns]]

    # -- shared computations ------------------------------------------------------------------
    def log_class_prior(self, stats: CountStatistics) -> LogProb:
        """log α_c (eq. 16 for the Indifferent estimator)."""
        weights = stats.class_counts + self.class_pseudocounts(stats)
        if weights.min(initial=1.0) > 0.0:
            return np.log(weights) - math.log(weights.sum()), np.zeros(len(weights), np.int64)
        logs, zeros = _log_with_zeros(weights)
        return logs - math.log(weights.sum()), zeros

    def class_terms(self, stats: CountStatistics,
                    cells: tuple[np.ndarray | float, np.ndarray | float] | None = None
                    ) -> tuple[Sequence[float], Sequence[int]]:
        """``log α_c + Σ_t log θ(absent_t | c)`` per class, as plain float sequences (and
        zero-factor counts): what a record's likelihood starts from. Equal to
        ``log_class_prior`` plus ``token_absent_baseline`` up to rounding, in one kernel call for
        the uniform estimators, where a dozen numpy calls on ``k``-arrays would dominate.
        ``cells``: :meth:`cell_pseudocounts` of ``stats`` when the caller has them already."""
        b = self.class_pseudocounts(stats)
        a, a_absent = self.cell_pseudocounts(stats) if cells is None else cells
        if not (b.__class__ is float and a.__class__ is float and a_absent.__class__ is float
                and stats.tokens.exact):
            prior, prior_zeros = self.log_class_prior(stats)
            base, base_zeros = self.token_absent_baseline(stats)
            return (prior + base).tolist(), (prior_zeros + base_zeros).tolist()
        return stats.tokens.class_terms(stats.class_count_buffer, stats.n_classes, b, a,
                                        a_absent, stats.schema.n_tokens,
                                        stats.value_count_buffer)

    def log_theta(self, stats: CountStatistics, columns: np.ndarray) -> LogProb:
        """log θ_{i,v,c} for the cells of ``columns`` (nominal values, present tokens or text
        tokens), as ``(classes, len(columns))`` arrays. A text token's θ is one draw's
        probability, (N_i(w,c) + a) / (N_i(c) + A_i) with N_i(c) the class's draws: the
        multinomial event model, with the vocabulary as the attribute's domain."""
        schema = stats.schema
        a, _ = self.cell_pseudocounts(stats)
        a = a[columns] if np.ndim(a) else a
        A = self.attribute_pseudocounts(stats, columns)
        num = stats.cells(columns) + a
        # the total each cell is a share of: N(c) for a token's presence, the class's observed
        # records of the attribute for a nominal value, its draws for a text token (each kind's
        # lookup only when the schema has that kind: this runs for every record scored)
        totals = stats.class_counts[:, None]
        if schema.n_nominal:
            slot = schema.nominal_slots(columns)
            totals = np.where(slot >= 0, stats.observed_counts[:, np.maximum(slot, 0)], totals)
        if schema.n_text:
            text = schema.text_slots(columns)
            totals = np.where(text >= 0, stats.draw_counts[:, np.maximum(text, 0)], totals)
        return self._ratio(num, totals + A, lambda: schema.column_sizes(columns))

    @staticmethod
    def _ratio(num: np.ndarray, den: np.ndarray, size: Callable[[], np.ndarray]) -> LogProb:
        """log(num/den) and the zero factors, where num, den >= 0."""
        if den.size and den.min() > 0.0 and num.min() > 0.0:  # the common case: no 0 factor
            return np.log(num) - np.log(den), np.zeros(num.shape, dtype=np.int64)
        # A cell whose attribute was never observed in the class (0/0, possible only without
        # pseudo-counts) is uninformative: θ = 1/#A_i.
        undefined = den <= 0.0
        num = np.where(undefined, 1.0, num)
        den = np.where(undefined, size(), den)
        logs, zeros = _log_with_zeros(num)
        return logs - np.log(den), zeros

    def token_absent_baseline(self, stats: CountStatistics) -> LogProb:
        """Σ over every token of log θ(absent | c): the log-likelihood of a message with no
        known token. A message's token part is this plus, for each present token, the
        correction log θ(present | c) − log θ(absent | c). O(vocabulary): the general form
        behind :meth:`class_terms`, which keeps it O(1) in the vocabulary for the uniform
        estimators through the token histogram."""
        tokens = stats.schema.token_columns()
        k = stats.n_classes
        if len(tokens) == 0:
            return np.zeros(k), np.zeros(k, dtype=np.int64)
        _, a_absent = self.cell_pseudocounts(stats)
        N = stats.class_counts
        a_absent = a_absent[tokens] if np.ndim(a_absent) else a_absent
        A = self.attribute_pseudocounts(stats, tokens)
        absent = np.maximum(N[:, None] - stats.cells(tokens), 0.0) + a_absent
        logs, zeros = self._ratio(absent, N[:, None] + A, lambda: np.full(len(tokens), 2.0))
        return logs.sum(axis=1), zeros.sum(axis=1)

    def add_token_log_odds(self, stats: CountStatistics, columns: list[int],
                           finite: np.ndarray, zeros: np.ndarray) -> None:
        """Add Σ over the present token ``columns`` of log θ(present|c) − log θ(absent|c) to
        ``finite`` (and zero-factor counts to ``zeros``), in place: the one-record path."""
        a, a_absent = self.cell_pseudocounts(stats)
        if isinstance(a, float) and isinstance(a_absent, float):
            token_log_odds(stats.value_count_buffer, stats.n_classes, columns,
                           stats.class_count_buffer, a, a_absent, finite, zeros)
            return
        f, z = self.token_corrections(stats, np.asarray(columns, dtype=np.int64))
        np.frombuffer(finite)[:] += f.sum(axis=1)  # buffers of any kind, updated in place
        np.frombuffer(zeros, dtype=np.int64)[:] += z.sum(axis=1)

    def add_token_odds_rows(self, stats: CountStatistics, columns: np.ndarray,
                            rows: np.ndarray, finite: np.ndarray) -> bool:
        """Add to each record's row of ``finite`` (records × classes) Σ over its present token
        cells (``columns``, the cell's record in ``rows``) of log θ(present|c) − log θ(absent|c)
        from the token histogram's table of log(j + a), which :meth:`class_terms` keeps
        reaching every N(c): two table reads a cell instead of two logs. Only with one
        pseudo-count a > 0 on both cells (no zero factor) and integer counts (the histogram's
        ``exact``); False, changing nothing, otherwise (the caller then sums
        :meth:`token_corrections`)."""
        a, a_absent = self.cell_pseudocounts(stats)
        if not (a.__class__ is float and a == a_absent and a > 0.0 and stats.tokens.exact):
            return False
        table = stats.tokens.log_table(a)
        sums = np.empty_like(finite)
        if table is None or not token_odds_rows(stats.value_count_buffer, stats.n_classes,
                                                columns, rows, stats.class_count_buffer,
                                                table, sums):
            return False
        finite += sums
        return True

    def token_corrections(self, stats: CountStatistics, columns: np.ndarray) -> LogProb:
        """log θ(present | c) − log θ(absent | c) for the token ``columns``."""
        a, a_absent = self.cell_pseudocounts(stats)
        a = a[columns] if np.ndim(a) else a
        a_absent = a_absent[columns] if np.ndim(a_absent) else a_absent
        N = stats.class_counts[:, None]
        present = stats.cells(columns)  # a new array, updated in place
        absent = N - present
        np.maximum(absent, 0.0, out=absent)
        absent += a_absent
        present += a
        if np.ndim(a) == np.ndim(a_absent) == 0 and a > 0.0 and a_absent > 0.0:
            # no zero factor possible: a batch's cells in two logs, no temporaries
            np.log(present, out=present)
            present -= np.log(absent, out=absent)
            return present, np.zeros(present.shape, dtype=np.int64)
        lp, zp = _log_with_zeros(present)
        la, za = _log_with_zeros(absent)
        return lp - la, zp - za


class UniformEstimator(Estimator):
    """Every cell gets the same pseudo-count ``a`` (so ``A_i = a·#A_i``)."""

    def _cell(self) -> float:
        raise NotImplementedError

    def cell_pseudocounts(self, stats: CountStatistics) -> tuple[float, float]:
        a = self._cell()
        return a, a
