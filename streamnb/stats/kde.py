"""Gaussian kernel density estimates and Gaussian mixtures: Silverman's bandwidth and one
log-density for a mixture over arbitrary centres.

A Gaussian kernel density estimate with weights w_b at centres c_b and bandwidth h is the
Gaussian mixture Σ_b (w_b / Σw) N(t; c_b, h²). :class:`~streamnb.CCICANB` (centres: a class
sample's component values, or a fitted mixture's means) evaluates its densities with
:func:`log_mixture_density`; :class:`~streamnb.KernelNB`, whose centres are the equally spaced
bins of :class:`~streamnb.stats.binned_density.BinnedDensity`, sums them in the kernel
``kde_log_likelihood`` of streamnb/_accel (the spacing makes neighbouring terms' ratio
geometric). Both take the bandwidth from :func:`silverman_bandwidth`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["log_mixture_density", "silverman_bandwidth"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def silverman_bandwidth(sigma: np.ndarray | float, n: np.ndarray | float) -> np.ndarray:
    """Silverman's rule of thumb h = 1.06 σ̂ n^(−1/5) (Silverman 1986, eq. 3.28): the
    bandwidth minimising the mean integrated squared error for Gaussian data of standard
    deviation σ̂ and ``n`` values (elementwise; n > 0)."""
    return 1.06 * np.asarray(sigma, dtype=float) * np.asarray(n, dtype=float) ** -0.2


def log_mixture_density(t: np.ndarray, log_weight: np.ndarray, mean: np.ndarray,
                        sd: np.ndarray) -> np.ndarray:
    """log Σ_b exp(log_weight_b) N(t; mean_b, sd_b²) over the last axis of the parameters.

    ``t`` has shape S; ``log_weight``, ``mean`` and ``sd`` broadcast against S + (B,) (a kernel
    density estimate: ``sd`` the bandwidth, ``log_weight`` log(w_b / Σw)). The weights need not
    be normalised (the result is then offset by log Σw); −inf weights drop a term. Computed
    with the largest term factored out, so far tails stay finite."""
    z = (t[..., None] - mean) / sd
    e = log_weight - 0.5 * z * z - np.log(sd)
    top = e.max(axis=-1)
    safe = np.where(np.isfinite(top), top, 0.0)
    return safe + np.log(np.exp(e - safe[..., None]).sum(axis=-1)) - _LOG_SQRT_2PI
