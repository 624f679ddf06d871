"""The Weka comparison machinery (benchmarks/weka_comparison.py) on real data with real Weka,
2 folds, so that the script cannot rot unnoticed (the full protocol's table is in docs/weka.md).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from benchmark_scripts import load_script

from streamnb.datasets import load
from streamnb.datasets.arff import load_arff
from streamnb.evaluate import stratified_kfold
from streamnb.features.discretize import interval_labels, mdl_cuts

wc = load_script("weka_comparison")

pytestmark = pytest.mark.skipif(not (wc.WEKA_JAR.exists() and shutil.which("java")),
                                reason="Debian's weka (and Java) are not installed")


def test_fold_files_are_discretised_on_the_training_fold(tmp_path):
    data = load("diabetes")
    train, test = stratified_kfold(data.labels, k=2, seed=0)[0]
    fold = wc.discretised_fold(data, train, test)
    cuts = mdl_cuts([data.records[i]["plas"] for i in train], [data.labels[i] for i in train])
    assert fold.domains["plas"] == interval_labels(cuts)
    assert {r["plas"] for r in fold.test_records} <= set(fold.domains["plas"])
    path = tmp_path / "train.arff"
    wc.write_arff(path, "diabetes", fold.domains, data.target, list(data.classes),
                  fold.train_records, fold.train_labels)
    back = load_arff(path)  # our reader, Weka reads it in the test below
    assert back.records == fold.train_records and back.labels == fold.train_labels
    assert back.attributes["plas"] == fold.domains["plas"]


def test_weka_and_streamnb_on_two_folds_of_vote():
    """Both tools run on the same files. docs/weka.md claims streamnb's AODE predicts what
    Weka's AODE predicts on every test record: asserted as equality on every fold; streamnb's
    TAN with Weka's settings and Weka's TAN predict (nearly) the same classes."""
    results = wc.compare("vote", k=2, seeds=[0], jobs=2)
    assert set(wc.COLUMNS) <= set(results)
    for column in wc.COLUMNS:
        assert len(results[column]) == 2 and all(0.85 < a <= 1 for a in results[column])
    for ours, weka in wc.VERDICTS:
        agreement = results[f"{ours} = {weka}"]
        print(f"{ours} = {weka}: agreement per fold {agreement}")
        assert np.mean(agreement) > 0.95
    assert results["streamnb AODE = Weka AODE"] == [1.0, 1.0]  # every record of both folds
    # configured as Weka's BayesNet-TAN (Bayesian edge score, mode-filled missing values,
    # +0.5 per count), streamnb's TAN predicts what Weka's predicts
    assert np.mean(results[f"{wc.WEKA_SETTINGS} = Weka TAN"]) >= 0.99
    accuracy = wc.accuracy_table({"vote": results})
    assert [row["data set"] for row in accuracy["rows"]] == ["vote"]
    assert accuracy["rows"][0]["Weka AODE"] == pytest.approx(100 * np.mean(results["Weka AODE"]))
    paired = wc.paired_table({"vote": results})
    assert paired["rows"][0]["streamnb AODE = Weka AODE"] == 1.0
    assert "| vote | " in wc._results.render(paired)


def test_weka_predictions_match_the_test_file(tmp_path):
    data = load("weather.nominal")
    domains = {a: list(data.domains[a]) for a in data.attributes}
    for name in ("train", "test"):
        wc.write_arff(tmp_path / f"{name}.arff", "weather", domains, data.target,
                      list(data.classes), data.records, data.labels)
    predicted = wc.weka_predictions(wc.WEKA_AODE, tmp_path / "train.arff",
                                    tmp_path / "test.arff", list(data.classes))
    assert len(predicted) == data.n_rows and set(predicted) <= set(data.classes)
    with pytest.raises(RuntimeError, match="Weka failed"):
        wc.weka_predictions(wc.WEKA_AODE, tmp_path / "missing.arff", tmp_path / "test.arff",
                            list(data.classes))
