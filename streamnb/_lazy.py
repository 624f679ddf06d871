"""Package-level names imported when first used (PEP 562), for the packages whose eager
imports would cost a one-message process (``streamnb score`` run by a mail rule) most of its
start-up: ``streamnb``, ``streamnb.models`` and ``streamnb.features``."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, namespace: dict[str, Any], sources: Mapping[str, str],
               public: Iterable[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` (whose globals are
    ``namespace``): a name of ``sources`` is imported from the module it maps to and kept, a
    subpackage not imported yet is imported, as an eager package would have it."""
    listed = set(public)

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *listed})

    return __getattr__, __dir__
