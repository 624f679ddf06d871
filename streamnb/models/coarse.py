"""The coarse layer of the discrete-attribute models' numeric attributes: a model of the same
class over MDL intervals, derived from the fine (fixed-bin) counts by summation.

The model's state is its fine counts (:mod:`streamnb.stats.binning`: per class, each fixed bin
of a float attribute, and the pair tables of bins); they add across shards and decay as a
whole. At each structure update the model chooses each binned attribute's intervals from its
fine per-class counts (:class:`~streamnb.stats.binning.Coarsening`, Fayyad–Irani MDL) and sums
the fine counts and pair tables into the intervals' (:func:`coarse_model`): a model of the same
class whose binned attributes are nominal attributes of intervals, which then learns each
record with its floats read as intervals (O(attributes) more per record) and makes every
prediction and structure, until the next update. It is a function of the fine counts and the
cut points alone, so it is rebuilt exactly after a merge, a decay or a load, never from records.
"""

from __future__ import annotations

from typing import Any

from streamnb.models.persistence import init_params
from streamnb.stats.binning import Coarsening

__all__ = ["coarse_model"]

# the coarse model's own schedules are off: its owner decides when it is rebuilt
_OWNED = {"numeric": "bins", "relearn_every": 0, "refresh_every": 0, "drift_detector": None}


def coarse_model(model: Any, coarsening: Coarsening) -> Any:
    """A model of ``model``'s class whose counts are ``model``'s summed into ``coarsening``'s
    intervals (its structure, candidates and other state as ``model``'s)."""
    stats = model.stats.to_state()
    extra, extra_arrays = model._extra_state()
    (stats_meta, stats_arrays), (pairs_meta, pairs_arrays) = coarsening.statistics_state(
        stats, (extra["pairs"], extra_arrays))
    params = init_params(model)
    coarse = type(model)(**{name: _OWNED.get(name, value) for name, value in params.items()})
    coarse.stats = type(model.stats).from_state(stats_meta, stats_arrays)
    coarse.n_learned = model.n_learned
    coarse._restore_extra({**extra, "pairs": pairs_meta, "coarse_cuts": None}, pairs_arrays)
    return coarse
