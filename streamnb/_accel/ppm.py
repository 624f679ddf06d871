"""Pure-Python twins of the byte-context (PPM) kernels of streamnb/_accel/_ppm.c: the same
operations in the same order (libm's log), so the same results to the last bit; the table's
layout is the C file's (its opening comment), its owner streamnb.stats.ppm.ByteContexts."""

from __future__ import annotations

import math

import numpy as np

from streamnb._accel.choose import choose

__all__ = ["ppm_learn", "ppm_score"]

MAX_ORDER = 6
CONTEXT_FLAG = 1 << 60
_EMPTY = -1
_GOLDEN = 0x9E3779B97F4A7C15
_WORD = (1 << 64) - 1


def _check(order: int, cls: int, where: str) -> None:
    if not 0 <= order <= MAX_ORDER:
        raise ValueError(f"{where}: order must be in 0..{MAX_ORDER}, got {order}")
    if cls not in (0, 1):
        raise ValueError(f"{where}: class must be 0 or 1, got {cls}")


def _views(keys: np.ndarray, counts: np.ndarray, distinct: np.ndarray
           ) -> tuple[memoryview, memoryview, memoryview, int, int]:
    size = len(keys)
    if size < 2 or size & (size - 1):
        raise ValueError("the table's size must be a power of two")
    return (memoryview(keys), memoryview(counts.reshape(-1)), memoryview(distinct.reshape(-1)),
            size, 64 - (size.bit_length() - 1))


def _home(key: int, shift: int) -> int:
    return ((key * _GOLDEN) & _WORD) >> shift


def _find(keys: memoryview, size: int, shift: int, key: int) -> int:
    at = _home(key, shift)
    while True:
        held = keys[at]
        if held == key:
            return at
        if held == _EMPTY:
            return -1
        at = (at + 1) & (size - 1)


def _find_or_insert(keys: memoryview, size: int, shift: int, key: int) -> tuple[int, int]:
    at = _home(key, shift)
    while True:
        held = keys[at]
        if held == key:
            return at, 0
        if held == _EMPTY:
            keys[at] = key
            return at, 1
        at = (at + 1) & (size - 1)


def ppm_learn(data: bytes, order: int, cls: int, keys: np.ndarray, counts: np.ndarray,
              distinct: np.ndarray) -> int:
    """Add every byte of ``data`` to class ``cls``'s counts at orders 0..``order`` (those its
    position has history for); the number of slots newly claimed."""
    _check(order, cls, "ppm_learn")
    k_view, c_view, d_view, size, shift = _views(keys, counts, distinct)
    row = cls * size
    inserted = 0
    for i in range(len(data)):
        packed = 0
        for k in range(min(order, i) + 1):
            packed |= data[i - k] << (8 * k)
            tag = k << 56
            s, new_s = _find_or_insert(k_view, size, shift, packed | tag)
            h, new_h = _find_or_insert(k_view, size, shift, (packed >> 8) | tag | CONTEXT_FLAG)
            inserted += new_s + new_h
            if c_view[row + s] == 0.0:
                d_view[row + h] += 1
            c_view[row + s] += 1.0
            c_view[row + h] += 1.0
    return inserted


def ppm_score(data: bytes, order: int, keys: np.ndarray, counts: np.ndarray,
              distinct: np.ndarray) -> tuple[float, float]:
    """(ln P_0(data), ln P_1(data)) under interpolated PPM-D, each class's model also learning
    the message as it codes it (adaptive); the table is left unchanged."""
    _check(order, 0, "ppm_score")
    k_view, c_view, d_view, size, shift = _views(keys, counts, distinct)
    result = []
    for cls in (0, 1):
        row = cls * size
        local: dict[int, float] = {}  # the message's own c (or n) so far
        local_d: dict[int, float] = {}
        total = 0.0
        for i in range(len(data)):
            packed = 0
            p = 1.0 / 256
            seen = []
            for k in range(min(order, i) + 1):
                packed |= data[i - k] << (8 * k)
                tag = k << 56
                sym, ctx = packed | tag, (packed >> 8) | tag | CONTEXT_FLAG
                s, h = _find(k_view, size, shift, sym), _find(k_view, size, shift, ctx)
                before = c_view[row + s] if s >= 0 else 0.0
                seen.append((sym, ctx, before))
                n = (c_view[row + h] if h >= 0 else 0.0) + local.get(ctx, 0.0)
                if n > 0.0:
                    c = before + local.get(sym, 0.0)
                    d = (float(d_view[row + h]) if h >= 0 else 0.0) + local_d.get(ctx, 0.0)
                    p = max(c - 0.5, 0.0) / n + d / (2.0 * n) * p
            total += math.log(p)
            for sym, ctx, before in seen:
                if before == 0.0 and local.get(sym, 0.0) == 0.0:
                    local_d[ctx] = local_d.get(ctx, 0.0) + 1.0
                local[sym] = local.get(sym, 0.0) + 1.0
                local[ctx] = local.get(ctx, 0.0) + 1.0
        result.append(total)
    return result[0], result[1]


twin, ACCELERATED = choose(globals(), "streamnb._accel._ppm")
