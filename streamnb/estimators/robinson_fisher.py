"""Robinson's token spamicities and Fisher's χ² combining, read from message counts.

For a token w with ``n_s(w)`` of the ``N_s`` spam messages and ``n_h(w)`` of the ``N_h`` ham
messages containing it (class-normalised, so an unbalanced stream does not tilt it)::

    p(w) = b / (b + g),   b = n_s(w)/N_s,  g = n_h(w)/N_h
    f(w) = (s·x + n(w)·p(w)) / (s + n(w)),   n(w) = n_s(w) + n_h(w)     (Robinson's shrinkage)

Only tokens with ``|f(w) − ½| ≥ min_dev`` are kept, the ``max_tokens`` most extreme first.
Over the ``m`` kept tokens, with ``Q(·; 2m)`` the χ² survival function::

    H = Q(−2 Σ ln f(w); 2m),   S = Q(−2 Σ ln(1 − f(w)); 2m),   I = (1 + H − S) / 2

``I`` near 1 is spam. Both logs ``ln I`` and ``ln(1 − I)`` are computed from the χ² tails in
log space, so the log-odds ``ln I − ln(1 − I)`` stays finite and ordered where ``I`` itself
rounds to 0 or 1: ``chi2_log_odds``, a kernel (streamnb/_accel/kernels.py says how).
"""

from __future__ import annotations

import math

import numpy as np

from streamnb._accel.kernels import chi2_log_odds

__all__ = ["RobinsonFisher", "chi2_log_odds", "fisher_log_odds", "token_spamicity"]


def token_spamicity(n_spam: np.ndarray, n_ham: np.ndarray, N_spam: float, N_ham: float,
                    s: float, x: float) -> np.ndarray:
    """Robinson's f(w) for tokens seen in ``n_spam``/``n_ham`` of ``N_spam``/``N_ham`` messages.

    >>> token_spamicity(np.array([3.0, 0.0]), np.array([1.0, 0.0]), 4.0, 8.0, s=1.0, x=0.5)
    array([0.78571429, 0.5       ])

    (b = 3/4, g = 1/8, p = 6/7, n = 4: (0.5 + 4·6/7)/5 = 0.7857…; the second is unseen: x.)
    """
    b = n_spam / N_spam if N_spam > 0 else np.zeros_like(n_spam)
    g = n_ham / N_ham if N_ham > 0 else np.zeros_like(n_ham)
    total = b + g
    p = np.divide(b, total, out=np.full_like(total, x), where=total > 0)
    n = n_spam + n_ham
    return (s * x + n * p) / (s + n)


def fisher_log_odds(f: np.ndarray) -> float:
    """ln I − ln(1 − I) of Fisher's combined indicator over the spamicities ``f``."""
    if len(f) == 0:
        return 0.0
    # the spam statistic is small when every f is near 1
    return chi2_log_odds(len(f), -2.0 * float(np.log(f).sum()),
                         -2.0 * float(np.log1p(-f).sum()))


class RobinsonFisher:
    """Spamicity combining with Robinson's shrinkage and Fisher's χ² (SpamBayes, bogofilter).

    Parameters
    ----------
    s, x
        Strength and value of the prior a token's spamicity is shrunk toward.
    min_dev
        Tokens whose ``|f − ½|`` is below this are ignored.
    max_tokens
        At most this many tokens (the most extreme) enter the combining.

    Examples
    --------
    >>> rf = RobinsonFisher(s=1.0, x=0.5, min_dev=0.1, max_tokens=150)
    >>> abs(rf.log_odds(np.array([9.0, 0.0]), np.array([0.0, 9.0]), 10.0, 10.0)) < 1e-9
    True
    >>> rf.log_odds(np.array([9.0, 8.0]), np.array([0.0, 1.0]), 10.0, 10.0) > 3
    True

    (Two tokens that cancel give I = ½; two spam tokens f = 0.95, 0.85 give I ≈ 0.98.)
    """

    def __init__(self, s: float = 1.0, x: float = 0.5, min_dev: float = 0.1,
                 max_tokens: int = 150) -> None:
        for name, value, low, high in (("s", s, 0.0, math.inf), ("x", x, 0.0, 1.0),
                                       ("min_dev", min_dev, 0.0, 0.5)):
            if not (isinstance(value, int | float) and not isinstance(value, bool)
                    and low <= value <= high and not (name == "x" and value in (0.0, 1.0))
                    and math.isfinite(value) and not (name == "s" and value <= 0)):
                raise ValueError(f"{name} must be a number in the allowed range, got {value!r}")
        if not (isinstance(max_tokens, int) and not isinstance(max_tokens, bool)
                and max_tokens >= 1):
            raise ValueError(f"max_tokens must be an int >= 1, got {max_tokens!r}")
        self.s, self.x, self.min_dev, self.max_tokens = s, x, min_dev, max_tokens

    def kept_spamicities(self, n_spam: np.ndarray, n_ham: np.ndarray, N_spam: float,
                         N_ham: float) -> tuple[np.ndarray, np.ndarray]:
        """The kept tokens' positions (most extreme first) and their spamicities."""
        f = token_spamicity(n_spam, n_ham, N_spam, N_ham, self.s, self.x)
        deviation = np.abs(f - 0.5)
        kept = np.flatnonzero(deviation >= self.min_dev)
        # most extreme first, among equal deviations the smaller f: an order of the values
        # alone, so the χ² sums round alike whatever order the tokens come in
        kept = kept[np.lexsort((f[kept], -deviation[kept]))[: self.max_tokens]]
        return kept, np.clip(f[kept], 1e-300, 1.0 - 1e-16)

    def log_odds(self, n_spam: np.ndarray, n_ham: np.ndarray, N_spam: float,
                 N_ham: float) -> float:
        """ln I − ln(1 − I) for a message whose tokens have these message counts."""
        return fisher_log_odds(self.kept_spamicities(n_spam, n_ham, N_spam, N_ham)[1])
