"""DataFrames and sparse matrices are encoded exactly as their rows would be, record by record."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from streamnb import InvalidRecord, NaiveBayes
from streamnb.models.registry import CONTINUOUS, MODELS
from streamnb.stats import CountStatistics
from streamnb.stats.encoded import Registrations
from streamnb.stats.encoder import encode_batch
from streamnb.stats.frames import records_of
from streamnb.stats.values import TOKEN


def frames():
    rng = np.random.default_rng(3)
    n = 60
    nominal = rng.choice(["a", "b", "c", None], n)
    codes = pd.array(rng.choice([1, 2, 3], n), dtype="Int64")  # category codes, some missing
    codes[::7] = pd.NA
    yield pd.DataFrame({
        "nominal": nominal,
        "token": rng.integers(0, 3, n),
        "flag": rng.random(n) < 0.3,
        "number": np.where(rng.random(n) < 0.2, np.nan, rng.normal(size=n)),
        "late": [None] * 30 + list(rng.choice(["x", "y"], 30)),
        "codes": codes,
    })
    yield pd.DataFrame({"w1": [0, 0, 1, 0], "w2": [1, 0, 0, 2], "w3": [0, 0, 0, 0]})


@pytest.mark.parametrize("frame", list(frames()), ids=["mixed", "tokens"])
def test_frame_batches_equal_rows_one_by_one(frame):
    labels = [("p", "q", "r")[i % 3] for i in range(len(frame))]
    one = CountStatistics()
    for x, y in zip(records_of(frame), labels, strict=True):
        if x:
            one.update(x, y)
    many = CountStatistics()
    keep = [i for i, x in enumerate(records_of(frame)) if x]
    for lo in range(0, len(keep), 17):  # several batches: domains grow between them
        rows = keep[lo: lo + 17]
        many.update_many(frame.iloc[rows], [labels[i] for i in rows])
    got, want = many.to_dict(), one.to_dict()
    got_moments, want_moments = got.pop("moments"), want.pop("moments")
    assert got == want
    assert got_moments.keys() == want_moments.keys()
    for key, value in want_moments.items():  # batch moments merge (Chan) vs Welford: rounding
        assert got_moments[key] == pytest.approx(value, rel=1e-12, abs=1e-12)
    assert many.schema.to_json() == one.schema.to_json()  # same registration order


def test_frame_predictions_equal_row_predictions():
    frame = next(frames())
    labels = [("p", "q")[i % 2] for i in range(len(frame))]
    model = NaiveBayes()
    model.learn_many(frame, labels)
    batch = model.predict_proba_many(frame)
    for i, x in enumerate(records_of(frame)):
        if x:
            assert model.predict_proba_one(x) == pytest.approx(dict(batch.iloc[i]), abs=1e-12)


def test_first_bad_cell_in_row_order_is_named_and_nothing_changes():
    frame = pd.DataFrame({"a": ["x", "y", "z"], "b": ["u", 2.5, "w"], "c": [1, 2, "s"]})
    stats = CountStatistics()
    stats.update({"a": "x", "b": "u", "c": 1}, "p")
    before = (stats.to_dict(), stats.schema.to_json())
    with pytest.raises(InvalidRecord, match=r"row 1, field 'b'"):
        stats.update_many(frame, ["p", "q", "p"])
    assert (stats.to_dict(), stats.schema.to_json()) == before


def test_one_encoding_of_a_frame_for_predict_then_learn():
    """A DataFrame encoded once predicts as the frame and learns as the frame (new
    attributes and values registered by the learn, in the frame's order)."""
    first = pd.DataFrame({"colour": ["red", "blue"], "size": [1.0, 2.0], "tok": [1, 0]})
    second = pd.DataFrame({"colour": ["green", "red", None], "size": [3.0, np.nan, 1.5],
                           "tok": [0, 1, 1], "new": [1, 0, 1], "shape": ["o", "x", "o"]})
    plain, shared = NaiveBayes(), NaiveBayes()
    for model in (plain, shared):
        model.learn_many(first, ["a", "b"])
    encoded = shared.encode_many(second)
    assert len(encoded) == 3
    pd.testing.assert_frame_equal(shared.predict_proba_many(encoded),
                                  plain.predict_proba_many(second), check_exact=True)
    plain.learn_many(second, ["a", "b", "a"])
    shared.learn_many(encoded, ["a", "b", "a"])
    assert shared.stats.to_dict() == plain.stats.to_dict()
    assert shared.stats.schema.to_json() == plain.stats.schema.to_json()


def test_encoding_rejects_what_learning_would_and_registers_nothing():
    stats = CountStatistics()
    stats.update_many([{"colour": "red", "tok": True}], ["a"])
    before = stats.schema.to_json()
    with pytest.raises(InvalidRecord, match="row 1"):
        stats.encode([{"colour": "blue", "other": 1}, {"colour": 2.5}])
    with pytest.raises(InvalidRecord, match="no features"):
        stats.encode([{"tok": True}, {}])  # prediction alone would read {} as the prior
    encoded = stats.encode([{"colour": "blue", "other": 1}])
    assert stats.schema.to_json() == before  # registered by learning it, not by encoding
    stats.update_many([{"fresh": 1}], ["b"])  # the schema grew: the batch is stale
    with pytest.raises(ValueError, match="encode it again"):
        stats.update_many(encoded, ["a"])
    with pytest.raises(TypeError, match=r"CountStatistics\.encode"):
        stats.update_many(encode_batch(stats.schema, [{"tok": True}], "row", grow=False), ["a"])


# -- scipy sparse matrices: column j is the token named j -------------------------------------
def sparse_batches(seed: int):
    """Token-presence matrices as a hashing or vocabulary transformer gives them: int and bool
    entries, explicitly stored zeros, duplicate COO entries (summed), and columns that first
    appear in later batches."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    for lo in range(0, 120, 30):
        width = 20 + lo  # the vocabulary grows from batch to batch
        rows = np.concatenate([np.arange(30), rng.integers(0, 30, 120)])  # no row empty
        cols = rng.integers(0, width, 150)
        data = rng.integers(0, 3, 150)  # 0: a stored zero, the token absent
        matrix = sp.coo_matrix((data, (rows, cols)), shape=(30, width))
        yield matrix.astype(bool) if seed % 2 else matrix


@pytest.mark.parametrize("seed", range(6))
def test_sparse_batches_equal_their_records(seed):
    """learn_many, encode_many and every predict_*_many on a sparse matrix give what the same
    calls give on its rows as records (``records_of``): same counts, same registration order,
    bit-equal predictions."""
    labels = [("p", "q", "r")[i % 3] for i in range(30)]
    sparse, records, encoded = NaiveBayes(), NaiveBayes(), NaiveBayes()
    for matrix in sparse_batches(seed):
        rows = records_of(matrix)
        if sparse.stats.n_classes:
            want = records.predict_log_proba_many(rows).to_numpy()
            assert np.array_equal(sparse.predict_log_proba_many(matrix).to_numpy(), want)
            assert np.array_equal(sparse.predict_proba_many(matrix.tocsr()).to_numpy(),
                                  records.predict_proba_many(rows).to_numpy())
            batch = encoded.encode_many(matrix)
            assert np.array_equal(encoded.predict_log_proba_many(batch).to_numpy(), want)
        else:
            batch = encoded.encode_many(matrix)
        sparse.learn_many(matrix, labels)
        records.learn_many(rows, labels)
        encoded.learn_many(batch, labels)
        for model in (sparse, encoded):
            assert model.stats.to_dict() == records.stats.to_dict()
            assert model.stats.schema.to_json() == records.stats.schema.to_json()
            assert model.n_learned == records.n_learned


def test_sparse_columns_after_a_rejected_batch_and_a_reload():
    """The sparse path's id → column map follows the schema through a rollback (a rejected
    batch registers nothing) and a save/load."""
    import scipy.sparse as sp

    model = NaiveBayes()
    model.learn_many(sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 0]])), ["p", "q"])
    wide = sp.csr_matrix(np.array([[0, 0, 0, 1, 1], [1, 0, 0, 0, 0]]))
    with pytest.raises(ValueError, match="2 records but 3 labels"):
        model.learn_many(wide, ["p", "q", "r"])
    model.learn_one({"w": "nominal"}, "p")  # a mixed model: the ids then a nominal attribute
    model.encode_many(wide)  # registers 3 and 4, then rolls back
    assert model.stats.schema.n_tokens == 3
    reloaded = NaiveBayes.from_state(*model.to_state())
    for m in (model, reloaded):
        m.learn_many(wide, ["q", "p"])
    assert reloaded.stats.to_dict() == model.stats.to_dict()
    assert model.stats.schema.attributes.names() == [0, 2, 1, "w", 3, 4]
    assert np.array_equal(model.predict_proba_many(wide).to_numpy(),
                          model.predict_proba_many(records_of(wide)).to_numpy())


def test_a_sparse_column_named_like_another_kind_follows_the_record_rules():
    """Column 0 of a sparse batch where attribute 0 is nominal (and 2 a new token): read as
    the records read it (the int entry is then a value of the nominal attribute)."""
    import scipy.sparse as sp

    matrix = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0]]))
    models = [NaiveBayes(), NaiveBayes()]
    for model, batch in zip(models, (matrix, records_of(matrix)), strict=True):
        model.learn_one({0: "x", 1: True}, "p")
        model.learn_many(batch, ["p", "q"])
    assert models[0].stats.to_dict() == models[1].stats.to_dict()
    assert models[0].stats.schema.to_json() == models[1].stats.schema.to_json()
    assert list(models[0].stats.schema.kinds) == [0, 1, 1]  # nominal, token, token


def test_an_empty_sparse_row_is_a_record_without_features():
    """Learning refuses it as it refuses ``{}`` (naming the row); prediction gives the prior."""
    import scipy.sparse as sp

    model = NaiveBayes()
    model.learn_many(sp.csr_matrix(np.array([[1, 0], [0, 1]])), ["p", "q"])
    empty = sp.csr_matrix(np.array([[1, 0], [0, 0]]))
    with pytest.raises(InvalidRecord, match="row 1: the record has no features"):
        model.learn_many(empty, ["p", "q"])
    assert model.n_learned == 2
    assert np.array_equal(model.predict_proba_many(empty).to_numpy()[1],
                          model.predict_proba_many([{}]).to_numpy()[0])


def test_float_sparse_entries_are_numeric_attributes_like_the_records():
    import scipy.sparse as sp

    matrix = sp.csr_matrix(np.array([[0.5, 0.0], [0.0, 1.5], [2.0, 0.25]]))
    model, records = NaiveBayes(), NaiveBayes()
    model.learn_many(matrix, ["p", "q", "p"])
    records.learn_many(records_of(matrix), ["p", "q", "p"])
    assert model.stats.schema.to_json() == records.stats.schema.to_json()
    assert np.array_equal(model.predict_proba_many(matrix).to_numpy(),
                          records.predict_proba_many(records_of(matrix)).to_numpy())


@pytest.mark.parametrize("name", sorted(set(MODELS) - CONTINUOUS - {"spam-filter"}))
def test_every_count_model_reads_a_sparse_batch_as_its_records(name):
    import scipy.sparse as sp

    rng = np.random.default_rng(5)
    rows = np.concatenate([np.arange(60), rng.integers(0, 60, 200)])
    matrix = sp.coo_matrix((np.ones(260, dtype=np.int64), (rows, rng.integers(0, 25, 260))),
                           shape=(60, 25))
    labels = list(rng.choice(["a", "b"], 60))
    sparse, records = MODELS[name](), MODELS[name]()
    sparse.learn_many(matrix, labels)
    records.learn_many(records_of(matrix), labels)
    assert np.array_equal(sparse.predict_proba_many(matrix).to_numpy(),
                          records.predict_proba_many(records_of(matrix)).to_numpy())


def test_a_new_token_named_like_an_attribute_an_earlier_row_registers_follows_the_rows():
    """In a batch of dicts, row 0 registers "w" as nominal and row 1 holds "w": True among new
    tokens (read by the kernel before row 0 registered it): the batch gives exactly what the
    rows give one by one (registrations in the same order, the same counts), and so does a
    batch where no row conflicts."""
    for batch in ([{"w": "x", "a": True}, {"w": True, "v": True, "u": True}, {"z": True}],
                  [{"w": "x"}, {"v": True}, {"w": "y", "v": True}]):
        labels = ["p", "q", "p"]
        one, many = CountStatistics(), CountStatistics()
        for x, y in zip(batch, labels, strict=True):
            one.update(x, y)
        many.update_many(batch, labels)
        assert many.to_dict() == one.to_dict()
        assert many.schema.to_json() == one.schema.to_json()


def test_integer_label_arrays_learn_what_their_lists_learn():
    """Labels as a numpy int array or an int Series (classes read with numpy once every label
    is a known class) give the counts of the same labels as a list: known classes, a new class
    among them, and int labels against a class registered as a bool (True == 1, as a dict
    has it)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(5)
    batches = [sp.random(40, 30, density=0.2, format="lil", random_state=s, dtype=bool)
               for s in range(4)]
    runs = {kind: NaiveBayes() for kind in ("list", "array", "uint64", "series")}
    for k, matrix in enumerate(batches):
        matrix[:, 0] = True  # no empty row
        matrix = matrix.tocsr()
        labels = rng.integers(0, 2 + (k == 2), size=40)  # class 2 first seen in batch 2
        for kind, model in runs.items():
            y = {"list": labels.tolist(), "array": labels, "uint64": labels.astype(np.uint64),
                 "series": pd.Series(labels, index=range(100, 140))}[kind]
            model.learn_many(matrix, y)
    for model in runs.values():
        assert model.stats.to_dict() == runs["list"].stats.to_dict()
        assert model.classes == runs["list"].classes and sorted(model.classes) == [0, 1, 2]
    flagged, listed = NaiveBayes(), NaiveBayes()
    for model in (flagged, listed):
        model.learn_one({"a": True}, True)
    flagged.learn_many([{"a": True}, {"b": True}], np.array([1, 0]))
    listed.learn_many([{"a": True}, {"b": True}], [1, 0])
    assert flagged.stats.to_dict() == listed.stats.to_dict()
    huge = [2**63 + 5, 7]  # labels beyond int64 (and past the bincount's range)
    flagged, listed = NaiveBayes(), NaiveBayes()
    for y in (huge, huge[:1]):
        flagged.learn_many([{"a": True}, {"b": True}][:len(y)], np.array(y, dtype=np.uint64))
        listed.learn_many([{"a": True}, {"b": True}][:len(y)], y)
    assert flagged.stats.to_dict() == listed.stats.to_dict()


