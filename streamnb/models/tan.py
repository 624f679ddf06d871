"""Tree-augmented naive Bayes whose tree is re-learned from live pairwise counts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from streamnb.estimators import Estimator
from streamnb.models.explanation import Explanation, theorem2_holds
from streamnb.models.pairwise import PairwiseNaiveBayes
from streamnb.models.params import RELEARN_EVERY, OneOf, validate_params
from streamnb.models.schedule import relearn_pieces
from streamnb.stats.codec import from_json_value, to_json_value
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.missing import fill_missing, nominal_modes
from streamnb.stats.pairs import CandidateRows, PairCounts
from streamnb.stats.persist import header_int
from streamnb.stats.values import (
    NUMERIC,
    TEXT,
    TOKEN,
    is_missing,
    token_present,
)
from streamnb.structure import TAN_WEIGHTS, TreeStructure, learn_tan_structure

__all__ = ["MISSING_POLICIES", "TAN"]

#: Missing-value policies of :class:`TAN`.
MISSING_POLICIES = ("skip", "mode")

class _Family:
    """One tree edge's count table N(x, pa, c), shape (r_x, r_pa, k), and its value rows."""

    __slots__ = ("child", "child_rows", "child_values", "parent", "parent_rows", "table")

    def __init__(self, child: int, parent: int, table: np.ndarray, child_values: list,
                 parent_values: list) -> None:
        self.child, self.parent, self.table = child, parent, table
        self.child_values = child_values
        self.child_rows = {v: r for r, v in enumerate(child_values)}
        self.parent_rows = {v: r for r, v in enumerate(parent_values)}


class _EdgeIndex:
    """The tree's attributes and value rows in arrays, so that a record's cells of every edge
    are found with one pass over the attributes the tree involves (not one per edge)."""

    def __init__(self, pairs: PairCounts, families: list[_Family]) -> None:
        schema = pairs.schema
        attributes = list(dict.fromkeys(a for f in families for a in (f.child, f.parent)))
        at = {a: i for i, a in enumerate(attributes)}
        self.child = np.array([at[f.child] for f in families], dtype=np.int64)
        self.parent = np.array([at[f.parent] for f in families], dtype=np.int64)
        # each tree attribute's value row in a record (or a batch): the rows of the families'
        # tables, since both follow PairCounts.value_list
        self.rows = CandidateRows(pairs, attributes)
        # the schema column of each (edge, child row) and whether that row is a token's absence,
        # so that the naive factors θ(x | c) of all edges are read at once
        width = max([len(f.child_rows) for f in families], default=1)
        self.child_columns = np.zeros((len(families), width), dtype=np.int64)
        self.child_absent = np.zeros((len(families), width), dtype=bool)
        for e, f in enumerate(families):
            if pairs.kind(f.child) == TOKEN:
                self.child_columns[e, :2] = pairs.attribute_columns(f.child)[0]
                self.child_absent[e, 1] = True
            else:
                values = schema.nominal_values[schema.slots[f.child]]
                self.child_columns[e, : len(f.child_values)] = [values[v] for v in
                                                                f.child_values]
        self.child_sizes = np.array([len(f.child_rows) for f in families], dtype=float)


