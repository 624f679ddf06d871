"""The record reservoir: exact below capacity, priority sampling above it, decay, merge, state."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamnb.stats import CountStatistics
from streamnb.stats.encoder import encode
from streamnb.stats.persist import dumps_state, loads_state
from streamnb.stats.reservoir import ColumnValues, Reservoir, column_map


def stream(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        x = {"o": str(rng.choice(["sun", "rain", "fog"])), "id": f"r{i}"}
        if rng.random() < 0.5:
            x["t"] = True
        if rng.random() < 0.2:
            del x["o"]  # missing
        out.append((x, str(rng.choice(["+", "-"]))))
    return out


def learn(data, capacity, seed=0, stats=None):
    stats = stats or CountStatistics()
    sample = Reservoir(capacity=capacity, seed=seed)
    for x, y in data:
        stats.update(x, y)
        enc = encode(stats.schema, x, "r", grow=False)
        sample.add(enc.nominal_columns + enc.token_columns, stats.labels.index[y])
    return stats, sample


def kept(stats, sample):
    """The kept records as a sorted list of (id, class label, estimated weight)."""
    schema = stats.schema
    ids = schema.attributes.get("id")
    values, classes, weights = sample.records(schema, [ids])
    id_values = list(schema.nominal_values[schema.slots[ids]])
    return sorted((id_values[v], stats.labels.values[c], round(float(w), 9))
                  for v, c, w in zip(values[:, 0], classes, weights, strict=True))


def test_below_capacity_every_record_with_its_values():
    data = stream(40)
    stats, sample = learn(data, capacity=100)
    assert sample.exact and sample.size == 40
    schema = stats.schema
    attrs = [schema.attributes.get(a) for a in ("o", "t")]
    values, classes, weights = sample.records(schema, attrs)
    o_values = list(schema.nominal_values[schema.slots[attrs[0]]])
    got = sorted((("-" if v[0] < 0 else o_values[v[0]]), bool(v[1] == 0),
                  stats.labels.values[c]) for v, c in zip(values, classes, strict=True))
    want = sorted((x.get("o", "-"), "t" in x, y) for x, y in data)
    assert got == want
    assert weights.tolist() == [1.0] * 40


def test_decayed_weights_below_capacity_equal_decayed_counts():
    stats, sample = learn(stream(10), capacity=100)
    sample.decay(0.5)
    for x, y in stream(5, seed=1):
        stats.update(x, y)
        enc = encode(stats.schema, x, "r", grow=False)
        sample.add(enc.nominal_columns + enc.token_columns, stats.labels.index[y])
    assert sorted(sample.estimated_weights().tolist()) == pytest.approx([0.5] * 10 + [1.0] * 5)
    assert sample.exact


@pytest.mark.parametrize("capacity", [5, 30, 200])
def test_batch_equals_one_by_one(capacity):
    data = stream(120)
    stats_one, one = learn(data, capacity, seed=3)
    stats_many = CountStatistics()
    many = Reservoir(capacity=capacity, seed=3)
    bounds = [0, 7, 50, 51, 120]
    for lo, hi in itertools.pairwise(bounds):
        chunk = data[lo:hi]
        batch = stats_many.update_many([x for x, _ in chunk], [y for _, y in chunk])
        classes = np.array([stats_many.labels.index[y] for _, y in chunk])
        many.add_batch(classes, batch)
    assert kept(stats_one, one) == kept(stats_many, many)
    assert one._threshold == many._threshold
    assert one.n_offered == many.n_offered == 120


def test_kept_records_are_the_top_priorities_and_threshold_the_next():
    _, sample = learn(stream(300), capacity=20, seed=5)
    # replay the u's: the kept priorities are the 20 largest, the threshold the 21st
    rng = np.random.default_rng(5)
    priorities = -np.log(1.0 - np.array([rng.random() for _ in range(300)]))
    top = np.sort(priorities)[::-1]
    assert np.sort(sample._log_priority[:20])[::-1] == pytest.approx(top[:20])
    assert sample._threshold == pytest.approx(top[20])
    assert sample.estimated_weights() == pytest.approx(np.full(20, math.exp(top[20])))


def test_uniform_sample_without_decay():
    """Every record is kept with probability capacity / n (200 seeds, 3-sigma band)."""
    n, k, runs = 60, 15, 400
    hits = np.zeros(n)
    for seed in range(runs):
        sample = Reservoir(capacity=k, seed=seed)
        for i in range(n):
            sample.add([i], 0)
        for cells in sample._cells:
            hits[cells[0]] += 1
    p = k / n
    sigma = math.sqrt(runs * p * (1 - p))
    assert np.all(np.abs(hits - runs * p) < 4 * sigma)
    # first and second halves of the stream are equally represented
    assert abs(hits[: n // 2].sum() - hits[n // 2:].sum()) < 4 * sigma * math.sqrt(n)


def test_subset_estimates_are_unbiased_with_decay():
    """Priority sampling: Σ ŵ over the kept records of a subset estimates the subset's decayed
    count without bias (Duffield et al., Theorem 1), here the records of class 1."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    truth = 0.0
    for c in labels:
        truth = truth * 0.99 + (c == 1)
    estimates = []
    for seed in range(300):
        sample = Reservoir(capacity=25, seed=seed)
        for i, c in enumerate(labels):
            if i:
                sample.decay(0.99)
            sample.add([i], int(c))
        w = sample.estimated_weights()
        estimates.append(w[sample.classes() == 1].sum())
    estimates = np.array(estimates)
    assert abs(estimates.mean() - truth) < 4 * estimates.std() / math.sqrt(len(estimates))


