"""The sufficient statistics: N(c), N_i(v,c), N_i(c), token presence and numeric moments.

The statistics are a commutative monoid (architecture.md): ``update_many`` equals repeated
``update``, ``merge`` equals learning the concatenation, ``decay(f)`` scales every count.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import (
    MESSAGES,
    MIXED,
    NOMINAL,
    NUMERIC,
    TOKEN,
    WEATHER,
    assert_same_stats,
    assert_stats_close,
    snapshot,
)
from streamnb import CountStatistics, InvalidRecord
from streamnb.stats import Domain, Schema
from streamnb.stats.codec import decode, encode, normalize_label, normalize_name
from streamnb.stats.collector import paused_collector
from streamnb.stats.encoder import encode as encode_record
from streamnb.stats.persist import dumps_state, loads_state


def learn(data, stats=None):
    stats = stats if stats is not None else CountStatistics()
    for x, y in data:
        stats.update(x, y)
    return stats


def scaled(d: dict, f: float) -> dict:
    """The to_dict() a decay by ``f`` must give: counts × f, weight and M2 × f, mean kept."""
    return {
        "classes": {k: v * f for k, v in d["classes"].items()},
        "kinds": d["kinds"],
        "cells": {k: v * f for k, v in d["cells"].items()},
        "observed": {k: v * f for k, v in d["observed"].items()},
        "moments": {k: (w * f, m, s * f) for k, (w, m, s) in d["moments"].items()},
    }


# -- counting -------------------------------------------------------------------------------------
def test_nominal_counts_by_hand():
    """N(c), N_i(v,c) and N_i(c) on WEATHER; an absent key and None are not counted."""
    s = learn(WEATHER)
    assert s.labels.values == ["no", "yes", "maybe"]
    assert s.class_counts.tolist() == [3.0, 4.0, 1.0]
    assert s.n_records == 8.0
    assert s.count("o", "s") == {"no": 2.0, "yes": 0.0, "maybe": 1.0}
    assert s.count("o", "r") == {"no": 1.0, "yes": 2.0, "maybe": 0.0}
    assert s.count("h", "hi") == {"no": 2.0, "yes": 1.0, "maybe": 0.0}
    assert s.count("h", "never") == {"no": 0.0, "yes": 0.0, "maybe": 0.0}
    d = s.to_dict()
    assert d["kinds"] == {"o": NOMINAL, "w": NOMINAL, "h": NOMINAL}
    assert d["observed"][("h", "no")] == 2.0  # one 'no' record lacks h
    assert d["observed"][("h", "maybe")] == 0.0  # h=None
    assert d["observed"][("o", "yes")] == 4.0
    assert d["cells"][("h", "norm", "yes")] == 3.0
    assert s.schema.attribute_size(s.schema.attributes.get("o")) == 3


def test_nan_is_missing_for_nominal_and_numeric():
    """NaN is missing for a nominal attribute (not counted in N_i(c)) and for a numeric one."""
    s = learn([({"a": "x", "n": 1.0}, "p"), ({"a": float("nan"), "n": float("nan")}, "p")])
    d = s.to_dict()
    assert d["classes"] == {"p": 2.0}
    assert d["observed"] == {("a", "p"): 1.0}
    assert d["moments"] == {("n", "p"): (1.0, 1.0, 0.0)}


def test_token_counts_by_hand():
    """Tokens: bool/int → present iff non-zero; absent key = absent; N(absent,c) = N(c) −
    N(present,c); a token seen only as 0/False is never registered."""
    s = learn(MESSAGES)
    d = s.to_dict()
    assert d["classes"] == {"spam": 3.0, "ham": 3.0}
    assert s.count("free", True) == {"spam": 2.0, "ham": 1.0}
    assert s.count("free", False) == {"spam": 1.0, "ham": 2.0}
    assert s.count("now", True) == {"spam": 1.0, "ham": 0.0}  # "now": 0 is absent
    assert s.count("money", True) == {"spam": 2.0, "ham": 0.0}  # "money": False is absent
    assert s.count("noon", True) == {"spam": 0.0, "ham": 2.0}  # count 2 = present once
    assert all(k == TOKEN for k in d["kinds"].values())
    assert set(d["kinds"]) == {
        "free",
        "money",
        "now",
        "meeting",
        "noon",
        "lunch",
        "claim",
        "prize",
        "win",
    }
    assert d["observed"] == {}
    s2 = learn([({"a": 0, "b": False, "c": "x"}, "p")])
    assert set(s2.to_dict()["kinds"]) == {"c"}
    # a token first present later: earlier records count as absent
    s3 = learn([({"c": "x"}, "p"), ({"c": "y"}, "p"), ({"t": 1, "c": "x"}, "p")])
    assert s3.count("t", True) == {"p": 1.0}
    assert s3.count("t", False) == {"p": 2.0}


def test_numeric_moments_by_hand():
    """Per-class (weight, mean, M2) of float attributes, NaN missing (MIXED)."""
    d = learn(MIXED).to_dict()
    assert d["kinds"]["len"] == NUMERIC and d["kinds"]["ratio"] == NUMERIC
    assert d["kinds"]["colour"] == NOMINAL and d["kinds"]["spam"] == TOKEN
    np.testing.assert_allclose(d["moments"][("len", "a")], (2.0, 3.5, 0.5), rtol=1e-14)
    # b: len 5, 7.5, 6 → mean 6.1666…, M2 = Σ(x − mean)²
    vals = [5.0, 7.5, 6.0]
    mu = sum(vals) / 3
    np.testing.assert_allclose(
        d["moments"][("len", "b")], (3.0, mu, sum((v - mu) ** 2 for v in vals)), rtol=1e-14
    )
    np.testing.assert_allclose(d["moments"][("ratio", "b")], (2.0, 1.375, 0.03125), rtol=1e-14)
    assert d["observed"] == {("colour", "a"): 2.0, ("colour", "b"): 2.0, ("colour", "c"): 2.0}


def test_int_value_for_numeric_and_integral_float_for_token():
    """Once the kind is fixed, an int for a numeric attribute is a number and an integral
    float for a token is a presence (pandas upcasts)."""
    s = learn(
        [({"n": 1.5, "t": True}, "p"), ({"n": 2, "t": 0.0}, "p"), ({"n": 3.0, "t": 2.0}, "p")]
    )
    d = s.to_dict()
    np.testing.assert_allclose(d["moments"][("n", "p")], (3.0, 6.5 / 3, 1.1666666666666667))
    assert d["cells"][("t", True, "p")] == 2.0


def test_all_missing_record_counts_only_the_class():
    """A record whose every value is missing still counts in N(c) (and in no N_i(c))."""
    s = learn([({"a": "x"}, "p"), ({"a": None}, "p"), ({"a": float("nan"), "n": None}, "q")])
    d = s.to_dict()
    assert d["classes"] == {"p": 2.0, "q": 1.0}
    assert d["observed"] == {("a", "p"): 1.0, ("a", "q"): 0.0}


def test_labels_normalised():
    """Labels: numpy ints and integral floats are the int class; bools and strs kept."""
    s = learn([({"a": "x"}, np.int64(1)), ({"a": "x"}, 1.0), ({"a": "y"}, 2), ({"a": "y"}, "z")])
    assert s.labels.values == [1, 2, "z"]
    assert s.class_counts.tolist() == [2.0, 1.0, 1.0]
    assert normalize_label(np.bool_(True)) is True
    assert normalize_label(np.str_("a")) == "a" and type(normalize_label(np.str_("a"))) is str
    for bad in (None, float("nan"), 1.5, [1], {"a": 1}, object()):
        with pytest.raises((TypeError, ValueError)):
            normalize_label(bad)


def test_tuple_names_round_trip():
    """n-gram features (tuples of words) are valid names and survive to_state/from_state."""
    s = learn([({("free", "money"): True, "a": "x"}, "p"), ({("free", "lunch"): 1}, "q")])
    meta, arrays = s.to_state()
    t = CountStatistics.from_state(meta, arrays)
    assert t.to_dict() == s.to_dict()
    assert t.count(("free", "money"), True) == {"p": 1.0, "q": 0.0}
    assert decode(encode(("a", ("b", 1)))) == ("a", ("b", 1))
    assert normalize_name(np.int64(3)) == 3
    with pytest.raises(TypeError):
        normalize_name(1.5)


# -- update_many == update ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "data",
    [WEATHER, MESSAGES, MIXED, WEATHER + MESSAGES + MIXED],
    ids=["nominal", "token", "mixed", "all"],
)
def test_update_many_equals_update_sequence(data):
    """update_many (one bincount per table) == update on each record in order."""
    one = learn(data)
    many = CountStatistics()
    many.update_many([x for x, _ in data], [y for _, y in data])
    assert_same_stats(many.to_dict(), one.to_dict(), rtol=1e-12, atol=1e-12)
    assert many.schema.to_json() == one.schema.to_json()
    assert many.labels.values == one.labels.values
    # in chunks, on top of existing state
    chunked = CountStatistics()
    for i in range(0, len(data), 3):
        chunked.update_many([x for x, _ in data[i : i + 3]], [y for _, y in data[i : i + 3]])
    assert_same_stats(chunked.to_dict(), one.to_dict(), rtol=1e-12, atol=1e-12)


def test_update_many_length_mismatch():
    s = CountStatistics()
    with pytest.raises(ValueError, match="2 records but 1 labels"):
        s.update_many([{"a": "x"}, {"a": "y"}], ["p"])
    assert s.to_dict()["classes"] == {}


# -- rejection leaves the state unchanged ----------------------------------------------------------
def test_rejected_record_rolls_back_registrations():
    """A record rejected on its last field leaves no new attribute, value, token or label."""
    s = learn(MIXED)
    before = snapshot(s)
    with pytest.raises(InvalidRecord) as err:
        s.update(
            {"colour": "mauve", "fresh": "v", "newtok": True, "newnum": 1.0, "len": "long"},
            "newlabel",
            record="record 9",
        )
    assert err.value.record == "record 9" and err.value.field == "len"
    assert snapshot(s) == before
    with pytest.raises(InvalidRecord) as err:
        s.update_many(
            [{"colour": "mauve", "fresh": "v"}, {"newtok": 1}, {"spam": "yes"}, {"colour": "red"}],
            ["a", "new", "a", "b"],
        )
    assert err.value.record == "row 2" and err.value.field == "spam"
    assert snapshot(s) == before
    # the statistics still work after the rollbacks
    s.update({"colour": "mauve", "len": 1.0}, "a")
    assert s.count("colour", "mauve") == {"a": 1.0, "b": 0.0, "c": 0.0}


def test_rejected_record_rolls_back_text_tokens():
    """New tokens of a known text attribute, registered before a later field is rejected, are
    forgotten (a rollback finds them in the columns registered since its mark), and the same
    tokens register again afterwards under the same columns."""
    s = learn([({"body": {"free", "money"}, "len": 1.0}, "spam"),
               ({"body": {"lunch"}, "len": 2.0}, "ham")])
    before = snapshot(s)
    for x in ({"body": frozenset({"free", "prize", "win"}), "len": "long"},
              {"body": {"prize": 2, "win": 1}, "len": "long"}):
        with pytest.raises(InvalidRecord):
            s.update(x, "spam")
        assert snapshot(s) == before
        assert s.schema.values_of(s.schema.attributes.get("body")).keys() == {
            "free", "money", "lunch"}
    s.update({"body": frozenset({"free", "prize", "win"}), "len": 3.0}, "spam")
    assert s.count("body", "prize") == {"spam": 1.0, "ham": 0.0}


def test_column_values_follow_registrations_and_rollbacks_of_every_kind():
    """``schema.column_value`` gives each column's value (a nominal value, a text token — read
    from its vocabulary, not kept beside it —, None for a token attribute's own column) through
    records that interleave two text attributes, nominal values and tokens, rejected records
    rolled back, slices, ``take`` and a state round trip; and, with the C table, the schema
    keeps no str object of a text token."""
    import sys

    from streamnb._accel import names
    from streamnb.stats.values import NOMINAL, TEXT

    rng = np.random.default_rng(3)
    schema = Schema()

    def expected() -> list:
        out = [None] * schema.n_columns
        for a in range(schema.n_attributes):
            if schema.kinds[a] in (NOMINAL, TEXT):  # a value or token a column
                for value, column in dict(schema.values_of(a)).items():
                    out[column] = value
        return out

    for i in range(300):
        # text fields first (a small vocabulary, a larger one), so that a rollback forgets
        # text columns before nominal ones, whose values outnumber the first vocabulary's
        x = {"subject": {f"s{k}é" for k in rng.integers(0, 150, size=rng.integers(0, 3))},
             "body": {f"w{k}" for k in rng.integers(0, 400, size=rng.integers(0, 6))},
             f"t{rng.integers(0, 40)}": True,
             "colour": ["red", f"c{i}"][rng.integers(0, 2)]}
        if i % 5 == 4:
            x["len"] = "bad"  # rejected: what its fields registered is rolled back
        mark = schema.mark()
        try:
            x.setdefault("len", float(i))
            encode_record(schema, x, f"record {i}", grow=True)
        except InvalidRecord:
            schema.rollback(mark)
        if i % 50 == 49:
            values = list(schema.column_value)
            assert values == expected() and len(values) == schema.n_columns
            assert schema.column_value[-3:] == values[-3:]
            assert schema.column_value[len(values) // 2] == values[len(values) // 2]
            picks = np.sort(rng.choice(len(values), size=20, replace=False))
            assert schema.column_value.take(picks) == [values[j] for j in picks.tolist()]
    again = Schema.from_state(*schema.to_state())
    assert list(again.column_value) == list(schema.column_value)
    if names.ACCELERATED:
        token = "".join(["fresh", "-token"])  # an object of its own
        held = sys.getrefcount(token)
        encode_record(schema, {"body": {token}}, "record", grow=True)
        assert schema.column_value[-1] == token and sys.getrefcount(token) == held


def test_cells_equal_value_counts_columns():
    """``cells`` gathers what ``value_counts[:, columns]`` does, into a new array, whatever the
    buffer's spare rows and columns."""
    s = learn(MIXED)
    rng = np.random.default_rng(0)
    for _ in range(3):
        columns = rng.integers(0, s.schema.n_columns, size=50)
        got = s.cells(columns)
        assert s.value_count_buffer.shape != s.value_counts.shape  # spare capacity
        np.testing.assert_array_equal(got, s.value_counts[:, columns])
        got += 1.0
        np.testing.assert_array_equal(s.cells(columns), s.value_counts[:, columns])
        s.update({f"new{rng.integers(1 << 30)}": True, "colour": "violet"}, "d")
    assert s.cells([]).shape == (s.n_classes, 0)


