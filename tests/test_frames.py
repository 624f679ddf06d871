"""DataFrames are encoded column by column exactly as their rows would be, record by record."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from streamnb import InvalidRecord, NaiveBayes
from streamnb.stats import CountStatistics
from streamnb.stats.frames import records_of


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
        stats.update_many(stats.schema.encode_many([{"tok": True}], "row", grow=False), ["a"])
