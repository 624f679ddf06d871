"""Discretisers: MDL cut points against Weka, equal-frequency bins on hand data, no leakage from
the test fold, streaming with a bounded sample."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from river import compose

from streamnb import NaiveBayes
from streamnb.datasets import load
from streamnb.datasets.arff import WEKA_EXAMPLES
from streamnb.evaluate import stratified_kfold
from streamnb.features import EqualFrequencyDiscretizer, MDLDiscretizer
from streamnb.features.discretize import equal_frequency_cuts, interval_labels, mdl_cuts

WEKA_JAR = Path("/usr/share/java/weka.jar")
needs_weka = pytest.mark.skipif(not (WEKA_JAR.exists() and WEKA_EXAMPLES.exists()
                                     and shutil.which("java")),
                                reason="Debian's weka (and Java) are not installed")


def weka_mdl_cuts(arff: Path) -> dict[str, list[float]]:
    """Cut points of Weka's supervised Discretize (defaults: Fayyad & Irani MDL) per numeric
    attribute, read from the header of the ARFF Weka writes."""
    done = subprocess.run(
        ["java", "-cp", str(WEKA_JAR), "weka.filters.supervised.attribute.Discretize",
         "-R", "first-last", "-c", "last", "-i", str(arff)],
        capture_output=True, text=True, check=True, timeout=120)
    cuts = {}
    for line in done.stdout.splitlines():
        match = re.match(r"@attribute (\S+) \{(.*)\}$", line)
        if match and ("-inf" in match.group(2) or r"\'All\'" in match.group(2)):
            uppers = re.findall(r"\((?:-inf|-?[\d.]+)-(-?[\d.]+)\]", match.group(2))
            cuts[match.group(1)] = [float(u) for u in uppers]
    return cuts


def test_iris_petal_length_textbook_cuts():
    """Fayyad & Irani on iris petal length: 2.45 and 4.75 (Dougherty, Kohavi & Sahami 1995;
    Weka 3.6.14 gives the same, see the live comparison below)."""
    iris = load("iris")
    cuts = MDLDiscretizer().fit(iris.records, iris.labels).cuts
    assert cuts["petallength"] == pytest.approx([2.45, 4.75])
    assert cuts["petalwidth"] == pytest.approx([0.8, 1.75])


@needs_weka
@pytest.mark.parametrize("name", ["iris", "diabetes", "glass", "labor", "credit-g",
                                  "ionosphere", "segment-challenge"])
def test_mdl_cuts_equal_wekas(name):
    """Every numeric attribute gets Weka's cut points (Weka prints them to 6 decimals); labor
    has missing numeric values, which both leave out."""
    data = load(name)
    ours = MDLDiscretizer().fit(data.records, data.labels).cuts
    theirs = weka_mdl_cuts(WEKA_EXAMPLES / f"{name}.arff")
    assert set(theirs) == set(data.numeric) == set(ours)
    for attribute in data.numeric:
        assert ours[attribute] == pytest.approx(theirs[attribute], abs=1e-6), attribute


def test_mdl_rejects_uninformative_and_tiny_splits():
    # N = 2, a pure split: gain 1 bit > (log2(1) + log2(3^2 - 2) - 2·1)/2 ≈ 0.40: accepted
    assert mdl_cuts([1.0, 2.0], ["a", "b"]) == [1.5]
    # alternating classes: the best cut gains 0.31 bits < (log2(3) + log2(7) - 2 + 1.38)/4
    assert mdl_cuts([1.0, 2.0, 3.0, 4.0], ["a", "b", "a", "b"]) == []
    assert mdl_cuts([5.0] * 10, ["a", "b"] * 5) == []  # no boundary
    assert mdl_cuts([1.0, np.nan, 2.0], ["a", "b", "a"]) == []
    many = np.arange(60.0)
    assert mdl_cuts(many, ["a"] * 20 + ["b"] * 20 + ["c"] * 20) == [19.5, 39.5]
    rng = np.random.default_rng(0)
    assert mdl_cuts(rng.random(200), rng.choice(["a", "b"], 200).tolist()) == []


def test_equal_frequency_bins_on_hand_data():
    values = list(range(1, 101))
    cuts = equal_frequency_cuts(values, 5)
    assert cuts == [20.5, 40.5, 60.5, 80.5]
    counts = Counter(np.searchsorted(cuts, values, side="left").tolist())
    assert sorted(counts.values()) == [20] * 5
    assert equal_frequency_cuts([3.0] * 10, 5) == []
    assert equal_frequency_cuts([1, 1, 1, 1, 1, 1, 2, 2, 3, 4], 2) == [1.5]  # ties never split
    d = EqualFrequencyDiscretizer(bins=3).fit([{"v": float(v)} for v in [5, 1, 4, 2, 6, 3]])
    assert d.cuts == {"v": [2.5, 4.5]}


def test_interval_labels_and_values_on_cuts():
    assert interval_labels([]) == ["(-inf, inf)"]
    assert interval_labels([2.45, 4.75]) == ["(-inf, 2.45]", "(2.45, 4.75]", "(4.75, inf)"]
    assert interval_labels([1.0000001, 1.0000002]) == ["(-inf, 1.0000001]",
                                                       "(1.0000001, 1.0000002]",
                                                       "(1.0000002, inf)"]
    iris = load("iris")
    d = MDLDiscretizer().fit(iris.records, iris.labels)
    assert d.transform_one({"petallength": 2.45})["petallength"] == "(-inf, 2.45]"  # (a, b]
    assert d.transform_one({"petallength": 2.4500001})["petallength"] == "(2.45, 4.75]"


def test_missing_and_non_numeric_fields():
    d = MDLDiscretizer().fit([{"x": float(v), "s": "k"} for v in range(8)], ["a"] * 4 + ["b"] * 4)
    out = d.transform_one({"x": None, "y": float("nan"), "s": "k", "flag": True, "n": 3})
    assert out == {"x": None, "y": None, "s": "k", "flag": True, "n": "(-inf, inf)"}
    assert d.transform_one({"x": 2}) == {"x": "(-inf, 3.5]"}  # ints are numeric


def test_no_leakage_from_the_test_fold():
    """Cuts come from the training fold only; transforming the test fold changes nothing."""
    data = load("diabetes")
    train, test = stratified_kfold(data.labels, k=5, seed=0)[0]
    train_records = [data.records[i] for i in train]
    train_labels = [data.labels[i] for i in train]
    d = MDLDiscretizer().fit(train_records, train_labels)
    expected = {a: mdl_cuts([r[a] for r in train_records], train_labels) for a in data.numeric}
    assert d.cuts == expected
    whole = MDLDiscretizer().fit(data.records, data.labels).cuts
    assert whole != d.cuts  # the test fold would have moved some cuts
    before = {a: list(c) for a, c in d.cuts.items()}
    out = d.transform([data.records[i] for i in test])
    assert d.cuts == before
    for i, record in zip(test, out, strict=True):
        for a in data.numeric:
            cuts = expected[a]
            assert record[a] == interval_labels(cuts)[int(np.searchsorted(
                cuts, data.records[i][a], side="left"))]
    e = EqualFrequencyDiscretizer().fit(train_records)
    assert e.cuts == {a: equal_frequency_cuts([r[a] for r in train_records], 5)
                      for a in data.numeric}


def test_transform_many_matches_transform_one():
    iris = load("iris")
    d = EqualFrequencyDiscretizer(bins=4).fit(iris.records)
    frame = pd.DataFrame(iris.records[:20])
    frame.iloc[3, 1] = np.nan
    out = d.transform_many(frame)
    assert list(out.index) == list(frame.index)
    rows = [{k: None if isinstance(v, float) and math.isnan(v) else v for k, v in r.items()}
            for r in out.to_dict(orient="records")]  # pandas may hold a missing cell as NaN
    for row, record in zip(rows, frame.to_dict(orient="records"), strict=True):
        assert row == d.transform_one(record)
    assert rows[3]["sepalwidth"] is None


def test_streaming_cuts_are_batch_cuts_of_what_was_seen():
    """With the sample unbounded, the cuts after 2^j records are the batch cuts of those
    records; learn_one keeps at most reservoir_size values per attribute."""
    iris = load("iris")
    order = np.random.default_rng(1).permutation(iris.n_rows)
    stream = MDLDiscretizer()
    for n, i in enumerate(order, start=1):
        stream.learn_one(iris.records[i], iris.labels[i])
        stream.transform_one(iris.records[i])  # refreshes the cuts when due
        if n in (64, 128):
            batch = MDLDiscretizer().fit([iris.records[j] for j in order[:n]],
                                         [iris.labels[j] for j in order[:n]])
            assert stream.cuts == batch.cuts
    small = EqualFrequencyDiscretizer(reservoir_size=30, refresh_every=10, seed=4)
    for record in iris.records:
        small.learn_one(record)
    small.transform_one(iris.records[0])
    sample = small._samples["petallength"]
    assert sample.seen == 150 and len(sample.values) == 30
    assert set(sample.values) <= {r["petallength"] for r in iris.records}
    assert small.cuts["petallength"] == equal_frequency_cuts(sample.values, 5)


def test_river_pipeline_learns_discretised_iris():
    """Prequential iris through MDLDiscretizer | NaiveBayes: the discretised model learns
    (early records are learned under the coarse cuts of the few values seen before them, so
    the prequential accuracy lags the final model's)."""
    iris = load("iris")
    model = compose.Pipeline(MDLDiscretizer(), NaiveBayes())
    order = np.random.default_rng(0).permutation(iris.n_rows)
    correct = 0
    for i in order:
        correct += model.predict_one(iris.records[i]) == iris.labels[i]
        model.learn_one(iris.records[i], iris.labels[i])
    assert correct / iris.n_rows > 0.75
    final = np.mean([model.predict_one(r) == y for r, y in zip(iris.records, iris.labels,
                                                                strict=True)])
    assert final > 0.9
    assert all(isinstance(v, str) for v in model.transform_one(iris.records[0]).values())


@pytest.mark.parametrize(("make", "message"), [
    (lambda: EqualFrequencyDiscretizer(bins=1), "bins must be an int >= 2, got 1"),
    (lambda: MDLDiscretizer(reservoir_size=0), "reservoir_size must be a positive int, got 0"),
    (lambda: MDLDiscretizer(refresh_every=2.5), "refresh_every must be a positive int"),
    (lambda: MDLDiscretizer().fit([{"x": 1.0}], ["a", "b"]), "records and labels differ"),
    (lambda: mdl_cuts([1.0], ["a", "b"]), "values and labels differ in length"),
])
def test_parameters_are_validated(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_no_value_is_lost():
    data = load("labor")
    out = MDLDiscretizer().fit(data.records, data.labels).transform(data.records)
    for before, after in zip(data.records, out, strict=True):
        assert before.keys() == after.keys()
        assert [k for k, v in before.items() if v is None or (isinstance(v, float)
                                                             and math.isnan(v))] == \
            [k for k, v in after.items() if v is None]
