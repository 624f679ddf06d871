"""The fixed bins in which the discrete-attribute models (TAN, AODE, the selective models)
read a numeric attribute.

Their state is counts of discrete values, summed across shards and decayed as a whole, and
their structure is re-learned from those counts alone. A float is therefore counted as the
value "its bin", under a rule that depends on the value only — not on the data seen before
it, nor on the shard — so that two shards count the same value in the same cell and their
counts add up exactly, a record costs one bin lookup per numeric attribute, and a relearn
never needs the stream again. (Cut points fitted to data, as Fayyad–Irani MDL chooses them,
move as the stream grows: counts made under old cuts could not be re-read under new ones
without the records, nor shards with different cuts be merged.)

The rule: ``BINS_PER_OCTAVE`` bins of equal width in each octave [2^e, 2^(e+1)) of |x|,
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

import math

__all__ = ["BINS_PER_OCTAVE", "bin_of"]

#: bins per octave of |x|: the bin width is 1/BINS_PER_OCTAVE of the octave's lower edge
BINS_PER_OCTAVE = 4


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