def test_decay_keeps_recent_records():
    n, k = 400, 20
    ages_plain, ages_decayed = [], []
    for seed in range(30):
        plain, decayed = Reservoir(capacity=k, seed=seed), Reservoir(capacity=k, seed=seed)
        for i in range(n):
            decayed.decay(0.98)
            plain.add([i], 0)
            decayed.add([i], 0)
        ages_plain += [n - c[0] for c in plain._cells]
        ages_decayed += [n - c[0] for c in decayed._cells]
    assert np.mean(ages_decayed) < 0.3 * np.mean(ages_plain)


def test_merge_below_capacity_is_the_union():
    data = stream(60)
    stats_a, a = learn(data[:25], capacity=100, seed=1)
    stats_b, b = learn(data[25:], capacity=100, seed=2)
    classes = np.array([stats_a.labels.add(label) for label in stats_b.labels.values])
    stats_a.merge(stats_b)
    a.merge(b, column_map(stats_a.schema, stats_b.schema), classes)
    assert a.exact and a.size == 60
    got = kept(stats_a, a)
    want = sorted((x["id"], y, 1.0) for x, y in data)
    assert got == want


def test_merge_above_capacity_estimates_the_union_without_bias():
    estimates = []
    for seed in range(200):
        a, b = Reservoir(capacity=10, seed=2 * seed), Reservoir(capacity=10, seed=2 * seed + 1)
        truth = 0
        for i in range(50):
            a.add([i], i % 3 == 0)
            truth += i % 3 == 0
        for i in range(50, 130):
            b.add([i], i % 3 == 0)
            truth += i % 3 == 0
        a.merge(b, np.arange(200), np.array([0, 1]))
        assert a.size == 10 and not a.exact
        assert a._threshold >= b._threshold
        estimates.append(a.estimated_weights()[a.classes() == 1].sum())
    estimates = np.array(estimates)
    assert abs(estimates.mean() - truth) < 4 * estimates.std() / math.sqrt(len(estimates))


def test_merge_with_different_decay_clocks():
    a, b = Reservoir(capacity=50, seed=1), Reservoir(capacity=50, seed=2)
    a.add([0], 0)
    a.decay(0.5)
    b.add([1], 0)
    b.decay(0.25)
    b.decay(0.5)
    a.merge(b, np.arange(2), np.array([0]))
    weights = {int(c[0]): w for c, w in zip(a._cells, a.estimated_weights(), strict=True)}
    assert weights == pytest.approx({0: 0.5, 1: 0.125})


@pytest.mark.parametrize("capacity", [8, 1000])
def test_state_roundtrip_and_continuation(capacity):
    data = stream(50)
    stats, sample = learn(data, capacity, seed=4)
    sample.decay(0.9)
    meta, arrays = sample.to_state()
    header, loaded_arrays = loads_state(dumps_state({"r": meta}, arrays))
    loaded = Reservoir.from_state(header["r"], loaded_arrays)
    assert kept(stats, loaded) == kept(stats, sample)
    assert loaded._threshold == sample._threshold and loaded.n_offered == sample.n_offered
    # the random state travels too: both continue identically
    for x, y in stream(30, seed=7):
        stats.update(x, y)
        enc = encode(stats.schema, x, "r", grow=False)
        for s in (sample, loaded):
            s.add(enc.nominal_columns + enc.token_columns, stats.labels.index[y])
    assert kept(stats, loaded) == kept(stats, sample)


def test_invalid_parameters():
    with pytest.raises(ValueError, match="capacity"):
        Reservoir(capacity=0)
    with pytest.raises(ValueError, match="seed"):
        Reservoir(seed="x")
    with pytest.raises(ValueError, match="decay factor"):
        Reservoir().decay(0.0)


def test_numeric_attributes_are_refused():
    stats, sample = learn([({"x": 1.5, "o": "a"}, "+")], capacity=4)
    with pytest.raises(ValueError, match="numeric"):
        sample.records(stats.schema, [stats.schema.attributes.get("x")])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("abcd"), st.one_of(
    st.sampled_from(["u", "v", "w"]), st.booleans()), min_size=1), min_size=1, max_size=25))
def test_column_values_follow_the_schema(records):
    """Ranks are the value order of the schema's domains; tokens rank 0 (present)."""
    stats = CountStatistics()
    values = ColumnValues(stats.schema)
    for x in records:
        try:
            stats.update(x, "c")
        except ValueError:
            continue  # a kind conflict (str then bool): rejected, nothing registered
        values.attribute()  # interleave syncs with growth
    schema = stats.schema
    for j, (a, value) in enumerate(zip(schema.column_attribute, schema.column_value,
                                       strict=True)):
        assert values.attribute()[j] == a
        if value is None:
            assert values.rank()[j] == 0
        else:
            assert values.rank()[j] == list(schema.nominal_values[schema.slots[a]]).index(value)
