"""Learning a batch into a partition's state and into the sum with one encoding of its records.

A count-only model's batch (:func:`learns_counts_only`) is encoded once, for the state, and the
sum learns that encoding translated to its own columns (:class:`SumColumns`): the same counts,
registrations and rejections as encoding the records for each model, which the other models
still do.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from streamnb.models.base import CountClassifier
from streamnb.models.naive_bayes import NaiveBayes
from streamnb.stats import EncodedBatch, InvalidRecord, Schema
from streamnb.stats.encoded import Registrations
from streamnb.stats.schema import NOMINAL, NUMERIC, TEXT, TOKEN

__all__ = ["OneEncoding", "SumColumns", "Unmapped", "learns_counts_only"]


def learns_counts_only(model: CountClassifier) -> bool:
    """Whether ``model``'s ``learn_many`` is its statistics' ``update_many`` and nothing else
    (the count-only models: NaiveBayes and IndifferentNB reading floats as Gaussians), so that
    learning a batch encoded for another model's schema, translated to this one's
    (:class:`SumColumns`), is learning the records. Models that keep more than counts (pair
    tables, reservoirs, schedules, intervals) or read texts (SpamFilter) learn the records
    themselves, and so do the readings of floats in fine bins: each model's grid is fitted to
    the values it has seen, so a state's bin of a value need not be the sum's."""
    kind = type(model)
    # NaiveBayes's learn_many is update_many but for the schedule of its MDL intervals
    return (kind.learn_many in (CountClassifier.learn_many, NaiveBayes.learn_many)
            and kind.encode_many is CountClassifier.encode_many
            and getattr(model, "numeric", None) not in ("mdl", "bins"))


class Unmapped(Exception):
    """The sum cannot take a state's batch as encoded: it misses an attribute or value the
    state knew before the batch, or knows an attribute as another kind (it encodes the records
    itself then, and decides what to reject)."""


class SumColumns:
    """Where one partition state's columns and slots are in the sum, so that a batch encoded
    once for the state (``encode_many``) is also the batch the sum learns: the same cells in
    the sum's columns, and the sum's own registrations, in the order the sum would make them.

    The sum holds every attribute and value of the state (it is the sum of the states), so what
    a batch registers in the sum is a subset of what it registers in the state, in the same
    record order: the state's registrations, without those the sum has. Both schemas only grow
    while the pair lasts (what a model learned is never unregistered), so the map only grows:
    O(the batch's new columns) a batch, O(the state's columns) once per (state, sum) pair, i.e.
    after each rebuild of the sum, which is O(vocabulary) itself."""

    def __init__(self, state: CountClassifier, total: CountClassifier) -> None:
        self.state, self.total = state, total
        self.columns = np.zeros(64, dtype=np.int64)  # state column -> sum column (a buffer)
        self.n_columns = 0  # how many of ``columns`` are mapped
        # state slot -> sum slot, per kind of attribute with slots of its own
        self.slots: dict[int, list[int]] = {NOMINAL: [], NUMERIC: [], TEXT: []}
        self._pending: tuple[int, dict[int, list[int]]] | None = None

    @staticmethod
    def _kind_slots(schema: Schema) -> dict[int, list[int]]:
        return {NOMINAL: schema.nominal_attributes, NUMERIC: schema.numeric_attributes,
                TEXT: schema.text_attributes}

    def _attribute(self, name: Any, kind: int, binned: bool) -> int:
        """The sum's attribute ``name``, of kind ``kind`` (of binned floats or not)."""
        total = self.total.stats.schema
        a = total.attributes.get(name)
        if a is None or total.kinds[a] != kind or (a in total.binned) != binned:
            raise Unmapped(name)
        return a

    def _reserve(self, n: int) -> None:
        if n > len(self.columns):
            grown = np.zeros(max(n, 2 * len(self.columns)), dtype=np.int64)
            grown[: self.n_columns] = self.columns[: self.n_columns]
            self.columns = grown

    def _catch_up(self) -> None:
        """Map the state's columns and slots registered since the map last grew (every one,
        for a new pair)."""
        state, total = self.state.stats.schema, self.total.stats.schema
        name, kinds = state.attributes.name, state.kinds
        n = state.n_columns
        self._reserve(n)
        for j in range(self.n_columns, n):
            a = state.column_attribute[j]
            mine = self._attribute(name(a), kinds[a], a in state.binned)
            column = (total.slots[mine] if kinds[a] == TOKEN
                      else total.values_of(mine).get(state.column_value[j]))
            if column is None:
                raise Unmapped(name(a))
            self.columns[j] = column
            self.n_columns = j + 1
        for kind, attributes in self._kind_slots(state).items():
            slots = self.slots[kind]
            for a in attributes[len(slots):]:
                slots.append(total.slots[self._attribute(name(a), kind, a in state.binned)])

    def translate(self, batch: EncodedBatch) -> EncodedBatch:
        """``batch`` (the state's ``encode_many``, not learned yet) as the sum's
        ``encode_many`` of the same records would give it, to learn into the sum once the state
        learned ``batch``; then :meth:`commit`. Raises :class:`Unmapped` if the sum cannot
        take it so."""
        state, total = self.state.stats.schema, self.total.stats.schema
        if batch.schema_version != state.version or batch.registrations is None:
            raise ValueError("a batch to translate comes from the state's encode_many, "
                             "before the state learns anything else")
        self._catch_up()
        first_attribute = state.n_attributes
        if batch.registrations.tokens is not None:
            return self._translate_tokens(batch, batch.registrations.tokens)
        new_attributes, new_columns = batch.registrations
        binned = batch.registrations.binned
        # the sum's attribute of each of the state's new ones (past the sum's for one new to it)
        known, kinds, places = total.attributes.get, total.kinds, total.slots
        n_attributes, n_columns = total.n_attributes, total.n_columns
        where: list[int] = []
        added: list[tuple[Any, int]] = []
        added_binned: list[int] = []
        counts = {kind: len(a) for kind, a in self._kind_slots(total).items()}
        slots = {kind: list(s) for kind, s in self.slots.items()}
        for i, (name, kind) in enumerate(new_attributes):
            mine = known(name)
            if mine is None:
                mine = n_attributes + len(added)
                if i in binned:
                    added_binned.append(len(added))
                added.append((name, kind))
                if kind != TOKEN:
                    slots[kind].append(counts[kind])
                    counts[kind] += 1
            elif kinds[mine] != kind or (mine in total.binned) != (i in binned):
                raise Unmapped(name)
            elif kind != TOKEN:
                slots[kind].append(places[mine])
            where.append(mine)
        # the sum's column of each of the state's new ones: the sum's registrations are the
        # state's that are new to it, in the state's order (the order of the records)
        registered: list[tuple[int, Any]] = []
        columns: list[int] = []
        for a, value in new_columns:
            if a >= first_attribute:
                kind, mine = new_attributes[a - first_attribute][1], where[a - first_attribute]
            else:
                kind = state.kinds[a]
                mine = self._attribute(state.attributes.name(a), kind, a in state.binned)
            column = None
            if mine < n_attributes:  # an attribute the sum has: maybe the value too
                column = places[mine] if kind == TOKEN else total.values_of(mine).get(value)
            if column is None:
                column = n_columns + len(registered)
                registered.append((mine, value))
            columns.append(column)
        return self._translated(batch, columns, slots, Registrations(added, registered,
                                                                      added_binned))

    def _translate_tokens(self, batch: EncodedBatch, tokens: list[Any]) -> EncodedBatch:
        """:meth:`translate` of a batch whose registrations are new tokens only (the common
        case of a message stream): each token's column is its attribute's, so the map is one
        lookup a token, and the sum's registrations stay in their bulk form (the tokens new to
        it, in the state's order), which the sum registers without a Python call a column."""
        total = self.total.stats.schema
        kinds, places = total.kinds, total.slots
        n_attributes, n_columns = total.n_attributes, total.n_columns
        found = list(map(total.attributes.get, tokens))
        fresh = [token for token, mine in zip(tokens, found, strict=True) if mine is None]
        columns: list[int] = []
        new = n_columns
        for token, mine in zip(tokens, found, strict=True):
            if mine is None:
                columns.append(new)
                new += 1
            elif kinds[mine] != TOKEN:
                raise Unmapped(token)
            else:
                columns.append(places[mine])
        return self._translated(batch, columns, {kind: list(s) for kind, s in self.slots.items()},
                                Registrations.new_tokens(n_attributes, fresh))

    def _translated(self, batch: EncodedBatch, new_columns: list[int],
                    slots: dict[int, list[int]], registrations: Registrations) -> EncodedBatch:
        """The sum's batch, its new columns mapped to ``new_columns`` and its slots to
        ``slots``, pending :meth:`commit`."""
        total = self.total.stats.schema
        first_column = self.state.stats.schema.n_columns
        n = first_column + len(new_columns)
        self._reserve(n)
        self.columns[first_column:n] = new_columns  # past n_columns until commit: scratch
        self._pending = (n, slots)
        columns = self.columns
        arrays = {kind: np.asarray(s, dtype=np.int64) for kind, s in slots.items()}
        shared = EncodedBatch.from_arrays(
            batch.n, token_rows=batch.token_rows, token_columns=columns[batch.token_columns],
            nominal_rows=batch.nominal_rows, nominal_columns=columns[batch.nominal_columns],
            nominal_slots=arrays[NOMINAL][batch.nominal_slots],
            numeric_rows=batch.numeric_rows, numeric_slots=arrays[NUMERIC][batch.numeric_slots],
            numeric_values=batch.numeric_values,
            text_rows=batch.text_rows, text_columns=columns[batch.text_columns],
            text_counts=batch.text_counts, text_slots=arrays[TEXT][batch.text_slots])
        shared.registrations = registrations
        shared.schema_version = total.version
        shared.known_columns, shared.known_numeric = total.n_columns, total.n_numeric
        return shared

    def commit(self) -> None:
        """Both models learned the translated batch: its new columns and slots are mapped."""
        if self._pending is not None:
            self.n_columns, self.slots = self._pending
            self._pending = None


