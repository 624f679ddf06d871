"""The record encoder's one contract: every accepted form of the same records gives the same
encodings and registers the same attributes and values in the same order, learning (``grow``)
or predicting. The general path (a mapping that is not a dict, text bags as lists: field by
field through the value rules) is the reference each fast path is compared with: the token
kernels (one record, a batch), the text lookups (one message, a batch, a batch scored first),
DataFrames, sparse matrices, an :class:`EncodedBatch` encoded once for predict then learn, and
the counting fast paths of ``CountStatistics.update``. The callers' views of an encoding are
checked against the general path too: the pair tables' candidate rows, the continuous models'
numeric vectors (a numeric-only ``Domain``) and the structure layer's matrix of value ranks."""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from streamnb.stats import CountStatistics, Domain, InvalidRecord, Schema
from streamnb.stats.encoded import Encoded, EncodedBatch
from streamnb.stats.encoder import encode, encode_batch, text_lookup
from streamnb.stats.pairs import CandidateRows, PairCounts
from streamnb.stats.values import NUMERIC, TOKEN
from streamnb.structure.discrete_data import DiscreteData, index_records


def _general(x: dict) -> MappingProxyType:
    """``x`` as the general path takes it: not a dict (no token kernel), its bags as lists in
    their own order (no text lookup: each token through the value rules)."""
    return MappingProxyType({k: list(v) if isinstance(v, frozenset) else v for k, v in x.items()})


def _row(enc: Encoded) -> dict[str, list]:
    if enc.text_chunks is not None:  # (a batch's row)
        raise AssertionError("a record's encoding, not a batch row's")
    return {"token": sorted(enc.token_columns),
            "nominal": sorted(zip(enc.nominal_columns, enc.nominal_slots, strict=True)),
            "numeric": sorted(zip(enc.numeric_slots, enc.numeric_values, strict=True)),
            "text": sorted(zip(enc.text_columns, enc.text_counts, enc.text_slots, strict=True))}


def _rows(batch: EncodedBatch) -> list[dict[str, list]]:
    rows: list[dict[str, list]] = [{"token": [], "nominal": [], "numeric": [], "text": []}
                                   for _ in range(batch.n)]
    for key, where, parts in (
            ("token", batch.token_rows, (batch.token_columns,)),
            ("nominal", batch.nominal_rows, (batch.nominal_columns, batch.nominal_slots)),
            ("numeric", batch.numeric_rows, (batch.numeric_slots, batch.numeric_values)),
            ("text", batch.text_rows, (batch.text_columns, batch.text_counts,
                                       batch.text_slots))):
        for i, *cell in zip(where.tolist(), *(p.tolist() for p in parts), strict=True):
            rows[i][key].append(cell[0] if len(cell) == 1 else tuple(cell))
    for row in rows:
        for cells in row.values():
            cells.sort()
    return rows


def _one_by_one(records: list, grow: bool, schema: Schema, general: bool) -> list[dict]:
    return [_row(encode(schema, _general(x) if general else x, f"record {i}", grow))
            for i, x in enumerate(records)]


def _mixed(seed: int, n: int) -> list[dict[str, Any]]:
    """Records of every kind, new attributes, values and tokens arriving all along."""
    rng = random.Random(seed)
    words = [f"w{j}" for j in range(60)]
    records = []
    for i in range(n):
        x: dict[str, Any] = {f"t{rng.randrange(40 + i)}": rng.choice([True, 1, 2])
                             for _ in range(rng.randrange(1, 8))}
        if rng.random() < 0.3:
            x["absent"] = 0  # an absent token: registers nothing until present
        if rng.random() < 0.6:
            x["colour"] = rng.choice(["red", "green", "blue", f"c{i % 7}"])
        if rng.random() < 0.4:
            x["size"] = rng.choice([1.5, -2.0, float("nan"), 3.25])
        if rng.random() < 0.5:
            x["body"] = frozenset(rng.sample(words[:20 + i % 40], rng.randrange(1, 9)))
        records.append(x)
    return records


def _tokens_only(seed: int, n: int) -> list[dict[str, int]]:
    """Messages of tokens named by ints (a sparse matrix's columns), in a row's order."""
    rng = random.Random(seed)
    return [dict.fromkeys(sorted({rng.randrange(30 + 3 * i) for _ in range(rng.randrange(1, 10))}),
                          1) for i in range(n)]


def _messages(seed: int, n: int) -> list[dict[str, frozenset]]:
    rng = random.Random(seed)
    words = [f"m{j}" for j in range(300)]
    return [{"body": frozenset(rng.sample(words[:50 + 2 * i], rng.randrange(1, 25)))}
            for i in range(n)]


def _learned(records: list) -> Schema:
    schema = Schema()
    for i, x in enumerate(records):
        encode(schema, _general(x), f"record {i}", grow=True)
    return schema


