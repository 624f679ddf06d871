"""benchmarks/reproduce_bressan_vitria.py (docs/ccica.md's tables): the tables it builds from
its curves, on small made-up outcomes."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from benchmark_scripts import load_script
from scipy.stats import binomtest


@pytest.fixture(scope="module")
def bench():
    yield load_script("reproduce_bressan_vitria")
    del sys.modules["reproduce_bressan_vitria"]


def test_the_paired_table_counts_the_discordant_records_and_tests_them(bench):
    a = [np.array([True, True, False, True]), np.array([True, True, True, True])]
    b = [np.array([True, True, False, True]), np.array([False, True, False, False])]
    rows = bench._paired([1, 2], a, b)["rows"]
    assert rows[0] == {"components": 1, "only CC-ICA right": 0, "only CC-PCA (div.) right": 0,
                       "McNemar p": 1.0}
    assert (rows[1]["only CC-ICA right"], rows[1]["only CC-PCA (div.) right"]) == (3, 0)
    assert rows[1]["McNemar p"] == pytest.approx(binomtest(3, 3).pvalue)


def test_a_curve_table_has_a_row_per_curve_and_a_column_per_count(bench):
    tab = bench._curve_table([1, 8], {"x": [0.5, 0.846], "y": [0.25, 0.5]}, {"x": 3.0, "y": 1.0})
    assert [c["label"] for c in tab["columns"]] == ["representation", "1", "8", "seconds"]
    assert tab["rows"][0] == {"representation": "x", "1": 50.0, "8": pytest.approx(84.6),
                              "seconds": 3.0}
    assert bench._results.render(tab).splitlines()[2] == "| x | 50.0 | 84.6 | 3 |"


def test_every_curve_and_validation_variant_runs(bench):
    """Each configuration the benchmark runs builds and predicts (on a small made-up set)."""
    import pandas as pd

    rng = np.random.default_rng(0)
    labels = np.array(["a", "b", "c"] * 40, dtype=object)
    frame = pd.DataFrame(rng.normal(size=(120, 4)) + (labels == "b")[:, None] * 2.0
                         + (labels == "c")[:, None] * np.array([0, 3.0, 0, -3.0]),
                         columns=list("wxyz"))
    for variants in (bench.CURVES, bench.VARIANTS):
        curves, _, right, _ = bench._run_curves(
            "test", variants, frame[:90], labels[:90], frame[90:], labels[90:], [1, 2], 2)
        assert set(curves) == {label for label, _ in variants}
        assert all(0.0 <= a <= 1.0 for accuracies in curves.values() for a in accuracies)
        assert all(len(r) == 2 and len(r[0]) == 30 for r in right.values())
