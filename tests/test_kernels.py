"""Every kernel of the token path (streamnb._accel._kernels) and its Python twin
(streamnb._accel.kernels) give the same results, bit for bit, and leave the arrays they mutate
the same, errors included.

Each test builds the arguments twice from one seed, calls the kernel on one copy and its twin on
the other, and compares the result (or the error's type and message) and every argument after
the call (tests/twins.py: floats by their hex form, arrays by their bytes, so -0.0 is not 0.0).
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from twins import same as _same
from twins import untested

from streamnb._accel import kernels
from streamnb.stats.values import drawn_once, text_draws

_kernels = pytest.importorskip("streamnb._accel._kernels", reason="C kernels not built")
_names = pytest.importorskip("streamnb._accel._names", reason="C name table not built")


def same(name: str, make_args: Callable[[], list]) -> tuple:
    return _same(_kernels, kernels.twin, name, make_args)


def test_every_kernel_has_a_test():
    assert untested(kernels, globals()) == []


# --- the token path: a random state of counts, bins and messages ----------------------------

K, WIDTH, CAPACITY, N_BINS = 3, 40, 45, 8  # capacity beyond the live columns, as in the stats
# Values of a record's fields: the bool/int ones are token presences, the others send the
# record (or the field) to the general encoder.
VALUES = [True, False, 0, 1, 3, -2, 1.0, "s", None, np.int64(1)]
# Unbinned counts of a non-head token (a corrupt state): above the last bin, negative, huge, NaN.
BAD_COUNTS = [float(N_BINS), -1.0, 1e20, math.nan, math.inf]


def _tokens(rng: np.random.Generator, bad_column: bool) -> list:
    """The attribute table the encoders read: tokens t0… whose values are their columns 0…, a
    nominal attribute "nom" (value -1), and with bad_column a token whose column is out of
    range (the capacity, beyond, or the largest value)."""
    names, columns = [f"t{i}" for i in range(WIDTH)], list(range(WIDTH))
    if bad_column:
        names.append("bad")
        columns.append([CAPACITY, 10**6, 2**31 - 1][rng.integers(0, 3)])
    table = _names.NameTable()
    table.add_new([*names, "nom"])
    for a, column in enumerate(columns):
        table.set_value(a, column)
    return [table]


def _record(rng: np.random.Generator, simple: bool) -> dict:
    """A message: tokens known and unknown (t40… are not registered), sometimes the bad one,
    with `simple` only bool/int values and no nominal field."""
    names = [f"t{i}" for i in rng.integers(0, WIDTH + 10, size=rng.integers(0, 12))]
    if rng.random() < 0.2:
        names.insert(rng.integers(0, len(names) + 1), "bad")
    values = VALUES[:6] if simple else VALUES
    x = {name: values[rng.integers(0, len(values))] for name in names}
    if not simple and rng.random() < 0.3:
        x["nom"] = "v"
    return x


def _counts(rng: np.random.Generator, corrupt: bool) -> dict[str, Any]:
    """Counts, their bins and head columns as stats/token_histogram.py keeps them: a column is
    a head column when a count of it has passed the last bin; the others are binned per class.
    With corrupt, a non-head count is outside the bins (the kernels must refuse it)."""
    value_counts = np.zeros((K + 1, CAPACITY))
    value_counts[:K, :WIDTH] = rng.integers(0, N_BINS + 3, size=(K, WIDTH))
    # a few decayed (fractional) counts: the kernels truncate them to their bin
    value_counts[:K, :WIDTH] *= np.where(rng.random((K, WIDTH)) < 0.1, 0.75, 1.0)
    is_head = np.zeros(CAPACITY + 3, dtype=bool)
    is_head[:WIDTH] = value_counts[:K, :WIDTH].max(axis=0) >= N_BINS
    if corrupt:
        j = rng.choice(np.flatnonzero(~is_head[:WIDTH]))
        value_counts[rng.integers(0, K), j] = BAD_COUNTS[rng.integers(0, len(BAD_COUNTS))]
    bins = np.zeros((K, N_BINS))
    for c in range(K):
        binned = value_counts[c, :WIDTH][~is_head[:WIDTH]]
        binned = binned[(binned >= 0) & (binned < N_BINS)]
        bins[c] = np.bincount(binned.astype(int), minlength=N_BINS)
    class_counts = np.zeros(K + 2)
    class_counts[:K] = value_counts[:K, :WIDTH].max(axis=1) + rng.integers(0, 3, size=K)
    if rng.random() < 0.2:
        class_counts[rng.integers(0, K)] = 0.0  # an unseen class: zero factors
    return {"value_counts": value_counts, "bins": bins, "is_head": is_head,
            "head": np.flatnonzero(is_head[:WIDTH]).astype(np.int64),
            "class_counts": class_counts}


def _columns(rng: np.random.Generator, bad: bool) -> list:
    """A message's columns; with bad, one is out of range or not an integer."""
    columns: list = rng.choice(WIDTH, size=rng.integers(0, 15), replace=False).tolist()
    if rng.random() < 0.2:
        columns.append(columns[0] if columns else 0)  # listed twice
    if rng.random() < 0.1:
        columns.append(np.int64(1))  # a numpy integer: refused (PyLong_AsSsize_t)
    if bad:
        columns.insert(rng.integers(0, len(columns) + 1),
                       [CAPACITY, -1, 10**20, 1.0, "3"][rng.integers(0, 5)])
    return columns


SMOOTHING = [(1.0, 1.0), (0.0, 0.0), (0.5, 2.0), (1.0, 0.0)]
SEEDS = range(40)