class TAN(PairwiseNaiveBayes, state_name="TAN", presets={
        "tan": {}, "tan-ddr": {"weight": "ddr"}, "tan-bayes": {"weight": "bayes"},
        "tan-cmi": {"weight": "cmi", "estimator": "indifferent"}}):
    """TAN: each attribute depends on the class and on at most one other attribute (a tree).

    The model keeps single-attribute counts (its naive Bayes part) and pairwise counts
    N_ij(u, v, c); the tree is a maximum spanning tree of the pairwise weights (by default
    ``weight="bayes"``, the gain in the child's Bayesian-Dirichlet score that a parent brings;
    ``"cmi"``: Friedman's conditional mutual information, eq. 15; ``"ddr"``: Zhang's
    dependence-distribution weight, eq. 17–19), re-learned from the counts every
    ``relearn_every`` records or on :meth:`relearn`, never from stored records. Parameters are
    read from the live counts at prediction time:
    θ(x | pa, c) = (N(x, pa, c) + a) / (N(pa, c) + a·#A_i), with ``a`` the estimator's
    pseudo-count (½ for the default ``"jeffreys"``, the prior the Bayesian score assumes; 1 for
    ``"indifferent"``/``"laplace"``). A missing child is skipped; a missing (or unseen) parent
    value falls back to the naive Bayes factor θ(x | c) — unless ``missing="mode"``.

    Parameters
    ----------
    weight
        ``"bayes"`` (default: the Bayesian-Dirichlet score gain with α = ½ a cell, Weka's
        default TAN), ``"cmi"`` or ``"ddr"`` (see :func:`streamnb.structure.pairwise_weights`).
        The Bayesian gain charges a parent for the cells it adds, so an attribute with many
        values (a numeric one in many intervals, a nominal one with many levels) is not taken
        as a parent on the strength of a few records; CMI never charges, and on the data sets
        of docs/weka.md and docs/attribute-kinds.md loses where values are many and records few.
    estimator
        Estimator of the class prior and the naive Bayes factors (see :class:`NaiveBayes`); it
        must have positive pseudo-counts (not ``"ml"``). Default ``"jeffreys"`` (+½ a cell).
    relearn_every
        Re-learn the tree every this many records (0: only on :meth:`relearn`); while the
        stream is young, also after 1, 2, 4, 8, … records, so that a first tree exists as soon
        as there are counts (after the first ``learn_many`` too).
    drift_detector
        A river drift detector (e.g. ``river.drift.ADWIN()``) fed with the prequential error
        (each record is predicted before it is learned): when it fires, the counts are
        multiplied by ``drift_decay`` and the tree is re-learned.
    max_candidates
        At most this many attributes get a tree parent (pairwise counts grow with its square):
        the first ones seen, then at each relearn the top ones by class information I(X; C).
        The others stay naive (class parent only), which is how a text vocabulary is handled.
        A newly chosen candidate's pair counts start at that relearn.
    root
        Root policy or attribute name (see :func:`streamnb.structure.learn_tan_structure`).
    missing
        ``"skip"`` (default): a missing nominal value (None, NaN or absent) is not counted and
        its factors are left out. ``"mode"``: it is replaced by the attribute's most frequent
        value (:func:`streamnb.stats.missing.nominal_modes`), when learning and when
        predicting, as Weka's ``BayesNet`` does with ``ReplaceMissingValues``. ``learn_one``
        and predictions use the modes of the counts so far; ``learn_many`` the modes of the
        counts plus the batch's observed values (Weka's training-set modes when a whole
        training set is one batch), so under ``"mode"`` a batch and the same records one by
        one can differ where a mode changes within the batch. Skipping keeps the information
        that a value is missing out of the model; filling helps where missing values are
        frequent and the mode is a good guess (the soybean data), and hurts where they are
        rare and informative (Weka's vote: docs/weka.md).
    half_life, drift_decay
        Forgetting, as in :class:`NaiveBayes`.
    nominal, domains, var_smoothing
        As in :class:`NaiveBayes`. A numeric (float) attribute is counted in fine bins fitted
        to its values (:mod:`streamnb.stats.binning`), a nominal attribute of the model.

    Notes
    -----
    A text attribute (a bag of tokens: ``{"tokens": frozenset(words)}``) is used with the text
    event model: its tokens compete for the candidates as binary attributes "w occurs", named
    ``(attribute, token)``, and get tree parents; every other token of a message enters
    through the multinomial renormalised over the non-candidate vocabulary, so a prediction
    costs O(tokens + candidates), with no sum over absent tokens (docs/tan.md, "On the text
    event model"; on text, ``estimator=MEstimate(m=0.1)`` suits the multinomial).

    Attributes
    ----------
    structure : TreeStructure | None
        The current tree (``structure.parents``: attribute → parent, None for the root); None
        until the first relearn (the model is then naive Bayes).
    structure_version : int
        Incremented by every relearn.

    Examples
    --------
    >>> from streamnb import TAN
    >>> model = TAN(relearn_every=0)
    >>> data = [({"a": "x", "b": "x", "c": "u"}, "+"), ({"a": "y", "b": "y", "c": "u"}, "-"),
    ...         ({"a": "x", "b": "x", "c": "w"}, "+"), ({"a": "y", "b": "y", "c": "w"}, "+"),
    ...         ({"a": "x", "b": "y", "c": "u"}, "-")]
    >>> for x, y in data:
    ...     model.learn_one(x, y)
    >>> model.relearn()
    >>> model.structure_version, model.structure.parents
    (1, {'a': 'b', 'b': None, 'c': 'a'})
    >>> round(model.predict_proba_one({"a": "x", "b": "x", "c": "u"})["+"], 4)
    0.8537

    References
    ----------
    N. Friedman, D. Geiger, M. Goldszmidt. Bayesian network classifiers. Machine Learning 1997.
    H. Zhang. Exploring conditions for the optimality of naive Bayes. IJPRAI 2005, eq. 15–19.

    """

    _parameter_constraints: ClassVar[dict[str, list]] = {
        "weight": [OneOf(TAN_WEIGHTS)], "relearn_every": RELEARN_EVERY,
        "missing": [OneOf(MISSING_POLICIES)]}

    def __init__(self, weight: str = "bayes", estimator: str | Estimator = "jeffreys",
                 relearn_every: int = 1000, drift_detector: Any = None,
                 max_candidates: int = 200, root: Any = None, missing: str = "skip",
                 nominal: Iterable | None = None, domains: Mapping | None = None,
                 var_smoothing: float = 1e-9, numeric: str = "mdl",
                 half_life: float | None = None, drift_decay: float = 0.5) -> None:
        super().__init__(estimator=estimator, max_candidates=max_candidates, nominal=nominal,
                         domains=domains, var_smoothing=var_smoothing, numeric=numeric,
                         half_life=half_life, drift_detector=drift_detector,
                         drift_decay=drift_decay)
        self.weight = weight
        self.relearn_every = relearn_every
        self.root = root
        self.missing = missing
        validate_params(self)
        self.structure: TreeStructure | None = None
        self.structure_version = 0
        self._since_relearn = 0
        self._families_key: tuple[Any, int] | None = None
        self._families_schema: tuple[int, int] = (-1, -1)
        self._families_fresh = False
        self._family_list: list[_Family] = []
        self._packed = np.zeros((0, 1, 1, 0))
        self._edge_index = _EdgeIndex(self.pairs, [])

    @classmethod
    def _unit_test_params(cls):
        yield {"relearn_every": 50}
        yield {"relearn_every": 50, "weight": "ddr"}
        yield {"relearn_every": 50, "weight": "bayes", "missing": "mode"}
        from river import drift

        yield {"relearn_every": 0, "drift_detector": drift.ADWIN()}

    # -- learning -------------------------------------------------------------------------------
    def _imputed(self, records: Any, learning: bool = False) -> Any:
        """``records`` (a sequence of mappings or a DataFrame) with missing nominal values
        replaced by their modes under ``missing="mode"``; unchanged otherwise. Modes of the
        counts, plus the records' own values when they are a batch being learned."""
        if self.missing == "skip":
            return records
        if isinstance(records, EncodedBatch):
            raise TypeError("TAN(missing='mode') fills records' gaps before encoding them: "
                            "give it the records, not an EncodedBatch")
        return fill_missing(records, nominal_modes(self.stats, records if learning else ()))

    def _imputed_one(self, x: Mapping) -> Mapping:
        """One record through :meth:`_imputed` (a non-mapping is left to validation)."""
        if self.missing == "skip" or not isinstance(x, Mapping):
            return x
        schema = self.stats.schema
        name = schema.attributes.name
        if not any(is_missing(x.get(name(a))) for a in schema.nominal_attributes):
            return x  # no gap to fill (a record imputed already, say): no modes to count
        return self._imputed([x])[0]

    def learn_one(self, x: Mapping, y: Any) -> None:
        x = self._imputed_one(x)
        self._learn_one(x, y)
        self._count_towards_relearn(1)

    def _learn_one(self, x: Mapping, y: Any) -> None:
        c = self._count_one(x, y)
        if self._coarsening is not None:
            # predictions read the intervals' tables (the coarse model keeps them); the fine
            # bins' are rebuilt from the pairwise counts when something reads them
            self._invalidate_families()
        else:
            self._families_fresh = False
            self._families()
            if not self._families_fresh:  # tables rebuilt just now already hold this record
                edges, u, v = self._edge_cells(x)
                if len(edges):
                    self._packed[edges, u, v, c] += 1.0
        self._learn_coarse_one(x, y)

    def _pieces(self, X: Any, labels: list) -> tuple[Any, list[int]]:
        return self._imputed(X, learning=True), relearn_pieces(
            self._since_relearn, self.relearn_every, self.n_learned, len(labels))

    def learn_many(self, X: Any, y: Any) -> None:
        """Learn a batch: the counts and trees of ``learn_one`` on each record in order (the
        batch is learned in pieces that end where the schedule re-learns the tree); the drift
        detector is not fed."""
        # one piece (models/base.py cuts the batch at the points of _pieces)
        super().learn_many(X, y)
        self._invalidate_families()
        self._recoarsen()
        self._count_towards_relearn(len(y))

    def merge(self, other: TAN) -> TAN:
        """Add the single and pairwise counts ``other`` learned (exact when both track the
        same candidate attributes since their first appearance). The tree is kept: call
        :meth:`relearn` to re-learn it from the merged counts."""
        super().merge(other)
        self._invalidate_families()
        return self

    def _count_towards_relearn(self, n: int) -> None:
        if not self.relearn_every:
            return  # re-learned on demand only (the service's shared models): nothing to count
        self._since_relearn += n
        if self._due(self._since_relearn, self.relearn_every):
            self.relearn()

    def relearn(self) -> None:
        """Re-learn the tree from the current pairwise counts and swap it in (one assignment,
        so a prediction sees either the old tree or the new one); first refresh the candidate
        attributes when there are more than ``max_candidates``."""
        self.refresh_candidates()
        self.rediscretise()
        coarse = self._coarse_now()
        counts = (coarse if coarse is not None else self).pairwise_counts()
        self._since_relearn = 0
        if counts is None:
            return
        structure = learn_tan_structure(counts, weight=self.weight, root=self.root)
        self.structure, self.structure_version = structure, self.structure_version + 1
        if coarse is not None:  # the tree of the intervals' counts is the coarse model's
            coarse.structure, coarse.structure_version = structure, self.structure_version

    def _families(self) -> list[_Family]:
        """The count tables N(x, pa, c) of the tree's edges, kept current by :meth:`learn_one`
        and rebuilt from the pairwise counts when the tree, a domain or the counts as a whole
        (batch learning, merge, forgetting, loading) changed."""
        stats = self.stats
        schema = stats.schema
        key = (stats, self.structure_version)
        if self._families_key == key and self._families_schema != (schema.version,
                                                                    stats.n_classes):
            if self._packed.shape[3] < stats.n_classes:
                self._families_key = None
            elif self._edge_index.rows.stale(schema):
                self._grow_families()
            self._families_schema = (schema.version, stats.n_classes)
        if self._families_key != key:
            self._pack([_Family(self.pairs.key_of(child), self.pairs.key_of(parent),
                                *self.pairs.joint_table(stats, child, parent))
                        for parent, child in (self.structure.edges if self.structure else [])])
            self._families_key = key
            self._families_fresh = True
        return self._family_list

    def _grow_families(self) -> None:
        """The tables with a zero row for each value registered since they were built: a value
        is registered with the first record that has it, which the caller counts into them
        next (so a numeric stream's new bins cost no rebuild from the pairwise counts)."""
        families = []
        for f in self._family_list:
            child_values = self.pairs.value_list(f.child)
            parent_values = self.pairs.value_list(f.parent)
            r, q = f.table.shape[:2]
            if child_values[:r] != list(f.child_rows) or parent_values[:q] != list(
                    f.parent_rows):  # values went (a rejected record's): rebuild instead
                self._families_key = None
                return
            families.append(_Family(f.child, f.parent, f.table, child_values, parent_values))
        self._pack(families)

    def _pack(self, families: list[_Family]) -> None:
        """Hold ``families``' tables in one zero-padded (edges, rows, rows, classes) array,
        each family's table a view into it, so that a record's cells of all edges are read
        and counted at once; a table with fewer rows than its value lists (one to grow) is
        padded with zeros."""
        stats = self.stats
        width = max([max(len(f.child_rows), len(f.parent_rows)) for f in families], default=1)
        self._packed = np.zeros((len(families), width, width, stats.n_classes))
        for e, f in enumerate(families):
            r, q, k = f.table.shape
            self._packed[e, :r, :q, :k] = f.table
            f.table = self._packed[e, :len(f.child_rows), :len(f.parent_rows)]
        self._edge_index = _EdgeIndex(self.pairs, families)
        self._family_list = families
        self._families_schema = (stats.schema.version, stats.n_classes)

    def _invalidate_families(self) -> None:
        self._families_key = None

    def _edge_cells(self, x: Mapping) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The edges whose child and parent are both observed in ``x``, and their cells."""
        index = self._edge_index
        rows = index.rows.record(x)
        u, v = rows[index.child], rows[index.parent]
        edges = np.flatnonzero((u >= 0) & (v >= 0))
        return edges, u[edges], v[edges]

    def _edge_terms(self, edges: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """log dd^c(x | pa) = log θ(x | pa, c) − log θ(x | c) of the cells (edge, child row u,
        parent row v), per class: ``(len(edges), k)``. The one formula of the tree's terms, for
        one record and for batches alike."""
        stats, est, index = self.stats, self._estimator, self._edge_index
        k = stats.n_classes
        a_cell, _ = est.cell_pseudocounts(stats)
        packed = self._packed[:, :, :, :k]
        parent_totals = packed.sum(axis=1)  # N(pa, c) over the records where x was observed
        with np.errstate(divide="ignore"):
            conditional = (np.log(packed[edges, u, v] + a_cell)
                           - np.log(parent_totals[edges, v]
                                    + a_cell * index.child_sizes[edges][:, None]))
        # θ(x | c) for every (edge, child row) the cells use, read once per distinct cell
        cells, inverse = np.unique(edges * index.child_columns.shape[1] + u,
                                   return_inverse=True)
        columns = index.child_columns.ravel()[cells]
        absent = index.child_absent.ravel()[cells]
        naive = self._candidate_log_theta(columns, absent)  # (k, cells): θ(x | c)
        return conditional - naive.T[inverse.ravel()]

    def _edge_log_dd(self, x: Mapping) -> list[tuple[int, np.ndarray]]:
        """log dd^c(x_i | x_pa) for the edges whose child and parent are both observed in
        ``x``: (child attribute, per-class array)."""
        families = self._families()
        if not families:
            return []
        edges, u, v = self._edge_cells(x)
        if not len(edges):
            return []
        log_dd = self._edge_terms(edges, u, v)
        return [(families[e].child, d) for e, d in zip(edges.tolist(), log_dd, strict=True)]

    def explain_one(self, x: Mapping) -> Explanation:
        """Zhang's diagnostics for one record: naive contributions, ddr(x_i), DF(E), f_nb, f_b
        and Theorem 2 (see :mod:`streamnb.models.explanation`)."""
        if not self.stats.n_classes:
            raise ValueError("the model has not learned any class yet")
        x = self._imputed_one(x)
        naive = np.frombuffer(super()._fine_log_likelihood_one(x)[0]).copy()
        labels = self.stats.labels.values
        log_dd = {self.pairs.name_of(child): d for child, d in self._edge_log_dd(x)}
        tree = naive + sum(log_dd.values(), np.zeros(len(labels)))
        best, naive_best = int(np.argmax(tree)), int(np.argmax(naive))
        if len(labels) == 2:  # the paper's fixed orientation: f = P(+|E)/P(−|E)
            positive, negative = 0, 1
        else:  # the decision against its strongest rival
            positive = best
            negative = int(np.argmax(np.where(np.arange(len(labels)) == best, -np.inf, tree)))
        contributions = self._naive_contributions(x, positive, negative)
        log_df = float(sum(d[positive] - d[negative] for d in log_dd.values()))
        pairs = [(best, c) for c in range(len(labels)) if c != best]
        theorem2 = all(
            theorem2_holds(float(tree[p] - tree[q]), float(sum(d[p] - d[q]
                                                               for d in log_dd.values())))
            for p, q in ([(positive, negative)] if len(labels) == 2 else pairs))
        return Explanation(
            classes=list(labels), anb_decision=labels[best], nb_decision=labels[naive_best],
            positive=labels[positive], negative=labels[negative], naive_log_odds=contributions,
            log_ddr={name: float(d[positive] - d[negative]) for name, d in log_dd.items()},
            log_df=log_df, log_f_nb=float(naive[positive] - naive[negative]),
            log_f_b=float(tree[positive] - tree[negative]), theorem2=theorem2,
            flipped=naive_best != best)

    def _naive_contributions(self, x: Mapping, positive: int, negative: int) -> dict:
        """log p(x_i|positive) − log p(x_i|negative) for the attributes present in x, and the
        rest of log f_nb (class prior, absent tokens, numeric attributes) under "(rest)"."""
        schema, stats = self.stats.schema, self.stats
        out = {}
        for name, value in x.items():
            a = schema.attributes.get(name)
            if a is None or schema.kinds[a] in (NUMERIC, TEXT):  # text: in "(rest)"
                continue
            if schema.kinds[a] == TOKEN:
                if not token_present(value, "record", name):
                    continue
                logs = self._naive_log_theta(a, [True, False])[0]
            else:
                column = schema.nominal_values[schema.slots[a]].get(
                    schema.stored_value(a, value, "record", name))
                if column is None:
                    continue
                logs = self._estimator.log_theta(stats, np.array([column]))[0][:, 0]
            out[name] = float(logs[positive] - logs[negative])
        naive = np.frombuffer(super()._fine_log_likelihood_one(x)[0])
        out["(rest)"] = float(naive[positive] - naive[negative]) - sum(out.values())
        return out

    def _fine_log_likelihood_one(self, x: Mapping):
        x = self._imputed_one(x)
        scores = super()._fine_log_likelihood_one(x)
        if scores is not None:
            finite = np.frombuffer(scores[0])
            for _, log_dd in self._edge_log_dd(x):
                finite += log_dd
        return scores

    def _fine_joint_log_likelihood(self, records: Any, where: str
                                   ) -> tuple[np.ndarray, np.ndarray]:
        return super()._fine_joint_log_likelihood(self._imputed(records), where)

    def _add_batch_terms(self, batch: Any, finite: np.ndarray) -> None:
        """The tree's log dd terms for a whole encoded batch: every (record, edge) cell at
        once through :meth:`_edge_terms`."""
        super()._add_batch_terms(batch, finite)
        families = self._families()
        if not families:
            return
        index, n = self._edge_index, batch.n
        rows = index.rows.batch(batch)
        u, v = rows[index.child], rows[index.parent]  # (edges, records)
        edges, records = np.nonzero((u >= 0) & (v >= 0))
        if len(edges):
            terms = self._edge_terms(edges, u[edges, records], v[edges, records])
            for c in range(terms.shape[1]):
                finite[:, c] += np.bincount(records, weights=terms[:, c], minlength=n)

    # -- persistence ---------------------------------------------------------------------------
    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta, arrays = super()._extra_state()
        tree = None
        if self.structure is not None:
            s = self.structure
            tree = to_json_value({"parents": s.parents, "edges": s.edges, "root": s.root,
                                  "names": s.names, "weight_kind": s.weight_kind,
                                  "total_weight": s.total_weight})
            arrays = {**arrays, "tree_weights": np.asarray(s.weights, dtype=np.float64)}
        return ({**meta, "structure": tree, "structure_version": self.structure_version,
                 "since_relearn": self._since_relearn}, arrays)

    def decay(self, factor: float) -> None:
        super().decay(factor)
        self._invalidate_families()

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        super()._restore_extra(meta, arrays)
        self.structure_version = header_int(meta["structure_version"], "structure_version")
        self._since_relearn = header_int(meta["since_relearn"], "since_relearn")
        if meta["structure"] is not None:
            tree = from_json_value(meta["structure"])
            self.structure = TreeStructure(
                parents=tree["parents"], edges=tuple(tuple(e) for e in tree["edges"]),
                root=tree["root"], names=tuple(tree["names"]), weight_kind=tree["weight_kind"],
                total_weight=float(tree["total_weight"]), weights=arrays["tree_weights"])