def test_paused_collector_pauses_the_collector_and_restores_it_as_found():
    """A state's JSON side is built with the cyclic collector paused; afterwards (an error
    included) it is as it was: enabled again, or still disabled if the caller had disabled it."""
    import gc

    assert gc.isenabled()
    with paused_collector():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_collector():
        raise RuntimeError("mid-way")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_collector():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
    s = learn(MIXED)
    assert Schema.from_json(s.schema.to_json()).to_json() == s.schema.to_json()


def test_a_batch_is_encoded_with_the_collector_paused(monkeypatch):
    """A batch's rows are encoded with the collector paused (their encodings live until the
    batch is whole), learned or predicted; it runs again after, an error included."""
    import gc

    from streamnb import NaiveBayes
    from streamnb.stats import encoder

    paused = []
    real = encoder._encode_records

    def encode_records(*args, **kwargs):
        paused.append(not gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(encoder, "_encode_records", encode_records)
    model = NaiveBayes()
    model.learn_many([{"a": "x", "b": 1.0}, {"a": "y", "b": 2.0}], ["p", "q"])
    model.predict_proba_many([{"a": "x", "b": 1.5}])
    assert paused == [True, True] and gc.isenabled()
    with pytest.raises(InvalidRecord):
        model.learn_many([{"a": "x", "b": float("inf")}], ["p"])
    assert paused[-1] and gc.isenabled()
    assert gc.isenabled()


# -- merge -----------------------------------------------------------------------------------------
A = [
    ({"o": "s", "t": True, "n": 1.0}, "p"),
    ({"o": "c", "n": 2.0, "h": "hi"}, "q"),
    ({"o": "s", "u": 2, "n": 4.0}, "p"),
]
B = [
    ({"o": "r", "u": 1, "n": 3.0}, "r"),
    ({"o": "c", "t": True, "o2": "z"}, "q"),
    ({"h": "lo", "o": "s", "n": 5.0, "m": 0.5}, "p"),
    ({"h": "hi", "v": True}, "r"),
]


def test_merge_equals_learning_concatenation():
    """merge(a, b) == learning A then B: domains grown in different orders, different label
    sets, new attributes on either side, numeric moments by Chan's formula."""
    want = learn(A + B).to_dict()
    a, b = learn(A), learn(B)
    assert a.merge(b) is a
    assert_same_stats(a.to_dict(), want)
    ba = learn(B).merge(learn(A))
    assert_same_stats(ba.to_dict(), want)
    # and the merged state keeps learning correctly
    extra = [({"o": "new", "t": 1, "n": 9.0}, "s")]
    assert_same_stats(learn(extra, a).to_dict(), learn(A + B + extra).to_dict())


def test_merge_with_empty_and_into_empty():
    """The empty state is the monoid's identity."""
    want = learn(A).to_dict()
    assert_same_stats(learn(A).merge(CountStatistics()).to_dict(), want)
    assert_same_stats(CountStatistics().merge(learn(A)).to_dict(), want)


def test_merge_leaves_other_unchanged():
    b = learn(B)
    before = snapshot(b)
    learn(A).merge(b)
    assert snapshot(b) == before


def test_merge_kind_conflict_raises_and_changes_nothing():
    """An attribute nominal in one state and numeric (or token) in the other cannot merge."""
    a = learn([({"x": "v", "o": "s"}, "p")])
    before = snapshot(a)
    for other in ([({"x": 1.5, "new": "n"}, "q")], [({"new": "n", "x": True}, "q")]):
        with pytest.raises(ValueError, match="'x'"):
            a.merge(learn(other))
        assert snapshot(a) == before


def test_merge_declared_nominal_must_agree():
    a = CountStatistics(Schema(nominal=["code"]))
    b = CountStatistics()
    with pytest.raises(ValueError, match="declared nominal"):
        a.merge(b)


def test_merge_declared_domains():
    """Declared domain values are part of the state and survive a merge."""
    a = CountStatistics(Schema(domains={"o": ["s", "c", "r", "fog"]}))
    learn(WEATHER[:4], a)
    b = learn(WEATHER[4:])
    a.merge(b)
    want = learn(WEATHER, CountStatistics(Schema(domains={"o": ["s", "c", "r", "fog"]})))
    assert_same_stats(a.to_dict(), want.to_dict())
    assert a.schema.attribute_size(a.schema.attributes.get("o")) == 4


# -- decay ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("factor", [0.5, 0.9, 1e-3, 0.3])
def test_decay_scales_every_count(factor):
    """decay(f): every count and moment weight × f, M2 × f, means unchanged."""
    s = learn(MIXED + WEATHER + MESSAGES)
    before = s.to_dict()
    s.decay(factor)
    assert_stats_close(s.to_dict(), scaled(before, factor), rtol=1e-15, atol=0)
    assert s.n_records == pytest.approx(before_total(before) * factor, rel=1e-15)


def before_total(d):
    return sum(d["classes"].values())


def test_decay_one_is_a_no_op():
    s = learn(MIXED)
    before = snapshot(s)
    s.decay(1)
    s.decay(1.0)
    assert snapshot(s) == before


@pytest.mark.parametrize("bad", [0, 0.0, -0.5, 1.5, 2, float("nan"), float("inf"), -float("inf")])
def test_decay_invalid_factor_raises(bad):
    """The factor must be in (0, 1]; a rejected factor changes nothing."""
    s = learn(MIXED)
    before = snapshot(s)
    with pytest.raises(ValueError, match="decay factor"):
        s.decay(bad)
    assert snapshot(s) == before


def test_decay_twice_equals_product():
    a, b = learn(MIXED + MESSAGES), learn(MIXED + MESSAGES)
    a.decay(0.5)
    a.decay(0.25)
    b.decay(0.125)
    assert_stats_close(a.to_dict(), b.to_dict(), rtol=1e-15, atol=0)


def test_decay_then_learn():
    """After decay(f) a new record adds 1 to the scaled counts."""
    s = learn([({"a": "x", "t": True, "n": 2.0}, "p"), ({"a": "y", "n": 4.0}, "p")])
    s.decay(0.5)
    s.update({"a": "x", "n": 6.0}, "p")
    d = s.to_dict()
    assert d["classes"] == {"p": 2.0}
    assert d["cells"] == {("a", "x", "p"): 1.5, ("a", "y", "p"): 0.5, ("t", True, "p"): 0.5}
    assert d["observed"] == {("a", "p"): 2.0}
    w, mean, m2 = d["moments"][("n", "p")]
    # weighted: weights 1 (mean 3, M2 1 after decay) + 1 at 6 → mean 4.5, M2 = 1 + 4.5
    assert (w, mean) == (2.0, 4.5)
    assert m2 == pytest.approx(1.0 + 4.5, rel=1e-14)


@pytest.mark.parametrize("factor", [1 / 3, 0.1])
def test_update_many_after_decay_equals_update_sequence_bit_for_bit(factor):
    """On fractional counts (after a decay) a batch adds each cell's counts one record at a
    time, as update does, not their sum at once (which rounds differently): every count equal,
    for tokens, nominal values and text draws (once, and counted)."""
    words = frozenset(f"w{i}" for i in range(37))
    records = [({"t": True, "a": "x", "body": frozenset({"free", "money"}) | words}, "p"),
               ({"t": True, "body": {"free": 2, "now": 3}, "head": words}, "p"),
               ({"u": True, "a": "y", "body": frozenset({"free"})}, "q")] * 7
    one, many = learn(records[:3]), learn(records[:3])
    one.decay(factor)
    many.decay(factor)
    # q's draws 1/3 after the decay: + 2 draws is 2.3333333333333335 at once (as update adds
    # a record's), 2.333333333333333 one draw at a time
    records = [({"body": frozenset({"free", "lunch"})}, "q"), *records]
    learn(records, one)
    many.update_many([x for x, _ in records], [y for _, y in records])
    assert many.to_dict() == one.to_dict()
    assert many.count("body", "free") == one.count("body", "free")


# -- persistence of the statistics ----------------------------------------------------------------
def test_state_round_trip():
    """to_state → bytes → from_state gives identical statistics that keep learning alike."""
    s = learn(MIXED + WEATHER + MESSAGES + [({("bi", "gram"): True, 7: "int-name"}, 3)])
    s.decay(0.75)
    meta, arrays = s.to_state()
    t = CountStatistics.from_state(*loads_state(dumps_state(meta, arrays)))
    assert t.to_dict() == s.to_dict()
    assert t.schema.to_json() == s.schema.to_json()
    assert t.labels.values == s.labels.values
    more = [({"colour": "teal", "len": 1.0, "newtok": True}, "z"), ({"o": "s"}, "no")]
    assert learn(more, t).to_dict() == learn(more, s).to_dict()
    c = s.copy()
    assert c.to_dict() == s.to_dict()
    c.update({"o": "s"}, "no")
    assert c.to_dict() != s.to_dict()


def test_from_state_rejects_bad_shapes():
    s = learn(MIXED)
    meta, arrays = s.to_state()
    bad = dict(arrays, value_counts=np.zeros((1, 1)))
    with pytest.raises(ValueError, match="value_counts"):
        CountStatistics.from_state(meta, bad)
    missing = {k: v for k, v in arrays.items() if k != "class_counts"}
    with pytest.raises(ValueError, match="class_counts"):
        CountStatistics.from_state(meta, missing)


def test_domain_basics():
    d = Domain(["ham"])
    assert (d.add("spam"), d.add("ham"), d.get("eggs"), len(d)) == (1, 0, None, 2)
    assert Domain.from_json(d.to_json()).values == ["ham", "spam"]
    with pytest.raises(ValueError, match="duplicate"):
        Domain.from_json(["a", "a"])


def test_n_records_and_sizes_are_consistent():
    """Σ_c N(c) = records learned; Σ_v N_i(v,c) = N_i(c) ≤ N(c) on the fixed data sets."""
    data = MIXED + WEATHER + MESSAGES
    s = learn(data)
    d = s.to_dict()
    assert sum(d["classes"].values()) == len(data)
    for (name, label), observed in d["observed"].items():
        total = sum(v for (n, _, c), v in d["cells"].items() if n == name and c == label)
        assert total == observed <= d["classes"][label]
    for (name, value, label), v in d["cells"].items():
        if d["kinds"][name] == TOKEN:
            assert value is True and v <= d["classes"][label]
    assert not math.isnan(s.n_records)


def test_is_missing_is_none_or_a_nan_of_any_float_type():
    from streamnb.stats.missing import is_missing as reexported
    from streamnb.stats.values import is_missing

    assert reexported is is_missing
    for value in (None, float("nan"), np.nan, np.float32("nan"), np.float64("nan")):
        assert is_missing(value), value
    for value in (0, 0.0, "", False, "nan", np.float32(1.5), frozenset(), math.inf):
        assert not is_missing(value), value


def test_a_batch_registers_new_tokens_in_record_order_around_other_records():
    """encode_many registers the new tokens of plain token messages in bulk, around the
    records the general encoder takes (a nominal field, a text bag, a new token first seen in
    one): the same attributes, columns and order as update on each record in turn, and a
    rejected record rolls all of it back."""
    batch = [
        {"free": True, "money": 1},
        {"colour": "red", "money": True, "win": True},  # general encoder: "win" is new here
        {"win": 1, "now": True, "off": False},  # "off" is absent: never registered
        {"body": {"hello": 2}, "prize": True},
        {"prize": True, "cash": 3, "free": True},
        {"now": True, "zero": 0},
    ]
    labels = ["spam", "ham", "spam", "ham", "spam", "ham"]
    one, many = CountStatistics(), CountStatistics()
    for x, y in zip(batch, labels, strict=True):
        one.update(x, y)
    many.update_many(batch, labels)
    assert many.schema.to_json() == one.schema.to_json()
    assert many.schema.attributes.names() == ["free", "money", "colour", "win", "now", "body",
                                             "prize", "cash"]
    np.testing.assert_array_equal(many.value_counts, one.value_counts)
    rejected = CountStatistics()
    with pytest.raises(InvalidRecord, match="row 2"):
        rejected.update_many([{"a": True}, {"b": True}, {"c": [1]}], ["x", "y", "x"])
    assert rejected.schema.n_attributes == 0 and rejected.schema.n_tokens == 0


def _token_values_hold(schema: Schema) -> bool:
    """The attribute table's value of each name is its column when it is a token, -1 for every
    other kind: what the encoding kernels read instead of ``kinds`` and ``slots``."""
    kinds = np.frombuffer(schema.kinds, dtype=np.int8)
    want = np.where(kinds == TOKEN, np.frombuffer(schema.slots, dtype=np.int64), -1)
    got = np.frombuffer(schema.attributes.values(), dtype=np.int32)
    return len(got) == schema.n_attributes and np.array_equal(got, want)


def test_the_attribute_table_holds_each_tokens_column_through_every_registration():
    """Each way a schema registers, forgets or rebuilds attributes keeps the table's values
    equal to the token columns (the kernels would otherwise count a token in another's
    column): one by one, in bulk (16 or more new tokens), after other kinds' columns, by a
    rejected record's rollback, by an encoded batch learned later (replay), by a merge, from
    JSON and by copies; and counts and predictions read them."""
    import copy

    s = CountStatistics()
    s.update({"colour": "red", "a": True, "len": 1.0}, "x")
    s.update({"body": frozenset({"free", "money"}), "b": True, "colour": "blue"}, "y")
    s.update_many([{f"w{i}_{j}": True for j in range(20)} for i in range(3)], ["x", "y", "x"])
    assert _token_values_hold(s.schema)
    with pytest.raises(InvalidRecord):
        s.update_many([{f"gone{j}": True for j in range(30)}, {"colour": 3.5}], ["x", "y"])
    assert _token_values_hold(s.schema) and "gone0" not in s.schema.attributes
    batch = s.encode([{"colour": "green", "c": True}, {f"v{j}": True for j in range(20)}])
    assert _token_values_hold(s.schema)  # encoding registered, then rolled back
    s.update_many(batch, ["y", "x"])
    assert _token_values_hold(s.schema)
    other = CountStatistics()
    other.update_many([{"z": True, "colour": "teal"}, {"a": True, "q": True}], ["x", "y"])
    s.merge(other)
    assert _token_values_hold(s.schema)
    for clone in (Schema.from_json(s.schema.to_json()), copy.deepcopy(s.schema)):
        assert _token_values_hold(clone)
        assert clone.attributes.values() == s.schema.attributes.values()
    assert s.count("a", True) == {"x": 1.0, "y": 1.0}
    assert s.count("w1_5", True) == {"x": 0.0, "y": 1.0}
    assert s.count("q", True) == {"x": 0.0, "y": 1.0}
