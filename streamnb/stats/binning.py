"""The fine bins in which the discrete-attribute models (TAN, AODE, the selective models, naive
Bayes on bins) count a numeric attribute, and the MDL intervals of those bins they read.

Their state is counts of discrete values, summed across shards and decayed as a whole, and
their structure is re-learned from those counts alone. A float is therefore counted as the
value "its bin", under a rule that depends on the value only — not on the data seen before
it, nor on the shard — so that two shards count the same value in the same cell and their
counts add up exactly, a record costs one bin lookup per numeric attribute, and a relearn
never needs the stream again. Intervals fitted to the data (Fayyad–Irani MDL,
:func:`mdl_boundaries`) are made of whole bins, chosen from the bins' per-class counts
(:class:`Coarsening`), and their counts are sums of the bins' counts: re-chosen at every
structure update without a record.

The rule (:func:`grid_bin`): each attribute's values are counted in aligned bins of width 2^e,
bin i holding [i·2^e, (i+1)·2^e), shared by every class, e the *smallest* exponent (≥ ``E_MIN``)
for which every value the attribute has shown fits in at most ``FINE_BINS`` consecutive bins.
A value outside the bins seen so far that does not fit raises e, and the bins held are re-read
at the new width by summing aligned runs of them (:func:`grid_of` reads a bin's index and
exponent back from its name): exact, since ⌊⌊x/2^e⌋/2^s⌋ = ⌊x/2^(e+s)⌋. So the bins are a
function of the set of values seen, whatever their order or batching: two shards coarsen to the
larger width of the two (or wider, when their union needs it) and add; a decay scales the counts
and leaves the bins alone. Each re-binning at least halves the resolution, so an attribute is
re-binned a bounded number of times whatever the stream's length. The same aligned,
function-of-the-values sketch holds KernelNB's densities
(:class:`~streamnb.stats.binned_density.BinnedDensity`, per class and attribute): both read the
exponent from :func:`exponent_for` and :func:`fitting_shift`.

Octave bins (:func:`bin_of`): the fine layer of models saved before the grid, still read so that
such a model loads, predicts and goes on learning as it did: ``BINS_PER_OCTAVE`` bins of
equal width in each octave [2^e, 2^(e+1)) of |x|,
mirrored for negative values, and 0 its own bin: bins of relative width 25–12.5 %, the
same at every scale, read from the float's exponent and the first two bits of its mantissa
(exact: no rounding, so every platform bins a value alike). A value's bin is named by its
interval, e.g. ``"[96, 112)"`` (a negative one ``"(-112, -96]"``). The bins are fine where
values are small and coarse where they are large, which suits the skewed positive
measurements most data sets hold (amounts, counts, durations); an attribute whose values
all lie far from zero within a narrow range (a year, say) falls into one or two bins and
carries little: centre it first.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from streamnb.stats.codec import decode, encode
from streamnb.stats.values import MISSING, numeric_value

__all__ = ["BINS_PER_OCTAVE", "E_MIN", "FINE_BINS", "Coarsening", "bin_of", "bin_position",
           "coarse_pair_state", "entropy_bits", "exponent_for", "fitting_shift", "grid_bin",
           "grid_of", "mdl_accepts", "mdl_boundaries", "sum_columns"]

#: bins per octave of |x| of the octave bins: the bin width is 1/BINS_PER_OCTAVE of the
#: octave's lower edge
BINS_PER_OCTAVE = 4

#: at most this many fine bins per numeric attribute (the bound of the grid)
FINE_BINS = 128

#: the finest bin width, 2^E_MIN
E_MIN = -40

#: a grid's bin indices stay below 2^GRID_INDEX_BITS in magnitude, so that a bin's ends,
#: i·2^e, are exact floats and its name reads back exactly
GRID_INDEX_BITS = 52


def exponent_for(largest: float, index_bits: int) -> int:
    """The smallest exponent ≥ ``E_MIN`` keeping |⌊x / 2^e⌋| < 2^index_bits for every value x
    of magnitude at most ``largest``."""
    return max(E_MIN, math.frexp(largest)[1] - index_bits) if largest > 0 else E_MIN


def fitting_shift(lo: int, hi: int, n_bins: int) -> int:
    """The smallest s ≥ 0 for which the aligned bins ``lo``..``hi`` of one width, read at 2^s
    times that width, number at most ``n_bins`` (≥ 2)."""
    shift = 0
    while (hi >> shift) - (lo >> shift) + 1 > n_bins:
        shift += 1
    return shift


def grid_bin(value: float, held: tuple[int, int, int] | None, n_bins: int = FINE_BINS
             ) -> tuple[int, int]:
    """The grid bin (index, exponent) of ``value`` (a finite float) for an attribute whose bins
    so far are ``held`` = (exponent, lowest index, highest index), None before its first
    value: the exponent is the smallest that holds them and the value in ``n_bins`` bins.

    >>> grid_bin(3.0, (0, 0, 3), 4), grid_bin(6.0, (0, 0, 3), 4)   # 6 needs width 2: 0..6
    ((3, 0), (3, 1))
    """
    e = exponent_for(abs(value), GRID_INDEX_BITS)
    lo = hi = None
    if held is not None:
        e = max(e, held[0])
        lo, hi = held[1] >> (e - held[0]), held[2] >> (e - held[0])
    i = math.floor(math.ldexp(value, -e))
    shift = 0 if lo is None else fitting_shift(min(lo, i), max(hi, i), n_bins)
    return i >> shift, e + shift


def grid_name(index: int, exponent: int) -> str:
    """The name of grid bin ``index`` of width 2^exponent: its interval, ends exact.

    >>> grid_name(3, -1), grid_name(-2, 2)
    ('[1.5, 2)', '[-8, -4)')
    """
    return (f"[{math.ldexp(index, exponent):.17g}, "
            f"{math.ldexp(index + 1, exponent):.17g})")


def grid_of(name: str) -> tuple[int, int]:
    """(index, exponent) of the grid bin named ``name`` (:func:`grid_name`)."""
    lo, hi = (float(end) for end in name[1:-1].split(", "))
    exponent = math.frexp(hi - lo)[1] - 1
    return int(math.ldexp(lo, -exponent)), exponent


def bin_of(value: float) -> str:
    """The name of the bin holding ``value`` (a finite float).

    >>> [bin_of(v) for v in (0.0, 1.0, 1.3, 100.0, -3.0, 1e-3)]
    ['0', '[1, 1.25)', '[1.25, 1.5)', '[96, 112)', '(-3.5, -3]', '[0.0009765625, 0.0012207031)']
    """
    if value == 0.0:
        return "0"
    mantissa, exponent = math.frexp(abs(value))  # |value| = mantissa · 2^exponent, ½ ≤ m < 1
    step = math.ldexp(1.0, exponent - 1) / BINS_PER_OCTAVE  # the octave's bin width
    j = math.floor((2.0 * mantissa - 1.0) * BINS_PER_OCTAVE)  # exact: powers of two
    lo = math.ldexp(1.0, exponent - 1) + j * step
    hi = lo + step
    if value > 0:
        return f"[{lo:.8g}, {hi:.8g})"
    return f"(-{hi:.8g}, -{lo:.8g}]"


def bin_position(name: str) -> float:
    """Where the bin named ``name`` (:func:`bin_of`) lies on the line: its left end (0 for
    "0"). Bins are ordered by it, and every value of a bin lies at or right of it.

    >>> [bin_position(n) for n in ("0", "[96, 112)", "(-3.5, -3]")]
    [0.0, 96.0, -3.5]
    """
    return 0.0 if name == "0" else float(name[1:name.index(",")])


def entropy_bits(counts: np.ndarray) -> np.ndarray:
    """Class entropy (bits) of each row of counts (rows summing to zero give zero)."""
    total = counts.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(counts > 0, counts * np.log(np.where(counts > 0, counts, 1.0)), 0.0)
        h = (np.where(total > 0, total * np.log(np.where(total > 0, total, 1.0)), 0.0)
             - plogp.sum(axis=-1)) / (np.where(total > 0, total, 1.0) * math.log(2))
    return h


def mdl_accepts(prior: np.ndarray, left: np.ndarray, right: np.ndarray) -> bool:
    """Fayyad & Irani's MDL criterion: accept the cut when
    Gain > log2(N − 1)/N + Δ/N, Δ = log2(3^k − 2) − [k·H(S) − k1·H(S1) − k2·H(S2)]."""
    n = prior.sum()
    if n <= 1:  # decayed counts can weigh less than two records: no cut pays for itself
        return False
    h, h1, h2 = entropy_bits(np.stack([prior, left, right]))
    n1, n2 = left.sum(), right.sum()
    gain = h - (n1 * h1 + n2 * h2) / n
    k, k1, k2 = (int(np.count_nonzero(c)) for c in (prior, left, right))
    delta = math.log2(3.0**k - 2) - (k * h - k1 * h1 - k2 * h2)
    return bool(gain > (math.log2(n - 1) + delta) / n)


def mdl_boundaries(counts: np.ndarray) -> list[int]:
    """Fayyad and Irani's MDL cut points over ordered cells: ``counts`` is ``(cells,
    classes)``, the per-class counts of each cell (a distinct value, or a fine bin) in the
    order of the line; the cuts are cell indices ``i`` (a cut between cells ``i − 1`` and
    ``i``), ascending. The boundary of least class entropy of the two sides (the first such)
    is kept when it passes :func:`mdl_accepts`, and both sides are split again in the same way
    — the criterion of Weka's supervised discretisation. Counts may be fractional
    (forgetting).

    >>> mdl_boundaries(np.array([[5, 0], [5, 0], [0, 5], [0, 5]]))   # two pure halves
    [2]
    >>> mdl_boundaries(np.array([[3, 3], [3, 3], [3, 3]]))           # no class information
    []

    References
    ----------
    U. M. Fayyad, K. B. Irani. Multi-interval discretization of continuous-valued attributes
    for classification learning. IJCAI 1993 (the criterion: their Theorem and eq. for Δ).
    """
    counts = np.asarray(counts, dtype=np.float64)
    cumulative = np.concatenate([np.zeros((1, counts.shape[1])), np.cumsum(counts, axis=0)])
    cuts: list[int] = []
    stack = [(0, len(counts))]
    while stack:
        lo, hi = stack.pop()
        if hi - lo < 2:
            continue
        prior = cumulative[hi] - cumulative[lo]
        split = np.arange(lo + 1, hi)
        left = cumulative[split] - cumulative[lo]
        right = prior - left
        n_left = left.sum(axis=1)
        conditional = (n_left * entropy_bits(left)
                       + (prior.sum() - n_left) * entropy_bits(right)) / prior.sum()
        best = int(np.argmin(conditional))
        i = int(split[best])
        if mdl_accepts(prior, left[best], right[best]):
            cuts.append(i)
            stack.extend([(i, hi), (lo, i)])
    return sorted(cuts)


class Coarsening:
    """Coarse intervals of binned attributes, by attribute name: ``cuts[name]`` the ascending
    positions (:func:`bin_position`) where an interval after the first starts, chosen by
    :func:`mdl_boundaries` from the per-class counts of the fine bins. A fine bin (and so a value)
    belongs to the interval its position falls in, whether or not it was ever counted."""

    def __init__(self, cuts: Mapping[Any, Sequence[float]]) -> None:
        self.cuts = {name: [float(c) for c in positions] for name, positions in cuts.items()}

    @classmethod
    def of(cls, stats: Any) -> Coarsening:
        """The MDL intervals of every binned attribute of ``stats`` (a
        :class:`~streamnb.stats.CountStatistics`) from its counts: O(fine bins × classes)
        per attribute and level of splitting, no record read."""
        schema, cuts = stats.schema, {}
        for a in sorted(schema.binned):
            values = schema.nominal_values[schema.slots[a]]
            names = sorted(values, key=bin_position)
            counts = stats.cells([values[v] for v in names]).T  # (bins, classes)
            cuts[schema.attributes.name(a)] = [bin_position(names[i])
                                                for i in mdl_boundaries(counts)]
        return cls(cuts)

    def interval(self, name: Any, position: float) -> str:
        """The name of the interval of attribute ``name`` holding ``position``."""
        cuts = self.cuts[name]
        g = bisect.bisect_right(cuts, position)
        lo = f"{cuts[g - 1]:.8g}" if g else "-inf"
        hi = f"{cuts[g]:.8g}" if g < len(cuts) else "inf"
        return f"[{lo}, {hi})"

    def record(self, x: Mapping, where: str, schema: Any) -> Mapping:
        """``x`` with the value of each attribute with intervals replaced by its interval's
        name, read through its fine bin in ``schema`` (a missing one left as it is; a str
        refused as for any numeric attribute)."""
        out = dict(x)
        for name, value in x.items():
            if name in self.cuts:
                number = numeric_value(value, where, name)
                if number is not MISSING:
                    a = schema.attributes.get(name)
                    position = (schema.bin_position_of(a, number) if a is not None
                                else bin_position(bin_of(number)))
                    out[name] = self.interval(name, position)
        return out

    def statistics_state(self, stats: tuple[dict, dict]) -> tuple[tuple[dict, dict], np.ndarray]:
        """The state (:meth:`CountStatistics.to_state`) of the coarse counts — each fine
        bin's column summed into its interval's, so they are exactly those of the records
        counted by interval; the intervals' attributes are plain nominal ones — and the map
        ``to`` of :func:`sum_columns`."""
        return sum_columns(stats, lambda name, value: (
            None if name not in self.cuts else self.interval(name, bin_position(value))),
            binned=False)


def sum_columns(stats: tuple[dict, dict], rename: Any, binned: bool
                ) -> tuple[tuple[dict, dict], np.ndarray]:
    """The state (:meth:`CountStatistics.to_state`) of ``stats`` with the columns of binned
    attributes renamed — ``rename(attribute name, bin name)`` is the value a fine bin is
    counted as, None to leave the attribute alone — and the columns of a same new value summed
    into one; the renamed attributes stay binned if ``binned``. Also the map ``to``: the new
    column of each old column, which carries any other state kept by column
    (:func:`coarse_pair_state`, a reservoir's cells)."""
    meta, arrays = stats
    schema = dict(meta["schema"])
    names = [decode(n) for n, _ in schema["attributes"]]
    owner = np.asarray(arrays["schema.column_attributes"], dtype=np.int64)
    nominal = iter(schema["nominal_values"])
    kinds = [kind for _, kind in schema["attributes"]]
    binned_attributes = set(schema["binned"])
    renamed: set[int] = set()
    to = np.empty(len(owner), dtype=np.int64)
    new_owner: list[int] = []
    new_values: list[Any] = []
    seen: dict[tuple[int, str], int] = {}
    for j, a in enumerate(owner.tolist()):
        value = next(nominal) if kinds[a] == "nominal" else None
        new = rename(names[a], decode(value)) if a in binned_attributes else None
        if new is not None:
            renamed.add(a)
            key = (a, new)
            if key in seen:
                to[j] = seen[key]
                continue
            seen[key] = len(new_owner)
            value = encode(new)
        to[j] = len(new_owner)
        new_owner.append(a)
        if kinds[a] == "nominal":
            new_values.append(value)
    if not binned:
        schema["binned"] = sorted(binned_attributes - renamed)
    schema["nominal_values"] = new_values
    k, n = len(arrays["class_counts"]), len(new_owner)
    counts = np.zeros((k, n))
    np.add.at(counts, (slice(None), to), arrays["value_counts"])
    arrays = {**arrays, "schema.column_attributes": np.asarray(new_owner, dtype=np.int32),
              "value_counts": counts}
    return ({**meta, "schema": schema}, arrays), to


def coarse_pair_state(meta: dict, arrays: dict, to: np.ndarray, k: int) -> tuple[dict, dict]:
    """A :class:`~streamnb.stats.pairs.PairCounts` state with schema column j summed into
    column ``to[j]`` (positions, pair cells, snapshots' marginals by position, text keys
    alike)."""
    columns = list(dict.fromkeys(to[meta["columns"]].tolist())) if meta["columns"] else []
    at = {j: p for p, j in enumerate(columns)}
    position = np.asarray([at[j] for j in to[meta["columns"]].tolist()], dtype=np.int64)
    # each new position sums its old ones along both axes: a sparse 0/1 matrix product per
    # class, O(P²), in the order of the old positions (a scattered add is ~10× slower)
    from scipy import sparse  # (on a structure update only: not at import, which the CLI pays)

    n, m = len(columns), len(position)
    gather = sparse.csr_matrix((np.ones(m), (position, np.arange(m))), shape=(n, m))
    old = np.asarray(arrays["co"], dtype=np.float64)
    co = np.zeros((k, n, n))
    for c in range(min(k, old.shape[0])):
        co[c] = (gather @ (gather @ old[c]).T).T
    out = {**arrays, "co": co}
    if "present_columns" in arrays:
        out["present_columns"] = to[np.asarray(arrays["present_columns"], dtype=np.int64)]
    for i in range(int(meta["snapshots"])):  # marginals by position, as many as there were
        old = arrays[f"snapshot{i}.columns"]
        m = old.shape[1]
        new = np.zeros((old.shape[0], int(position[:m].max()) + 1 if m else 0))
        np.add.at(new, (slice(None), position[:m]), old)
        out[f"snapshot{i}.columns"] = new
    seen_attributes, seen_columns = meta["seen"]
    meta = {**meta, "columns": columns,
            "candidates": [a if a >= 0 else -1 - int(to[-1 - a]) for a in meta["candidates"]],
            "seen": [seen_attributes, int(to[:seen_columns].max()) + 1 if seen_columns else 0]}
    return meta, out
