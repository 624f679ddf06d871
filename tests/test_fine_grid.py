"""The fine layer of floats in the discrete models (streamnb/stats/binning.py): per attribute a
grid of at most ``FINE_BINS`` aligned bins of width 2^e, e the smallest holding every value seen.
The bins are a function of the set of values: any order or batching, shards merged at
different widths, a decay, a save and load, and the service's summed model all reach the same
counts, exactly; a rejected record leaves the grid as it was; a state saved with octave bins
loads, predicts and goes on learning as it did (tests/data/octave_states, written by the
octave-bin code of streamnb 0.1.0 as of 2026-11-29: four models learned on the first 120
records of diabetes, four of its attributes, with the posteriors that code gave)."""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from model_helpers import assert_same_pair_tables

from streamnb import AODE, TAN, InvalidRecord, NaiveBayes, SelectiveBN, SelectiveTAN, load_model
from streamnb.consumers.state import PartitionedModel, PartitionState
from streamnb.models.naive_bayes import MDL_FINE_BINS
from streamnb.models.persistence import from_state, save, to_state
from streamnb.stats.binning import E_MIN, FINE_BINS, bin_of, grid_of
from streamnb.stats.persist import StateFileError

OCTAVE = Path(__file__).parent / "data" / "octave_states"


def stream(n: int, scale: float, seed: int) -> list[tuple[dict, str]]:
    """Two floats that tell the class apart (``scale`` their range), a nominal attribute."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        y = "ab"[int(rng.integers(2))]
        shift = 0.3 if y == "a" else 0.0
        out.append(({"x": float(scale * (rng.random() * 0.7 + shift)),
                     "w": float(rng.normal(shift * 10, 3.0)),
                     "z": "uv"[int(rng.integers(2))]}, y))
    return out


MAKE = {"TAN": lambda: TAN(relearn_every=0), "AODE": lambda: AODE(refresh_every=0),
        "SelectiveTAN": lambda: SelectiveTAN(relearn_every=0, seed=0),
        "SelectiveBN": lambda: SelectiveBN(relearn_every=0, seed=0),
        "NaiveBayes": lambda: NaiveBayes(numeric="mdl", relearn_every=0)}


def learned(make, rows, batch: int = 0):
    model = make()
    if batch:
        for i in range(0, len(rows), batch):
            xs, ys = zip(*rows[i:i + batch], strict=True)
            model.learn_many(list(xs), list(ys))
    else:
        for x, y in rows:
            model.learn_one(x, y)
    return model


def bins(model, name) -> list[tuple[int, int]]:
    schema = model.stats.schema
    return sorted(grid_of(v) for v in schema.nominal_values[schema.slots[
        schema.attributes.get(name)]])


def assert_same_state(a, b) -> None:
    """Equal counts by name, and (pairwise models) equal pair tables."""
    assert a.stats.to_dict() == b.stats.to_dict()
    if hasattr(a, "candidate_names"):
        assert_same_pair_tables(a, b)


def assert_predicts_alike(a, b, queries) -> None:
    for m in (a, b):
        if isinstance(m, AODE):
            m.rediscretise()
        else:
            m.relearn()
    assert a.intervals == b.intervals
    for x, _ in queries:
        pa, pb = a.predict_proba_one(x), b.predict_proba_one(x)
        assert pa.keys() == pb.keys()
        assert all(math.isclose(pa[c], pb[c], rel_tol=1e-9) for c in pa), x


@pytest.mark.parametrize(("name", "bound"), [("TAN", FINE_BINS),
                                             ("NaiveBayes", MDL_FINE_BINS)])
def test_the_grid_is_the_finest_that_holds_every_value_within_the_bound(name, bound):
    """Values over six orders of magnitude: at most ``bound`` bins of one width 2^e, and at
    2^(e−1) the values seen would need more than ``bound`` (naive Bayes in MDL intervals keeps
    no pair tables and affords the finer bound)."""
    rows = stream(400, 1.0, 0) + stream(100, 1e6, 1)
    model = learned(MAKE[name], rows)
    assert model.stats.schema.fine_bins == bound
    for attribute in ("x", "w"):
        held = bins(model, attribute)
        e = {exponent for _, exponent in held}
        assert len(e) == 1 and len(held) <= bound
        (e,) = e
        assert e > E_MIN
        finer = [math.floor(math.ldexp(x[attribute], 1 - e)) for x, _ in rows]
        assert max(finer) - min(finer) + 1 > bound
        assert sorted({i for i, _ in held}) == sorted(
            {math.floor(math.ldexp(x[attribute], -e)) for x, _ in rows})


def test_a_state_saved_before_the_finer_bound_keeps_its_own_and_merges_only_its_like():
    """A naive Bayes state in MDL intervals written before its bound was raised (no
    ``fine_bins`` in the header: 128 bins) loads, goes on learning at 128 bins as it was, and
    merging it with a model of the finer bound is refused naming both bounds."""
    rows = stream(200, 1.0, 13)
    header, arrays = to_state(learned(MAKE["NaiveBayes"], rows))
    older = copy.deepcopy(header)
    schema_header = older["statistics"]["schema"]
    assert schema_header.pop("fine_bins") == MDL_FINE_BINS
    model = from_state(older, arrays)
    assert model.stats.schema.fine_bins == FINE_BINS
    for x, y in stream(200, 1000.0, 14):
        model.learn_one(x, y)
    assert len(bins(model, "x")) <= FINE_BINS < len(bins(learned(
        MAKE["NaiveBayes"], rows + stream(200, 1000.0, 14)), "x"))
    before = model.stats.to_dict()
    with pytest.raises(ValueError, match=f"at most {FINE_BINS} bins, the other in at most "
                                         f"{MDL_FINE_BINS}"):
        model.merge(learned(MAKE["NaiveBayes"], rows))
    assert model.stats.to_dict() == before  # refused before anything changed
    assert model.stats.schema.fine_bins == FINE_BINS
    # a bound that is no bound is a damaged file, named as such
    schema_header["fine_bins"] = 1
    with pytest.raises(StateFileError, match="fine_bins 1 is not an integer in"):
        from_state(older, arrays)


@pytest.mark.parametrize("name", sorted(MAKE))
def test_the_bins_and_counts_depend_on_the_values_not_their_order_or_batching(name):
    rows = stream(300, 1.0, 2) + stream(60, 500.0, 3)
    one_by_one = learned(MAKE[name], rows)
    shuffled = rows[:]
    random.Random(0).shuffle(shuffled)
    assert_same_state(one_by_one, learned(MAKE[name], shuffled))
    assert_same_state(one_by_one, learned(MAKE[name], rows, batch=37))


@pytest.mark.parametrize("name", sorted(MAKE))
def test_shards_at_different_widths_merge_into_the_model_of_both_streams(name):
    """One shard's x lies in [0, 1), the other's in [0, 1000): their grids differ in width;
    merged, the counts (pair tables included) are those of one model learning both streams,
    and so are its intervals and predictions after a structure update."""
    small, wide = stream(250, 1.0, 4), stream(250, 1000.0, 5)
    a, b = learned(MAKE[name], small), learned(MAKE[name], wide)
    assert bins(a, "x")[0][1] < bins(b, "x")[0][1]
    both = learned(MAKE[name], small + wide)
    a.merge(b)
    assert_same_state(a, both)
    # and the other way round: the wide shard absorbs the fine one
    b2 = learned(MAKE[name], wide)
    b2.merge(learned(MAKE[name], small))
    assert_same_state(b2, both)
    assert_predicts_alike(a, both, stream(30, 700.0, 6))


@pytest.mark.parametrize("name", ["TAN", "NaiveBayes"])
def test_a_decay_commutes_with_the_rebinning(name):
    small, wide = stream(200, 1.0, 7), stream(200, 1000.0, 8)
    a, b = learned(MAKE[name], small), learned(MAKE[name], wide)
    a.decay(0.5)
    b.decay(0.5)
    a.merge(b)
    both = learned(MAKE[name], small + wide)
    both.decay(0.5)
    assert_same_state(a, both)


@pytest.mark.parametrize("name", sorted(MAKE))
def test_a_saved_model_goes_on_as_the_one_that_was_not_saved(name, tmp_path):
    first, then = stream(150, 1.0, 9), stream(150, 1000.0, 10)
    model = learned(MAKE[name], first)
    save(model, tmp_path / "m.snb")
    loaded = load_model(tmp_path / "m.snb")
    for x, y in then:
        model.learn_one(x, y)
        loaded.learn_one(x, y)
    assert_same_state(loaded, model)


def test_a_rejected_record_leaves_the_grid_as_it_was():
    """A record whose float would widen the grid but whose other field is refused: the
    model is as it was, and learns on as the model that never saw the record."""
    rows = stream(100, 1.0, 11)
    model, clean = learned(MAKE["TAN"], rows), learned(MAKE["TAN"], rows)
    before = bins(model, "x")
    with pytest.raises(InvalidRecord) as error:
        model.learn_one({"x": 1e9, "w": "wide", "z": "u"}, "a")
    assert error.value.field == "w"
    assert bins(model, "x") == before
    assert_same_state(model, clean)
    for x, y in stream(50, 30.0, 12):
        model.learn_one(x, y)
        clean.learn_one(x, y)
    assert_same_state(model, clean)


def test_the_services_summed_model_is_one_model_of_every_partitions_records():
    """Three partitions whose x spans 1, 100 and 10000 (grids of three widths), learned in
    interleaved batches: the summed model and each partition's state hold the counts of one
    TAN of their records."""
    def make():
        return TAN(relearn_every=0)

    rng = random.Random(3)
    pm = PartitionedModel(make)
    parts = {p: stream(120, 100.0 ** p, 20 + p) for p in range(3)}
    for p in parts:
        pm.take(("t", p), PartitionState(make(), 0))
    pm.rebuild()
    pending = {p: list(rows) for p, rows in parts.items()}
    while any(pending.values()):
        p = rng.choice([q for q in pending if pending[q]])
        n = rng.randint(1, 30)
        batch, pending[p] = pending[p][:n], pending[p][n:]
        xs, ys = zip(*batch, strict=True)
        assert pm.learn(("t", p), list(xs), list(ys)) == []
    assert_same_state(pm.model, learned(make, [r for p in parts for r in parts[p]]))
    for p, rows in parts.items():
        assert_same_state(pm.own[("t", p)].model, learned(make, rows))
    pm.rebuild()
    assert_same_state(pm.model, learned(make, [r for p in parts for r in parts[p]]))


CASES = json.loads((OCTAVE / "cases.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(CASES["models"]))
def test_a_state_saved_with_octave_bins_loads_predicts_and_learns_as_it_did(name):
    case = CASES["models"][name]
    model = load_model(OCTAVE / f"{name}.state")
    assert not model.stats.schema.grid
    assert model.intervals == case["intervals"]
    for query, expected in zip(CASES["queries"], case["proba"], strict=True):
        proba = model.predict_proba_one(query)
        assert sorted(proba) == [c for c, _ in expected]
        assert all(math.isclose(proba[c], p, rel_tol=1e-9) for c, p in expected), query
    model.learn_one({"preg": 1234.5, "plas": 99.0}, "tested_negative")
    schema = model.stats.schema
    assert bin_of(1234.5) in schema.nominal_values[schema.slots[schema.attributes.get("preg")]]
    # its counts and a grid model's are not of the same bins: they refuse to add
    fresh = type(model)(**model._get_params())
    fresh.learn_one({"preg": 1.0, "plas": 2.0}, "tested_negative")
    with pytest.raises(ValueError, match="octave bins"):
        fresh.stats.merge(model.stats)
