"""An append-only numpy buffer: the schema's per-column arrays, grown as attributes and values
are registered and cut back by a rollback."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["GrowingArray"]


class GrowingArray:
    """A 1-d numpy array that grows by appending (amortised O(1)) and can be truncated."""

    __slots__ = ("data", "size")

    def __init__(self, dtype: type) -> None:
        self.data = np.zeros(16, dtype=dtype)
        self.size = 0

    def append(self, value: Any) -> None:
        if self.size == len(self.data):
            self.data = np.concatenate([self.data, np.zeros_like(self.data)])
        self.data[self.size] = value
        self.size += 1

    def extend(self, values: np.ndarray) -> None:
        self.fill(values, len(values))

    def fill(self, values: Any, n: int) -> None:
        """Append ``n`` entries: ``values`` (n of them, or one value for all, without building
        an array of it)."""
        end = self.size + n
        if end > len(self.data):
            grown = np.zeros(max(end, 2 * len(self.data)), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size:end] = values
        self.size = end

    def truncate(self, size: int) -> None:
        self.size = size

    def view(self) -> np.ndarray:
        return self.data[: self.size]
