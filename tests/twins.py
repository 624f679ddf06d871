"""Comparing a C extension's function with its Python twin (streamnb/_accel/choose.py): the
helpers of tests/test_kernels.py, test_names.py and test_scan.py."""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable
from typing import Any

import numpy as np


def bits(value: Any) -> Any:
    """`value` with every float as its hex form and every array as its type and bytes: equal
    means bit-equal."""
    if isinstance(value, float):
        return value.hex()
    if isinstance(value, dict):
        return [(key, bits(v)) for key, v in value.items()]  # in order: the dicts are built
    if isinstance(value, list | tuple):
        return [type(value).__name__, *map(bits, value)]
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, array):
        return value.typecode, value.tobytes()
    if type(value).__name__ == "NameTable":  # the C type or the twin, whichever is bound
        return "NameTable", value.names(), value.values()
    return value


def run(fn: Callable, args: list) -> tuple:
    """What fn(*args) returned or raised (type and message), and the arguments after it."""
    try:
        outcome: tuple = ("returned", bits(fn(*args)))
    except Exception as error:  # compared, not hidden: the twin must raise the same
        outcome = ("raised", type(error), str(error))
    return outcome, bits(args)


def same(extension: Any, twin: Any, name: str, make_args: Callable[[], list]) -> tuple:
    """The extension's kernel `name` and its twin on two fresh copies of the same arguments
    agree; the C kernel's outcome and arguments after it (for tests that also check what they
    are)."""
    c = run(getattr(extension, name), make_args())
    python = run(getattr(twin, name), make_args())
    assert c == python
    return c


def untested(twin_module: Any, tests: dict[str, Any]) -> list[str]:
    """The kernels of a twin module (its ``__all__``) that have no ``test_<name>_same…`` among
    `tests` (a test module's globals; a class's name in snake case: NameTable, name_table)."""
    return [name for name in twin_module.__all__
            if not any(test.startswith(f"test_{_snake(name)}_same") for test in tests)]


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
