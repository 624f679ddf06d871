"""The Weka comparison machinery (benchmarks/weka_comparison.py) on real data with real Weka,
2 folds, so that the script cannot rot unnoticed (the full protocol's table is in docs/weka.md).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from benchmark_scripts import load_script

from streamnb.datasets import load
from streamnb.datasets.arff import load_arff
from streamnb.evaluate import stratified_kfold
from streamnb.features.discretize import interval_labels, mdl_cuts

wc = load_script("weka_comparison")

# javac: a JDK, whose source-file launcher runs WekaEvaluate.java
needs_weka = pytest.mark.skipif(
    not (wc.WEKA_JAR.exists() and shutil.which("java") and shutil.which("javac")),
    reason="Debian's weka and a JDK are not installed")


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


@needs_weka
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


@needs_weka
def test_weka_predictions_match_the_test_file(tmp_path):
    data = load("weather.nominal")
    domains = {a: list(data.domains[a]) for a in data.attributes}
    for name in ("train", "test"):
        wc.write_arff(tmp_path / f"{name}.arff", "weather", domains, data.target,
                      list(data.classes), data.records, data.labels)
    classes = list(data.classes)
    train, test = tmp_path / "train.arff", tmp_path / "test.arff"
    with wc.Weka() as weka:
        predicted = wc.weka_predictions(wc.WEKA_AODE, train, test, classes, weka)
        assert len(predicted) == data.n_rows and set(predicted) <= set(data.classes)
        with pytest.raises(RuntimeError, match=r"missing\.arff: Weka exception: "):
            wc.weka_predictions(wc.WEKA_AODE, tmp_path / "missing.arff", test, classes, weka)
        # the JVM survives Weka's failure and answers the next run
        assert wc.weka_predictions(wc.WEKA_AODE, train, test, classes, weka) == predicted
    # without a JVM given, in one of its own
    assert wc.weka_predictions(wc.WEKA_AODE, train, test, classes) == predicted


@needs_weka
def test_one_jvm_prints_what_the_command_line_prints(tmp_path):
    """The comparison runs Weka's command line in one JVM per job (WekaEvaluate.java): each
    run's output is the output of its own ``java <classifier> <options>``, byte for byte, for
    every classifier of the comparison, run after one another in the same JVM."""
    data = load("vote")
    train, test = stratified_kfold(data.labels, k=2, seed=0)[0]
    _, train_file, test_file = wc.fold_files(data, train, test, tmp_path)
    runs = [[args[0], "-t", str(train_file), "-T", str(test_file), "-p", "0", *args[1:]]
            for args in wc.WEKA_MODELS.values()]
    with wc.Weka() as weka:
        outputs = [weka.run(args) for args in runs]
    for args, output in zip(runs, outputs, strict=True):
        alone = subprocess.run(["java", "-cp", str(wc.WEKA_JAR), *args], capture_output=True,
                               text=True, check=True)
        assert output == alone.stdout
        assert sum(bool(wc._PREDICTION.match(line)) for line in output.splitlines()) == len(test)


def _run(tmp_path, *options):
    """The script in a subprocess, as a user runs it: streamnb columns only (no JVM), 2 folds."""
    return subprocess.Popen(
        [sys.executable, str(wc.__file__), "--no-weka", "--folds", "2", "--seeds", "1",
         "--jobs", "1", "--results", str(tmp_path / "weka.json"), *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_an_interrupted_run_keeps_its_data_sets_and_resume_completes_it(tmp_path):
    """The results file is written after each data set and lists the data sets it covers and
    those not yet run; ``--resume`` keeps the covered ones (their rows are not measured again)
    and runs the others."""
    datasets = ["vote", "breast-cancer", "HouseVotes84"]
    run = _run(tmp_path, "--datasets", ",".join(datasets))
    first = run.stdout.readline()  # printed once vote's results are in the file
    run.terminate()
    run.communicate()
    assert first.startswith("vote: ")
    path = tmp_path / "weka.json"
    record = json.loads(path.read_text())
    done = [row["data set"] for row in record["tables"]["runs"]["rows"]]
    # the run stopped after vote, or (rarely) one more data set
    assert done == datasets[:len(done)] and len(done) < len(datasets)
    pending = datasets[len(done):]
    assert record["notes"] == (f"2-fold stratified CV × 1 seed(s); streamnb columns only. "
                               f"Data sets: {', '.join(done)}; not yet run: {', '.join(pending)}.")
    for table in ("accuracy", "paired"):
        assert [row["data set"] for row in record["tables"][table]["rows"]] == done
    # a value no run gives: kept by --resume if vote is not measured again
    record["tables"]["accuracy"]["rows"][0]["streamnb AODE"] = 12.5
    path.write_text(json.dumps(record))

    out, err = _run(tmp_path, "--datasets", ",".join(datasets), "--resume").communicate()
    assert "vote: in " in out and err.count("results: ") == len(pending), err
    record = json.loads(path.read_text())
    assert record["notes"] == ("2-fold stratified CV × 1 seed(s); streamnb columns only. "
                               f"Data sets: {', '.join(datasets)}.")
    assert "--resume" in record["command"]
    rows = record["tables"]["accuracy"]["rows"]
    assert [row["data set"] for row in rows] == datasets
    assert rows[0]["streamnb AODE"] == 12.5
    assert [row["folds"] for row in record["tables"]["runs"]["rows"]] == [2, 2, 2]
    # vote and HouseVotes84 are the same records: measured alike, independently of the resume
    assert rows[2]["streamnb TAN (default)"] == pytest.approx(rows[0]["streamnb TAN (default)"])
    assert "| HouseVotes84 |" in wc._results.render(record["tables"]["accuracy"])


def test_resume_refuses_a_file_measured_with_another_protocol(tmp_path):
    out, err = _run(tmp_path, "--datasets", "vote").communicate()
    assert out.startswith("vote: ")
    _, err = (run := _run(tmp_path, "--datasets", "vote", "--resume", "--quick",
                          "--only-folds", "1")).communicate()
    assert run.returncode == 1 and err.count("\n") == 1
    assert "measured with '2-fold stratified CV × 1 seed(s); streamnb columns only'" in err
    _, err = (run := _run(tmp_path, "--datasets", "vote,nonsense")).communicate()
    assert run.returncode == 2 and "unknown data set(s) nonsense" in err.splitlines()[-1]


def test_the_verdict_of_docs_weka_md_holds_in_the_committed_results():
    """docs/weka.md's verdict and notes, statement by statement, on the rows of the results file its
    tables come from (a data set not yet run is left out: the file says which)."""
    tables = wc._results.load("weka_comparison")["tables"]
    accuracy = {row["data set"]: row for row in tables["accuracy"]["rows"]}
    paired = {row["data set"]: row for row in tables["paired"]["rows"]}
    assert set(accuracy) == set(paired) == {row["data set"] for row in tables["runs"]["rows"]}
    assert set(accuracy) <= set(wc.DATASETS) and len(accuracy) >= 8
    settings, default, cmi = wc.WEKA_SETTINGS, "streamnb TAN (default)", "streamnb TAN (cmi)"
    for name, row in accuracy.items():
        # Weka's settings: within one SE everywhere
        assert row[f"{settings} ≥"] == "yes", name
        # streamnb's AODE = Weka's AODE on every test record
        assert row["streamnb AODE ≥"] == "yes"
        assert paired[name]["streamnb AODE = Weka AODE"] == 1.0, name
        # the estimator (Indifferent against +0.5, under the CMI tree): less than a point
        assert abs(row[cmi] - row["streamnb TAN (cmi, m=0.5)"]) < 1.0, name
    below = {name for name, row in accuracy.items() if row[f"{default} ≥"] != "yes"}
    assert below == {"Soybean"} & set(accuracy)
    below = {name for name, row in accuracy.items() if row[f"{cmi} ≥"] != "yes"}
    assert below == {"soybean", "Soybean", "breast-cancer", "credit-g"} & set(accuracy)
    # the Bayesian edge weight wins where parents have many values and records are few
    # … and CMI is as good elsewhere
    for name, row in accuracy.items():
        gain = row["Weka TAN"] - row["Weka TAN (CMI)"]
        if name in {"breast-cancer", "credit-g"}:
            assert gain > row["Weka TAN se"], name
        else:
            assert abs(gain) <= row["Weka TAN se"], name
    # the default tree against Friedman's with the Indifferent estimates (docs/tan.md)
    for name, row in accuracy.items():
        se = max(row[f"{default} se"], row[f"{cmi} se"])
        gain = row[default] - row[cmi]
        if name in {"soybean", "Soybean", "breast-cancer", "credit-g"}:
            assert gain > se, name
        else:
            assert abs(gain) <= se, name
    # skipping missing values beats filling them on vote, loses on soybean: under either tree
    for pair in (f"{default} − Weka TAN", "streamnb TAN (cmi, m=0.5) − Weka TAN (CMI)"):
        assert all(paired[n][pair] > 0 for n in {"vote", "HouseVotes84"} & set(paired)), pair
        assert all(paired[n][pair] < 0 for n in {"soybean", "Soybean"} & set(paired)), pair
