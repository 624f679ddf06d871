"""Which implementation of a kernel module runs: its C extension or its Python twins.

A twin module (streamnb/_accel/names.py, streamnb/_accel/kernels.py, streamnb/features/scan.py)
defines each kernel in Python under its public name and lists exactly those names in
``__all__``: the one list of its kernels. Its last statement is
``twin, ACCELERATED = choose(globals(), "<its extension>")``, which rebinds every name of
``__all__`` to the extension's function when the extension imports and
``STREAMNB_PURE_PYTHON`` is unset (or ``0``); otherwise the twins serve. ``twin`` keeps the
Python twins either way: tests compare ``twin.<name>`` with the extension's ``<name>``, and a
twin that calls another kernel calls ``twin.<name>`` so that it stays Python throughout.
tests/test_kernel_modules.py checks that each extension exports exactly its twin's ``__all__``.
"""

from __future__ import annotations

import importlib
import os
from types import SimpleNamespace
from typing import Any

__all__ = ["choose", "pure_python"]


def pure_python() -> bool:
    """Whether ``STREAMNB_PURE_PYTHON`` asks for the Python twins (set, and not ``0``)."""
    return os.environ.get("STREAMNB_PURE_PYTHON", "") not in ("", "0")


def choose(namespace: dict[str, Any], extension: str) -> tuple[SimpleNamespace, bool]:
    """The twins of ``namespace["__all__"]`` and whether the extension replaced them in
    ``namespace``. An extension that is not built (no C compiler at install) leaves the twins;
    one that lacks a listed kernel (a stale build) is an error, not a silent mix."""
    names = namespace["__all__"]
    twin = SimpleNamespace(**{name: namespace[name] for name in names})
    if pure_python():
        return twin, False
    try:
        module = importlib.import_module(extension)
    except ImportError:
        return twin, False
    missing = [name for name in names if not hasattr(module, name)]
    if missing:
        raise ImportError(f"{extension} has no {', '.join(missing)}: rebuild it "
                          f"(pip install -e .)")
    namespace.update({name: getattr(module, name) for name in names})
    return twin, True