def _frame(records: list[dict]) -> pd.DataFrame:
    return pd.DataFrame.from_records(records)


def _sparse(records: list[dict[int, int]]) -> sp.csr_matrix:
    width = 1 + max(j for x in records for j in x)
    matrix = sp.lil_matrix((len(records), width), dtype=np.int64)
    for i, x in enumerate(records):
        for j, v in x.items():
            matrix[i, j] = v
    return matrix.tocsr()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_records_and_batches_encode_alike_learning(seed):
    """Learning: one by one through the kernels, one by one through the general path, and as
    one batch (the batch kernel) give the same encodings and the same schema."""
    records = _mixed(seed, 150)
    general, fast, batch = Schema(), Schema(), Schema()
    want = _one_by_one(records, True, general, general=True)
    assert _one_by_one(records, True, fast, general=False) == want
    assert _rows(encode_batch(batch, records, "row", grow=True)) == want
    assert fast.to_json() == general.to_json() == batch.to_json()


@pytest.mark.parametrize("seed", [0, 1])
def test_records_and_batches_encode_alike_predicting(seed):
    """Predicting (no growth): unknown attributes, values and tokens are left out alike."""
    records = _mixed(seed, 200)
    schema = _learned(records[:100])
    before = schema.to_json()
    want = _one_by_one(records[100:], False, schema, general=True)
    assert _one_by_one(records[100:], False, schema, general=False) == want
    assert _rows(encode_batch(schema, records[100:], "row", grow=False)) == want
    assert schema.to_json() == before


@pytest.mark.parametrize("grow", [True, False])
def test_a_dataframe_encodes_as_its_rows(grow):
    """A DataFrame (column at a time) encodes as its rows without their missing cells."""
    records = [{k: v for k, v in x.items() if k != "body"} for x in _mixed(3, 120)]
    frame = _frame(records)
    rows = [{k: v for k, v in r.items() if not pd.isna(v)}
            for r in frame.to_dict(orient="records")]
    general = _learned(rows[:60]) if not grow else Schema()
    framed = _learned(rows[:60]) if not grow else Schema()
    part = slice(60, None) if not grow else slice(None)
    want = _one_by_one(rows[part], grow, general, general=True)
    assert _rows(encode_batch(framed, frame.iloc[part], "row", grow)) == want
    assert framed.to_json() == general.to_json()


@pytest.mark.parametrize("grow", [True, False])
def test_a_sparse_matrix_encodes_as_its_rows(grow):
    """A sparse token matrix (arrays of ids) encodes as ``{column: value}`` records."""
    records = _tokens_only(4, 200)
    matrix = _sparse(records)
    general = _learned(records[:100]) if not grow else Schema()
    sparse = _learned(records[:100]) if not grow else Schema()
    part = slice(100, None) if not grow else slice(None)
    want = _one_by_one(records[part], grow, general, general=True)
    assert _rows(encode_batch(sparse, matrix[part], "row", grow)) == want
    assert sparse.to_json() == general.to_json()


@pytest.mark.parametrize("scored", [False, True])
def test_messages_encode_alike_one_by_one_and_in_batches(scored):
    """Messages of one text attribute (SpamFilter's): the batch path joins their lookups,
    kept from scoring or not, and numbers new tokens across the batch; the same as one by one
    and as the general path."""
    messages = _messages(5, 200)
    general, fast = Schema(), Schema()
    want = _one_by_one(messages, True, general, general=True)
    _one_by_one(messages[:1], True, fast, general=False)  # the attribute exists
    got = _rows(encode_batch(fast, messages[:1], "row", grow=False))
    for lo in range(1, len(messages), 50):
        batch = messages[lo:lo + 50]
        if scored:
            a = fast.attributes.get("body")
            for x in batch:
                text_lookup(fast, a, x["body"])
        got += _rows(encode_batch(fast, batch, "row", grow=True))
    assert got == want
    assert fast.to_json() == general.to_json()


def test_a_batch_encoded_once_predicts_and_learns_as_encoded_twice():
    """``CountStatistics.encode``'s batch, read for prediction (``known``) and then learned,
    equals encoding without growth and then with it."""
    records = _mixed(6, 160)
    once, twice = CountStatistics(), CountStatistics()
    labels = ["a" if i % 3 else "b" for i in range(160)]
    once.update_many(records[:80], labels[:80])
    twice.update_many(records[:80], labels[:80])
    batch = once.encode(records[80:])
    assert _rows(encode_batch(once.schema, batch, "row", grow=False)) == _rows(
        encode_batch(twice.schema, records[80:], "row", grow=False))
    once.update_many(batch, labels[80:])
    twice.update_many(records[80:], labels[80:])
    assert once.schema.to_json() == twice.schema.to_json()
    assert once.to_dict() == twice.to_dict()


