"""The C NameTable (streamnb._accel._names) and its Python twin (streamnb._accel.names) agree
on every operation, errors included, and keep what the schema relies on: indices in order of
addition through rollbacks, values, the joined UTF-8 read back, pickling."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from twins import untested

from streamnb._accel import names as twin_module

_names = pytest.importorskip("streamnb._accel._names", reason="C name table not built")
Twin = twin_module.twin.NameTable


def test_every_kernel_has_a_test():
    assert untested(twin_module, globals()) == []


# --- the attribute table (NameTable) ---------------------------------------------------------

# str names (ASCII, non-ASCII, a lone surrogate UTF-8 cannot encode, empty, long; either side
# of the 11 UTF-8 bytes an entry holds: x * 11, é * 5 inline, y * 12, é * 6, 日本語の in the
# arena; a NUL byte), and names kept in the C table's side dict (ints, bools equal to 0 and 1,
# tuples)
NAMES = ["a", "b", "tok1", "é", "日本", "\udc80", "", "x" * 300, "x" * 11, "y" * 12, "é" * 5,
         "é" * 6, "日本語の", "a\x00b", 0, 1, 7, -3, True, False, ("w", 1), ("w", "v"), 2**70]


def _table_ops(seed: int) -> list:
    rng = np.random.default_rng(seed)
    pool = NAMES + [f"w{i}" for i in range(60)]
    ops: list = []
    # values: the default, in range, the limits and past them
    values = [-1, 0, 5, 2**31 - 1, -2, 2**31, 2**40, 2**31 - 3, 1.5]
    for _ in range(160):
        op = rng.integers(0, 11)
        name = pool[rng.integers(0, len(pool))]
        value = values[rng.integers(0, len(values))]
        if op == 0:
            ops.append(("add", name) if rng.random() < 0.5 else ("add", name, value))
        elif op == 1:
            picks = [pool[i] for i in rng.integers(0, len(pool), size=rng.integers(0, 6))]
            ops.append(("add_new", picks) if rng.random() < 0.5 else ("add_new", picks, value))
        elif op == 8:
            ops.append(("value", int(rng.integers(-2, 40))))
        elif op == 9:
            ops.append(("set_value", int(rng.integers(-2, 40)), value))
        elif op == 10:
            ops.append(("values", int(rng.integers(-2, 40)), int(rng.integers(-2, 40))))
        elif op == 2:
            ops.append(("get", name))
        elif op == 3:
            ops.append(("__contains__", name))
        elif op == 4:
            ops.append(("name", int(rng.integers(-2, 40))))
        elif op == 5:
            ops.append(("names" if rng.random() < 0.5 else "joined", int(rng.integers(-2, 40)),
                        int(rng.integers(-2, 40))))
        elif op == 6:
            ops.append(("truncate", int(rng.integers(0, 40))))
        else:
            ops.append(("__len__",))
    return ops


def _apply(table: Any, ops: list) -> list:
    out = []
    for method, *args in ops:
        try:
            out.append(("returned", getattr(table, method)(*args)))
        except Exception as error:
            out.append(("raised", type(error), str(error)))
        out.append((list(table), table.values()))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_name_table_same(seed):
    """The C table and its twin agree on every operation, errors included: str names by
    content, other names with Python's own equality (True is 1), rollbacks by truncate, each
    name's value (set when added, or later; -1 unless set; refused outside int32), a range of
    names joined as UTF-8 (None with a name that is not a str, a lone surrogate or a NUL)."""
    ops = _table_ops(seed)
    assert _apply(_names.NameTable(), ops) == _apply(Twin(), ops)


def test_name_table_at_scale():
    """Through many rehashes and rollbacks (deleted slots) every name keeps its index."""
    table = _names.NameTable()
    names = [f"token{i}" for i in range(60_000)]
    table.add_new(names[:30_000], 7)
    for i, name in enumerate(names[30_000:40_000], 30_007):
        table.add(name, i)
    table.truncate(25_000)
    table.add_new(names[25_000:60_000], 25_007)
    assert len(table) == 60_000
    assert all(table.get(name) == i for i, name in enumerate(names))
    assert np.array_equal(np.frombuffer(table.values(), dtype=np.int32), np.arange(7, 60_007))
    assert table.get("token60000") is None and "token-1" not in table
    assert table.names(59_998) == names[59_998:]
    assert table.joined() == "\0".join(names).encode()
    assert table.nbytes < 60_000 * 60  # entries, slots and the UTF-8 arena


def test_name_table_long_and_short_names_through_rollbacks():
    """Names kept in their entry (at most 11 UTF-8 bytes) and in the arena, interleaved: a
    rollback gives the arena back from the earliest long name it forgets, and names added
    after it (other ones, of other lengths) are found and listed as the twin lists them."""
    rng = np.random.default_rng(11)
    names = [("n" * int(rng.integers(0, 30)) + str(i)) for i in range(5_000)]
    table, twin = _names.NameTable(), Twin()
    for t in (table, twin):
        t.add_new(names[:3_000])
        t.truncate(1_234)
        t.add_new(names[3_000:])
        t.truncate(2_500)
        t.add_new(names[1_234:2_000][::-1])
    assert list(table) == list(twin) and len(table) == len(twin)
    assert table.joined() == twin.joined() == "\0".join(twin).encode()
    assert all(table.get(name) == twin.get(name) for name in names)
    assert sum(len(n.encode()) > 11 for n in list(table)) > 1_000  # both kinds of entry


def test_name_table_reads_back_what_it_joined():
    """``add_joined(joined(), values())`` rebuilds a table name for name (ASCII names hashed
    from their bytes must hash as their str does: every name is found by its str), in the C
    table and its twin alike; what cannot be added raises the same error in both, with nothing
    added: a name already there or given twice, bytes that are not UTF-8, a value out of
    range, as many names as values or not."""
    rng = np.random.default_rng(5)
    plain = [n for n in NAMES if type(n) is str and n != "\udc80" and "\x00" not in n]
    names = plain + [f"w{i}" * int(rng.integers(1, 5)) for i in range(3_000)]
    for make in (_names.NameTable, Twin):
        source = make()
        source.add_new(names, 7)
        again = make()
        again.add_joined(source.joined(), source.values())
        assert list(again) == names and again.values() == source.values()
        assert all(again.get(name) == i for i, name in enumerate(names))
        assert again.get("w0w0w0w0w0") is None and "tok" not in again
    value = np.array([3], np.int32).tobytes()
    bad = [(b"free\0free", np.array([1, 2], np.int32).tobytes()), (b"a", value),
           (b"new\0\xff", np.array([1, 2], np.int32).tobytes()), (b"zz", np.array([-5], np.int32)
                                                                  .tobytes()),
           (b"one\0two", value), (b"", value + value), (b"x", b"\0\0\0")]
    outcomes = []
    for make in (_names.NameTable, Twin):
        table = make()
        table.add_new(["a", "b"], 0)
        outcome = []
        for args in bad:
            with pytest.raises((ValueError, OverflowError)) as error:
                table.add_joined(*args)
            outcome.append((type(error.value), str(error.value), list(table), table.values()))
        table.add_joined(b"", b"")
        table.add_joined(b"", value)  # one empty name
        outcomes.append((outcome, list(table)))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] == ["a", "b", ""]


@pytest.mark.parametrize("make", [_names.NameTable, Twin])
def test_name_table_pickles_and_copies(make):
    import copy
    import pickle

    names = [name for name in NAMES if type(name) is not bool]  # True is 1, False is 0
    table = make()
    table.add_new(names, 3)
    table.set_value(1, -1)
    for clone in (pickle.loads(pickle.dumps(table)), copy.deepcopy(table)):
        assert type(clone) is make and list(clone) == names
        assert all(clone.get(name) == i for i, name in enumerate(names))
        assert [clone.value(i) for i in range(len(names))] == [3, -1, *range(5, len(names) + 3)]
    with pytest.raises(ValueError, match="one value a name"):
        make().__setstate__((names, b"\0\0\0\0"))

