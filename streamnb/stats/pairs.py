"""Pairwise counts N_ij(u, v, c) over a set of candidate attributes (TAN, AODE).

All candidate cells share one index space: a *candidate column* is a column of the
:class:`~streamnb.stats.schema.Schema` (a nominal value, or a token's "present" cell) of a
candidate attribute. ``co[c, p, q]`` counts the class-c records in which candidate columns p and
q were both present (its diagonal is each column's own count). A record updates the
``t × t`` block of its present candidate columns, so a message of t tokens costs O(t²), and only
present–present cells are stored: for tokens the other three cells of a pair follow from the
marginals, ``N(p, ¬q) = N(p) − N(p, q)`` and ``N(¬p, ¬q) = N − N(p) − N(q) + N(p, q)``.

Candidates can be added at any time (e.g. the top-K tokens by class information, refreshed as
the vocabulary grows). A pair's counts then cover the records since *both* its attributes were
candidates, and the marginals its table is completed with are taken over that same period: each
addition records a snapshot of the class counts and of the candidates' marginal counts, and a
pair's table subtracts the snapshot of its later attribute. An attribute that becomes a
candidate when it is first seen needs no snapshot (all its earlier counts are zero), so with
"every attribute is a candidate" every table covers the whole stream.

States that must add up (one per partition of a stream, learned apart) can share their
candidates: :meth:`PairCounts.adopt` gives every state the same sequence of candidate lists, each
taking effect at a point of that state's own stream. Every state then has the same snapshots in
the same order (a name adopted before a state has seen it waits, pending, and counts from its
first record), so their pair counts *and* snapshots add up: a sum's pair table covers, in each
state, the records since that state adopted the pair.

**Text tokens** (``text_tokens=True``): a token w of a text attribute t (the multinomial kind of
:mod:`~streamnb.stats.schema`) can be a candidate too, as a binary attribute "w occurs in the
message's bag of t" (a record without t has w absent, as with token attributes). Its position is
the text column of w; its pair cells are counted from the records' text columns, and its
marginal is its *presence* count ``present[c, j]`` (class-c records whose bag holds w), which
these counts keep for every text column (O(distinct tokens) per record): the draws in
``value_counts`` count repeated occurrences and cannot give it. A candidate is identified by a
*key*: an attribute index ``a >= 0``, or ``-1 - j`` for the text token of column ``j``; its
*name* is the attribute's name, or the pair ``(text attribute name, token)``.

Like the single-attribute counts, pairwise counts add (``merge``), scale (``decay``, snapshots
included, so differences stay exact) and save as arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from streamnb.stats.codec import from_json_value, to_json_value
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.encoder import encode
from streamnb.stats.persist import header_int
from streamnb.stats.schema import Schema
from streamnb.stats.values import NOMINAL, TEXT, TOKEN

__all__ = ["CandidateRows", "PairCounts"]


class PairCounts:
    """Co-occurrence counts of candidate columns, per class.

    Parameters
    ----------
    schema
        The schema of the :class:`~streamnb.stats.counts.CountStatistics` these pairs belong
        to (shared, so column indices agree).

    Examples
    --------
    >>> from streamnb.stats import CountStatistics
    >>> from streamnb.stats.encoder import encode
    >>> from streamnb.stats.pairs import PairCounts
    >>> stats = CountStatistics()
    >>> pairs = PairCounts(stats.schema)
    >>> data = [({"a": "x", "b": "u"}, "+"), ({"a": "x", "b": "w"}, "+"),
    ...         ({"a": "y", "b": "w"}, "-")]
    >>> for x, y in data:
    ...     stats.update(x, y)
    ...     pairs.observe_schema(stats)
    ...     pairs.update(stats.labels.index[y], encode(stats.schema, x, "r", grow=False))
    >>> table, values_i, values_j = pairs.joint_table(stats, "a", "b")
    >>> values_i, values_j
    (['x', 'y'], ['u', 'w'])
    >>> table[:, :, 0].tolist()   # class "+": (x, u) once, (x, w) once
    [[1.0, 1.0], [0.0, 0.0]]

    """

    def __init__(self, schema: Schema, limit: int | None = None,
                 text_tokens: bool = False) -> None:
        self.schema = schema
        self.limit = limit  # at most this many candidates join automatically (None: all)
        self.text_tokens = text_tokens  # tokens of text attributes can be candidates
        self.candidates: list[int] = []  # candidate keys (module docstring), in order of addition
        self.epoch: dict[int, int] = {}  # key -> index of its snapshot (-1: none needed)
        self.present = np.zeros((0, 0))  # (k, columns): presence counts of text columns
        self.columns: list[int] = []  # candidate columns, in position order
        self.position: dict[int, int] = {}  # schema column -> position
        self.co = np.zeros((0, 0, 0))
        # snapshot s: class counts, and the marginal counts of the candidate columns that existed
        self.snapshot_classes: list[np.ndarray] = []
        self.snapshot_columns: list[np.ndarray] = []  # (k, columns at the time)
        self.pending: dict[Any, int] = {}  # adopted names not seen yet -> their snapshot
        self._all_attributes = True
        self._seen_attributes = 0
        self._seen_columns = 0

    # -- keys and names ------------------------------------------------------------------------
    def kind(self, key: int) -> int:
        """The kind a candidate is modelled as: a text token is a binary TOKEN."""
        return TOKEN if key < 0 else self.schema.kinds[key]

    def name_of(self, key: int) -> Any:
        """The candidate's name: an attribute name, or ``(text attribute, token)``."""
        schema = self.schema
        if key >= 0:
            return schema.attributes.name(key)
        j = -1 - key
        return (schema.attributes.name(schema.column_attribute[j]), schema.column_value[j])

    def key_of(self, name: Any) -> int | None:
        """The key of a candidate name (None if unknown). A pair ``(t, w)`` whose ``t`` is a
        text attribute is its token ``w`` (when ``text_tokens``), otherwise an attribute name."""
        schema = self.schema
        if self.text_tokens and type(name) is tuple and len(name) == 2:
            t = schema.attributes.get(name[0])
            if t is not None and schema.kinds[t] == TEXT:
                j = schema.text_values[schema.slots[t]].get(name[1])
                return None if j is None else -1 - j
        return schema.attributes.get(name)

    def column_counts(self, stats: Any, columns: Sequence[int]) -> np.ndarray:
        """Marginal counts ``(k, len(columns))`` of schema columns: a nominal value's or a
        token's records, a text token's presence count."""
        columns = np.asarray(columns, dtype=np.int64)
        out = stats.cells(columns)
        if self.text_tokens and self.schema.n_text and len(columns):
            text = self.schema.text_slots(columns) >= 0
            if text.any():
                self._fit_present(out.shape[0])
                out[:, text] = self.present[: out.shape[0], columns[text]]
        return out

    def _fit_present(self, k: int) -> None:
        n = self.schema.n_columns
        kc, nc = self.present.shape
        if k > kc or n > nc:
            grown = np.zeros((max(k, kc), max(n, 2 * nc if n > nc else nc, 16)))
            grown[:kc, :nc] = self.present
            self.present = grown

    # -- candidates ----------------------------------------------------------------------------
    @property
    def n_positions(self) -> int:
        return len(self.columns)

    def _grow(self, k: int, m: int) -> None:
        kc, mc, _ = self.co.shape
        if k > kc or m > mc:
            # a quarter more positions, not twice: the table is square in them, so doubling
            # could leave three quarters of it unused (the copies stay O(1) a cell amortised)
            width = max(m, mc + mc // 4 if m > mc else mc, 16)
            grown = np.zeros((max(k, kc), width, width))
            grown[:kc, :mc, :mc] = self.co
            self.co = grown

    def _add_column(self, column: int) -> None:
        if column not in self.position:
            self.position[column] = len(self.columns)
            self.columns.append(column)

    def add_candidates(self, stats: Any, attributes: Iterable[Any], since_first_seen: bool = False
                       ) -> None:
        """Start counting the pairs of ``attributes`` (names) with every candidate.

        Their pair counts start now; unless ``since_first_seen`` (the attributes were never
        observed before, so their past counts are zero) a snapshot of the current marginals is
        kept so that their tables cover exactly the same records.
        """
        new = []
        for name in attributes:
            a = self.key_of(name)
            if a is None:
                raise KeyError(f"unknown attribute {name!r}")
            if self.kind(a) not in (NOMINAL, TOKEN):
                raise ValueError(f"attribute {name!r} is numeric: pairwise counts need discrete "
                                 "attributes (discretise it first)")
            if a not in self.epoch:
                new.append(a)
        if not new:
            return
        for a in new:
            self.candidates.append(a)
            for column in self.attribute_columns(a):
                self._add_column(column)
        epoch = -1
        if not since_first_seen:
            self.snapshot_classes.append(stats.class_counts.copy())
            self.snapshot_columns.append(self.column_counts(stats, self.columns))
            epoch = len(self.snapshot_classes) - 1
        for a in new:
            self.epoch[a] = epoch
        self._grow(stats.n_classes, self.n_positions)

    def observe_schema(self, stats: Any) -> None:
        """Follow the schema's growth (call after each update of the statistics): new values of
        candidate nominal attributes get positions (exact: they were never seen before), and
        unless :meth:`restrict` was called every new discrete attribute becomes a candidate
        from its first record. O(new attributes + new columns)."""
        schema = self.schema
        if self.text_tokens and schema.n_text:
            self._observe_text_schema(stats)
            return
        pending = self.pending
        for a in range(self._seen_attributes, schema.n_attributes):
            name = schema.attributes.name(a)
            if pending and name in pending:
                if schema.kinds[a] not in (NOMINAL, TOKEN):
                    raise ValueError(f"attribute {name!r} is numeric: pairwise counts need "
                                     "discrete attributes")
                self.candidates.append(a)
                self.epoch[a] = pending.pop(name)
            elif (self._all_attributes and schema.kinds[a] in (NOMINAL, TOKEN)
                    and (self.limit is None or len(self.candidates) < self.limit)):
                self.candidates.append(a)
                self.epoch[a] = -1
        self._seen_attributes = schema.n_attributes
        epoch = self.epoch
        for j in range(self._seen_columns, schema.n_columns):
            if schema.column_attribute[j] in epoch:
                self._add_column(j)
        self._seen_columns = schema.n_columns
        self._grow(stats.n_classes, self.n_positions)

    def _observe_text_schema(self, stats: Any) -> None:
        """:meth:`observe_schema` when text tokens can be candidates: the new attributes and
        text tokens join in the order of their first column (the same after one batch as after
        its records one by one), attributes without a column (numeric) after them."""
        schema, pending, epoch = self.schema, self.pending, self.epoch
        seen_a = self._seen_attributes
        done: set[int] = set()

        def consider(key: int, name: Any) -> None:
            if pending and name in pending:
                if self.kind(key) not in (NOMINAL, TOKEN):
                    raise ValueError(f"attribute {name!r} is numeric: pairwise counts need "
                                     "discrete attributes")
                self.candidates.append(key)
                epoch[key] = pending.pop(name)
            elif (self._all_attributes and self.kind(key) in (NOMINAL, TOKEN)
                    and (self.limit is None or len(self.candidates) < self.limit)):
                self.candidates.append(key)
                epoch[key] = -1

        name, kinds = schema.attributes.name, schema.kinds
        owners = schema.column_attribute[self._seen_columns:].tolist()
        for j, a in enumerate(owners, self._seen_columns):
            if a >= seen_a and a not in done:
                done.add(a)
                if kinds[a] != TEXT:
                    consider(a, name(a))
            if kinds[a] == TEXT:
                consider(-1 - j, (name(a), schema.column_value[j]))
                if -1 - j in epoch:
                    self._add_column(j)
            elif a in epoch:
                self._add_column(j)
        for a in range(seen_a, schema.n_attributes):
            if a not in done and kinds[a] != TEXT:
                consider(a, name(a))
        self._seen_attributes = schema.n_attributes
        self._seen_columns = schema.n_columns
        self._grow(stats.n_classes, self.n_positions)
        self._fit_present(stats.n_classes)

    def remove_candidates(self, attributes: Iterable[int]) -> None:
        """Stop tracking these attributes (indices); their pair counts are dropped."""
        drop = set(attributes) & set(self.epoch)
        if not drop:
            return
        dropped_columns = {j for a in drop for j in self.attribute_columns(a)}
        keep = [p for p, j in enumerate(self.columns) if j not in dropped_columns]
        m = self.n_positions
        self.co = np.ascontiguousarray(self.co[:, :m, :m][:, keep][:, :, keep])
        self.snapshot_columns = [snap[:, [p for p in keep if p < snap.shape[1]]]
                                 for snap in self.snapshot_columns]
        self.columns = [self.columns[p] for p in keep]
        self.position = {j: p for p, j in enumerate(self.columns)}
        self.candidates = [a for a in self.candidates if a not in drop]
        for a in drop:
            del self.epoch[a]
        self._prune_snapshots()

    def _prune_snapshots(self) -> None:
        """Drop the snapshots no candidate (pending ones included) refers to, so that
        refreshing candidates at every relearn of a long stream keeps memory bounded."""
        used = sorted({e for e in (*self.epoch.values(), *self.pending.values()) if e >= 0})
        renumber = {e: n for n, e in enumerate(used)}
        self.snapshot_classes = [self.snapshot_classes[e] for e in used]
        self.snapshot_columns = [self.snapshot_columns[e] for e in used]
        self.epoch = {a: renumber.get(e, -1) for a, e in self.epoch.items()}
        self.pending = {name: renumber[e] for name, e in self.pending.items()}

    def adopt(self, stats: Any, names: Sequence[Any]) -> None:
        """Track exactly the attributes ``names`` from now on (and no others, ever, unless
        adopted later): the ones not named are dropped; the newly named ones start counting
        pairs now, under one snapshot, even those not seen yet (pending until their first
        record). States given the same sequence of lists, each at any point of its own
        stream, have the same candidates and snapshots, so they merge exactly.

        Examples
        --------
        >>> from streamnb.stats import CountStatistics
        >>> stats = CountStatistics()
        >>> pairs = PairCounts(stats.schema)
        >>> stats.update({"a": "x", "b": "u"}, "+")
        >>> pairs.observe_schema(stats)
        >>> pairs.adopt(stats, ["b", "c"])  # "c" not seen yet
        >>> [stats.schema.attributes.name(a) for a in pairs.candidates], pairs.pending
        (['b'], {'c': 0})

        """
        self._all_attributes = False
        wanted = list(dict.fromkeys(names))
        keep = set(wanted)
        name_of = self.name_of
        self.pending = {name: e for name, e in self.pending.items() if name in keep}
        self.remove_candidates([a for a in self.candidates if name_of(a) not in keep])
        self._prune_snapshots()
        held = {name_of(a) for a in self.candidates} | set(self.pending)
        new = [name for name in wanted if name not in held]
        if not new:
            return
        seen = []
        for name in new:
            a = self.key_of(name)
            if a is not None and self.kind(a) not in (NOMINAL, TOKEN):
                raise ValueError(f"attribute {name!r} is numeric: pairwise counts need "
                                 "discrete attributes (discretise it first)")
            seen.append(a)
        epoch = len(self.snapshot_classes)
        for name, a in zip(new, seen, strict=True):
            if a is None:
                self.pending[name] = epoch
                continue
            self.candidates.append(a)
            self.epoch[a] = epoch
            for column in self.attribute_columns(a):
                self._add_column(column)
        # after the new columns got positions: a new candidate's own count is its baseline
        self.snapshot_classes.append(stats.class_counts.copy())
        self.snapshot_columns.append(self.column_counts(stats, self.columns))
        self._grow(stats.n_classes, self.n_positions)

    def restrict(self) -> None:
        """From now on only attributes added with :meth:`add_candidates` are tracked."""
        self._all_attributes = False

    def attribute_columns(self, a: int) -> list[int]:
        """The schema columns of candidate key ``a``, in the order of its value rows
        (:meth:`value_list`): a token's (or text token's) present column, a nominal
        attribute's value columns."""
        schema = self.schema
        if a < 0:
            return [-1 - a]
        if schema.kinds[a] == TOKEN:
            return [schema.slots[a]]
        return list(schema.nominal_values[schema.slots[a]].values())

    # -- counting ------------------------------------------------------------------------------
    def _positions(self, columns: Sequence[int]) -> list[int]:
        position = self.position
        return [position[j] for j in columns if j in position]

    def update(self, c: int, encoded: Any) -> None:
        """Count one record of class ``c`` (its :class:`~streamnb.stats.schema.Encoded`)."""
        if c >= self.co.shape[0]:
            self._grow(c + 1, self.n_positions)
        if self.text_tokens and encoded.text_columns:
            self._fit_present(c + 1)
            self.present[c, encoded.text_columns] += 1.0  # distinct columns: no repeats
            pos = self._positions(encoded.nominal_columns + encoded.token_columns
                                  + encoded.text_columns)
        else:
            pos = self._positions(encoded.nominal_columns + encoded.token_columns)
        if pos:
            index = np.asarray(pos)
            self.co[c][np.ix_(index, index)] += 1.0

    def count_presence(self, classes: np.ndarray, batch: EncodedBatch) -> None:
        """Count a batch's text tokens in the presence counts only (the first half of
        :meth:`update_batch`, for callers that choose candidates between the two halves)."""
        if self.text_tokens and len(batch.text_columns):
            cls = np.asarray(classes, dtype=np.int64)
            k, n_cols = int(cls.max()) + 1, self.schema.n_columns
            self._fit_present(k)
            self.present[:k, :n_cols] += np.bincount(
                cls[batch.text_rows] * n_cols + batch.text_columns,
                minlength=k * n_cols).reshape(k, n_cols)

    def update_batch(self, classes: np.ndarray, batch: EncodedBatch,
                     presence: bool = True) -> None:
        """Count a batch: every within-record pair of candidate positions, one bincount (and,
        unless ``presence`` is False, the text tokens' presence counts)."""
        rows = np.concatenate([batch.token_rows, batch.nominal_rows])
        columns = np.concatenate([batch.token_columns, batch.nominal_columns])
        if self.text_tokens and len(batch.text_columns):
            if presence:
                self.count_presence(classes, batch)
            rows = np.concatenate([rows, batch.text_rows])
            columns = np.concatenate([columns, batch.text_columns])
        lookup = np.full(max(self.schema.n_columns, 1), -1, dtype=np.int64)
        lookup[self.columns] = np.arange(self.n_positions)
        pos = lookup[columns]
        keep = pos >= 0
        rows, pos = rows[keep], pos[keep]
        if not len(pos):
            return
        order = np.argsort(rows, kind="stable")
        rows, pos = rows[order], pos[order]
        lengths = np.bincount(rows, minlength=batch.n)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        cls = np.asarray(classes, dtype=np.int64)
        k, m = int(max(cls.max() + 1, self.co.shape[0])), self.n_positions
        self._grow(k, m)
        width = int(lengths.max())
        if batch.n * width * width <= 2 * int((lengths * lengths).sum()):
            # rows of (nearly) equal length, as in tabular data: a padded (n, width) matrix
            # and one broadcast outer product; padding goes to an extra position m, dropped
            matrix = np.full((batch.n, width), m, dtype=np.int64)
            matrix[rows, np.arange(len(pos)) - starts[rows]] = pos
            flat = ((cls[:, None, None] * (m + 1) + matrix[:, :, None]) * (m + 1)
                    + matrix[:, None, :]).ravel()
            counts = np.bincount(flat, minlength=k * (m + 1) * (m + 1))
            self.co[:k, :m, :m] += counts.reshape(k, m + 1, m + 1)[:, :m, :m]
            return
        # ragged rows (messages): each element pairs with every element of its own row
        reps = lengths[rows]
        left = np.repeat(pos, reps)
        element_start = np.repeat(starts[rows], reps)
        offset = np.arange(len(left)) - np.repeat(np.cumsum(reps) - reps, reps)
        right = pos[element_start + offset]
        flat = (np.repeat(cls[rows], reps) * m + left) * m + right
        self.co[:k, :m, :m] += np.bincount(flat, minlength=k * m * m).reshape(k, m, m)

    # -- tables --------------------------------------------------------------------------------
    def since(self, stats: Any, epoch: int) -> tuple[np.ndarray, np.ndarray]:
        """Class counts and candidate-column marginals (by position) over the records since
        snapshot ``epoch`` (-1: the whole stream)."""
        classes = stats.class_counts.copy()
        columns = self.column_counts(stats, self.columns)
        if epoch >= 0:
            snap = self.snapshot_classes[epoch]
            classes[: len(snap)] -= snap
            snap = self.snapshot_columns[epoch]
            columns[: snap.shape[0], : snap.shape[1]] -= snap
        return classes, columns

    def joint_table(self, stats: Any, attribute_i: Any, attribute_j: Any
                    ) -> tuple[np.ndarray, list, list]:
        """``N_ij(u, v, c)`` as an ``(r_i, r_j, k)`` array over the records where both were
        observed since both became candidates, with the value lists of its two axes (a token's
        values are ``[True, False]``: present, absent)."""
        a = self.key_of(attribute_i)
        b = self.key_of(attribute_j)
        if a is None or b is None or a not in self.epoch or b not in self.epoch:
            raise KeyError(f"({attribute_i!r}, {attribute_j!r}) is not a pair of candidates")
        epoch = max(self.epoch[a], self.epoch[b])
        classes, marginals = self.since(stats, epoch)
        k, m = stats.n_classes, self.n_positions
        co = self.co[:k, :m, :m]
        pos_a = [self.position[j] for j in self.attribute_columns(a)]
        pos_b = [self.position[j] for j in self.attribute_columns(b)]
        both = co[:, pos_a][:, :, pos_b].transpose(1, 2, 0)  # (r_a, r_b, k), present cells
        table = self._complete(both, a, b, pos_a, pos_b, classes, marginals)
        return table, self.value_list(a), self.value_list(b)

    def joint_tables(self, stats: Any) -> dict[tuple[int, int], np.ndarray]:
        """:meth:`joint_table` of every pair of candidates, keyed by their indices in
        ``candidates`` (i < j). The pairs of two tokens, most of them on text, are completed in
        one vectorised pass; the marginals over each snapshot's period are computed once."""
        candidates, kind = self.candidates, self.kind
        k, m = stats.n_classes, self.n_positions
        co = self.co[:k, :m, :m]
        epochs = sorted({self.epoch[a] for a in candidates})
        since = {e: self.since(stats, e) for e in epochs}
        out: dict[tuple[int, int], np.ndarray] = {}
        tokens = [i for i, a in enumerate(candidates) if kind(a) == TOKEN]
        if len(tokens) > 1:
            t = np.array(tokens)
            pos = np.array([self.position[self.attribute_columns(candidates[i])[0]]
                            for i in tokens])
            rank = np.searchsorted(epochs, [self.epoch[candidates[i]] for i in tokens])
            period = np.maximum(rank[:, None], rank[None, :])  # each pair's later snapshot
            classes = np.stack([since[e][0] for e in epochs])[period]  # (T, T, k)
            present = np.stack([since[e][1][:, pos] for e in epochs])  # (E, k, T)
            n_a = present[period, :, np.arange(len(t))[:, None]]  # (T, T, k): N(i present)
            n_b = present[period, :, np.arange(len(t))[None, :]]
            n_ab = co[:, pos][:, :, pos].transpose(1, 2, 0)
            tables = np.stack([np.stack([n_ab, n_a - n_ab], axis=2),
                               np.stack([n_b - n_ab, classes - n_a - n_b + n_ab], axis=2)],
                              axis=2)  # (T, T, 2, 2, k)
            np.maximum(tables, 0.0, out=tables)  # rounding after decay, never a count
            upper_i, upper_j = np.triu_indices(len(t), 1)
            for p, q in zip(upper_i.tolist(), upper_j.tolist(), strict=True):
                out[tokens[p], tokens[q]] = tables[p, q]
        for i, a in enumerate(candidates):
            for j in range(i + 1, len(candidates)):
                if (i, j) not in out:
                    b = candidates[j]
                    epoch = max(self.epoch[a], self.epoch[b])
                    pos_a = [self.position[c] for c in self.attribute_columns(a)]
                    pos_b = [self.position[c] for c in self.attribute_columns(b)]
                    both = co[:, pos_a][:, :, pos_b].transpose(1, 2, 0)
                    out[i, j] = self._complete(both, a, b, pos_a, pos_b, *since[epoch])
        return out

    def value_list(self, a: int) -> list:
        """The values of candidate key ``a`` in row order: ``[True, False]`` (present,
        absent) for a token or text token, a nominal attribute's values as registered."""
        schema = self.schema
        if self.kind(a) == TOKEN:
            return [True, False]
        return list(schema.nominal_values[schema.slots[a]])

    def _complete(self, both: np.ndarray, a: int, b: int, pos_a: list[int], pos_b: list[int],
                  classes: np.ndarray, marginals: np.ndarray) -> np.ndarray:
        """Add a token's absent row/column: N(u, ¬t) = N(u) − N(u, t) over the pair's period
        (a token is never missing, so N(u) counts every record where the other side is u)."""
        token_a, token_b = self.kind(a) == TOKEN, self.kind(b) == TOKEN
        if token_a and token_b:
            n_ab = both[0, 0]
            n_a, n_b = marginals[:, pos_a[0]], marginals[:, pos_b[0]]
            table = np.array([[n_ab, n_a - n_ab], [n_b - n_ab, classes - n_a - n_b + n_ab]])
        elif token_b:  # nominal a × token b
            n_u = marginals[:, pos_a].T  # (r_a, k)
            table = np.stack([both[:, 0, :], n_u - both[:, 0, :]], axis=1)
        elif token_a:  # token a × nominal b
            n_v = marginals[:, pos_b].T
            table = np.stack([both[0], n_v - both[0]], axis=0)
        else:
            return both
        return np.maximum(table, 0.0)  # differences of decayed counts can round below zero

    # -- monoid operations ----------------------------------------------------------------------
    def check_mergeable(self, other: PairCounts) -> None:
        """Raise unless merging ``other`` is exact: both track the same attributes (by name),
        each since the same snapshot of its own stream: since its first appearance, or since
        the same adoption (:meth:`adopt`) in both."""
        mine, theirs = self._epochs_by_name(), other._epochs_by_name()
        if mine.keys() != theirs.keys():
            raise ValueError("cannot merge pairwise counts over different candidate attributes "
                             f"({len(mine.keys() ^ theirs.keys())} differ)")
        if mine != theirs or len(self.snapshot_classes) != len(other.snapshot_classes):
            raise ValueError("cannot merge pairwise counts of candidates chosen after their first "
                             "appearance at different points (their pair counts cover different "
                             "records)")

    def _epochs_by_name(self) -> dict[Any, int]:
        return {**{self.name_of(a): self.epoch[a] for a in self.candidates}, **self.pending}

    def merge(self, other: PairCounts, classes: np.ndarray) -> None:
        """Add ``other``'s pair counts; ``classes[i]`` is this state's index of other's class i.
        Call after the statistics were merged (this schema has absorbed other's), and after
        :meth:`check_mergeable`."""
        schema, theirs = self.schema, other.schema

        def mine(j: int) -> int:
            a = schema.attributes.get(theirs.attributes.name(theirs.column_attribute[j]))
            if schema.kinds[a] == TOKEN:
                return schema.slots[a]
            return schema.values_of(a)[theirs.column_value[j]]

        if other.text_tokens and other.present.shape[1] and theirs.n_text:
            text = np.flatnonzero(theirs.text_slots(np.arange(theirs.n_columns)) >= 0)
            if len(text):
                other._fit_present(other.present.shape[0])
                kc = other.present.shape[0]
                rows = classes[:kc]
                self._fit_present(int(classes.max(initial=-1)) + 1)
                cols = np.array([mine(int(j)) for j in text], dtype=np.int64)
                self.present[np.ix_(rows, cols)] += other.present[: len(rows)][:, text]
        targets = []
        for j in other.columns:
            column = mine(j)
            self._add_column(column)  # a value only the other state saw: zero counts here
            targets.append(self.position[column])
        k = int(max(classes.max(initial=-1) + 1, self.co.shape[0]))
        self._grow(k, self.n_positions)
        m = other.n_positions
        index = np.asarray(targets, dtype=np.int64)
        self.co[np.ix_(classes, index, index)] += other.co[: len(classes), :m, :m]
        # the same snapshots in the same order (check_mergeable): they add up too
        for e, (their_classes, their_columns) in enumerate(zip(
                other.snapshot_classes, other.snapshot_columns, strict=True)):
            kc, wc = their_columns.shape
            rows, cols = classes[:kc], index[:wc]
            width = int(cols.max(initial=-1)) + 1
            mine = self.snapshot_columns[e]
            if mine.shape[0] < k or mine.shape[1] < width:  # columns this state saw later
                grown = np.zeros((max(k, mine.shape[0]), max(width, mine.shape[1])))
                grown[: mine.shape[0], : mine.shape[1]] = mine
                self.snapshot_columns[e] = mine = grown
            mine[np.ix_(rows, cols)] += their_columns
            mine_classes = self.snapshot_classes[e]
            if len(mine_classes) < k:
                mine_classes = np.concatenate([mine_classes, np.zeros(k - len(mine_classes))])
                self.snapshot_classes[e] = mine_classes
            mine_classes[classes[: len(their_classes)]] += their_classes

    def decay(self, factor: float) -> None:
        self.co *= factor
        self.present *= factor
        for snapshots in (self.snapshot_classes, self.snapshot_columns):
            for s in snapshots:
                s *= factor

    def to_state(self, k: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        m = self.n_positions
        meta = {"candidates": self.candidates, "epoch": [self.epoch[a] for a in self.candidates],
                "limit": self.limit,
                "columns": self.columns, "all_attributes": self._all_attributes,
                "pending": [[to_json_value(name), e] for name, e in self.pending.items()],
                "seen": [self._seen_attributes, self._seen_columns],
                "snapshots": len(self.snapshot_classes)}
        arrays = {"co": self.co[:k, :m, :m]}
        if self.text_tokens:  # presence counts of the text columns only
            meta["text_tokens"] = True
            schema = self.schema
            text = np.flatnonzero(schema.text_slots(np.arange(schema.n_columns)) >= 0)
            self._fit_present(k)
            arrays["present_columns"] = text
            arrays["present"] = self.present[:k, text]
        for i, (sc, sv) in enumerate(zip(self.snapshot_classes, self.snapshot_columns,
                                         strict=True)):
            arrays[f"snapshot{i}.classes"] = sc
            arrays[f"snapshot{i}.columns"] = sv
        return meta, arrays

    @classmethod
    def from_state(cls, schema: Schema, meta: Mapping[str, Any],
                   arrays: Mapping[str, np.ndarray]) -> PairCounts:
        pairs = cls(schema, limit=meta["limit"], text_tokens=bool(meta.get("text_tokens")))
        pairs.candidates = [int(a) for a in meta["candidates"]]
        pairs.epoch = {a: int(e) for a, e in zip(pairs.candidates, meta["epoch"], strict=True)}
        pairs.columns = [int(j) for j in meta["columns"]]
        pairs.position = {j: p for p, j in enumerate(pairs.columns)}
        pairs._all_attributes = bool(meta["all_attributes"])
        pairs.pending = {from_json_value(name): int(e) for name, e in meta.get("pending", [])}
        pairs._seen_attributes, pairs._seen_columns = (int(v) for v in meta["seen"])
        pairs.co = np.array(arrays["co"], dtype=np.float64)
        if pairs.text_tokens:
            present = np.array(arrays["present"], dtype=np.float64)
            pairs._fit_present(present.shape[0])
            pairs.present[: present.shape[0], np.asarray(arrays["present_columns"],
                                                         dtype=np.int64)] = present
        for i in range(header_int(meta["snapshots"], "snapshots")):
            pairs.snapshot_classes.append(np.array(arrays[f"snapshot{i}.classes"]))
            pairs.snapshot_columns.append(np.array(arrays[f"snapshot{i}.columns"]))
        return pairs


class CandidateRows:
    """The value row each of some candidates (keys of ``pairs``) takes in a record: its index
    in :meth:`PairCounts.value_list` (0 present / 1 absent for a token or text token, a
    nominal value's rank), −1 where the value is missing or was not registered when the rows
    were built. The one reading of records for the models that look cells up in pair tables
    (TAN's edges, AODE's one-dependence models): a record is encoded by the record encoder
    (:func:`~streamnb.stats.encoder.encode`, its candidate fields only, without growth), a
    batch comes encoded (:class:`~streamnb.stats.encoded.EncodedBatch`), and both are read
    through one map of schema columns to (candidate, row).

    The nominal domains are taken when the rows are built: :meth:`stale` says when one of
    them grew since (new values would be −1).

    Examples
    --------
    >>> from streamnb.stats.encoder import encode_batch
    >>> from streamnb.stats import CountStatistics
    >>> stats = CountStatistics()
    >>> pairs = PairCounts(stats.schema)
    >>> stats.update({"colour": "red", "spam": True}, "+")
    >>> stats.update({"colour": "blue"}, "-")
    >>> pairs.observe_schema(stats)
    >>> rows = CandidateRows(pairs, pairs.candidates)
    >>> rows.record({"colour": "blue", "spam": 0}).tolist()   # blue is value 1; token absent
    [1, 1]
    >>> rows.record({"spam": 2, "colour": None}).tolist()    # colour missing; token present
    [-1, 0]
    >>> batch = encode_batch(stats.schema, [{"colour": "blue", "spam": 0},
    ...                                   {"spam": 2, "colour": None}], "row", grow=False)
    >>> rows.batch(batch).tolist()  # (keys, records)
    [[1, -1], [1, 0]]

    """

    def __init__(self, pairs: PairCounts, keys: Sequence[int]) -> None:
        schema = self.schema = pairs.schema
        self.keys = list(keys)
        self.n_keys = len(self.keys)
        # the record fields the candidates read (a text token's: its text attribute's)
        self._fields = list(dict.fromkeys(
            schema.attributes.name(schema.column_attribute[-1 - a] if a < 0 else a)
            for a in self.keys))
        # a record's row where none of a candidate's columns is in its encoding: a token
        # (or text token) is then absent, a nominal value missing
        self._default = np.array([1 if pairs.kind(a) == TOKEN else -1 for a in self.keys],
                                 dtype=np.int64)
        self._columns = [np.asarray(pairs.attribute_columns(a), dtype=np.int64)
                         for a in self.keys]
        self._domains = [(schema.slots[a], len(columns))
                         for a, columns in zip(self.keys, self._columns, strict=True)
                         if pairs.kind(a) != TOKEN]
        self._lookup: tuple[np.ndarray, np.ndarray] | None = None

    def stale(self, schema: Schema) -> bool:
        """Whether a nominal domain of these candidates grew since the rows were built."""
        nominal_values = schema.nominal_values
        return any(len(nominal_values[slot]) != size for slot, size in self._domains)

    def record(self, x: Any) -> np.ndarray:
        """Each candidate's value row in record ``x`` (a mapping; anything else has every
        value missing, every token absent: validation is the encoder's, of the candidates'
        fields)."""
        fields = [name for name in self._fields if name in x] if isinstance(
            x, Mapping) else []
        enc = encode(self.schema, x, "record", grow=False, fields=fields)
        cells = np.array(enc.token_columns + enc.text_columns + enc.nominal_columns,
                         dtype=np.int64)
        return self._rows(1, np.zeros(len(cells), dtype=np.int64), cells)[:, 0]

    def batch(self, batch: EncodedBatch) -> np.ndarray:
        """:meth:`record` of every record of an encoded batch, from its columns: ``(keys,
        records)``."""
        return self._rows(batch.n,
                          np.concatenate([batch.token_rows, batch.text_rows, batch.nominal_rows]),
                          np.concatenate([batch.token_columns, batch.text_columns,
                                          batch.nominal_columns]))

    def _rows(self, n: int, rows: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """The ``(keys, n)`` value rows of ``n`` encoded records whose present columns are
        ``cells`` (record ``rows``): every cell at once, through each column's candidate and
        row (columns belong to one attribute each; those of other attributes and newer
        values are no candidate's)."""
        out = np.repeat(self._default[:, None], n, axis=1)
        if len(cells):
            key, rank = self._column_lookup(int(cells.max()) + 1)
            mine = key[cells]
            hit = mine >= 0
            out[mine[hit], rows[hit]] = rank[cells[hit]]
        return out

    def _column_lookup(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Per schema column below ``size``: its candidate's index (−1: none) and its value
        row (built once, again only for records with newer columns)."""
        if self._lookup is not None and len(self._lookup[0]) >= size:
            return self._lookup[0][:size], self._lookup[1][:size]
        width = max([size] + [int(c.max(initial=-1)) + 1 for c in self._columns])
        key = np.full(width, -1, dtype=np.int64)
        rank = np.full(width, -1, dtype=np.int64)
        for i, columns in enumerate(self._columns):
            key[columns] = i
            rank[columns] = np.arange(len(columns))
        self._lookup = key, rank
        return key[:size], rank[:size]
