"""Values a model derives from its state (log-parameters, Cholesky factors, index tables),
each computed once per state version: the one cache helper every model uses."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

__all__ = ["StateCache"]

T = TypeVar("T")


class StateCache:
    """Named derived values, each recomputed only when its key changes.

    A key is a tuple holding the statistics object itself (compared by identity, so a state
    replaced by loading or merging is never mistaken for the old one, as an ``id`` could be)
    and its ``version``, plus whatever else the value depends on (a structure version, the
    candidate list), compared with ``==`` (so not a dict of arrays: count its versions). A
    copy or a pickle of a model starts with an empty cache: derived values are never part of
    a model's state. (SpamFilter also keeps the tokens of the last message and of the last
    batch here, keyed by their texts: scoring and then learning them tokenises them once.)

    Examples
    --------
    >>> cache, calls = StateCache(), []
    >>> def compute():
    ...     calls.append(1)
    ...     return len(calls)
    >>> state = object()
    >>> cache.get("terms", (state, 0), compute), cache.get("terms", (state, 0), compute)
    (1, 1)
    >>> cache.get("terms", (state, 1), compute)  # the state changed: recomputed
    2

    """

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple, Any]] = {}

    def get(self, name: str, key: tuple[Hashable | object, ...], compute: Callable[[], T]) -> T:
        entry = self._entries.get(name)
        if entry is not None and entry[0] == key:
            return entry[1]
        value = compute()
        self._entries[name] = (key, value)
        return value

    def peek(self, name: str, key: tuple[Hashable | object, ...]) -> Any | None:
        """The value stored under ``name`` if its key is ``key`` (else None), computing nothing."""
        entry = self._entries.get(name)
        return entry[1] if entry is not None and entry[0] == key else None

    def put(self, name: str, key: tuple[Hashable | object, ...], value: Any) -> None:
        """Store ``value`` under ``name`` for ``key`` (a value carried over to a new state by
        an update cheaper than recomputing it)."""
        self._entries[name] = (key, value)

    def clear(self) -> None:
        """Forget every value (after a change the keys do not capture)."""
        self._entries.clear()

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._entries = {}

    def __deepcopy__(self, memo: dict) -> StateCache:
        return StateCache()
