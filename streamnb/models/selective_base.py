"""Shared mechanics of the selective Bayesian network classifiers (Singh & Provan 1995).

State, all of it mergeable, decayable and saved with the model:

- ``stats``: the naive Bayes counts N(c), N_i(v, c) of every attribute (exact, whole stream);
- ``reservoir``: a bounded priority sample of recent encoded records
  (:class:`~streamnb.stats.Reservoir`), from which the selection metrics' contingency tables
  (class × candidate × instantiation of the selected set) and any family the counts cannot give
  are built at relearn time;
- the **family tables** of the network in use: N(pa(X), X) for the class and each selected
  attribute X, counted over the records where the family is observed. A relearn initialises
  them from exact counts when the statistics hold them (the class; an attribute alone or with
  the class; in :class:`SelectiveTAN` an attribute, its tree parent and the class, from the
  pairwise counts) and otherwise from the reservoir (exact while the reservoir has dropped no
  record, an unbiased estimate after that, see ``family_sources``). From then on every learned
  record adds to them exactly, so the parameters are current between relearns.

Parameters are read from the family tables at prediction time:
θ(x | pa) = (N(pa, x) + α)/(N(pa) + α·r_X), the Dirichlet(α) posterior mean of each parent
configuration's distribution (α = 1: the Cooper–Herskovits prior behind K2). Inference of the
class is exact (:class:`~streamnb.structure.DiscreteNetwork`): the Markov blanket product when
every selected attribute is observed, variable elimination when some are missing (a nominal
value missing or never seen in learning). Token attributes are never missing: absent is a value.

A relearn: the candidates (the ``max_candidates`` discrete attributes of highest I(X; C) in the
counts) → Info-AS over the reservoir's records (``metric``, optional χ² stop at
``significance``) → the subclass's network over the selected attributes → family tables → swap
(``structure_version`` + 1). A numeric (float) attribute is counted in fine bins fitted to its
values (:mod:`streamnb.stats.binning`), a nominal attribute of the state; under
``numeric="mdl"`` (the default) a relearn first chooses MDL intervals of the bins from their
per-class counts and sums the whole state (counts, reservoir cells, pair and family tables)
into them: the coarse model of :mod:`streamnb.models.coarse`, which selects the attributes,
learns the network and predicts, while the fine state learns the same network over the bins,
so that merges, decays and loads derive the coarse model again from it exactly.

**Text attributes** (a bag of tokens, :mod:`streamnb.stats.schema`): their tokens compete with
the other attributes for the candidates, each as a binary attribute "the token occurs in the
message" (I(X; C) from presence counts kept in ``presence``, a
:class:`~streamnb.stats.pairs.PairCounts` without candidates; the reservoir keeps the records'
text columns), so Info-AS may select tokens into the network, named ``(text attribute, token)``.
Every token *not* in the network enters through the text attribute's multinomial, renormalised
over the tokens outside the network Π (:mod:`streamnb.models.selective_text`)::

    log P(x, c) = log P_network(c, x_Π) + Σ_{w ∈ x, w ∉ Π} n_w log θ'_{w,c}.

Until the first relearn (no network) that is multinomial naive Bayes.

The parts: the family tables (:mod:`streamnb.models.selective_families`), what the network sees
of a record (:mod:`streamnb.models.selective_evidence`), the text terms
(:mod:`streamnb.models.selective_text`); this module keeps the model: where the tables start
from, learning, relearning, prediction, merge, decay and persistence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from streamnb.models.base import CountClassifier
from streamnb.models.coarse import IntervalReading, value_map
from streamnb.models.pairwise import _presence_information
from streamnb.models.params import (
    NUMERIC_INTERVALS,
    RELEARN_EVERY,
    Integer,
    OneOf,
    Real,
    validate_params,
)
from streamnb.models.persistence import params_state
from streamnb.models.schedule import relearn_due, relearn_pieces
from streamnb.models.selective_evidence import NetworkEvidence, batch_cells
from streamnb.models.selective_families import FamilyTables
from streamnb.models.selective_text import add_text_terms, text_log_denominators
from streamnb.stats.binning import coarse_pair_state
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.encoder import encode, encode_batch
from streamnb.stats.frames import labels_of
from streamnb.stats.pairs import PairCounts
from streamnb.stats.persist import header_int
from streamnb.stats.reservoir import ColumnValues, Reservoir, column_map
from streamnb.stats.schema import NOMINAL, TOKEN
from streamnb.structure import (
    CLASS,
    METRICS,
    DiscreteData,
    DiscreteNetwork,
    NetworkStructure,
    Selection,
    attribute_class_information,
    family_counts,
    info_as,
)

__all__ = ["SelectiveClassifier"]

#: family_sources values
EXACT_COUNTS = "counts"
RESERVOIR_EXACT = "reservoir (exact)"
RESERVOIR_ESTIMATE = "reservoir (estimate)"


class SelectiveClassifier(IntervalReading, CountClassifier):
    """Base class: a Bayesian network over the class and Info-AS-selected attributes, learned
    from a record reservoir and parameterised by exact family counts (module docstring)."""

    _numeric = False  # dependences among discrete values: a float is counted in its bin
    _parameter_constraints: ClassVar[dict[str, list]] = {
        "numeric": NUMERIC_INTERVALS,
        "metric": [OneOf(tuple(sorted(METRICS)))],
        "significance": [None, Real(0, 1, closed="neither")],
        "max_candidates": [Integer(1)], "reservoir_size": [Integer(1)],
        "relearn_every": RELEARN_EVERY,
        "alpha": [Real(0, closed="neither")], "seed": [None, Integer()]}

    def __init__(self, metric: str = "cgr", significance: float | None = None,
                 max_candidates: int = 100, reservoir_size: int = 10_000,
                 relearn_every: int = 1000, drift_detector: Any = None, alpha: float = 1.0,
                 seed: int | None = None, nominal: Iterable | None = None,
                 domains: Mapping | None = None, half_life: float | None = None,
                 drift_decay: float = 0.5, numeric: str = "mdl") -> None:
        super().__init__(nominal=nominal, domains=domains, half_life=half_life,
                         drift_detector=drift_detector, drift_decay=drift_decay)
        self.numeric = numeric
        self.metric = metric
        self.significance = significance
        self.max_candidates = max_candidates
        self.reservoir_size = reservoir_size
        self.relearn_every = relearn_every
        self.alpha = alpha
        self.seed = seed
        validate_params(self)
        self.reservoir = Reservoir(reservoir_size, seed)
        self.presence = PairCounts(self.stats.schema, limit=0, text_tokens=True)
        self.presence.restrict()
        self.structure: NetworkStructure | None = None
        self.structure_version = 0
        self.family_sources: dict[Any, str] = {}
        self._since_relearn = 0
        self._install(NetworkStructure.naive(()), record_sources=False)

    # -- the network in use --------------------------------------------------------------------
    def _column_values(self) -> ColumnValues:
        schema = self.stats.schema
        values = self.__dict__.get("_values")
        if values is None or values.schema is not schema:
            values = self._values = ColumnValues(schema)
        return values

    def _install(self, structure: NetworkStructure, record_sources: bool = True) -> None:
        """Make ``structure`` the network in use, with freshly initialised family tables."""
        schema = self.stats.schema
        names = structure.selected
        self._attributes = [self.presence.key_of(a) for a in names]
        node = {CLASS: 0, **{a: i + 1 for i, a in enumerate(names)}}
        parents = [tuple(node[p] for p in structure.parents[v]) for v in structure.nodes]
        tables, sources = [], {}
        for i, v in enumerate(structure.nodes):
            table, source = self._initial_table((*parents[i], i))
            tables.append(table)
            sources[v] = source
        self._families = FamilyTables(parents, tables)
        self._network_evidence = NetworkEvidence(schema, self._attributes)
        self._fitted_to = (len(self.stats.labels), schema.version)
        self._counts_changed()
        if record_sources:
            self.structure = structure
            self.structure_version += 1
            self.family_sources = sources

    def _counts_changed(self) -> None:
        self._network_cache = None

    def _size(self, position: int) -> int:
        if position == 0:
            return len(self.stats.labels)
        a = self._attributes[position - 1]
        return 2 if a < 0 else self.stats.schema.attribute_size(a)

    def _sizes(self) -> list[int]:
        """The current number of values of every node (the class first)."""
        return [self._size(v) for v in range(len(self._attributes) + 1)]

    def _initial_table(self, nodes: tuple[int, ...]) -> tuple[np.ndarray, str]:
        """The counts of the family ``nodes`` (node positions, child last): from the exact
        statistics when they hold them, else from the reservoir."""
        exact = self._exact_table(nodes)
        if exact is not None:
            return exact, EXACT_COUNTS
        return self._reservoir_table(nodes), (RESERVOIR_EXACT if self.reservoir.exact
                                              else RESERVOIR_ESTIMATE)

    def _marginal(self, a: int) -> np.ndarray:
        """N_a(v, c) as (r_a, k), values in rank order (a text token: present, absent)."""
        stats, schema = self.stats, self.stats.schema
        if a < 0:
            present = self.presence.column_counts(stats, [-1 - a])[:, 0]
            return np.stack([present, stats.class_counts - present])
        if schema.kinds[a] == TOKEN:
            present = stats.value_counts[:, schema.slots[a]]
            return np.stack([present, stats.class_counts - present])
        columns = list(schema.nominal_values[schema.slots[a]].values())
        return stats.cells(columns).T.copy()

    def _exact_table(self, nodes: tuple[int, ...]) -> np.ndarray | None:
        """Counts of the family ``nodes`` (node positions, child last) if the statistics hold
        them exactly: the class and at most one attribute. Subclasses add what they know."""
        attributes = [v for v in nodes if v != 0]
        if len(attributes) > 1:
            return None
        if not attributes:
            return self.stats.class_counts.copy()
        table = self._marginal(self._attributes[attributes[0] - 1])  # axes (attribute, class)
        if 0 not in nodes:
            return table.sum(axis=1)
        return table if nodes[0] != 0 else table.T.copy()

    def _reservoir_table(self, nodes: tuple[int, ...]) -> np.ndarray:
        rows, columns = self.reservoir.cells()
        return self._sample_table(nodes, rows, columns, self.reservoir.size,
                                  self.reservoir.classes(), self.reservoir.estimated_weights())

    def _sample_table(self, nodes: tuple[int, ...], rows: np.ndarray, columns: np.ndarray,
                      n: int, classes: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """A family table from sampled records given as cells in this schema's columns."""
        values = self._column_values().value_matrix(rows, columns, n, self._attributes)
        evidence = np.column_stack([classes, values]) if n else np.zeros((0, len(nodes)))
        return family_counts(evidence.astype(np.int64), self._sizes(), nodes[-1], nodes[:-1],
                             weights)

    def _fit_tables(self) -> None:
        """Grow the tables when a class or a value of a network attribute appeared (exact:
        such cells had no records)."""
        key = (len(self.stats.labels), self.stats.schema.version)
        if key == self._fitted_to:
            return
        self._fitted_to = key
        if self._families.grow(self._sizes()):
            self._counts_changed()

    # -- evidence ------------------------------------------------------------------------------
    def _evidence(self, rows: np.ndarray, columns: np.ndarray, n: int) -> np.ndarray:
        """``(n, nodes)`` value indices of the network's nodes in records given as cells
        (:class:`~streamnb.models.selective_evidence.NetworkEvidence`)."""
        return self._network_evidence.of_cells(self._column_values(), rows, columns, n)

    # -- learning ------------------------------------------------------------------------------
    def learn_one(self, x: Mapping, y: Any) -> None:
        self._learn_one(x, y)
        self._learn_coarse_one(x, y)
        self._count_towards_relearn(1)

    def _learn_one(self, x: Mapping, y: Any) -> None:
        stats = self.stats
        stats.update(x, y, self.n_learned + 1)
        self.n_learned += 1
        c = stats.labels.index[stats.encode_label(y, "label")]
        enc = encode(stats.schema, x, "record", grow=False)
        columns = enc.nominal_columns + enc.token_columns + enc.text_columns
        self.reservoir.add(columns, c)
        self.presence.observe_schema(stats)
        self.presence.update(c, enc)
        self._count_one(c, enc)
        self._fit_tables()
        evidence = self._evidence(np.zeros(len(columns), dtype=np.int64),
                                  np.asarray(columns, dtype=np.int64), 1)[0]
        evidence[0] = c
        changed = self._families.add_one(evidence)
        network = self._network_cache  # kept current row by row rather than rebuilt
        if network is not None:
            for i, row in changed:
                network.update_row(i, row, self._families.tables[i][row], self.alpha)

    def _pieces(self, X: Any, labels: list) -> tuple[Any, list[int]]:
        return X, relearn_pieces(self._since_relearn, self.relearn_every, self.n_learned,
                                 len(labels))

    def learn_many(self, X: Any, y: Any) -> None:
        """Learn a batch (DataFrame or sequence of mappings): the same counts, reservoir and
        networks as ``learn_one`` on each row in order (the batch is learned in pieces that end
        where the schedule re-learns); the drift detector is not fed."""
        # one piece (models/base.py cuts the batch at the points of _pieces)
        labels = labels_of(y)
        stats = self.stats
        batch = stats.update_many(X, labels, record="row")
        index = stats.labels.index
        classes = np.array([index[v] if type(v) is str else index[stats.encode_label(v, "label")]
                            for v in labels], dtype=np.int64)
        self.n_learned += len(labels)
        self.reservoir.add_batch(classes, batch, text=True)
        self.presence.observe_schema(stats)
        self.presence.update_batch(classes, batch)
        self._count_batch(classes, batch)
        self._fit_tables()
        rows, columns = batch_cells(batch)
        evidence = self._evidence(rows, columns, batch.n)
        evidence[:, 0] = classes
        self._families.add_batch(evidence)
        self._counts_changed()
        self._recoarsen()
        self._count_towards_relearn(len(labels))

    def _count_one(self, c: int, enc: Any) -> None:
        """Hook: count one record in a subclass's own statistics."""

    def _count_batch(self, classes: np.ndarray, batch: EncodedBatch) -> None:
        """Hook: count a batch in a subclass's own statistics."""

    def _count_towards_relearn(self, n: int) -> None:
        self._since_relearn += n
        if relearn_due(self._since_relearn, self.relearn_every, self.n_learned):
            self.relearn()

    # -- relearning ----------------------------------------------------------------------------
    def relearn(self) -> None:
        """Select attributes and learn the network from the current statistics now, then swap
        it in (``structure_version`` + 1)."""
        self._since_relearn = 0
        if not self.stats.n_classes:
            return
        self.rediscretise()
        coarse = self._coarse_now()
        if coarse is not None:
            # selection and network over the intervals; the fine state learns the same
            # network over the bins, and the coarse model is its sum again
            coarse.relearn()
            self._install(coarse.structure)
            self._recoarsen()
            return
        # in order of name: Info-AS's ties (to the lowest index), which intervals make common
        # (attributes of equal class information), go alike whatever order fields came in
        candidates = sorted(self._candidates(), key=lambda a: repr(self.presence.name_of(a)))
        data = self.reservoir_data(candidates)
        self._install(self._learn_network(data, self._select(data)))

    def _select(self, data: DiscreteData) -> Selection:
        """The attributes of the next network: Info-AS with the model's metric and χ² stop.
        (A subclass may select otherwise, e.g. with a wrapper such as
        :func:`~streamnb.structure.naive_as`; the network and its counts follow the same way.)"""
        return info_as(data, metric=self.metric, significance=self.significance)

    def reservoir_data(self, attributes: Sequence[int]) -> DiscreteData:
        """The reservoir's records over ``attributes`` (schema indices), with their estimated
        weights: the contingency data Info-AS and the network search read."""
        schema = self.stats.schema
        values, classes, weights = self.reservoir.records(schema, attributes)
        return DiscreteData(values, classes,
                            [2 if a < 0 else schema.attribute_size(a) for a in attributes],
                            self.stats.n_classes,
                            [self.presence.name_of(a) for a in attributes], weights)

    def _candidates(self) -> list[int]:
        """The discrete attributes with the highest I(X; C) in the counts, at most
        ``max_candidates`` of them (ties: first registered), in registration order; the tokens
        of text attributes compete too (keys ``-1 - column``, ranked after the attributes at
        equal information, by column; they come first in the returned order)."""
        schema = self.stats.schema
        discrete = [a for a, kind in enumerate(schema.kinds) if kind in (NOMINAL, TOKEN)]
        if schema.n_text:
            text = np.flatnonzero(schema.text_slots(np.arange(schema.n_columns)) >= 0)
            discrete = discrete + (-1 - text).tolist()
        if len(discrete) <= self.max_candidates:
            return sorted(discrete)
        information = self.class_information(discrete)
        order = np.lexsort((np.arange(len(discrete)), -information))
        return sorted(discrete[i] for i in order[: self.max_candidates])

    def class_information(self, attributes: Sequence[int]) -> np.ndarray:
        """I(X; C) of each attribute from its counts (tokens in one vectorised pass; a text
        token's key from its presence counts)."""
        keys = np.asarray(attributes, dtype=np.int64)
        out = np.zeros(len(keys))
        plain, text = np.flatnonzero(keys >= 0), np.flatnonzero(keys < 0)
        if len(plain):
            out[plain] = attribute_class_information(self.stats, keys[plain].tolist())
        if len(text):
            stats = self.stats
            out[text] = _presence_information(
                stats.class_counts, self.presence.column_counts(stats, -1 - keys[text]))
        return out

    def _learn_network(self, data: DiscreteData, selection: Selection) -> NetworkStructure:
        """The subclass's network over the selected attributes."""
        raise NotImplementedError

    @staticmethod
    def _selection_details(selection: Selection) -> dict[str, Any]:
        return {"scores": selection.scores, "p_values": selection.p_values,
                "stop": selection.stop}

    # -- prediction ----------------------------------------------------------------------------
    def network(self) -> DiscreteNetwork:
        """The network in use with its current parameters (log-CPTs from the family tables)."""
        if self._network_cache is None:
            self._network_cache = self._families.network(self._sizes(), self.alpha)
        return self._network_cache

    def _log_scores(self, evidence: np.ndarray) -> np.ndarray:
        self._fit_tables()
        return self.network().class_log_scores(evidence)

    def _fine_joint_log_likelihood(self, records: Sequence[Mapping], where: str
                                   ) -> tuple[np.ndarray, np.ndarray]:
        batch = encode_batch(self.stats.schema, records, where, grow=False)
        rows, columns = batch_cells(batch)
        scores = self._log_scores(self._evidence(rows, columns, batch.n))
        if len(batch.text_columns):
            self._add_text_terms(scores, batch.text_rows, batch.text_columns,
                                 batch.text_counts)
        return scores, np.zeros(scores.shape, dtype=np.int64)

    def _fine_log_likelihood_one(self, x: Mapping) -> tuple[np.ndarray, np.ndarray] | None:
        """The network's class scores of one record (no zero factors: α > 0)."""
        self._check_record(x, "record to predict")
        if not self.stats.n_classes:
            return None
        enc = encode(self.stats.schema, x, "record to predict", grow=False)
        columns = np.asarray(enc.nominal_columns + enc.token_columns + enc.text_columns,
                             dtype=np.int64)
        evidence = self._evidence(np.zeros(len(columns), dtype=np.int64), columns, 1)
        scores = self._log_scores(evidence)
        if enc.text_columns:
            self._add_text_terms(scores, np.zeros(len(enc.text_columns), dtype=np.int64),
                                 np.asarray(enc.text_columns, dtype=np.int64),
                                 np.asarray(enc.text_counts, dtype=np.float64))
        return np.ascontiguousarray(scores[0]), np.zeros(len(scores[0]), dtype=np.int64)

    def _add_text_terms(self, scores: np.ndarray, rows: np.ndarray, columns: np.ndarray,
                        counts: np.ndarray) -> None:
        """Add the terms of the drawn tokens outside the network, per record row
        (:mod:`streamnb.models.selective_text`; θ'’s denominators once per state)."""
        stats, network = self.stats, self._network_evidence.text_columns
        denominators = self._cache.get(
            "text_denominators", (stats, stats.version, self.structure_version, self.n_learned),
            lambda: text_log_denominators(stats, network, self.alpha))
        add_text_terms(scores, stats, denominators, network, self.alpha, rows, columns, counts)

    # -- monoid operations ---------------------------------------------------------------------
    def decay(self, factor: float) -> None:
        """Forget exponentially: counts, family tables and reservoir weights × ``factor``."""
        super().decay(factor)
        self.reservoir.decay(factor)
        self.presence.decay(factor)
        self._families.scale(factor)
        self._counts_changed()
        self._recoarsen()

    def _check_merge(self, other: SelectiveClassifier) -> None:
        if type(other) is not type(self) or (params_state(other, skip={"seed"})
                                             != params_state(self, skip={"seed"})):
            raise ValueError(f"cannot merge {other!r} into {self!r}: models differ")

    def merge(self, other: SelectiveClassifier) -> SelectiveClassifier:
        """Add what ``other`` learned (e.g. on another shard; its ``seed`` should differ).

        The counts add exactly; the reservoirs merge into a priority sample of both streams
        (exact while both fit, see :class:`~streamnb.stats.Reservoir`). The network in use is
        kept (call :meth:`relearn` to re-learn it from the merged statistics); its family
        tables are re-read from the merged counts where those hold them, and otherwise gain
        ``other``'s tables when ``other`` uses the same network, or else the estimate from
        ``other``'s reservoir. Returns ``self``."""
        self._check_merge(other)
        self._merge_statistics(other)
        stats = self.stats
        classes = np.array([stats.labels.index[label] for label in other.stats.labels.values],
                           dtype=np.int64)
        columns = column_map(stats.schema, other.stats.schema)
        self._fit_tables()
        mine = self.structure or NetworkStructure.naive(())
        theirs = other.structure or NetworkStructure.naive(())
        same = (mine.selected, mine.parents) == (theirs.selected, theirs.parents)
        for i, node in enumerate(mine.nodes):
            nodes = self._families.family(i)
            exact = self._exact_table(nodes)
            if exact is not None:
                self._families.tables[i] = exact
            elif same:
                self._add_aligned(i, other, other._families.tables[i], classes)
            else:
                rows, cells = other.reservoir.cells()
                self._families.tables[i] += self._sample_table(
                    nodes, rows, columns[cells], other.reservoir.size,
                    classes[other.reservoir.classes()], other.reservoir.estimated_weights())
                if not other.reservoir.exact:
                    self.family_sources[node] = RESERVOIR_ESTIMATE
        self.reservoir.merge(other.reservoir, columns, classes)
        self.n_learned += other.n_learned
        self._counts_changed()
        self._recoarsen()  # in this model's intervals
        return self

    def _merge_statistics(self, other: SelectiveClassifier) -> None:
        """Merge the counts (subclasses: their own statistics too)."""
        self.stats.merge(other.stats)
        self.presence.observe_schema(self.stats)
        index = self.stats.labels.index
        self.presence.merge(other.presence, np.array(
            [index[label] for label in other.stats.labels.values], dtype=np.int64))

    def _add_aligned(self, i: int, other: SelectiveClassifier, table: np.ndarray,
                     classes: np.ndarray) -> None:
        """Add ``other``'s table of family i, its value indices mapped to ours by name."""
        schema, theirs = self.stats.schema, other.stats.schema
        index = []
        for v in self._families.family(i):
            if v == 0:
                index.append(classes)
                continue
            a = self._attributes[v - 1]
            if a < 0 or schema.kinds[a] == TOKEN:
                index.append(np.arange(2))
                continue
            mine = list(schema.nominal_values[schema.slots[a]])
            b = theirs.attributes.get(schema.attributes.name(a))
            index.append(np.array([mine.index(value)
                                   for value in theirs.nominal_values[theirs.slots[b]]],
                                  dtype=np.int64))
        np.add.at(self._families.tables[i], np.ix_(*index), table)

    # -- persistence ---------------------------------------------------------------------------
    def _extra_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        reservoir_meta, reservoir_arrays = self.reservoir.to_state()
        structure = self.structure
        meta = {"reservoir": reservoir_meta,
                "structure": None if structure is None else structure.to_json(),
                "structure_version": self.structure_version,
                "since_relearn": self._since_relearn,
                "sources": [self.family_sources.get(v, EXACT_COUNTS)
                            for v in (structure.nodes if structure else (CLASS,))],
                "coarse_cuts": self._intervals_state()}
        arrays = {f"reservoir.{k}": v for k, v in reservoir_arrays.items()}
        if self.stats.schema.n_text:  # presence counts of text tokens (none without text)
            presence_meta, presence_arrays = self.presence.to_state(self.stats.n_classes)
            meta["presence"] = presence_meta
            arrays.update({f"presence.{k}": v for k, v in presence_arrays.items()})
        for i, table in enumerate(self._families.tables):
            arrays[f"family{i}"] = table
        return meta, arrays

    def _restore_extra(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        self.reservoir = Reservoir.from_state(
            meta["reservoir"], _prefixed(arrays, "reservoir."))
        if "presence" in meta:
            self.presence = PairCounts.from_state(
                self.stats.schema, meta["presence"],
                _prefixed(arrays, "presence."))
        else:
            self.presence = PairCounts(self.stats.schema, limit=0, text_tokens=True)
            self.presence.restrict()
            self.presence.observe_schema(self.stats)
        structure = (None if meta["structure"] is None
                     else NetworkStructure.from_json(meta["structure"]))
        self._install(structure or NetworkStructure.naive(()), record_sources=False)
        self.structure = structure
        self.structure_version = header_int(meta["structure_version"], "structure_version")
        self._since_relearn = header_int(meta["since_relearn"], "since_relearn")
        nodes = structure.nodes if structure else (CLASS,)
        self.family_sources = dict(zip(nodes, meta["sources"], strict=True))
        families = self._families
        for i in range(len(families.tables)):
            table = np.array(arrays[f"family{i}"], dtype=np.float64)
            expected = tuple(self._size(v) for v in families.family(i))
            if table.shape != expected:
                raise ValueError(f"family{i}: expected shape {expected}, got {table.shape}")
            families.tables[i] = table
        self._counts_changed()
        self._restore_intervals(meta)

    def _coarse_extra(self, coarse_stats: Any, to: np.ndarray
                      ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The reservoir's cells mapped to interval columns, the text presence counts and the
        family tables summed over the intervals of each binned node."""
        meta, arrays = self._extra_state()
        arrays = {**arrays, "reservoir.cells": to[np.asarray(arrays["reservoir.cells"],
                                                               dtype=np.int64)]}
        if "presence" in meta:
            meta["presence"], presence = coarse_pair_state(
                meta["presence"], _prefixed(arrays, "presence."), to, coarse_stats.n_classes)
            arrays.update({f"presence.{k}": v for k, v in presence.items()})
        fine, coarse = self.stats.schema, coarse_stats.schema
        maps = {}
        for position, a in enumerate(self._attributes, start=1):
            if a >= 0 and a in fine.binned:  # (the identity where no bin was summed)
                maps[position] = value_map(fine, coarse, a, to)
        for i in range(len(self._families.tables)):
            table = self._families.tables[i]
            nodes = self._families.family(i)
            if not any(v in maps for v in nodes):
                continue
            index = [maps.get(v, np.arange(n)) for v, n in zip(nodes, table.shape, strict=True)]
            summed = np.zeros(tuple(int(m.max()) + 1 if len(m) else 0 for m in index))
            np.add.at(summed, np.ix_(*index), table)
            arrays[f"family{i}"] = summed
        return meta, arrays

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_coarse"] = None
        state["_network_cache"] = None
        state.pop("_values", None)
        return state


def _prefixed(arrays: Mapping[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The arrays of one part of a state, their prefix stripped."""
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
