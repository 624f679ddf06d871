"""The coarse layer of the discrete-attribute models' numeric attributes (TAN, AODE and the
selective models): a model of the same class over MDL intervals, derived from the fine
(fine-bin) counts by summation.

The model's state is its fine counts (:mod:`streamnb.stats.binning`: per class, each fine bin
of a float attribute, and whatever else the model keeps by value — pair tables of bins, a
reservoir of records' bins, family tables); they add across shards and decay as a whole. At
each structure update the model chooses each binned attribute's intervals from its fine
per-class counts (:class:`~streamnb.stats.binning.Coarsening`, Fayyad–Irani MDL) and sums its
fine state into the intervals' (:func:`coarse_model`): a model of the same class whose binned
attributes are nominal attributes of intervals, which then learns each record with its floats
read as intervals (O(attributes) more per record) and makes every prediction and structure,
until the next update. It is a function of the fine state and the cut points alone, so it is
rebuilt exactly after a merge, a decay or a load, never from records.

:class:`IntervalReading` is the layer a model mixes in; the model says how its own state beyond
the counts is summed (``_coarse_extra``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from streamnb.models.persistence import from_state, init_params, params_state, state_name
from streamnb.stats.binning import Coarsening, grid_name, grid_of, sum_columns
from streamnb.stats.codec import from_json_value, to_json_value
from streamnb.stats.encoded import EncodedBatch
from streamnb.stats.frames import records_of
from streamnb.stats.values import InvalidRecord

__all__ = ["IntervalReading", "coarse_model", "regridded", "value_map"]

# the coarse model's own schedules and forgetting are off: its owner decides when it is rebuilt
_OWNED = {"numeric": "bins", "relearn_every": 0, "refresh_every": 0, "drift_detector": None,
          "half_life": None}


def coarse_model(model: Any, coarsening: Coarsening) -> Any:
    """A model of ``model``'s class whose counts are ``model``'s summed into ``coarsening``'s
    intervals (its structure and other state as ``model``'s, summed likewise)."""
    stats_state, to = coarsening.statistics_state(model.stats.to_state())
    params = init_params(model)
    coarse = type(model)(**{name: _OWNED.get(name, value) for name, value in params.items()})
    coarse.stats = type(model.stats).from_state(*stats_state)
    coarse.n_learned = model.n_learned
    extra, arrays = model._coarse_extra(coarse.stats, to)
    coarse._restore_extra({**extra, "coarse_cuts": None}, arrays)
    return coarse


def regridded(model: Any, exponents: dict[Any, int]) -> Any:
    """A model of ``model``'s class and parameters whose state is ``model``'s with the fine
    bins of each attribute named in ``exponents`` read at that grid exponent: every bin's
    column summed into the wider bin holding it (:func:`~streamnb.stats.binning.sum_columns`),
    and the model's state kept by column alike (``_coarse_extra``) — the state the model
    would hold had it counted its values in the wider bins from the start."""

    def wider(name: Any, value: str) -> str | None:
        if name not in exponents:
            return None
        i, e = grid_of(value)
        return grid_name(i >> (exponents[name] - e), exponents[name])

    stats_state, to = sum_columns(model.stats.to_state(), wider, binned=True)
    new_stats = type(model.stats).from_state(*stats_state)
    meta, _ = model._extra_state()
    extra, arrays = model._coarse_extra(new_stats, to)
    header = {"model": state_name(type(model)), "params": params_state(model),
              "n_learned": model.n_learned, "statistics": stats_state[0],
              "extra": {**meta, **extra}}
    return from_state(header, {**stats_state[1],
                               **{f"extra.{k}": v for k, v in arrays.items()}})


def value_map(fine: Any, coarse: Any, a: int, to: np.ndarray) -> np.ndarray:
    """The coarse value index of each value index of nominal attribute ``a`` (schemas
    ``fine`` and ``coarse``; ``to`` the column map of
    :meth:`~streamnb.stats.binning.Coarsening.statistics_state`)."""
    rank = {column: r for r, column in enumerate(coarse.nominal_values[coarse.slots[a]].values())}
    return np.array([rank[int(to[column])]
                     for column in fine.nominal_values[fine.slots[a]].values()], dtype=np.int64)


class IntervalReading:
    """Mixin of a discrete-attribute model whose float attributes are counted in fine bins:
    under ``numeric="mdl"`` it reads them in MDL intervals of the bins through a coarse model
    (module docstring). The model calls :meth:`rediscretise` at each structure update,
    :meth:`_recoarsen` whenever its counts change as a whole (a batch, a merge, a decay),
    :meth:`_learn_coarse_one` after counting a record; it implements ``_coarse_extra`` and its
    reading of the fine state, ``_fine_log_likelihood_one`` and ``_fine_joint_log_likelihood``,
    which predictions use when there are no intervals (the coarse model's otherwise)."""

    numeric: str
    stats: Any
    _coarsening: Coarsening | None = None
    _coarse: Any = None
    _regrid_held = False

    @contextlib.contextmanager
    def _regrid_after(self) -> Iterator[None]:
        """Re-bin once the body is done: a merge whose state kept beside the counts (pair
        tables) is added after the counts, so that both are summed into the wider bins
        together."""
        self._regrid_held = True
        try:
            yield
        finally:
            self._regrid_held = False
        self._regrid()

    def _regrid(self) -> None:
        """Sum the fine state of attributes whose grid widened into the wider bins
        (:func:`regridded`): after a record, a batch or a merge brought a value beyond the
        grid's range; O(1) otherwise. The intervals' cut points stay (positions on the line)."""
        schema = self.stats.schema
        if not schema.regrid_pending or self._regrid_held:
            return
        exponents = schema.regrid_exponents()
        if not exponents:
            return
        fresh = regridded(self, exponents)
        coarsening = self._coarsening
        self.__dict__.update(fresh.__dict__)
        self._coarsening, self._coarse = coarsening, None

    def rediscretise(self) -> None:
        """Choose the binned attributes' intervals from the fine counts now (MDL) and derive
        the coarse model; every structure update calls it. Nothing under ``numeric="bins"``,
        or before a float attribute."""
        self._regrid()
        if self.numeric != "mdl" or not self.stats.schema.binned:
            return
        self._coarsening = Coarsening.of(self.stats)
        self._coarse = None

    @property
    def intervals(self) -> dict[Any, list[float]]:
        """Per float attribute, where its intervals after the first start (the left ends of
        fine bins, :func:`~streamnb.stats.binning.bin_position`), as chosen at the last
        structure update; empty before one, or under ``numeric="bins"``."""
        return {} if self._coarsening is None else {
            name: list(cuts) for name, cuts in self._coarsening.cuts.items()}

    def _recoarsen(self) -> None:
        """The coarse model is to be derived again from the fine state (after a batch, a
        merge, a decay or a load), with the current intervals, when next read."""
        self._regrid()
        self._coarse = None

    def _coarse_now(self) -> Any:
        """The coarse model (None without intervals), derived now if it is not current."""
        if self._coarse is None and self._coarsening is not None:
            self._coarse = coarse_model(self, self._coarsening)
        return self._coarse

    def _learn_coarse_one(self, x: Mapping, y: Any) -> None:
        """Learn a record the fine state just learned into a current coarse model too (a
        model derived later already holds it); first re-bin a grid the record widened."""
        self._regrid()
        if self._coarse is not None:
            self._coarse.learn_one(self._coarse_record(x, "record"), y)

    # -- prediction: in the intervals when there are any, else in the fine state --------------
    def _log_likelihood_one(self, x: Mapping) -> Any:
        coarse = self._coarse_now()
        if coarse is not None:
            return coarse._log_likelihood_one(self._coarse_record(x, "record to predict"))
        return self._fine_log_likelihood_one(x)

    def _joint_log_likelihood(self, records: Any, where: str) -> tuple[np.ndarray, np.ndarray]:
        coarse = self._coarse_now()
        if coarse is not None and not isinstance(records, EncodedBatch):
            return coarse._joint_log_likelihood(self._coarse_records(records, where), where)
        return self._fine_joint_log_likelihood(records, where)

    def _fine_log_likelihood_one(self, x: Mapping) -> Any:
        """Finite part and zero-factor counts of log P(x, c) per class, read in the fine
        state (the model's own ``_log_likelihood_one``)."""
        raise NotImplementedError

    def _fine_joint_log_likelihood(self, records: Any, where: str
                                   ) -> tuple[np.ndarray, np.ndarray]:
        """The batch of :meth:`_fine_log_likelihood_one` (the model's own
        ``_joint_log_likelihood``)."""
        raise NotImplementedError

    def _coarse_record(self, x: Any, where: str) -> Any:
        """``x`` with its floats read as intervals, for the coarse model."""
        if not isinstance(x, Mapping):
            raise InvalidRecord(where, None, f"expected a mapping of features, got "
                                f"{type(x).__name__}")
        return self._coarsening.record(x, where, self.stats.schema)

    def _coarse_records(self, records: Any, where: str) -> Any:
        """A batch's records with their floats read as intervals (None for an EncodedBatch,
        encoded for the fine schema: the caller reads it in the fine bins)."""
        if isinstance(records, EncodedBatch):
            return None
        return [self._coarse_record(x, f"{where} {i}") for i, x in enumerate(records_of(
            records))]

    def _coarse_extra(self, coarse_stats: Any, to: np.ndarray
                      ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The model's ``_extra_state`` summed into the intervals: ``coarse_stats`` are the
        coarse counts (their schema for :func:`value_map`), ``to`` their column map."""
        raise NotImplementedError

    # -- persistence (the cut points travel with the state) --------------------------------------
    def _intervals_state(self) -> Any:
        return None if self._coarsening is None else to_json_value(self._coarsening.cuts)

    def _restore_intervals(self, meta: Mapping[str, Any]) -> None:
        cuts = meta.get("coarse_cuts")
        self._coarsening = None if cuts is None else Coarsening(from_json_value(cuts))
        self._coarse = None
