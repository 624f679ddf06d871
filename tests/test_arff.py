"""ARFF loading on the UCI files of Debian's weka package (.ci/run installs it)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from streamnb import AODE, TAN
from streamnb.datasets.arff import WEKA_EXAMPLES, load_arff, weka_example

pytestmark = pytest.mark.skipif(not WEKA_EXAMPLES.exists(),
                                reason="Debian's weka package is not installed")


@pytest.mark.parametrize(("name", "rows", "attributes", "missing"), [
    ("vote", 435, 16, 392), ("soybean", 683, 35, 2337), ("breast-cancer", 286, 9, 9),
    ("credit-g", 1000, 20, 0), ("diabetes", 768, 8, 0), ("glass", 214, 9, 0),
    ("iris", 150, 4, 0)])
def test_uci_files_have_their_documented_sizes(name, rows, attributes, missing):
    """Row, attribute and missing-value counts as documented for the UCI data sets."""
    data = weka_example(name)
    assert len(data.records) == rows
    assert {len(r) for r in data.records} == {attributes}  # missing values kept as None
    assert sum(v is None for r in data.records for v in r.values()) == missing


def test_vote_classes_and_types():
    data = weka_example("vote")
    assert Counter(data.labels) == {"democrat": 267, "republican": 168}
    diabetes = weka_example("diabetes")
    assert all(isinstance(v, float) for r in diabetes.records for v in r.values())


def test_bad_files_are_named(tmp_path):
    bad = tmp_path / "bad.arff"
    bad.write_text("@relation r\n@attribute a {x, y}\n@attribute c {p}\n@data\nz, p\n")
    with pytest.raises(ValueError, match=r"bad.arff:5: a = 'z'"):
        load_arff(bad)


def test_tan_and_aode_on_vote_ten_folds():
    """10-fold CV on vote: Weka 3.6 reports 94.9% (BayesNet-TAN) and 94.3% (AODE); ours must
    be of the same order (the full comparison is benchmarks' job)."""
    from sklearn.model_selection import StratifiedKFold

    data = weka_example("vote")
    y = np.array(data.labels)
    for make in (lambda: TAN(relearn_every=0, estimator="laplace"), AODE):
        correct = 0
        folds = StratifiedKFold(10, shuffle=True, random_state=0)
        for train, test in folds.split(np.zeros(len(y)), y):
            model = make()
            model.learn_many([data.records[i] for i in train], list(y[train]))
            if isinstance(model, TAN):
                model.relearn()
            predicted = model.predict_many([data.records[i] for i in test]).to_numpy()
            correct += int((predicted == y[test]).sum())
        assert correct / len(y) > 0.93