def _args(seed: int, build: Callable[[np.random.Generator], list]) -> Callable[[], list]:
    """A maker of fresh, equal arguments: `build` on a new generator of `seed` each call."""
    return lambda: build(np.random.default_rng(seed))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("grow", [False, True])
def test_encode_tokens_same(seed, grow):
    def build(rng):
        bad = rng.random() < 0.3
        return [_record(rng, simple=False), *_tokens(rng, bad), grow]
    same("encode_tokens", _args(seed, build))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("grow", [False, True])
def test_encode_many_same(seed, grow):
    def build(rng):
        odd = [{}, [], "x", None, {"t1": True}]  # not a non-empty dict: the general encoder
        records = [_record(rng, simple=rng.random() < 0.7) if rng.random() < 0.9
                   else odd[rng.integers(0, len(odd))] for _ in range(rng.integers(0, 20))]
        return [records, *_tokens(rng, bad_column=rng.random() < 0.3), grow]
    same("encode_many", _args(seed, build))


# Bags of a text value: drawn once per token (set, frozenset, dict of str to True), and the
# shapes the kernel leaves to the general rule (a list, a count other than True, a token that
# is not a str, a str subclass, not a bag at all).
class _Str(str):
    pass


def _bag(rng: np.random.Generator) -> Any:
    tokens = [f"t{i}" for i in rng.integers(0, WIDTH + 10, size=rng.integers(0, 12))]
    shape = rng.integers(0, 8)
    if shape == 0:
        return set(tokens)
    if shape == 1:
        return frozenset(tokens)
    bag: dict = dict.fromkeys(tokens, True)
    odd: list[Any] = [1, 1.0, np.True_, None]
    if shape == 3 and bag:
        bag[tokens[0]] = odd[rng.integers(0, len(odd))]
    elif shape == 4:
        bag[[3, _Str("t1"), None][rng.integers(0, 3)]] = True
    elif shape == 5:
        return frozenset([*tokens, [7, _Str("t2"), 2.5][rng.integers(0, 3)]])
    elif shape == 6:
        return [tokens, "t1 t2", None, 3][rng.integers(0, 4)]
    return bag


def _vocabulary(rng: np.random.Generator, names: list[str]) -> list:
    """A text vocabulary as the kernel reads it: the names in a shuffled order of registration,
    their values distinct columns."""
    order = rng.permutation(len(names))
    table = _names.NameTable()
    table.add_new([names[i] for i in order])
    for a, column in enumerate(rng.permutation(3 * len(names))[: len(names)].tolist()):
        table.set_value(a, column)
    return [table]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("grow", [False, True])
def test_text_columns_same(seed, grow):
    def build(rng):
        first_new = [] if rng.random() < 0.3 else [int(rng.integers(0, 3 * WIDTH))]
        return [_bag(rng), *_vocabulary(rng, [f"t{i}" for i in range(WIDTH)]), grow,
                *first_new]
    outcome, _ = same("text_columns", _args(seed, build))
    assert outcome[0] == "returned"


@pytest.mark.parametrize("seed", SEEDS[:4])
@pytest.mark.parametrize("grow", [False, True])
def test_text_columns_same_on_a_large_vocabulary(seed, grow):
    """Past 2**16 slots the kernel loads ahead, 64 tokens at a time: bags longer than that,
    non-ASCII tokens and one UTF-8 cannot encode (kept beside the table) give the twin's
    columns, which are the dict's."""
    names = [f"w{i}" for i in range(30_000)] + [f"caf\xe9{i}" for i in range(200)] + ["\ud800"]

    def build(rng):
        [table] = _vocabulary(rng, names)
        picked = [names[i] for i in rng.integers(0, len(names) + 2_000, size=300)
                  if i < len(names)] + [f"new{i}" for i in rng.integers(0, 50, size=40)]
        bag = [frozenset, set, lambda t: dict.fromkeys(t, True)][rng.integers(0, 3)](picked)
        return [bag, table, grow, 10**6]

    outcome, _ = same("text_columns", _args(seed, build))
    assert outcome[0] == "returned"
    bag, table, *_ = build(np.random.default_rng(seed))
    column = {name: table.value(table.get(name)) for name in names}
    found, new = _kernels.text_columns(bag, table, grow, 10**6)
    unknown = [t for t in bag if t not in column]
    ahead = dict(zip(unknown, range(10**6, 10**6 + len(unknown)), strict=True))
    assert np.frombuffer(found, dtype=np.int64).tolist() == [
        column[t] if t in column else ahead[t] for t in bag if grow or t in column]
    assert new == (unknown if grow else [])


def test_text_columns_refuses_what_it_cannot_read():
    """The same errors from the kernel and its twin: a vocabulary that is not a NameTable, a
    first new column that is not an int."""
    table = _names.NameTable()
    table.add_new(["a", "b"], 0)
    for args in ([{"a"}, {"a": 0}, True], [{"a"}, table, True, 1.5]):
        outcome, _ = same("text_columns", lambda args=args: [*args])
        assert outcome[0] == "raised"


def test_text_columns_reads_what_the_rule_reads():
    """Where the kernel answers, it gives the text rule's tokens (each drawn once) in order:
    known ones by column, unknown ones as places to register when growing."""
    table = _names.NameTable()
    table.add_new(["a", "b"], 0)
    values = [table]
    for bag in ({"b": True, "z": True, "a": True}, ["b", "z", "a"]):
        got = kernels.text_columns(bag, *values, True, 7)
        if isinstance(bag, list):
            assert got is None  # a list may repeat a token: counts are the rule's business
            continue
        assert got == (array("q", [1, 7, 0]).tobytes(), ["z"])  # z: numbered from 7
        assert list(text_draws(bag, "r", "f")) == ["b", "z", "a"]
        assert kernels.text_columns(bag, *values, False, 7) == (array("q", [1, 0]).tobytes(), [])
    for bag in ({"a"}, frozenset({"a", "b"}), {"a": True}, {}, set()):
        assert drawn_once(bag)
    for bag in (["a"], ("a",), {"a": 1}, {"a": 2.0}, {"a": np.True_}, {1: True}, {_Str("a")},
                "a b", None):
        assert not drawn_once(bag)


