"""Pairwise counts N_ij(u, v, c): present–present co-occurrences + marginals equal brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamnb.stats import CountStatistics
from streamnb.stats.encoder import encode, encode_batch
from streamnb.stats.pairs import PairCounts


def learn(records, pairs=None, stats=None, batch=False):
    stats = stats or CountStatistics()
    pairs = pairs or PairCounts(stats.schema)
    if batch:
        encoded = stats.update_many([x for x, _ in records], [y for _, y in records])
        pairs.observe_schema(stats)
        classes = np.array([stats.labels.index[y] for _, y in records])
        pairs.update_batch(classes, encoded)
    else:
        for x, y in records:
            stats.update(x, y)
            pairs.observe_schema(stats)
            pairs.update(stats.labels.index[y], encode(stats.schema, x, "r", grow=False))
    return stats, pairs


def brute_force(records, i, j, values_i, values_j, labels):
    """N_ij(u, v, c) by counting: tokens take True (present) or False (absent or no key);
    a nominal attribute that is missing leaves the record out of the pair's table."""
    table = np.zeros((len(values_i), len(values_j), len(labels)))
    for x, y in records:
        u = x.get(i)
        v = x.get(j)
        u = bool(u) if values_i == [True, False] else u
        v = bool(v) if values_j == [True, False] else v
        if u is None or v is None:
            continue
        table[values_i.index(u), values_j.index(v), labels.index(y)] += 1
    return table


NOMINAL = [({"a": "x", "b": "u", "c": "p"}, "+"), ({"a": "x", "b": "w"}, "+"),
           ({"a": "y", "b": "w", "c": "q"}, "-"), ({"b": "u", "c": "p"}, "-"),
           ({"a": "z", "b": "u", "c": "q"}, "+"), ({"a": "y", "c": "p"}, "+")]
TOKENS = [({"free": True, "money": True}, "spam"), ({"meeting": True}, "ham"),
          ({"free": True, "meeting": True, "now": 1}, "ham"), ({"money": True, "now": 2}, "spam"),
          ({"now": True}, "spam"), ({"free": True}, "ham")]
MIXED = [(dict(x, kind=k), y) for (x, y), k in zip(TOKENS, "abaabc", strict=True)]


@pytest.mark.parametrize("data", [NOMINAL, TOKENS, MIXED], ids=["nominal", "token", "mixed"])
@pytest.mark.parametrize("batch", [False, True], ids=["one", "batch"])
def test_tables_equal_brute_force(data, batch):
    stats, pairs = learn(data, batch=batch)
    labels = stats.labels.values
    names = stats.schema.attributes.names()
    for i, j in itertools.permutations(names, 2):
        table, values_i, values_j = pairs.joint_table(stats, i, j)
        expected = brute_force(data, i, j, values_i, values_j, labels)
        assert table.tolist() == expected.tolist(), (i, j)


def test_batch_equals_one_by_one():
    one = learn(MIXED)[1]
    many = learn(MIXED, batch=True)[1]
    m = one.n_positions
    assert np.array_equal(one.co[:, :m, :m], many.co[:, :m, :m])


def test_late_candidates_cover_the_records_since_they_were_added():
    stats = CountStatistics()
    pairs = PairCounts(stats.schema)
    pairs.restrict()
    first, second = TOKENS[:3], TOKENS[3:] + TOKENS[:2]
    learn(first, pairs, stats)  # nothing is a candidate yet
    pairs.add_candidates(stats, ["free", "money", "now"])
    learn(second, pairs, stats)
    labels = stats.labels.values
    for i, j in itertools.permutations(["free", "money", "now"], 2):
        table, values_i, values_j = pairs.joint_table(stats, i, j)
        assert table.tolist() == brute_force(second, i, j, values_i, values_j, labels).tolist()


def test_all_tables_at_once_equal_each_table_across_snapshots():
    """joint_tables (vectorised over token pairs) == joint_table pair by pair, with candidates
    added at three different times, nominal and token attributes, and decayed counts."""
    stats = CountStatistics()
    pairs = PairCounts(stats.schema)
    pairs.restrict()
    learn(MIXED[:2], pairs, stats)
    pairs.add_candidates(stats, ["free", "kind"])
    learn(MIXED[2:4], pairs, stats)
    pairs.add_candidates(stats, ["money", "now"])
    learn(MIXED[4:] + MIXED[:3], pairs, stats)
    pairs.add_candidates(stats, ["meeting"])
    learn(MIXED, pairs, stats)
    stats.decay(0.9)
    pairs.decay(0.9)
    names = [stats.schema.attributes.name(a) for a in pairs.candidates]
    assert sorted(pairs.epoch.values()) == [0, 0, 1, 1, 2]
    tables = pairs.joint_tables(stats)
    assert set(tables) == set(itertools.combinations(range(len(names)), 2))
    for (i, j), table in tables.items():
        assert np.array_equal(table, pairs.joint_table(stats, names[i], names[j])[0]), (i, j)