class OneEncoding:
    """Each own state's :class:`SumColumns` into the sum, kept while both models last."""

    def __init__(self) -> None:
        self._maps: dict[Hashable, SumColumns] = {}

    def __len__(self) -> int:
        """How many states' maps are kept."""
        return len(self._maps)

    def forget(self, key: Hashable | None = None) -> None:
        """Drop ``key``'s map (``None``: every map, the sum being replaced)."""
        if key is None:
            self._maps.clear()
        else:
            self._maps.pop(key, None)

    def learn(self, key: Hashable, state: CountClassifier, total: CountClassifier,
              xs: Sequence[dict], ys: Sequence[Any]) -> bool:
        """Learn ``xs, ys`` into ``state`` and the sum ``total`` with one encoding of the
        records (the state's, translated to the sum's columns); whether they were learned.
        False, with nothing learned, when a record is invalid or the sum cannot take the
        state's encoding: the caller then learns the records into each model, the sum first
        (which decides what to reject, as it always has)."""
        sums = self._maps.get(key)
        if sums is None or sums.state is not state or sums.total is not total:
            sums = self._maps[key] = SumColumns(state, total)
        try:
            batch = state.encode_many(xs)
            shared = sums.translate(batch)
            state.learn_many(batch, ys)  # a bad label raises before anything changes
        except (InvalidRecord, Unmapped):
            return False
        total.learn_many(shared, ys)
        sums.commit()
        return True
