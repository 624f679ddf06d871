"""The numeric Weka harness (benchmarks/numeric_weka.py) on two folds of heart with real Weka,
so that the script behind docs/attribute-kinds.md's table cannot rot unnoticed."""

from __future__ import annotations

import shutil

import pytest
from benchmark_scripts import load_script

from streamnb.datasets import load
from streamnb.evaluate import stratified_kfold

nw = load_script("numeric_weka")
wc = load_script("weka_comparison")


@pytest.mark.skipif(not (wc.WEKA_JAR.exists() and shutil.which("java") and shutil.which("javac")),
                    reason="Debian's weka and a JDK are not installed")
def test_every_column_is_measured_on_a_fold_of_heart(tmp_path):
    """Each streamnb model (on the exact MDL cuts too) and each Weka learner classifies a
    fold of heart (two-class, 270 records) well above always-majority (55.6 %), naive Bayes
    in MDL intervals among them (above 70 %; TAN on the fine bins read bin by bin above 60 %)."""
    data = load("heart")
    train, test = stratified_kfold(data.labels, k=2, seed=0)[0]
    out = nw.fold_accuracies("heart", train, test, tmp_path)
    assert set(out) == {"majority", *nw.MODELS, *nw.EXACT_CUTS, *nw.WEKA}
    for column in [*nw.MODELS, *nw.EXACT_CUTS, *nw.WEKA]:
        # TAN read bin by bin: its trees' tables over pairs of fine bins are thin on 135
        # records (docs/attribute-kinds.md: 1.9–9.6 points below TAN in intervals)
        low = 0.6 if column == "streamnb TAN (bins)" else 0.7
        assert low < out[column] <= 1.0, column
