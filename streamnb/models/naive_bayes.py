"""Naive Bayes on count statistics, with any estimator of :mod:`streamnb.estimators`."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from streamnb._accel.kernels import score_tokens
from streamnb.estimators import Estimator, make_estimator
from streamnb.models.base import CountClassifier
from streamnb.models.coarse import IntervalReading
from streamnb.models.params import NUMERIC_READING, RELEARN_EVERY, VAR_SMOOTHING, validate_params
from streamnb.models.schedule import relearn_due, relearn_pieces
from streamnb.stats.encoder import encode, encode_batch
from streamnb.stats.frames import n_rows
from streamnb.stats.persist import header_int

#: the fine grid's bound under ``numeric="mdl"``: naive Bayes keeps per-class counts of the
#: bins and no pair tables, so eight times the network classifiers' bound costs little, and the
#: MDL cuts it allows fall close to the cuts between distinct values (a few far values stretch
#: a coarser grid's bins over the bulk of an attribute)
MDL_FINE_BINS = 1024

__all__ = ["NaiveBayes"]

_LOG_2PI = float(np.log(2 * np.pi))


class NaiveBayes(IntervalReading, CountClassifier, state_name="NaiveBayes", presets={
        "ml": {"estimator": "ml"}, "laplace": {"estimator": "laplace"},
        "m-estimate": {"estimator": "m-estimate"}, "bibl": {"estimator": "bibl"},
        "laplace-bins": {"estimator": "laplace", "numeric": "bins"},
        "laplace-mdl": {"estimator": "laplace", "numeric": "mdl"}}):
    """Naive Bayes whose parameters are read from live counts at prediction time.

    P(c | x) ∝ α_c · Π_i θ_{i,x_i,c}: nominal attributes through their value counts, binary
    token attributes (a message's words: ``{token: True}`` or counts from river's
    ``BagOfWords``) through presence/absence counts, numeric (float) attributes through
    per-class Gaussian moments, or (``numeric="bins"``) through the counts of fine bins, or
    (``numeric="mdl"``) through MDL intervals of those bins. Missing values are skipped (exact
    for naive Bayes).

    Token prediction costs O(tokens in the message + classes), not O(vocabulary): the
    per-class log-likelihood of "every token absent" is computed once per model state and each
    present token adds log θ(present | c) − log θ(absent | c).

    Parameters
    ----------
    estimator
        ``"ml"`` (frequencies, MAPNB), ``"laplace"``, ``"m-estimate"``, ``"bibl"`` (Dirichlet),
        ``"indifferent"`` (eq. 16–17 of Cerquides & López de Màntaras), or an
        :class:`~streamnb.estimators.Estimator` instance such as ``MEstimate(m=2)``.
    nominal
        Attributes that are nominal whatever their values' type (e.g. integer category codes,
        which would otherwise be read as token counts).
    domains
        Declared value domains of nominal attributes, ``{attribute: [values]}``; they fix
        ``#A_i`` from the first record on.
    var_smoothing
        Fraction of the largest numeric variance added to every variance (as scikit-learn's
        GaussianNB), so that constant attributes do not give infinite densities.
    numeric
        How a float attribute is read: ``"gaussian"`` (per-class mean and variance),
        ``"bins"`` (a nominal attribute of fine bins, at most ``FINE_BINS`` aligned bins of
        width 2^e fitted to the attribute's values, as TAN and AODE count it:
        :mod:`streamnb.stats.binning`), which follows any
        shape of distribution, or ``"mdl"`` (the counts of those bins read in the
        Fayyad–Irani MDL intervals chosen from them, as TAN and AODE read them:
        :mod:`streamnb.models.coarse`; Weka's ``NaiveBayes -D``), on a grid of at most
        ``MDL_FINE_BINS`` bins. Only models of the same reading merge.
    relearn_every
        Under ``numeric="mdl"``: re-choose the intervals from the counts every this many
        records, and after 1, 2, 4, … records while the stream is young (0: only on
        :meth:`relearn`). Other readings have no intervals and ignore it.
    half_life, drift_detector, drift_decay
        Forgetting, as every model takes it (``CountClassifier._adapt``,
        docs/recipes/forgetting.md): counts halve every ``half_life`` learned records (None:
        never), as the service's ``--half-life``; a river drift detector fed the prequential
        error of ``learn_one``, at whose drift the counts are multiplied by ``drift_decay``.

    Attributes
    ----------
    stats : streamnb.stats.CountStatistics
        The model's whole state.
    classes : list
        Labels seen so far.

    Examples
    --------
    >>> from streamnb import NaiveBayes
    >>> model = NaiveBayes(estimator="laplace")
    >>> for x, y in [({"free": True, "money": True}, "spam"), ({"meeting": True}, "ham"),
    ...              ({"free": True, "meeting": True}, "ham")]:
    ...     model.learn_one(x, y)
    >>> p = model.predict_proba_one({"money": True})
    >>> round(p["spam"], 4), model.predict_one({"money": True})
    (0.7596, 'spam')

    The same with a batch:

    >>> import pandas as pd
    >>> batch = NaiveBayes(estimator="laplace")
    >>> batch.learn_many(pd.DataFrame([{"free": 1, "money": 1, "meeting": 0},
    ...                                {"free": 0, "money": 0, "meeting": 1},
    ...                                {"free": 1, "money": 0, "meeting": 1}]),
    ...                  pd.Series(["spam", "ham", "ham"]))
    >>> batch.predict_proba_many([{"money": True}]).round(4)
       spam  ham
    0  0.7596  0.2404

    References
    ----------
    J. Cerquides and R. López de Màntaras. The Indifferent Naive Bayes Classifier. FLAIRS 2003.

    """

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "var_smoothing": VAR_SMOOTHING, "numeric": NUMERIC_READING,
        "relearn_every": RELEARN_EVERY}

    def __init__(self, estimator: str | Estimator = "laplace", nominal: Iterable | None = None,
                 domains: Mapping | None = None, var_smoothing: float = 1e-9,
                 numeric: str = "gaussian", half_life: float | None = None,
                 drift_detector: Any = None, drift_decay: float = 0.5,
                 relearn_every: int = 1000) -> None:
        self.estimator = estimator
        self.var_smoothing = var_smoothing
        self.numeric = numeric
        self.relearn_every = relearn_every
        validate_params(self)  # the schema is built from ``numeric``
        self._numeric = numeric == "gaussian"
        if numeric == "mdl":
            self._fine_bins = MDL_FINE_BINS
        super().__init__(nominal=nominal, domains=domains, half_life=half_life,
                         drift_detector=drift_detector, drift_decay=drift_decay)
        self._estimator = make_estimator(estimator)
        self._since_relearn = 0

    @classmethod
    def _unit_test_params(cls):
        yield {"estimator": "laplace"}
        yield {"estimator": "indifferent"}
        yield {"estimator": "ml"}
        yield {"estimator": "laplace", "numeric": "bins"}
        yield {"estimator": "laplace", "numeric": "mdl", "relearn_every": 20}

    # -- learning (the schedule of the intervals, numeric="mdl") --------------------------------
    def learn_one(self, x: Mapping, y: Any) -> None:
        super().learn_one(x, y)
        self._learn_coarse_one(x, y)
        self._count_towards_relearn(1)

    def _pieces(self, X: Any, labels: list) -> tuple[Any, Sequence[int]]:
        if self.numeric != "mdl":
            return X, ()
        return X, relearn_pieces(self._since_relearn, self.relearn_every, self.n_learned,
                                 len(labels))

    def learn_many(self, X: Any, y: Any) -> None:
        """Learn a batch: the counts (and intervals) of ``learn_one`` on each record in order."""
        # one piece (models/base.py cuts the batch at the points of _pieces)
        super().learn_many(X, y)
        self._recoarsen()
        self._count_towards_relearn(n_rows(X))

    def _count_towards_relearn(self, n: int) -> None:
        if self.numeric != "mdl" or not self.relearn_every:
            return
        self._since_relearn += n
        if relearn_due(self._since_relearn, self.relearn_every, self.n_learned):
            self.relearn()

    def relearn(self) -> None:
        """Re-choose the float attributes' MDL intervals from the counts now (what the
        ``relearn_every`` schedule does; nothing but under ``numeric="mdl"``)."""
        self._since_relearn = 0
        self.rediscretise()

    def decay(self, factor: float) -> None:
        super().decay(factor)
        self._recoarsen()

    def merge(self, other: NaiveBayes) -> NaiveBayes:
        """Add the statistics ``other`` learned (e.g. on another shard); in MDL intervals the
        interval counts are derived again from the summed bins', in this model's intervals.
        Returns ``self``."""
        super().merge(other)
        self._recoarsen()
        return self

    # -- parameters that depend on the state only: computed once per state version ------------
    def _state_terms(self) -> dict[str, np.ndarray]:
        """The numeric attributes' Gaussians, computed once per state version."""
        stats = self.stats
        return self._cache.get("gaussians", (stats, stats.version),
                               lambda: self._gaussians() if stats.schema.n_numeric else {})

    def _gaussians(self) -> dict[str, np.ndarray]:
        m = self.stats.moments
        var = m.variance()
        w = m.weight.sum(axis=0)
        pooled_mean = (m.weight * m.mean).sum(axis=0) / np.where(w > 0, w, 1.0)
        pooled_var = ((m.m2 + m.weight * (m.mean - pooled_mean) ** 2).sum(axis=0)
                      / np.where(w > 0, w, 1.0))
        # A class that never observed an attribute falls back to the pooled Gaussian, which
        # keeps the attribute's factor comparable across classes instead of dropping it.
        unseen = m.weight <= 0
        mean = np.where(unseen, pooled_mean, m.mean)
        var = np.where(unseen, pooled_var, var)
        floor = self.var_smoothing * max(float(pooled_var.max(initial=0.0)), 1.0)
        var = var + max(floor, 1e-300)
        return {"mean": mean, "var": var, "observed": w > 0}

    def _current_class_terms(self) -> tuple[Any, Any, Any, Any, np.ndarray, np.ndarray]:
        """The estimator's class terms and pseudo-counts, and the count buffers the kernels
        read (``value_count_buffer``, ``class_count_buffer``: replaced only by a mutation,
        which makes a new version), once per state version."""
        stats = self.stats
        return self._cache.get("class_terms", (stats, stats.version), self._class_terms)

    def _class_terms(self) -> tuple[Any, Any, Any, Any, np.ndarray, np.ndarray]:
        stats = self.stats
        cells = self._estimator.cell_pseudocounts(stats)
        finite, zeros = self._estimator.class_terms(stats, cells)
        if finite.__class__ is not array:
            finite, zeros = array("d", finite), array("q", zeros)
        return (finite, zeros, *cells, stats.value_count_buffer, stats.class_count_buffer)

    def _fine_log_likelihood_one(self, x: Mapping) -> tuple[array, array] | None:
        """Finite part and zero-factor counts of log P(x, c) per class (None before any class).

        Same numbers as the batch path up to rounding, without its dozen numpy calls, which
        dominate at ~20 tokens: the present tokens are encoded and scored in one kernel call.
        """
        if type(x) is not dict or not x:
            self._check_record(x, "record to predict")
        stats = self.stats
        labels = stats.labels.values
        if not labels:
            return None
        base, base_zeros, a, a_absent, values, classes = self._cache.get(  # inline: hot path
            "class_terms", (stats, stats.version), self._class_terms)
        finite, zeros = base[:], base_zeros[:]  # copies: the kernel adds into them
        schema = stats.schema
        if type(x) is dict and a.__class__ is float and a_absent.__class__ is float:
            rest = score_tokens(x, schema.attributes, values, len(labels), classes, a, a_absent,
                                finite, zeros)
            if not rest:
                return finite, zeros
            enc = encode(schema, x, "record to predict", False, fields=rest)
        else:
            enc = encode(schema, x, "record to predict", grow=False)
        if enc.token_columns:
            self._estimator.add_token_log_odds(stats, enc.token_columns, finite, zeros)
        f_view = np.frombuffer(finite)
        z_view = np.frombuffer(zeros, dtype=np.int64)
        if enc.nominal_columns:
            f, z = self._estimator.log_theta(stats, np.asarray(enc.nominal_columns))
            f_view += f.sum(axis=1)
            z_view += z.sum(axis=1)
        if enc.text_columns:
            f, z = self._text_log_theta(np.asarray(enc.text_columns),
                                        np.asarray(enc.text_counts))
            f_view += f.sum(axis=1)
            z_view += z.sum(axis=1)
        if enc.numeric_slots:
            f = self._gaussian_log_pdf(self._state_terms(), np.asarray(enc.numeric_slots),
                                       np.asarray(enc.numeric_values))
            f_view += f.sum(axis=1)
        return finite, zeros

    @staticmethod
    def _gaussian_log_pdf(terms: dict[str, np.ndarray], slots: np.ndarray, values: np.ndarray
                          ) -> np.ndarray:
        keep = terms["observed"][slots]
        slots, values = slots[keep], values[keep]
        mean, var = terms["mean"][:, slots], terms["var"][:, slots]
        return -0.5 * (_LOG_2PI + np.log(var) + (values - mean) ** 2 / var)

    def _fine_joint_log_likelihood(self, records: Sequence[Mapping], where: str
                                   ) -> tuple[np.ndarray, np.ndarray]:
        stats, est = self.stats, self._estimator
        terms = self._state_terms()
        k, n = stats.n_classes, n_rows(records)  # a DataFrame, sparse matrix or mappings
        base, base_zeros, *_ = self._current_class_terms()  # the one-record path's, too
        finite = np.empty((n, k))
        finite[:] = np.frombuffer(base)
        zeros = np.empty((n, k), dtype=np.int64)
        zeros[:] = np.frombuffer(base_zeros, dtype=np.int64)
        batch = encode_batch(stats.schema, records, where, grow=False)
        self._add_batch_terms(batch, finite)
        # a batch's token cells: from the log table when the estimator can, else their logs
        tokens = batch.token_rows if len(batch.token_rows) and not est.add_token_odds_rows(
            stats, batch.token_columns, batch.token_rows, finite) else batch.token_rows[:0]
        parts = (
            (tokens, lambda: est.token_corrections(stats, batch.token_columns)),
            (batch.nominal_rows, lambda: self._nominal_log_theta(batch.nominal_columns)),
            (batch.text_rows, lambda: self._text_log_theta(batch.text_columns,
                                                           batch.text_counts)),
            (batch.numeric_rows[terms["observed"][batch.numeric_slots]]
             if len(batch.numeric_slots) else batch.numeric_rows,
             lambda: (self._gaussian_log_pdf(terms, batch.numeric_slots, batch.numeric_values),
                      None)),
        )
        for rows, compute in parts:
            if not len(rows):
                continue
            f, z = compute()
            for c in range(k):
                finite[:, c] += np.bincount(rows, weights=f[c], minlength=n)
                if z is not None and z.any():
                    zeros[:, c] += np.bincount(rows, weights=z[c], minlength=n).astype(np.int64)
        return finite, zeros

    def _nominal_log_theta(self, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log θ of a batch's nominal cells. A batch of more cells than the schema has nominal
        values reads them from a table of every nominal value, computed once per state version
        (a DataFrame of 20,000 records × 20 attributes has 400,000 cells and 60 values)."""
        stats = self.stats
        if len(columns) < 4 * sum(len(v) for v in stats.schema.nominal_values):
            return self._estimator.log_theta(stats, columns)
        values, f, z = self._cache.get("nominal_theta", (stats, stats.version),
                                       self._nominal_table)
        at = np.searchsorted(values, columns)
        return f[:, at], z[:, at]

    def _nominal_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        values = np.sort(np.fromiter((j for columns in self.stats.schema.nominal_values
                                      for j in columns.values()), dtype=np.int64))
        return (values, *self._estimator.log_theta(self.stats, values))

    def _text_log_theta(self, columns: np.ndarray, counts: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray]:
        """n_w · log θ_{w,c} for text tokens drawn ``counts`` times (multinomial event model);
        a zero θ (ML) counts once per draw."""
        f, z = self._estimator.log_theta(self.stats, columns)
        return f * counts, z * np.ceil(counts).astype(np.int64)

    def _add_batch_terms(self, batch: Any, finite: np.ndarray) -> None:
        """Hook for models that add terms to a batch's log-likelihoods (TAN's tree)."""

    def _coarse_extra(self, coarse_stats: Any, to: np.ndarray
                      ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return {}, {}  # naive Bayes keeps nothing beyond the counts

    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        if self.numeric != "mdl":
            return {}, {}
        return {"coarse_cuts": self._intervals_state(), "since_relearn": self._since_relearn}, {}

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        self._restore_intervals(meta)
        self._since_relearn = header_int(meta.get("since_relearn", 0), "since_relearn")