def _odds_args(rng: np.random.Generator, a_present: float, a_absent: float) -> list:
    state = _counts(rng, corrupt=False)
    finite = array("d", rng.normal(size=K + 1) * 50)
    zeros = array("q", rng.integers(-2, 3, size=K + 1))
    return [state["value_counts"], K, _columns(rng, bad=rng.random() < 0.3),
            state["class_counts"], a_present, a_absent, finite, zeros]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("a_present", "a_absent"), SMOOTHING)
def test_token_log_odds_same(seed, a_present, a_absent):
    same("token_log_odds", _args(seed, lambda rng: _odds_args(rng, a_present, a_absent)))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", [1, 2, K])
def test_token_odds_rows_same(seed, k):
    """Sums per row from the log table, or False with the sums zeroed (a class count outside
    the table or not an integer, a count outside it); a bad column or row is an error."""
    def build(rng):
        state = _counts(rng, corrupt=rng.random() < 0.3)
        class_counts = state["class_counts"]
        if rng.random() < 0.1:
            class_counts[rng.integers(0, k)] += 0.5
        n_rows, n_cells = int(rng.integers(1, 6)), int(rng.integers(0, 40))
        columns = rng.integers(0, WIDTH, size=n_cells)
        rows = rng.integers(0, n_rows, size=n_cells)
        if rng.random() < 0.5:
            rows.sort()  # a batch's usual order; the other reads rows out of order
        if n_cells and rng.random() < 0.1:
            bad = [columns, rows][rng.integers(0, 2)]
            bad[rng.integers(0, n_cells)] = [-1, CAPACITY, n_rows][rng.integers(0, 3)]
        a = [1.0, 0.5][rng.integers(0, 2)]
        top = N_BINS + 5 + [0, 5, -6][rng.integers(0, 3)]  # -6: often too short
        return [state["value_counts"], k, columns, rows, class_counts,
                np.log(np.arange(top) + a), rng.normal(size=(n_rows, k))]
    same("token_odds_rows", _args(seed, build))


def test_token_odds_rows_sums_the_log_odds():
    """What the table gives is Σ log(n + a) − log(N − n + a) over each row's cells."""
    counts = np.array([[0.0, 3.0, 7.0], [2.0, 0.0, 1.0]])
    class_counts = np.array([7.0, 4.0])
    table = np.log(np.arange(16) + 0.5)
    sums = np.zeros((3, 2))
    columns, rows = np.array([2, 0, 1, 2]), np.array([0, 0, 2, 2])
    assert kernels.token_odds_rows(counts, 2, columns, rows, class_counts, table, sums)
    odds = np.log(counts + 0.5) - np.log(class_counts[:, None] - counts + 0.5)
    want = np.zeros((3, 2))
    for j, r in zip(columns, rows, strict=True):
        want[r] += odds[:, j]
    np.testing.assert_allclose(sums, want, rtol=1e-15)
    assert not kernels.token_odds_rows(counts, 2, columns, rows, class_counts, table[:7], sums)
    assert not sums.any()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("a_present", "a_absent"), SMOOTHING)
def test_score_tokens_same(seed, a_present, a_absent):
    def build(rng):
        value_counts, k, _, class_counts, a, b, finite, zeros = _odds_args(rng, a_present,
                                                                          a_absent)
        return [_record(rng, simple=rng.random() < 0.5),
                *_tokens(rng, bad_column=rng.random() < 0.3), value_counts, k, class_counts, a,
                b, finite, zeros]
    same("score_tokens", _args(seed, build))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("log", [False, True, None])
