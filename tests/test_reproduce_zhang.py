"""The Zhang reproduction's machinery on real data: each fold's tree comes from the whole
training fold, and the results file holds the paper's table beside ours."""

from __future__ import annotations

import json
import sys

import pytest
from benchmark_scripts import load_script

from streamnb import TAN
from streamnb.datasets import load


@pytest.fixture(scope="module")
def reproduction():
    yield load_script("reproduce_zhang")
    del sys.modules["reproduce_zhang"]


@pytest.mark.parametrize("model", ["ChowLiu", "ddr-ChowLiu"])
def test_the_tree_is_learned_once_from_the_whole_training_fold(reproduction, model):
    # 185 records: the models' own schedule would last relearn at 128 of them
    data = load("vote").complete_cases()
    records, labels = data.records[:185], data.labels[:185]
    ours = reproduction.MODELS[model]()
    ours.learn_many(records, labels)
    whole = TAN(weight=ours.weight, relearn_every=0)
    whole.learn_many(records, labels)
    whole.relearn()
    assert ours.structure_version == 1
    assert ours.structure.parents == whole.structure.parents


def test_command_line(reproduction, tmp_path):
    results = tmp_path / "results.json"
    reproduction.main(["--repeats", "1", "--folds", "2", "--results", str(results)])
    record = json.loads(results.read_text())
    rows = {r["paper"]: r for r in record["tables"]["accuracy"]["rows"]}
    assert set(rows) == set(reproduction.PAPER)
    assert rows["cars"]["copy"] == "not shipped by any installed package"
    assert (rows["vote"]["copy"], rows["vote"]["records"]) == ("vote[complete]", 232)
    assert (rows["vote"]["paper ChowLiu"], rows["vote"]["paper ddr"]) == (78.6, 79.1)
    for r in rows.values():
        if r.get("records"):
            assert 0 < r["ChowLiu"] <= 100 and 0 < r["ddr-ChowLiu"] <= 100
            assert r["verdict"] in ("better", "worse", "tie")
    assert record["notes"].startswith("2-fold CV × 1,")