def test_removing_candidates_drops_their_snapshots():
    stats = CountStatistics()
    pairs = PairCounts(stats.schema)
    pairs.restrict()
    learn(TOKENS[:2], pairs, stats)
    pairs.add_candidates(stats, ["free"])
    learn(TOKENS[2:4], pairs, stats)
    pairs.add_candidates(stats, ["money", "now"])
    learn(TOKENS[4:], pairs, stats)
    expected, *_ = pairs.joint_table(stats, "money", "now")
    pairs.remove_candidates([stats.schema.attributes.get("free")])
    assert len(pairs.snapshot_classes) == len(pairs.snapshot_columns) == 1
    assert np.array_equal(pairs.joint_table(stats, "money", "now")[0], expected)


def test_decay_and_state_round_trip():
    stats, pairs = learn(MIXED)
    table, *_ = pairs.joint_table(stats, "kind", "free")
    stats.decay(0.5)
    pairs.decay(0.5)
    assert np.allclose(pairs.joint_table(stats, "kind", "free")[0], table * 0.5)
    meta, arrays = pairs.to_state(stats.n_classes)
    again = PairCounts.from_state(stats.schema, meta, arrays)
    for i, j in itertools.permutations(stats.schema.attributes.names(), 2):
        assert np.array_equal(again.joint_table(stats, i, j)[0], pairs.joint_table(stats, i, j)[0])


def test_numeric_attribute_is_rejected():
    stats, pairs = learn([({"x": 0.5, "a": "u"}, "+")])
    pairs.restrict()
    with pytest.raises(ValueError, match="numeric"):
        pairs.add_candidates(stats, ["x"])