def test_a_batch_of_new_tokens_keeps_their_names_and_reads_as_pairs():
    """A batch that registers only new tokens (each its own column) records their names; read
    as pairs they are what the general record gives, and learning it registers them in
    order. A batch that also adds a nominal value keeps the pairs."""
    model = NaiveBayes()
    model.learn_one({"colour": "red", "t0": True}, "p")
    records = [{f"t{i}": True, f"t{i + 1}": True} for i in range(1, 40, 2)]
    batch = model.encode_many(records)
    registrations = batch.registrations
    names = [f"t{i}" for i in range(1, 41)]
    assert registrations.tokens == names and registrations.first == 2
    attributes, columns = registrations
    assert attributes == [(name, TOKEN) for name in names]
    assert columns == [(a, None) for a in range(2, 42)]
    assert registrations == Registrations(attributes, columns) and registrations
    model.learn_many(batch, ["q"] * len(records))
    assert model.stats.schema.attributes.names() == ["colour", "t0", *names]
    mixed = model.encode_many([{"colour": "blue", "u": True}])
    assert mixed.registrations.tokens is None
    assert list(mixed.registrations) == [[("u", TOKEN)], [(0, "blue"), (42, None)]]
    assert not model.encode_many([{"t0": True}]).registrations


def test_sparse_ids_beside_int_names_numpy_cannot_hold():
    """A token named by an int beyond int64 (or negative) has no sparse id: the id map skips
    it, and a sparse batch reads its columns as its records do."""
    import scipy.sparse as sp

    matrix = sp.csr_matrix(np.array([[1, 0, 1], [0, 1, 1]]))
    models = [NaiveBayes(), NaiveBayes()]
    for model, batch in zip(models, (matrix, records_of(matrix)), strict=True):
        model.learn_one({2**70: True, -3: True, 1: True}, "p")
        model.learn_many(batch, ["p", "q"])
        assert np.array_equal(model.predict_proba_many(matrix).to_numpy(),
                              model.predict_proba_many(records_of(matrix)).to_numpy())
    assert models[0].stats.to_dict() == models[1].stats.to_dict()
    assert models[0].stats.schema.attributes.names() == [2**70, -3, 1, 0, 2]