def test_posterior_same(seed, log):
    def build(rng):
        k = rng.integers(1, 6)
        finite = array("d", rng.normal(size=k) * [1e-3, 1.0, 300.0, 1e6][rng.integers(0, 4)])
        zeros = array("q", rng.integers(0, 3, size=k))
        labels = [f"c{c}" for c in range(k + (rng.random() < 0.1))]  # one too many: refused
        return [labels, finite, zeros] + ([] if log is None else [log])
    outcome, _ = same("posterior", _args(seed, build))
    if outcome[0] == "returned":
        values = [float.fromhex(p) for _, p in outcome[1]]
        total = sum(math.exp(v) for v in values) if log else sum(values)
        assert total == pytest.approx(1.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_posterior_is_the_batch_posterior_row_by_row(seed):
    """The one-record posterior (C and twin) and the batch one (CountClassifier._log_posterior)
    are one rule: equal on every row, zero factors and underflowing probabilities included."""
    from streamnb.models.base import CountClassifier

    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    finite = rng.normal(size=(20, k)) * [1e-3, 1.0, 300.0, 1e6][rng.integers(0, 4)]
    zeros = rng.integers(0, 3, size=(20, k))
    batch = CountClassifier._log_posterior(finite, zeros)
    labels = [f"c{c}" for c in range(k)]
    for posterior in (_kernels.posterior, kernels.twin.posterior):
        for row in range(20):
            logs = posterior(labels, array("d", finite[row]), array("q", zeros[row]), True)
            np.testing.assert_allclose(list(logs.values()), batch[row], rtol=1e-12, atol=1e-12)
            proba = posterior(labels, array("d", finite[row]), array("q", zeros[row]))
            np.testing.assert_allclose(list(proba.values()), np.exp(batch[row]), rtol=1e-12,
                                       atol=1e-300)


def _class(rng: np.random.Generator) -> int:
    """A class index, now and then one without a row (-1, or K + 1 beyond the bins' rows)."""
    return [0, 1, 2, 2, 1, -1, K + 1][rng.integers(0, 7)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("binned", [True, False])
def test_token_increment_same(seed, binned):
    def build(rng):
        state = _counts(rng, corrupt=rng.random() < 0.3)
        return [state["value_counts"], _class(rng), _columns(rng, bad=rng.random() < 0.2),
                state["bins"], state["is_head"], binned]
    same("token_increment", _args(seed, build))


@pytest.mark.parametrize("seed", SEEDS)
def test_token_increment_many_same(seed):
    """A batch's cells (a column repeated across records, so some cross the last bin mid-batch
    and their later cells only count), now and then a class or column out of range or a count
    outside the bins."""
    def build(rng):
        state = _counts(rng, corrupt=rng.random() < 0.3)
        n = int(rng.integers(0, 60))
        classes = rng.integers(0, K, size=n)
        columns = rng.integers(0, WIDTH // 4, size=n)  # few columns: many repeats, crossings
        if n and rng.random() < 0.15:
            bad = int(rng.integers(0, n))
            if rng.random() < 0.5:
                classes[bad] = [-1, K, K + 5][rng.integers(0, 3)]
            else:
                columns[bad] = [-1, CAPACITY, 10**6][rng.integers(0, 3)]
        return [state["value_counts"], classes.astype(np.int64), columns.astype(np.int64),
                state["bins"], state["is_head"]]
    same("token_increment_many", _args(seed, build))


def test_token_increment_many_is_token_increment_record_by_record():
    """The batch kernel leaves counts, bins and head marks as token_increment on each record
    in turn followed by TokenHistogram.counted would (the one-record learning path)."""
    from streamnb.stats.token_histogram import TokenHistogram

    rng = np.random.default_rng(5)
    state = _counts(rng, corrupt=False)
    records = [(int(rng.integers(0, K)),
                rng.choice(WIDTH // 3, size=rng.integers(1, 6), replace=False).tolist())
               for _ in range(80)]
    one = {name: value.copy() for name, value in state.items()}
    histogram = TokenHistogram(N_BINS - 1)
    histogram.bins, histogram.is_head = one["bins"], one["is_head"]
    histogram.head, histogram.exact = one["head"].tolist(), True
    for c, columns in records:
        crossed = _kernels.token_increment(one["value_counts"], c, columns, one["bins"],
                                           one["is_head"], True)
        histogram.counted(c, crossed, one["value_counts"])
    many = {name: value.copy() for name, value in state.items()}
    classes = np.array([c for c, cols in records for _ in cols], dtype=np.int64)
    columns = np.array([j for _, cols in records for j in cols], dtype=np.int64)
    crossed = _kernels.token_increment_many(many["value_counts"], classes, columns,
                                            many["bins"], many["is_head"])
    assert crossed  # the test reaches the crossing path
    for name in ("value_counts", "bins", "is_head"):
        np.testing.assert_array_equal(many[name], one[name], err_msg=name)
    assert sorted(state["head"].tolist() + crossed) == histogram.head



def test_buffer_errors_name_the_kernel_and_its_argument():
    """A buffer of the wrong item size or no buffer at all: the error names the kernel and
    the argument by name (it counted the buffers once: "argument 0" was value_counts)."""
    rng = np.random.default_rng(6)
    state = _counts(rng, corrupt=False)
    vc, bins, head = state["value_counts"], state["bins"], state["is_head"]
    cells = np.zeros(2, dtype=np.int64)
    table = _names.NameTable()
    table.add_new(["a"])
    calls = [
        ("token_increment_many: bins", lambda: _kernels.token_increment_many(
            vc, cells, cells, bins.astype(np.float32), head)),
        ("token_increment_many: is_head", lambda: _kernels.token_increment_many(
            vc, cells, cells, bins, [0, 1])),
        ("token_increment_many: columns", lambda: _kernels.token_increment_many(
            vc, cells, cells.astype(np.int32), bins, head)),
        ("token_increment_many: classes", lambda: _kernels.token_increment_many(
            vc, cells.astype(np.int16), cells, bins, head)),
        ("encode_tokens: the attribute table", lambda: _kernels.encode_tokens(
            {"a": True}, {"a": 0}, False)),
        ("posterior: zeros", lambda: _kernels.posterior(
            ["a", "b"], np.zeros(2), np.zeros(2, dtype=np.int32))),
    ]
    for expected, call in calls:
        with pytest.raises((TypeError, BufferError, ValueError), match=re.escape(expected)):
            call()

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("binned", [True, False])
@pytest.mark.parametrize("new_names", [None, [], ["t99"]])
def test_learn_tokens_same(seed, binned, new_names):
    """Also with a list for the new names (one already in it stays): compared after the call
    with the counts, so the names collected and the counts left unchanged are checked too."""
    def build(rng):
        state = _counts(rng, corrupt=rng.random() < 0.3)
        args = [_record(rng, simple=rng.random() < 0.7),
                *_tokens(rng, bad_column=rng.random() < 0.3), state["value_counts"],
                _class(rng), state["bins"], state["is_head"], binned]
        return args if new_names is None else [*args, list(new_names)]
    same("learn_tokens", _args(seed, build))


def test_learn_tokens_collects_new_names_and_changes_nothing():
    """A message with new tokens: their names are collected, no count changes; once they
    are registered, the same call counts the message."""
    table = _names.NameTable()
    table.add_new(["a", "b"])
    table.set_value(0, 0)
    table.set_value(1, 1)
    for module in (_kernels, kernels.twin):
        counts, bins = np.zeros((1, 4)), np.zeros((1, 4))
        bins[0, 0] = 4.0
        is_head = np.zeros(4, dtype=bool)
        new: list = []
        x = {"a": True, "new": 1, "gone": 0, "b": False}
        assert module.learn_tokens(x, table, counts, 0, bins, is_head, True, new) is None
        assert new == ["new"] and not counts.any() and bins[0].tolist() == [4, 0, 0, 0]
        assert module.learn_tokens({"a": True}, table, counts, 0, bins, is_head, True, new) == []
        assert counts[0].tolist() == [1, 0, 0, 0] and new == ["new"]
        with pytest.raises(TypeError, match="new_names must be a list"):
            module.learn_tokens(x, table, counts, 0, bins, is_head, True, ("new",))


@pytest.mark.parametrize(("count", "shown"), [(9.0, "9.0"), (-3.0, "-3.0"), (1e20, "1e+20"),
                                              (math.nan, "nan")])
def test_token_increment_unbinned_count_message(count, shown):
    """A count outside the bins is named in the message as Python's repr writes it (the C
    kernel once passed %g to PyErr_Format, which has no such conversion), and both stop at
    that column: the columns before it and its own count are incremented, the rest not."""
    def build(rng):
        counts = np.zeros((2, 8))
        counts[0, [1, 3, 5]] = [2.0, count, 1.0]
        bins = np.zeros((2, 8))
        bins[0] = np.bincount([2, 0, 0, 0, 0, 1], minlength=8)
        return [counts, 0, [1, 3, 5], bins, np.zeros(8, dtype=bool), True]
    (_, _, message), args = same("token_increment", _args(0, build))
    assert re.fullmatch(f"count {re.escape(shown)} of column 3 is not binned", message)
    counts = np.frombuffer(args[1][2], dtype=float).reshape(2, 8)
    assert counts[0, 1] == 3.0 and counts[0, 5] == 1.0


def _log_table(a: float, size: int) -> np.ndarray:
    """log(j + a) for j < size, as stats/token_histogram.py keeps it (log 0 stored as 0: a
    zero term is counted, not summed)."""
    with np.errstate(divide="ignore"):
        table = np.log(np.arange(size) + a)
    table[np.isinf(table)] = 0.0
    return table


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("a", [1.0, 0.0, 0.5])
def test_class_absent_sum_same(seed, a):
    def build(rng):
        state = _counts(rng, corrupt=False)
        c = _class(rng)
        N = int(state["class_counts"][c]) if 0 <= c < K else 5
        N += [0, 0, 0, -N - 1, 1000][rng.integers(0, 5)]  # N < 0, or beyond the table: refused
        head = state["head"]
        if rng.random() < 0.2:  # a head column beyond the counts, or a count above N
            head = np.append(head, [CAPACITY, -1, 0][rng.integers(0, 3)]).astype(np.int64)
        return [state["bins"], state["value_counts"], c, N, _log_table(a, N_BINS + 15), head,
                a == 0.0]
    same("class_absent_sum", _args(seed, build))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("a_present", "a_absent"), SMOOTHING)
def test_class_terms_same(seed, a_present, a_absent):
    def build(rng):
        state = _counts(rng, corrupt=False)
        dirty = [None, [], [0], [2, 0], range(K), [K], [-1], ["0"]][rng.integers(0, 8)]
        sums = array("d", rng.normal(size=K) * 10)
        sum_zeros = array("q", rng.integers(0, 3, size=K))
        size = [1, N_BINS + 15, 200][rng.integers(0, 3)]  # 1: too short, False changes nothing
        return [state["class_counts"], K, [1.0, 0.0, 0.5][rng.integers(0, 3)], a_present,
                a_absent, [0, WIDTH, 10**5][rng.integers(0, 3)], state["bins"],
                state["value_counts"], state["head"], _log_table(a_absent, size), dirty, sums,
                sum_zeros, array("d", bytes(8 * K)), array("q", bytes(8 * K))]
    same("class_terms", _args(seed, build))


def test_a_twin_counts_a_column_listed_twice_twice():
    """The C loop increments each listed column in turn; the twin once did all at once with
    numpy's fancy indexing, which counts a repeated column once."""
    def build(rng):
        return [np.zeros((1, 4)), 0, [2, 2], np.array([[4.0, 0, 0, 0]]), np.zeros(4, bool),
                True]
    _, args = same("token_increment", _args(0, build))
    assert np.frombuffer(args[1][2])[2] == 2.0



# --- SpamFilter's score ---------------------------------------------------------------------

def _spam_args(rng: np.random.Generator) -> list:
    """A message of up to ~400 tokens' columns (past numpy's 8- and 128-element summation
    blocks) as a list or int64, learned and not (at or past `learned`, numbered ahead as a
    lookup does), over counts with ties, fractions, unseen classes and empty totals; now and
    then a learned column that is not an int or out of range, columns that are neither a list
    nor int64, a class out of range."""
    width = int(rng.integers(1, 400))
    value_counts = np.zeros((K + 1, width + 5))
    value_counts[:K, :width] = rng.integers(0, 12, size=(K, width))
    value_counts[:K, :width] *= np.where(rng.random((K, width)) < 0.1, 0.5, 1.0)
    learned = width if rng.random() < 0.9 else int(rng.integers(0, width + 10))
    columns: Any = [int(j) for j in rng.integers(0, width + 20, size=rng.integers(0, 400))]
    shape = rng.random()
    if shape < 0.3:
        columns = np.array(columns, dtype=np.int64)
    elif shape < 0.4:
        columns = array("q", columns).tobytes()  # bytes: 1-byte items
    elif columns and shape < 0.5:
        columns[int(rng.integers(0, len(columns)))] = [-1, 1.0, np.int64(2), 2**70, True, "3",
                                                       None][rng.integers(0, 7)]
    elif shape < 0.53:
        columns = [tuple(columns), frozenset(columns), np.array(columns, dtype=np.int32)][
            rng.integers(0, 3)]
    classes = [-1, 0, 1, 2, K + 1, -2]
    spam, ham = (classes[i] for i in rng.choice(len(classes), 2, replace=False,
                                                p=[0.16, 0.33, 0.33, 0.14, 0.02, 0.02]))
    totals = tuple(float(v) if rng.random() < 0.9 else [0.0, -1.0, math.nan][
        rng.choice(3, p=[0.9, 0.05, 0.05])] for v in rng.integers(1, 500, size=4))
    size = float(width) if rng.random() < 0.97 else [0.0, -1.0, math.nan][rng.integers(0, 3)]
    return [columns, value_counts, int(spam), int(ham), totals, size,
            [0.1, 1.0, 1e-3, 0.0][rng.choice(4, p=[0.33, 0.33, 0.32, 0.02])],
            [1, 3, 25, sys.maxsize][rng.integers(0, 4)],
            [0.1, 1.0][rng.integers(0, 2)], [0.5, 0.3][rng.integers(0, 2)],
            [0.2, 0.0, 0.45][rng.integers(0, 3)], [1, 7, 2**62][rng.integers(0, 3)], learned]


@pytest.mark.parametrize("seed", range(300))
def test_spam_evidence_same(seed):
    same("spam_evidence", _args(seed, _spam_args))


def test_spam_evidence_sums_as_numpy_sums():
    """The kernel's sums are numpy's pairwise sums (the score path it replaced summed with
    ndarray.sum): the mean of every ratio, bit for bit, at every length around the blocks."""
    rng = np.random.default_rng(7)
    for n in [1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 255, 256, 257, 300, 1000]:
        spam_counts = rng.integers(0, 50, size=n).astype(float)
        value_counts = np.vstack([spam_counts, rng.integers(0, 50, size=n).astype(float)])
        got = _kernels.spam_evidence(list(range(n)), value_counts, 0, 1, (9.0, 9.0, 1e3, 2e3),
                                     float(n), 0.1, sys.maxsize, 0.1, 0.5, 0.0, 2**62, n)
        d = np.array([(math.log(a + 0.1) - math.log(1e3 + 0.1 * n))
                      - (math.log(b + 0.1) - math.log(2e3 + 0.1 * n))
                      for a, b in value_counts.T.tolist()])  # libm's log, as the kernel's
        d = d[np.lexsort((-d, -np.abs(d)))]
        assert got[:3] == (n, float(d.sum()) / n, n)


def test_drawn_once_same():
    """The shape check alone, C and twin: bags that draw each token once and every near miss
    (a non-str token, a count other than True, a list, a subclass, a string)."""

    class _Set(set):
        pass

    bags = [set(), frozenset(), {}, {"a", "b"}, frozenset({"a", "é", ""}), {"a": True},
            {"a": True, "b": True}, {"a", 1}, frozenset({("a",)}), {"a": 1}, {"a": 1.0},
            {"a": np.True_}, {1: True}, {"a": True, "b": False}, ["a"], ("a",), "a b",
            None, 3, _Set({"a"}), {_Str("a")}, {"a": True, _Str("b"): True}]
    for bag in bags:
        outcome, _ = same("drawn_once", lambda bag=bag: [bag])
        assert outcome[0] == "returned"
    assert [_kernels.drawn_once(bag) for bag in bags[:7]] == [True] * 7
    assert not any(_kernels.drawn_once(bag) for bag in bags[7:])



# --- the numeric path: a class's pairwise moments -------------------------------------------

def _moments(rng: np.random.Generator, p: int) -> list:
    """A class's pairwise moments after a few records (weights and means per pair, some pairs
    with fewer records, as missing values leave them), and a record x."""
    weight = rng.integers(0, 6, size=(p, p)).astype(float)
    weight = np.minimum(weight, weight.T)
    if rng.random() < 0.3:
        weight *= 0.75  # decayed
    sums = [rng.normal(size=(p, p)) * 10.0 ** rng.integers(-3, 4) for _ in range(5)]
    comoment = sums[1] + sums[1].T
    return [weight, sums[0], comoment, np.abs(sums[2]), sums[3], np.abs(sums[4]),
            rng.normal(size=p) * 10.0 ** rng.integers(-3, 4)]


@pytest.mark.parametrize("seed", SEEDS)
def test_covariance_add_one_same(seed):
    def build(rng):
        p = int(rng.integers(0, 9))
        args = _moments(rng, p)
        fault = rng.integers(0, 8)
        if fault == 1:  # a moment of the wrong shape
            args[int(rng.integers(0, 6))] = np.zeros((p + 1, p))
        elif fault == 2:  # int64, float32 or read-only
            i = int(rng.integers(0, 7))
            args[i] = [args[i].astype(np.int64), args[i].astype(np.float32),
                       np.frombuffer(args[i].tobytes())][rng.integers(0, 3)]
        elif fault == 3:  # x not 1-d
            args[6] = args[6][None]
        return args
    same("covariance_add_one", _args(seed, build))


def test_covariance_add_one_is_the_moments_of_the_records():
    """Three complete records added one at a time give their count, means and central sums."""
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(3, 4))
    moments = [np.zeros((4, 4)) for _ in range(6)]
    for row in rows:
        kernels.covariance_add_one(*moments, row)
    d = rows - rows.mean(axis=0)
    weight, mean, comoment, square, cube, fourth = moments
    assert np.all(weight == 3.0)
    np.testing.assert_allclose(mean, np.repeat(rows.mean(axis=0)[:, None], 4, axis=1))
    np.testing.assert_allclose(comoment, d.T @ d, atol=1e-12)
    np.testing.assert_allclose(square, np.repeat((d * d).sum(axis=0)[:, None], 4, axis=1))
    np.testing.assert_allclose(cube, (d * d).T @ d, atol=1e-12)
    np.testing.assert_allclose(fourth, (d * d).T @ (d * d), atol=1e-12)


# --- the numeric path: a binned density's bins and kernel density estimates (KernelNB) ------

def _binned(rng: np.random.Generator) -> list:
    """A binned density's arrays (streamnb/stats/binned_density.py) as a KernelNB state holds
    them: counts (k, p, B) with gaps, whole or decayed, some cells empty; origin and exponent
    (k, p); the cells' moments weight, mean, M2 (k, p)."""
    k, p, n_bins = int(rng.integers(1, 4)), int(rng.integers(0, 5)), int(rng.integers(1, 12))
    counts = rng.integers(0, 4, size=(k, p, n_bins)) * (rng.random((k, p, n_bins)) < 0.6)
    counts = counts.astype(float) * (0.37 if rng.random() < 0.3 else 1.0)
    exponent = rng.integers(-6, 4, size=(k, p))
    origin = rng.integers(-20, 20, size=(k, p))
    width = np.ldexp(1.0, exponent)
    weight = counts.sum(axis=2)
    mean = (origin + n_bins / 2) * width + rng.normal(size=(k, p))
    m2 = weight * (width * n_bins / 4) ** 2 * rng.random((k, p))
    return [counts, origin, exponent, weight, mean, m2]


def _binned_values(rng: np.random.Generator, origin: np.ndarray, exponent: np.ndarray,
                   n_bins: int, shape: tuple[int, ...]) -> np.ndarray:
    """Values around a random cell's bins: inside, just outside, far outside (the one-exp-a-term
    path), missing and infinite."""
    values = np.empty(shape)
    flat = values.reshape(-1)
    for i in range(flat.size):
        if not origin.size:
            flat[i] = rng.normal()
            continue
        c, a = int(rng.integers(0, origin.shape[0])), int(rng.integers(0, origin.shape[1]))
        base, width = float(origin[c, a]), math.ldexp(1.0, int(exponent[c, a]))
        kind = rng.integers(0, 10)
        spread = [n_bins, n_bins, n_bins, 3 * n_bins, 1e4 * n_bins][min(kind, 4)]
        flat[i] = (base + rng.uniform(-spread, spread)) * width
        if kind == 5:
            flat[i] = math.nan
        elif kind == 6:
            flat[i] = math.inf * (1 if rng.random() < 0.5 else -1)
    return values


@pytest.mark.parametrize("seed", SEEDS)
def test_kde_log_likelihood_same(seed):
    def build(rng):
        counts, origin, exponent, weight, _, m2 = _binned(rng)
        k, p, n_bins = counts.shape
        m = int(rng.integers(0, 4))
        values = _binned_values(rng, origin, exponent, n_bins, (m, p))
        attributes = rng.permutation(p)[: int(rng.integers(0, p + 1))].astype(np.int64)
        # bandwidths about the cells' deviations, some below the bin width, one NaN
        bandwidth = np.sqrt(m2 / np.maximum(weight, 1.0)) * rng.uniform(0.05, 1.0, (k, p))
        if bandwidth.size and rng.random() < 0.3:
            bandwidth.flat[int(rng.integers(0, bandwidth.size))] = math.nan
        out = rng.normal(size=(m, k))
        args = [counts, origin, exponent, bandwidth, values, attributes, out]
        fault = rng.integers(0, 10)
        if fault == 1:  # a cell array or the values or out of the wrong shape
            i = [1, 2, 3, 4, 6][rng.integers(0, 5)]
            args[i] = np.zeros((args[i].shape[0] + 1, args[i].shape[1]), dtype=args[i].dtype)
        elif fault == 2:  # int64 for float64 and back, or float32
            i = [0, 1, 2, 3, 4, 6][rng.integers(0, 6)]
            args[i] = args[i].astype(np.float32 if rng.random() < 0.3 else
                                     np.int64 if args[i].dtype == np.float64 else np.float64)
        elif fault == 3 and p:  # an attribute out of range, or a list of them
            args[5] = [*attributes.tolist(), [p, -1][rng.integers(0, 2)]]
        elif fault == 4 and p:  # a corrupt cell: bins too fine, too coarse, or off the scale
            c, a = int(rng.integers(0, k)), int(rng.integers(0, p))
            if rng.random() < 0.5:
                exponent[c, a] = [-1075, 1024, 2**40][rng.integers(0, 3)]
            else:
                origin[c, a] = [2**62 + 1, -(2**62) - 1][rng.integers(0, 2)]
        elif fault == 5:
            args[0] = counts[:, :, 0].copy()  # counts not 3-d
        return args
    same("kde_log_likelihood", _args(seed, build))


@pytest.mark.parametrize("seed", SEEDS)
def test_binned_add_one_same(seed):
    def build(rng):
        counts, origin, exponent, weight, mean, m2 = _binned(rng)
        k, p, n_bins = counts.shape
        x = _binned_values(rng, origin, exponent, n_bins, (p,))
        x[np.isinf(x)] = 1e300  # the encoder refuses infinities; a huge value re-bins
        args = [counts, origin, exponent, weight, mean, m2, int(rng.integers(0, k)), x]
        fault = rng.integers(0, 8)
        if fault == 1:  # a cell array or x of the wrong shape
            i = [1, 2, 3, 4, 5, 7][rng.integers(0, 6)]
            args[i] = np.zeros(args[i].shape[0] + 1, dtype=args[i].dtype)
        elif fault == 2:  # int64 for float64 and back, or float32
            i = [0, 1, 2, 3, 4, 5, 7][rng.integers(0, 7)]
            args[i] = args[i].astype(np.float32 if rng.random() < 0.3 else
                                     np.int64 if args[i].dtype == np.float64 else np.float64)
        elif fault == 3:  # a class out of range
            args[6] = [k, -1][rng.integers(0, 2)]
        elif fault == 4 and p:  # a corrupt cell of the record's class
            exponent[args[6], int(rng.integers(0, p))] = 2**40
        return args
    same("binned_add_one", _args(seed, build))


def _reference_log_density(counts: np.ndarray, origin: int, exponent: int, h: float,
                           t: float) -> float:
    """log Σ_b N_b φ((t − m_b) / h) / (h Σ_b N_b), every term by its own exp (log-sum-exp)."""
    from scipy.special import logsumexp

    centres = np.ldexp(origin + np.arange(len(counts)) + 0.5, exponent)
    held = counts > 0
    z = (t - centres[held]) / h
    return float(logsumexp(-0.5 * z * z, b=counts[held]) - math.log(h * counts.sum())
                 - 0.5 * math.log(2.0 * math.pi))


@pytest.mark.parametrize("module", ["C", "twin"])
def test_kde_log_likelihood_is_the_kernel_density_estimate(module):
    """The geometric sum over the bins (and the one-exp-a-term sum far away) is the kernel
    density estimate, to 1e-12 relative, for 128 bins with gaps, values inside, in gaps, at the
    edges and hundreds of bandwidths away, and a bandwidth below the bin width is the width."""
    kernel = _kernels.kde_log_likelihood if module == "C" else kernels.twin.kde_log_likelihood
    rng = np.random.default_rng(11)
    k, p, n_bins = 2, 3, 128
    counts = rng.poisson(3.0, size=(k, p, n_bins)).astype(float)
    counts[:, :, 40:70] = 0.0  # a gap
    counts[1] *= 0.25  # decayed
    exponent = rng.integers(-8, 2, size=(k, p))
    origin = rng.integers(-200, 0, size=(k, p))
    width = np.ldexp(1.0, exponent)
    bandwidth = width * rng.uniform(1.0, 12.0, size=(k, p))
    bandwidth[0, 0] = 0.5 * width[0, 0]
    checked = 0
    for offset in [0.5, 20.3, 55.0, 127.9, -3.0, 140.0, 600.0, -5000.0, 3e5]:
        values = np.array([[float((origin[c, a] + offset) * width[c, a]) for a in range(p)]
                           for c in range(k)])
        out = np.zeros((len(values), k))
        kernel(counts, origin, exponent, bandwidth, values, np.arange(p), out)
        for i, row in enumerate(values):
            for c in range(k):
                ref = sum(_reference_log_density(counts[c, a], int(origin[c, a]),
                                                 int(exponent[c, a]),
                                                 max(float(bandwidth[c, a]), width[c, a]), t)
                          for a, t in enumerate(row.tolist()))
                assert out[i, c] == pytest.approx(ref, rel=1e-12, abs=1e-12)
                checked += 1
    assert checked == 9 * k * k


# --- Fisher's χ² tails (SpamFilter's combining) ----------------------------------------------

def test_chi2_log_odds_same():
    """C and twin agree bit for bit over m = 1 … 150 (and beyond, past the ln k! table) and
    statistics from 0 to 2,000 and past: λ = stat/2 at, just below and just above m (where
    the summed tail switches), tails so small that I rounds to 0 or 1 (log-odds past ±600) or
    that underflow (±inf), zero, negative, infinite and NaN statistics, and the arguments both
    refuse. (Bit for bit because ln k! is summed from libm's logs in both, not lgamma.)"""
    rng = np.random.default_rng(11)
    results = []
    for m in [*range(1, 151), 151, 300, 1000, 4000, 70_000]:  # the last past the ln k! table
        at = 2.0 * m
        stats = [0.0, -1.0, 5e-324, 1e-300, 1e-3, 0.5, 1.0, at - 2.0, at - 1e-9,
                 math.nextafter(at, 0.0), at, math.nextafter(at, math.inf), at + 1e-9,
                 at + 2.0, 4.0 * m + 40.0, 2000.0, 1e5, 4e5, 1e308, math.inf, math.nan,
                 *rng.uniform(0.0, 2000.0, size=8).tolist(),
                 *rng.uniform(0.0, 4.0 * m + 40.0, size=8).tolist()]
        pairs = [*zip(stats, stats[::-1], strict=True), (0.0, 1e5), (1e5, 0.0), (at, 1e-3)]
        for spam_stat, ham_stat in pairs:
            outcome, _ = same("chi2_log_odds", lambda m=m, a=spam_stat, b=ham_stat: [m, a, b])
            assert outcome[0] == "returned", (m, spam_stat, ham_stat, outcome)
            results.append(float.fromhex(outcome[1]))
    finite = [r for r in results if math.isfinite(r)]
    assert max(finite) > 600 and min(finite) < -600  # I itself rounds to 1 and to 0
    assert math.inf in results and -math.inf in results  # a tail underflows
    for args in ([0, 1.0, 2.0], [np.int64(3), np.float64(2.5), 7], [True, 0.5, 1.0],
                 [-1, 1.0, 1.0], [1.5, 1.0, 1.0], [2, "1", 1.0], [2**70, 1.0, 1.0]):
        same("chi2_log_odds", lambda args=args: list(args))