@pytest.mark.parametrize("make", [_mixed, _tokens_only, _messages])
def test_counting_fast_paths_count_as_the_general_path(make):
    """``CountStatistics.update``'s paths for a message of tokens (one kernel call) and for a
    message's token set count what the general path counts, array for array."""
    records = make(7, 150)
    labels = ["spam" if i % 4 else "ham" for i in range(len(records))]
    fast, general = CountStatistics(), CountStatistics()
    for i, (x, y) in enumerate(zip(records, labels, strict=True)):
        fast.update(x, y, i)
        general.update(_general(x), y, i)
    assert fast.schema.to_json() == general.schema.to_json()
    assert fast.to_dict() == general.to_dict()
    for name in ("value_counts", "class_counts", "draw_counts"):
        assert np.array_equal(getattr(fast, name), getattr(general, name)), name


# -- the callers' views: pair-table candidates, numeric vectors, structure-layer matrices --------
@pytest.mark.parametrize("seed", [0, 1])
def test_candidate_rows_are_the_value_rows_of_the_general_paths_columns(seed):
    """A candidate's value row (TAN's edges, AODE's parents) is the place, among its columns,
    of the column the general path encodes the record with: for one record in any form and
    for an encoded batch (keys in any order; unseen nominal values −1, absent tokens 1)."""
    records = _mixed(seed, 160)
    stats = CountStatistics()
    pairs = PairCounts(stats.schema, text_tokens=True)
    for i, x in enumerate(records[:100]):
        stats.update(x, "+-"[i % 2])
        pairs.observe_schema(stats)
    kinds = {"text" if a < 0 else stats.schema.kinds[a] for a in pairs.candidates}
    assert {"text", TOKEN} < kinds and len(kinds) == 3  # text tokens, tokens, nominal
    probes = [dict(x, colour="violet") if i % 5 == 0 else x
              for i, x in enumerate(records[100:])]
    keys = pairs.candidates[::-1]
    rows = CandidateRows(pairs, keys)
    table = rows.batch(encode_batch(stats.schema, probes, "row", grow=False))
    seen = set()
    for r, x in enumerate(probes):
        enc = encode(stats.schema, _general(x), "probe", grow=False)
        present = {*enc.token_columns, *enc.text_columns, *enc.nominal_columns}
        want = []
        for a in keys:
            hit = [i for i, j in enumerate(pairs.attribute_columns(a)) if j in present]
            want.append(hit[0] if hit else 1 if pairs.kind(a) == TOKEN else -1)
        seen.update(want)
        assert rows.record(x).tolist() == want
        assert rows.record(_general(x)).tolist() == want
        assert table[:, r].tolist() == want
    assert seen >= {-1, 0, 1, 2}  # missing, present / first value, absent, later values


