"""`streamnb evaluate`: options checked before the run (one line, no traceback), a user's own
CSV or ARFF file as --dataset, and tabular data sets iterable as (x, y)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from streamnb.cli import main
from streamnb.datasets import load, load_file
from streamnb.datasets.arff import WEKA_EXAMPLES
from streamnb.evaluate import cross_validate
from streamnb.models.registry import make_model


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "nosuch"], "unknown --dataset 'nosuch'"),
    (["--model", "nosuch"], "unknown model 'nosuch'"),
    (["--folds", "1"], "--folds must be an integer >= 2, got 1"),
    (["--bins", "0"], "--bins must be an integer >= 2, got 0"),
    (["--protocol", "holdout", "--test-fraction", "1.5"], "--test-fraction must be in (0, 1)"),
    (["--train-fraction", "nan"], "--train-fraction must be in (0, 1]"),
    (["--dataset", "/nonexistent.csv"], "--dataset /nonexistent.csv: no such file"),
])
def test_mistakes_are_one_line_before_the_run(argv, message, tmp_path):
    done = subprocess.run([sys.executable, "-m", "streamnb", "evaluate", *argv, "--out",
                           str(tmp_path), "--no-progress"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith(f"streamnb evaluate: {message}")
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not any(tmp_path.iterdir())  # nothing ran


def test_a_users_csv_file_equals_the_same_data_from_the_registry(tmp_path, capsys):
    """vote written as CSV (last column the class, '?' missing) gives the registry's records,
    and `evaluate --dataset file.csv` the registry's cross-validation numbers."""
    vote = load("vote")
    path = tmp_path / "vote.csv"
    lines = [",".join([*vote.attributes, vote.target])]
    for record, label in vote:
        lines.append(",".join([*("?" if record[a] is None else record[a]
                                 for a in vote.attributes), label]))
    path.write_text("\n".join(lines) + "\n")
    mine = load_file(path)
    assert mine.records == vote.records and mine.labels == vote.labels
    assert mine.nominal == vote.nominal and mine.numeric == ()
    assert main(["evaluate", "--dataset", str(path), "--model", "indifferent", "--folds", "3",
                 "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("| indifferent"))
    ref = cross_validate({"indifferent": lambda: make_model("indifferent")}, vote.records,
                         vote.labels, k=3, seed=0)
    mean = ref.summary("accuracy")["indifferent"][0]
    assert row.split("|")[2].strip().startswith(f"{100 * mean:.2f}")


def test_arff_file_and_target_option(tmp_path):
    data = load_file(WEKA_EXAMPLES / "weather.nominal.arff")
    assert list(data)[:1] == [({"outlook": "sunny", "temperature": "hot", "humidity": "high",
                                "windy": "FALSE"}, "no")]
    csv_path = tmp_path / "w.csv"
    csv_path.write_text("play,outlook,temp\nno,sunny,85\nyes,rain,?\n")
    swapped = load_file(csv_path, target="play")
    assert swapped.target == "play" and swapped.numeric == ("temp",)
    assert list(swapped) == [({"outlook": "sunny", "temp": 85.0}, "no"),
                             ({"outlook": "rain", "temp": None}, "yes")]
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1\n")
    with pytest.raises(ValueError, match="line 2: 1 cells"):
        load_file(bad)


def test_a_pipeline_name_with_a_bar_stays_one_markdown_cell(tmp_path, capsys):
    spec = "river:preprocessing.OneHotEncoder|naive_bayes.BernoulliNB"
    assert main(["evaluate", "--dataset", "vote", "--model", "indifferent", "--model", spec,
                 "--folds", "2", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    head = rows[0].count(" | ")
    row = next(line for line in rows if "BernoulliNB" in line)
    assert "OneHotEncoder\\|naive_bayes" in row
    assert row.replace("\\|", "").count(" | ") == head  # as many cells as the heading


@pytest.mark.parametrize("kind", ["nominal", "numeric"])
def test_model_all_runs_every_model_that_can_read_the_data_set(kind, tmp_path, capsys):
    """``--model all`` on a user's CSV file runs every registered model that learns its records,
    the continuous ones (LDA, QDA, KernelNB, CCICANB) included on nominal attributes too (read
    as naive-Bayes factors), and names each model left out and why: SpamFilter, whose classes
    are spam and ham."""
    from streamnb.models.registry import MODELS

    data = load("vote" if kind == "nominal" else "iris")
    path = tmp_path / f"{kind}.csv"
    lines = [",".join([*data.attributes, data.target])]
    for record, label in list(data)[::3]:
        lines.append(",".join([*("?" if record[a] is None else str(record[a])
                                 for a in data.attributes), label]))
    path.write_text("\n".join(lines) + "\n")
    assert (load_file(path).numeric == ()) == (kind == "nominal")
    assert main(["evaluate", "--dataset", str(path), "--model", "all", "--protocol", "holdout",
                 "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    out = capsys.readouterr().out
    ran = {line.split("|")[1].strip() for line in out.splitlines()
           if line.startswith("| ") and line.split("|")[1].strip() in MODELS}
    assert ran == set(MODELS) - {"spam-filter"}
    assert {"lda", "qda", "kernel-nb", "ccica-nb"} <= ran
    assert ("--model all: spam-filter left out: it cannot learn these records (InvalidRecord: "
            "record 1, field 'label'") in out