binary_records = st.lists(
    st.tuples(st.dictionaries(st.sampled_from(["t0", "t1", "t2", "t3"]), st.booleans(),
                              min_size=1),
              st.sampled_from(["a", "b", "c"])), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(binary_records)
def test_sparse_cooccurrence_equals_dense_counts_on_binary_data(records):
    """Only present–present cells are stored; the three others, derived from the marginals,
    equal a dense count of all four cells."""
    stats, pairs = learn(records)
    labels = stats.labels.values
    tokens = stats.schema.attributes.names()
    for i, j in itertools.combinations(tokens, 2):
        table, values_i, values_j = pairs.joint_table(stats, i, j)
        assert table.tolist() == brute_force(records, i, j, values_i, values_j, labels).tolist()


@pytest.mark.parametrize("data", [NOMINAL, TOKENS, MIXED], ids=["nominal", "token", "mixed"])
def test_merge_equals_learning_the_concatenation(data):
    """Shards that saw attributes and values in different orders merge exactly."""
    first, second = data[::2], data[1::2]
    whole_stats, whole = learn(data)
    a_stats, a = learn(first)
    b_stats, b = learn(list(reversed(second)))
    a.check_mergeable(b)
    a_stats.merge(b_stats)
    a.observe_schema(a_stats)
    a.merge(b, np.array([a_stats.labels.index[c] for c in b_stats.labels.values]))
    for i, j in itertools.permutations(whole_stats.schema.attributes.names(), 2):
        got, vi, vj = a.joint_table(a_stats, i, j)
        want, wi, wj = whole.joint_table(whole_stats, i, j)
        order_i = [vi.index(v) for v in wi]
        order_j = [vj.index(v) for v in wj]
        classes = [a_stats.labels.values.index(c) for c in whole_stats.labels.values]
        assert got[np.ix_(order_i, order_j, classes)].tolist() == want.tolist(), (i, j)


def test_merge_refuses_different_candidates():
    _, a = learn(TOKENS)
    _, b = learn([({"other": True}, "spam")])
    with pytest.raises(ValueError, match="different candidate"):
        a.check_mergeable(b)


def test_adopted_candidates_merge_exactly_whatever_the_adoption_points():
    """Shards given the same candidate lists (``adopt``) at different points of their own
    streams, some before they saw a named attribute (pending), merge exactly: every pair's table
    is the brute-force count, in each shard, of the records since that shard adopted the pair
    (the later list that named it and kept naming it), summed over the shards."""
    records = [*(MIXED * 3)[:17], ({"rare": True, "free": True, "kind": "d"}, "spam"), *MIXED]
    decisions = [["free", "kind"], ["free", "money", "kind", "rare"], ["money", "rare", "now"]]
    shards = [records[0::3], records[1::3], records[2::3]]
    points = [[0, 2, 4], [1, 1, 6], [3, 5, 5]]  # shard s adopts list v before its record p
    states = []
    for rows, at in zip(shards, points, strict=True):
        stats = CountStatistics()
        pairs = PairCounts(stats.schema)
        for j, (x, y) in enumerate(rows):
            for v, p in enumerate(at):
                if p == j:
                    pairs.adopt(stats, decisions[v])
            learn([(x, y)], pairs, stats)
        states.append((stats, pairs))
    assert any(pairs.pending for _, pairs in states[:1])  # "rare": adopted before it was seen
    for order in ([0, 1, 2], [2, 0, 1]):
        stats = states[order[0]][0].copy()
        meta, arrays = states[order[0]][1].to_state(stats.n_classes)
        pairs = PairCounts.from_state(stats.schema, meta, arrays)
        for s in order[1:]:
            other_stats, other = states[s]
            pairs.check_mergeable(other)
            stats.merge(other_stats)
            pairs.observe_schema(stats)
            pairs.merge(other, np.array([stats.labels.index[c]
                                         for c in other_stats.labels.values]))
        assert sorted(stats.schema.attributes.name(a) for a in pairs.candidates) == sorted(
            decisions[-1]) and not pairs.pending
        labels = list(stats.labels.values)
        for i, j in itertools.combinations(decisions[-1], 2):
            got, values_i, values_j = pairs.joint_table(stats, i, j)
            start = [max(at[1] if name == "rare" else at[2 if name == "now" else 1]
                         for name in (i, j)) for at in points]
            want = sum(brute_force(rows[begin:], i, j, values_i, values_j, labels)
                       for rows, begin in zip(shards, start, strict=True))
            assert got.tolist() == want.tolist(), (order, i, j)


def test_different_adoption_sequences_refuse_to_merge():
    stats_a, a = learn(TOKENS)
    stats_b, b = learn(TOKENS)
    a.adopt(stats_a, ["free", "money"])
    b.adopt(stats_b, ["free"])
    b.adopt(stats_b, ["free", "money"])  # the same names, but "money" since a later snapshot
    with pytest.raises(ValueError, match="different points"):
        a.check_mergeable(b)


def _row_of(pairs, key, x):
    """A candidate's value row in ``x`` by its definition: a token (or a text token) is
    present iff its value is non-zero (its bag holds it); a nominal value's row is its place
    in the attribute's values, −1 when missing or unseen."""
    schema = pairs.schema
    if key < 0:
        name, token = pairs.name_of(key)
        bag = x.get(name) or ()
        return 0 if token in bag and (not isinstance(bag, dict) or bag[token]) else 1
    name = schema.attributes.name(key)
    value = x.get(name)
    values = pairs.value_list(key)
    if values == [True, False]:
        return 0 if value else 1
    if value is None or value != value:
        return -1
    return values.index(value) if value in values else -1


@given(st.lists(st.fixed_dictionaries({"c": st.sampled_from(["k", "l"])}, optional={
    "t": st.sampled_from([True, False, 0, 1, 3]),
    "u": st.sampled_from([True, 2, 0]),
    "a": st.sampled_from(["x", "y", "z", None, float("nan")]),
    "b": st.sampled_from(["p", "q", None]),
    "w": st.sampled_from([frozenset(), frozenset({"hi"}), ("hi", "yo", "hi"), {"yo": 2},
                          {"hi": 0}]),
}), min_size=1, max_size=12), st.lists(st.fixed_dictionaries({}, optional={
    "t": st.sampled_from([True, False, 5]),
    "a": st.sampled_from(["x", "new", None, float("nan")]),
    "b": st.sampled_from(["q", "r"]),
    "w": st.sampled_from([frozenset({"hi", "unseen"}), ["yo"], None]),
    "other": st.sampled_from(["v", 1]),
}), min_size=1, max_size=8))
@settings(max_examples=60, deadline=None)
def test_candidate_rows_of_a_record_and_of_an_encoded_batch_agree(learned, probes):
    from streamnb.stats.pairs import CandidateRows

    stats = CountStatistics()
    pairs = PairCounts(stats.schema, text_tokens=True)
    learn([(x, "+-"[i % 2]) for i, x in enumerate(learned)], pairs, stats)
    rows = CandidateRows(pairs, pairs.candidates[::-1])  # any order of keys
    batch = encode_batch(stats.schema, probes, "row", grow=False)
    table = rows.batch(batch)
    assert table.shape == (len(pairs.candidates), len(probes))
    for r, x in enumerate(probes):
        want = [_row_of(pairs, key, x) for key in rows.keys]
        assert rows.record(x).tolist() == want
        assert table[:, r].tolist() == want
    assert not rows.stale(stats.schema)
    stats.update({"a": "brand new", "b": "brand new", "c": "brand new"}, "+")
    assert rows.stale(stats.schema) == any(
        stats.schema.kinds[k] == 0 for k in rows.keys if k >= 0)


def test_the_pair_table_grows_by_a_quarter_so_most_of_it_is_in_use():
    """Learned one record at a time, segment's float attributes bring a new fine bin with most
    records (positions in the pair table): the table, square in its positions, is allocated
    at most (5/4)² times the cells the counts use (doubling it could leave 3/4 unused)."""
    from streamnb import TAN
    from streamnb.datasets import load

    data = load("segment")
    model = TAN(relearn_every=0)
    for x, y in zip(data.records[:600], data.labels[:600], strict=True):
        model.learn_one(x, y)
    pairs = model.pairs
    used = model.stats.n_classes * pairs.n_positions ** 2
    assert pairs.n_positions > 500
    assert pairs.co.size <= (5 / 4) ** 2 * used
