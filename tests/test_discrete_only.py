"""Models of discrete attributes only (TAN, AODE, the selective models) refuse a numeric
attribute with InvalidRecord naming record and field, leaving the model unchanged; `streamnb
evaluate` discretises for them (MDL per training part) or says in one line why it cannot."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from conftest import snapshot
from streamnb import AODE, TAN, NaiveBayes, SelectiveBN, SelectiveNB, SelectiveTAN, load_model
from streamnb.datasets import load
from streamnb.evaluate import cross_validate
from streamnb.features import MDLDiscretizer
from streamnb.stats import InvalidRecord

DISCRETE_ONLY = [TAN, AODE, SelectiveNB, SelectiveTAN, SelectiveBN]
IRIS = load("iris")


def _nominal_part(records: list[dict]) -> list[dict]:
    return [{"colour": "red" if x["petallength"] > 2.5 else "blue"} for x in records]


@pytest.mark.parametrize("cls", DISCRETE_ONLY, ids=lambda c: c.__name__)
def test_a_float_attribute_is_refused_and_nothing_changes(cls, tmp_path):
    model = cls()
    first = _nominal_part(IRIS.records[:20])
    model.learn_many(first, IRIS.labels[:20])
    before = snapshot(model.stats)
    with pytest.raises(InvalidRecord, match="discrete attributes only") as one:
        model.learn_one({"colour": "red", "petallength": 5.1}, "Iris-virginica")
    assert (one.value.record, one.value.field) == ("record 21", "petallength")
    batch = [{"colour": "red"}, {"colour": "blue", "width": 0.2}]
    with pytest.raises(InvalidRecord, match="discrete attributes only") as many:
        model.learn_many(batch, ["Iris-setosa", "Iris-setosa"])
    assert (many.value.record, many.value.field) == ("row 1", "width")
    with pytest.raises(InvalidRecord, match="discrete attributes only") as frame:
        model.learn_many(pd.DataFrame(batch), ["Iris-setosa", "Iris-setosa"])
    assert (frame.value.record, frame.value.field) == ("row 1", "width")
    assert snapshot(model.stats) == before and model.n_learned == 20
    # prediction treats an unknown attribute as missing, as for every model
    assert model.predict_one({"colour": "blue", "width": 0.2}) == model.predict_one(
        {"colour": "blue"})
    # the refusal survives a save and load
    model.save(tmp_path / "m.snb")
    with pytest.raises(InvalidRecord, match="discrete attributes only"):
        load_model(tmp_path / "m.snb").learn_one({"width": 0.2}, "Iris-setosa")


def test_integer_codes_in_floats_declared_nominal_are_values():
    model = TAN(nominal=["size"])
    model.learn_one({"size": 2.0}, "a")
    assert model.stats.schema.values_of(0) == {2: 0}


def test_naive_bayes_keeps_its_gaussian():
    model = NaiveBayes()
    model.learn_many(IRIS.records, IRIS.labels)
    assert model.stats.schema.n_numeric == 4


def test_evaluate_discretises_for_discrete_only_models(tmp_path):
    """`evaluate --dataset iris` (default --discretize auto) cuts every numeric attribute by MDL
    on each training part, for every model: the numbers equal cross_validate with
    MDLDiscretizer, and TAN's row is TAN's (not naive Bayes' under another name)."""
    done = subprocess.run([sys.executable, "-m", "streamnb", "evaluate", "--dataset", "iris",
                           "--model", "laplace", "--model", "tan", "--out", str(tmp_path),
                           "--no-progress"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "discretised by MDL on each training part, for every model (tan" in done.stdout
    scores = pd.read_csv(tmp_path / "scores.csv")
    result = cross_validate({"laplace": lambda: NaiveBayes(estimator="laplace"),
                             "tan": TAN}, IRIS.records, IRIS.labels, k=10, seed=0,
                            discretizer=MDLDiscretizer, dataset="iris", progress=False)
    for name in ("laplace", "tan"):
        assert scores[scores.model == name].log_loss.tolist() == pytest.approx(
            result.values(name, "log_loss").tolist(), rel=1e-12)
    assert scores[scores.model == "laplace"].log_loss.tolist() != pytest.approx(
        scores[scores.model == "tan"].log_loss.tolist())


@pytest.mark.parametrize("argv", [["--discretize", "none"], ["--protocol", "prequential"]])
def test_evaluate_says_in_one_line_when_it_cannot_discretise(argv, tmp_path):
    done = subprocess.run([sys.executable, "-m", "streamnb", "evaluate", "--dataset", "iris",
                           "--model", "tan", *argv, "--out", str(tmp_path), "--no-progress"],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.startswith("streamnb evaluate: tan take discrete attributes only and "
                                  "iris has numeric ones (sepallength")
    assert len(done.stderr.strip().splitlines()) == 1