def _numbers(seed: int, n: int, ints: bool = True) -> list[dict[str, Any]]:
    """Records of numbers (some missing) whose attributes arrive in no sorted order."""
    rng = random.Random(seed)
    choices: list[Any] = [1.5, -2.0, 0.25, 1e3, None, float("nan")]
    if ints:
        choices += [7, np.int64(-3), np.float32(0.5)]
    records = []
    for i in range(n):
        names = [f"z{j}" for j in range(2 + i // 8)][::-1]
        records.append({name: rng.choice(choices)
                        for name in rng.sample(names, rng.randrange(1, len(names) + 1))})
    return records


def _padded(vectors: list[np.ndarray], width: int) -> np.ndarray:
    out = np.full((len(vectors), width), np.nan)
    for i, v in enumerate(vectors):
        out[i, : len(v)] = v
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_numeric_vectors_are_the_general_paths_numeric_block(seed):
    """A numeric-only domain (the continuous models') numbers its attributes and reads their
    values as the general path's numeric block does, one record at a time, as a batch of
    records and as a DataFrame, learning and predicting."""
    records = _numbers(seed, 120, ints=False)
    schema, one = Schema(), Domain()
    general = [encode(schema, _general(x), f"record {i}", grow=True) for i, x in
               enumerate(records[:80])]
    numeric = [a for a in range(len(schema.kinds)) if schema.kinds[a] == NUMERIC]
    width = len(numeric)
    want = np.array([e.vector(width) for e in general])
    assert [schema.slots[a] for a in numeric] == list(range(width))
    names = [schema.attributes.name(a) for a in numeric]
    assert names != sorted(names)  # an order of arrival a sort would not keep
    got = _padded([encode(one, x, f"record {i}", grow=True).vector(len(one))
                   for i, x in enumerate(records[:80])], width)
    np.testing.assert_array_equal(got, want)
    assert one.values == names
    for form in (records[:80], _frame(records[:80])):
        domain = Domain()
        batch = encode_batch(domain, form, "row", grow=True)
        np.testing.assert_array_equal(batch.numeric_matrix(len(domain)), want)
        assert domain.values == names
    frame = _frame(records[80:])
    assert all(t == np.float64 for t in frame.dtypes)  # the frame's path, not the records'
    want = np.array([encode(schema, _general(x), "probe", grow=False).vector(width)
                     for x in records[80:]])
    assert not np.isnan(want).all(axis=0).any()
    for form in (records[80:], frame):
        np.testing.assert_array_equal(
            encode_batch(one, form, "row", grow=False).numeric_matrix(len(one)), want)
    np.testing.assert_array_equal(
        [encode(one, x, "probe", grow=False).vector(len(one)) for x in records[80:]], want)
    assert one.values == names


def test_numeric_vectors_take_numbers_of_every_type_and_refuse_the_rest_whole():
    """Ints and numpy numbers are numbers; a str or a bool is refused naming the record and
    the field, and the batch (or record) registers nothing."""
    records = _numbers(2, 60)
    domain = Domain()
    matrix = encode_batch(domain, records, "row", grow=True).numeric_matrix(len(domain))
    for i, x in enumerate(records):
        for name, v in x.items():
            j = domain.get(name)
            assert (np.isnan(matrix[i, j]) if v is None or v != v else matrix[i, j] == v)
    size = len(domain)
    for bad in ("red", True):
        with pytest.raises(InvalidRecord, match="numbers only") as info:
            encode_batch(domain, [{"new": 1.0}, {"z0": 2.0, "z1": bad}], "row", grow=True)
        assert (info.value.row, info.value.field) == (1, "z1")
        with pytest.raises(InvalidRecord, match="numbers only"):
            encode(domain, {"new": 1.0, "z1": bad}, "record", grow=True)
        assert len(domain) == size
    with pytest.raises(InvalidRecord) as info:
        encode_batch(domain, _frame([{"z0": 1.0, "new": 2.0}, {"z0": float("inf")}]), "row",
                     grow=True)
    assert (info.value.row, info.value.field, len(domain)) == (1, "z0", size)
    with pytest.raises(InvalidRecord, match="out of range") as info:
        encode(domain, {"new": 1.0, "z0": 1e70}, "record", grow=True)
    assert "numbers only" not in str(info.value) and len(domain) == size


def _nominal(seed: int, n: int) -> list[dict[Any, Any]]:
    """Records of nominal values of every type (an integral float is its int), some missing,
    some records empty, keys in varying order."""
    rng = random.Random(seed)
    values = ["x", "y", 3, 1, True, 2.0, None, float("nan")]
    records = []
    for _ in range(n):
        names = rng.sample(["c", "a", "b", 7, "d"], rng.randrange(0, 5))
        records.append({name: rng.choice(values) for name in names})
    return records


@pytest.mark.parametrize("seed", [0, 1])
def test_structure_records_index_as_the_general_path_numbers_their_values(seed):
    """The structure layer's matrix (``index_records``, ``DiscreteData.from_records``) holds
    each value's place in its attribute's values as the general path registers them, every
    attribute nominal, columns in the order of ``names`` (keys outside it left out)."""
    records = _nominal(seed, 200)
    keys = list(dict.fromkeys(k for x in records for k in x))
    for names in (None, ["b", 7, "a"], keys[::-1]):
        chosen = keys if names is None else names
        general = Schema(nominal=chosen)
        want = np.full((len(records), len(chosen)), -1)
        for i, x in enumerate(records):
            enc = encode(general, _general({k: v for k, v in x.items() if k in chosen}),
                         f"record {i}", grow=True)
            for column, slot in zip(enc.nominal_columns, enc.nominal_slots, strict=True):
                name = general.attributes.name(general.column_attribute[column])
                want[i, chosen.index(name)] = list(
                    general.nominal_values[slot].values()).index(column)
        got_names, matrix, domains = index_records(records, names)
        assert got_names == chosen
        np.testing.assert_array_equal(matrix, want)
        assert (matrix >= 1).any() and (matrix == -1).any()
        for name, domain in zip(chosen, domains, strict=True):
            a = general.attributes.get(name)
            assert list(domain) == ([] if a is None else list(
                general.nominal_values[general.slots[a]]))
            assert list(domain.values()) == list(range(len(domain)))
        data = DiscreteData.from_records(records, ["+"] * len(records), names)
        np.testing.assert_array_equal(data.values, want)


def test_structure_records_refuse_a_value_no_nominal_attribute_takes():
    with pytest.raises(InvalidRecord) as info:
        index_records([{"a": "x"}, {"b": 1}, {"a": 0.5}])
    assert (info.value.row, info.value.field) == (2, "a")
