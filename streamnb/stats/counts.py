"""Class and attribute-value × class counts: the sufficient statistics of naive Bayes."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from streamnb._accel.kernels import learn_tokens, token_increment, token_increment_many
from streamnb.stats.codec import normalize_label
from streamnb.stats.domain import Domain
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.encoder import encode, encode_batch, text_columns
from streamnb.stats.forgetting import check_decay_factor
from streamnb.stats.frames import labels_of, n_rows
from streamnb.stats.moments import Moments
from streamnb.stats.schema import TEXT, TOKEN, InvalidRecord, RecordName, Schema
from streamnb.stats.token_histogram import TokenHistogram
from streamnb.stats.values import UNNAMED, named, refuse_unencodable

__all__ = ["CountStatistics"]


def _add_at(table: np.ndarray, rows: np.ndarray, columns: np.ndarray,
            weights: np.ndarray | None = None) -> None:
    """``table[rows[i], columns[i]] += weights[i]`` (1 without weights) for each cell in batch
    order: the sums ``update`` on each record in turn gives, bit for bit even for fractional
    counts (after a decay); O(cells), whatever the table's size. numpy's unbuffered
    ``add.at`` on the flat table, fast with float64 weights (sorting the cells to sum repeats
    first would cost an order of magnitude more on a text batch)."""
    if not len(columns):
        return
    flat = table.view()
    flat.shape = (-1,)  # a view of the (C-contiguous) table, or an error: never a copy
    added = np.ones(len(columns)) if weights is None else np.asarray(weights, np.float64)
    np.add.at(flat, rows * table.shape[1] + columns, added)


class CountStatistics:
    """``N(c)``, ``N_i(v, c)``, ``N_i(c)`` and numeric moments, updated one record at a time.

    Arrays (all float64, so that forgetting can scale them):

    - ``class_counts[c]`` = N(c);
    - ``value_counts[c, j]`` = N_i(v, c) for the cell of column ``j`` (a nominal value, or a
      token's "present" cell);
    - ``observed_counts[c, s]`` = N_i(c), class-c records where nominal attribute (slot) ``s``
      was observed; tokens are never missing, so theirs is ``N(c)``;
    - ``moments``: per class and numeric attribute (weight, mean, M2);
    - ``draw_counts[c, t]`` = N_t(c), the draws (token occurrences) of text attribute (slot)
      ``t`` in class c: the denominator of the multinomial θ_{t,w,c} = N_t(w, c) / N_t(c),
      whose numerators are the text columns of ``value_counts``.

    The statistics form a commutative monoid: ``update_many`` equals repeated ``update``,
    ``merge`` equals learning the other stream too, and ``decay(f)`` scales every count by
    ``f`` (exponential forgetting). Domains only grow.

    Examples
    --------
    >>> s = CountStatistics()
    >>> _ = s.update({"outlook": "sunny", "windy": True}, "no")
    >>> _ = s.update_many([{"outlook": "rain"}, {"outlook": "sunny", "windy": False}],
    ...                   ["yes", "yes"])
    >>> s.labels.values, s.class_counts.tolist()
    (['no', 'yes'], [1.0, 2.0])
    >>> s.count("outlook", "sunny"), s.count("windy", True)
    ({'no': 1.0, 'yes': 1.0}, {'no': 1.0, 'yes': 0.0})

    """

    def __init__(self, schema: Schema | None = None) -> None:
        self.schema = schema if schema is not None else Schema()
        self.labels = Domain()
        self._cc = np.zeros(0)
        self._vc = np.zeros((0, 0))
        self._oc = np.zeros((0, 0))
        self._dc = np.zeros((0, 0))
        self.moments = Moments()
        self.tokens = TokenHistogram()
        self._fitted: tuple[int, int, int, int] = (-1, -1, -1, -1)
        self.version = 0  # bumped by every mutation; lets estimators cache derived arrays
        self._fit()  # declared domains already have columns

    # -- views --------------------------------------------------------------------------------
    @property
    def n_classes(self) -> int:
        return len(self.labels)

    @property
    def n_records(self) -> float:
        return float(self.class_counts.sum())

    @property
    def class_counts(self) -> np.ndarray:
        return self._cc[: self.n_classes]

    @property
    def value_counts(self) -> np.ndarray:
        return self._vc[: self.n_classes, : self.schema.n_columns]

    def cells(self, columns: Any) -> np.ndarray:
        """``value_counts[:, columns]`` as a new array (classes × len(columns)): a batch's
        cells, gathered by ``np.take``, which is ~6× faster than 2-D fancy indexing on tens of
        thousands of columns. It takes from the C-contiguous buffer (spare columns past the
        schema's, spare rows cut after): given the ``value_counts`` view, which is not
        contiguous, ``np.take`` would first copy the whole vocabulary's counts."""
        cells = np.take(self._vc, np.asarray(columns, dtype=np.intp), axis=1)
        return cells if cells.shape[0] == self.n_classes else cells[: self.n_classes]

    @property
    def value_count_buffer(self) -> np.ndarray:
        """The C-contiguous array behind :attr:`value_counts` (rows and columns past
        ``n_classes`` and the schema's columns are spare capacity, zero): what the kernels of
        :mod:`streamnb._accel` index by class and column. Read it only; it is replaced when the
        counts grow, so fetch it again after learning."""
        return self._vc

    @property
    def class_count_buffer(self) -> np.ndarray:
        """The array behind :attr:`class_counts` (spare capacity past ``n_classes``), for the
        same kernels, on the same terms as :attr:`value_count_buffer`."""
        return self._cc

    @property
    def observed_counts(self) -> np.ndarray:
        return self._oc[: self.n_classes, : self.schema.n_nominal]

    @property
    def draw_counts(self) -> np.ndarray:
        return self._dc[: self.n_classes, : self.schema.n_text]

    @property
    def draw_count_buffer(self) -> np.ndarray:
        """The array behind :attr:`draw_counts` (classes × text slots, spare capacity past
        both), on the same terms as :attr:`value_count_buffer`."""
        return self._dc

    def count(self, attribute: Hashable, value: Hashable) -> dict[Any, float]:
        """N_i(v, c) per class (for a token, ``value`` True counts presence; for a text
        attribute, the draws of token ``value``)."""
        s = self.schema
        a = s.attributes.get(attribute)
        if a is None:
            raise KeyError(f"unknown attribute {attribute!r}")
        if s.kinds[a] == TOKEN:
            present = self.value_counts[:, s.slots[a]]
            cells = present if value else self.class_counts - present
        else:
            j = s.values_of(a).get(value)
            cells = self.value_counts[:, j] if j is not None else np.zeros(self.n_classes)
        return dict(zip(self.labels.values, cells.tolist(), strict=True))

    # -- capacity -----------------------------------------------------------------------------
    def _fit(self) -> None:
        """Grow the arrays (geometrically, so growth is amortised O(1)) to the domains."""
        self._fitted = self._fit_key()
        k, j, s = self.n_classes, self.schema.n_columns, self.schema.n_nominal
        kc, jc = self._vc.shape
        if k > kc or j > jc:
            k2, j2 = max(k, 2 * kc if k > kc else kc, 2), max(j, 2 * jc if j > jc else jc, 16)
            grown = np.zeros((k2, j2))
            grown[:kc, :jc] = self._vc
            self._vc = grown
        if k > len(self._cc):
            grown = np.zeros(self._vc.shape[0])
            grown[: len(self._cc)] = self._cc
            self._cc = grown
        self._oc = self._grown(self._oc, k, s)
        self._dc = self._grown(self._dc, k, self.schema.n_text)
        if self.moments.shape != (k, self.schema.n_numeric):
            self.moments.resize(k, self.schema.n_numeric)

    def _fit_key(self) -> tuple[int, int, int, int]:
        """What the arrays ``_fit`` sizes depend on besides the columns: the classes and the
        nominal, text and numeric attributes (not the tokens, which only add columns)."""
        schema = self.schema
        return len(self.labels), schema.n_nominal, schema.n_text, schema.n_numeric

    def _fit_record(self) -> None:
        """``_fit`` and the token histogram's cover before counting one record, each only when
        needed: ``_fit`` when the classes or the non-token attributes changed or the columns
        outgrew the arrays, ``cover`` then or when tokens joined (a message's new tokens, a
        quarter of the records of a stream, need only that)."""
        schema = self.schema
        if self._fitted != self._fit_key() or (
                schema.n_columns > min(self._vc.shape[1], len(self.tokens.is_head))):
            self._fit()
            self.tokens.cover(schema.n_tokens, self.n_classes, schema.n_columns)
        elif schema.n_tokens != self.tokens.n_tokens:
            self.tokens.cover(schema.n_tokens, self.n_classes, schema.n_columns)

    def _grown(self, table: np.ndarray, k: int, s: int) -> np.ndarray:
        """``table`` (classes × slots) with room for ``k`` classes and ``s`` slots."""
        kc, sc = table.shape
        if k <= kc and s <= sc:
            return table
        grown = np.zeros((self._vc.shape[0], max(s, 2 * sc if s > sc else sc, 4)))
        grown[:kc, :sc] = table
        return grown

    # -- learning -----------------------------------------------------------------------------
    def encode_label(self, y: Any, record: str) -> Any:
        try:
            return normalize_label(y)
        except (TypeError, ValueError) as exc:
            raise InvalidRecord(record, "label", str(exc)) from None

    def update(self, x: Mapping, y: Any, record: str | int = "record") -> None:
        """Count one labelled record; on invalid input nothing changes. ``record`` names it in
        error messages (an int n reads "record n")."""
        try:
            self._update_known(x, y, record)
        except InvalidRecord as exc:
            if exc.record is not UNNAMED:
                raise
            # a registration's refusal names no record
            raise named(exc, f"record {record}" if isinstance(record, int) else record
                        ) from None

    def _update_known(self, x: Mapping, y: Any, record: str | int) -> None:
        """``update``, whose refusals may not name the record yet."""
        if type(x) is dict and x and (type(y) is str or type(y) is int or type(y) is bool):
            # the common case of a message of known tokens and a known class, in one kernel
            # call; anything else (new tokens, other kinds, a new class) takes the general path
            c = self.labels.index.get(y)
            if c is not None and len(x) == 1 and self._update_text(x, c):
                return
            if c is not None:
                schema, tokens, new = self.schema, self.tokens, []
                crossed = learn_tokens(x, schema.attributes, self._vc, c, tokens.bins,
                                       tokens.is_head, tokens.exact, new)
                if new:  # the message's new tokens (str names, present): registered in bulk
                    schema.add_tokens(new)
                    self._fit_record()
                    crossed = learn_tokens(x, schema.attributes, self._vc, c, tokens.bins,
                                           tokens.is_head, tokens.exact)
                if crossed is not None:
                    self._cc[c] += 1.0
                    tokens.counted(c, crossed, self._vc)
                    self.version += 1
                    return
        self._update(x, y, f"record {record}" if isinstance(record, int) else record)

    def _update_text(self, x: dict, c: int) -> bool:
        """Count a record of one known text attribute whose value draws each token once (a
        message's token set) for known class ``c`` without the general encoder: what
        :meth:`_update` does for it, equal array for array. False, changing nothing, for any
        other record."""
        schema = self.schema
        (name, bag), = x.items()
        a = schema.attributes.get(name)
        if a is None or schema.kinds[a] != TEXT or not bag:
            return False
        columns = text_columns(schema, a, bag, grow=True)
        if columns is None:
            return False
        self._fit_record()
        self._cc[c] += 1.0
        tokens = self.tokens
        token_increment(self._vc, c, columns, tokens.bins, tokens.is_head, False)
        tokens.counted(c, [], self._vc)  # N(c) changed: class c's all-absent sum is stale
        self._dc[c, schema.slots[a]] += float(len(columns))
        self.version += 1
        return True

    def _update(self, x: Mapping, y: Any, record: str) -> None:
        label = y if type(y) is str else self.encode_label(y, record)
        if not x:
            if not isinstance(x, Mapping):
                raise InvalidRecord(record, None, f"expected a mapping of features, got "
                                    f"{type(x).__name__}")
            raise InvalidRecord(record, None, "the record has no features")
        if label not in self.labels.index:  # a new class: refused before anything changes
            refuse_unencodable([label], "label", record, what="label")
        schema = self.schema
        mark = schema.mark()
        try:
            enc = encode(schema, x, record, grow=True)
        except BaseException:
            schema.rollback(mark)
            raise
        c = self.labels.add(label)
        self._fit_record()
        self._cc[c] += 1.0
        row = self._vc[c]
        if enc.nominal_columns:
            row[enc.nominal_columns] += 1.0
        # N(c) changed, so class c's all-absent sum is stale even without a present token
        tokens = self.tokens
        crossed = token_increment(self._vc, c, enc.token_columns, tokens.bins, tokens.is_head,
                                  tokens.exact) if enc.token_columns else []
        tokens.counted(c, crossed, self._vc)
        if enc.nominal_slots:
            self._oc[c, enc.nominal_slots] += 1.0
        if enc.text_columns:  # distinct tokens per attribute: no repeated index
            row[enc.text_columns] += enc.text_counts
            n_text = self.schema.n_text  # per text attribute, as add_batch sums a batch's
            self._dc[c, :n_text] += np.bincount(enc.text_slots, weights=enc.text_counts,
                                                minlength=n_text)
        if enc.numeric_slots:
            self.moments.update(c, enc.numeric_slots, enc.numeric_values)
        self.version += 1

    def update_many(self, xs: Any, ys: Iterable[Any],
                    record: str = "row") -> EncodedBatch:
        """Count a batch (a sequence of mappings, a DataFrame, or an :class:`EncodedBatch`
        from :meth:`encode`); equal to ``update`` on each record in order. A bad record rejects
        the whole batch (its row is named) and leaves the statistics unchanged."""
        classes: Sequence[int] | None = self._known_int_classes(ys)
        given = [] if classes is not None else labels_of(ys)
        n = len(classes) if classes is not None else len(given)
        if n != n_rows(xs):
            raise ValueError(f"{n_rows(xs)} records but {n} labels")
        if classes is None:
            classes = self._known_classes(given)
        labels = given if classes is not None else [
            y if type(y) is str or type(y) is int or type(y) is bool
            else self.encode_label(y, RecordName(record, i)) for i, y in enumerate(given)]
        if classes is None:  # new classes among the labels: refused before anything changes
            index = self.labels.index
            try:
                refuse_unencodable([y for y in dict.fromkeys(labels) if y not in index],
                                   "label", what="label")
            except InvalidRecord as exc:
                raise named(exc, RecordName(record, labels.index(exc.value))) from None
        if isinstance(xs, EncodedBatch):
            batch = xs
            if batch.registrations is None:
                raise TypeError("an EncodedBatch to learn comes from CountStatistics.encode")
            if batch.schema_version != self.schema.version:
                raise ValueError("the batch was encoded before these statistics' attributes "
                                 "changed: encode it again")
            self.schema.replay(batch.registrations)
        else:
            mark = self.schema.mark()
            try:
                batch = encode_batch(self.schema, xs, record, grow=True)
            except BaseException:
                self.schema.rollback(mark)
                raise
        if classes is None:
            index, add = self.labels.index, self.labels.add
            classes = [index[label] if label in index else add(label) for label in labels]
        self.add_batch(batch, classes)
        return batch

    def _known_int_classes(self, ys: Any) -> np.ndarray | None:
        """The class indices of a numpy array (or pandas Series) of integer labels, all of
        classes seen before, in numpy operations; None otherwise."""
        if getattr(ys, "dtype", None) is None or ys.dtype.kind not in "iu" or ys.ndim != 1:
            return None
        ys = np.asarray(ys)
        small = bool(len(ys) and (ys.dtype.kind == "i" or ys.itemsize < 8)  # bincount's types
                     and ys.min() >= 0 and ys.max() < 4 * len(ys))
        # labels 0, 1, … (the usual int labels): their distinct values from a bincount
        distinct = np.flatnonzero(np.bincount(ys)) if small else np.unique(ys)
        index = self.labels.index
        places = [index.get(y) for y in distinct.tolist()]
        if None in places:
            return None
        if small:
            table = np.zeros(int(distinct[-1]) + 1, dtype=np.int64)
            table[distinct] = places
            return table[ys]
        return np.asarray(places, dtype=np.int64)[np.searchsorted(distinct, ys)]

    def _known_classes(self, ys: list) -> list[int] | None:
        """The class indices of a batch's labels when each is a str, int or bool of a class
        seen before (the common case after the first batches), read at C speed; None
        otherwise (new classes are registered in order of first appearance, and other types
        checked one by one, by the caller)."""
        index = self.labels.index
        try:
            distinct = set(ys)
        except TypeError:  # an unhashable label: the caller names its row
            return None
        if not all((type(y) is str or type(y) is int or type(y) is bool) and y in index
                   for y in distinct):
            return None
        return list(map(index.__getitem__, ys))

    def encode(self, xs: Any, record: str = "row") -> EncodedBatch:
        """Encode a batch once for both prediction and learning (``predict_proba_many`` then
        ``learn_many``, the prequential order): what ``update_many`` would register is
        recorded in the batch, not in the schema, until the batch is learned. Records that
        ``update_many`` would reject are rejected here (a record with no features too, which
        prediction alone would read as the prior). Valid until the schema changes (learning
        this batch or another)."""
        schema = self.schema
        mark = schema.mark()
        try:
            batch = encode_batch(schema, xs, record, grow=True)
            batch.registrations = schema.registered_since(mark)
        finally:
            schema.rollback(mark)
        batch.schema_version = schema.version
        batch.known_columns, batch.known_numeric = mark[1], mark[3]
        return batch

    def add_batch(self, batch: EncodedBatch, classes: Sequence[int]) -> None:
        """Add encoded records of classes ``classes``: O(cells of the batch), whatever the
        vocabulary (only the cells the batch touches are read or written)."""
        if not batch.n:
            return
        self._fit()
        k, n_cols = self.n_classes, self.schema.n_columns
        cls = np.asarray(classes, dtype=np.int64)
        np.add.at(self._cc, cls, np.ones(len(cls)))  # one record at a time, as _add_at
        tokens = self.tokens
        if tokens.exact:  # integer counts plus integer counts: still exact
            # each token cell counted and moved between the histogram's bins in one C pass
            tokens.cover(self.schema.n_tokens, k, n_cols)
            tokens.joined(token_increment_many(self._vc, cls[batch.token_rows],
                                               batch.token_columns, tokens.bins,
                                               tokens.is_head))
        else:
            _add_at(self._vc, cls[batch.token_rows], batch.token_columns)
        nominal_classes, text_classes = cls[batch.nominal_rows], cls[batch.text_rows]
        _add_at(self._vc, nominal_classes, batch.nominal_columns)
        _add_at(self._vc, text_classes, batch.text_columns, batch.text_counts)
        # slot tables are classes × attributes of a kind, never vocabulary-sized
        _add_at(self._oc, nominal_classes, batch.nominal_slots)
        if len(batch.text_columns):  # a record's draws per text attribute summed, as update
            n_text = self.schema.n_text  # adds them, then added record by record
            draws = np.bincount(batch.text_rows * n_text + batch.text_slots,
                                weights=batch.text_counts, minlength=batch.n * n_text)
            _add_at(self._dc, np.repeat(cls, n_text), np.tile(np.arange(n_text), batch.n),
                    draws)
        if len(batch.numeric_slots):
            self.moments.update_many(cls[batch.numeric_rows], batch.numeric_slots,
                                     batch.numeric_values)
        if not tokens.exact:
            self._rebuild_histogram()
        self.version += 1

    def _rebuild_histogram(self) -> None:
        tokens = self.schema.token_columns()
        self.tokens.rebuild(self.class_counts, self.cells(tokens), tokens,
                            self.schema.n_columns)

    # -- monoid operations --------------------------------------------------------------------
    def decay(self, factor: float) -> None:
        """Multiply every count by ``factor`` in (0, 1]: exponential forgetting."""
        check_decay_factor(factor)
        self._cc *= factor
        self._vc *= factor
        self._oc *= factor
        self._dc *= factor
        self.moments.decay(factor)
        if factor != 1.0:
            self._rebuild_histogram()
        self.version += 1

    def merge(self, other: CountStatistics) -> CountStatistics:
        """Add ``other``'s counts to these (domains reconciled by value). Returns ``self``."""
        if other.schema.declared_nominal != self.schema.declared_nominal:
            raise ValueError("cannot merge statistics with different declared nominal attributes")
        columns, nominal, numeric, text = self.schema.absorb(other.schema)
        rows = np.array([self.labels.add(label) for label in other.labels.values], dtype=np.int64)
        self._fit()
        k, tokens = self.n_classes, self.tokens
        # integer counts plus integer counts stay exact: only ``other``'s tokens move bins
        incremental = tokens.exact and other.tokens.exact
        if incremental:
            tokens.cover(self.schema.n_tokens, k, self.schema.n_columns)
            touched = columns[other.schema.token_columns()]
            before = self._vc[:k, touched]
        self._cc[rows] += other.class_counts
        if len(columns):
            self._vc[np.ix_(rows, columns)] += other.value_counts
        if len(nominal):
            self._oc[np.ix_(rows, nominal)] += other.observed_counts
        if len(text):
            self._dc[np.ix_(rows, text)] += other.draw_counts
        if len(numeric):
            om = other.moments
            self.moments.combine(om.weight, om.mean, om.m2, rows, numeric)
        if incremental:
            tokens.recount(touched, before, self._vc[:k, touched])
        else:
            self._rebuild_histogram()
        self.version += 1
        return self

    def copy(self) -> CountStatistics:
        meta, arrays = self.to_state()
        return CountStatistics.from_state(meta, arrays)

    # -- persistence --------------------------------------------------------------------------
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        self._fit()
        schema, schema_arrays = self.schema.to_state()
        meta = {"schema": schema, "labels": self.labels.to_json()}
        arrays = {
            **{f"schema.{name}": array for name, array in schema_arrays.items()},
            "class_counts": self.class_counts,
            "value_counts": self.value_counts,
            "observed_counts": self.observed_counts,
            "draw_counts": self.draw_counts,
            "moment_weight": self.moments.weight,
            "moment_mean": self.moments.mean,
            "moment_m2": self.moments.m2,
        }
        return meta, arrays

    @classmethod
    def from_state(cls, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
                   ) -> CountStatistics:
        stats = cls(Schema.from_state(meta["schema"], {
            name[len("schema."):]: array for name, array in arrays.items()
            if name.startswith("schema.")}))
        stats.labels = Domain.from_json(meta["labels"], "label")
        k, s = stats.n_classes, stats.schema
        expected = {
            "class_counts": (k,),
            "value_counts": (k, s.n_columns),
            "observed_counts": (k, s.n_nominal),
            "draw_counts": (k, s.n_text),
            "moment_weight": (k, s.n_numeric),
            "moment_mean": (k, s.n_numeric),
            "moment_m2": (k, s.n_numeric),
        }
        if "draw_counts" not in arrays and not s.n_text:  # states saved before text existed
            arrays = {**arrays, "draw_counts": np.zeros((k, 0))}
        for name, shape in expected.items():
            if name not in arrays or arrays[name].shape != shape:
                got = arrays[name].shape if name in arrays else "nothing"
                raise ValueError(f"array {name!r}: expected shape {shape}, got {got}")
        stats._cc = np.array(arrays["class_counts"], dtype=np.float64)
        stats._vc = np.array(arrays["value_counts"], dtype=np.float64).reshape(k, s.n_columns)
        stats._oc = np.array(arrays["observed_counts"], dtype=np.float64).reshape(k, s.n_nominal)
        stats._dc = np.array(arrays["draw_counts"], dtype=np.float64).reshape(k, s.n_text)
        stats.moments.weight = np.array(arrays["moment_weight"], dtype=np.float64)
        stats.moments.mean = np.array(arrays["moment_mean"], dtype=np.float64)
        stats.moments.m2 = np.array(arrays["moment_m2"], dtype=np.float64)
        stats._fit()
        stats._rebuild_histogram()
        return stats

    def to_dict(self) -> dict[str, dict]:
        """Every statistic keyed by names and values, not indices: two states hold the same
        statistics iff their ``to_dict()`` are equal, whatever order their domains grew in."""
        s, labels = self.schema, self.labels.values
        names = s.attributes.names()
        cells = {}
        for j, (a, value) in enumerate(zip(s.column_attribute.tolist(), s.column_value,
                                               strict=True)):
            for c, label in enumerate(labels):
                cells[(names[a], True if value is None else value, label)] = float(
                    self.value_counts[c, j])
        observed = {(names[a], label): float(self.observed_counts[c, slot])
                    for slot, a in enumerate(s.nominal_attributes)
                    for c, label in enumerate(labels)}
        m = self.moments
        draws = {(names[a], label): float(self.draw_counts[c, slot])
                 for slot, a in enumerate(s.text_attributes)
                 for c, label in enumerate(labels)}
        moments = {(names[a], label): (float(m.weight[c, slot]), float(m.mean[c, slot]),
                                       float(m.m2[c, slot]))
                   for slot, a in enumerate(s.numeric_attributes)
                   for c, label in enumerate(labels)}
        return {
            "classes": dict(zip(labels, self.class_counts.tolist(), strict=True)),
            "kinds": {n: k for n, k in zip(names, s.kinds, strict=True)},
            "cells": cells,
            "observed": observed,
            "draws": draws,
            "moments": moments,
        }
