"""The Singh & Provan reproduction's machinery on real data: the paper's data preparation, every
method of Tables 2–3 on two random splits of Voting, and the report's tables."""

from __future__ import annotations

import json
import sys

import pytest
from benchmark_scripts import load_script

from streamnb.structure import CLASS


@pytest.fixture(scope="module")
def reproduction():
    yield load_script("reproduce_singh_provan")
    del sys.modules["reproduce_singh_provan"]


def test_data_sets_are_prepared_as_the_paper_describes(reproduction):
    voting, voting1 = reproduction.prepare("Voting"), reproduction.prepare("Voting1")
    assert (len(voting.records), voting.n_attributes, voting.train_size, voting.test_size) \
        == (435, 16, 200, 235)
    assert voting1.n_attributes == 15 and "physician-fee-freeze" not in voting1.records[0]
    assert sum(v is None for r in voting.records for v in r.values()) == 392  # kept missing
    soybean = reproduction.prepare("Soybean")
    assert (len(soybean.records), len(set(soybean.labels))) == (630, 15)
    splice = reproduction.prepare("Splice")
    assert (len(splice.records), splice.n_attributes) == (3186, 60)
    assert {v for r in splice.records for v in r.values()} == set("ACGT")
    with pytest.raises(LookupError):
        reproduction.prepare("Mushroom")


def test_statlog_decoding(reproduction):
    from streamnb.datasets import load

    record = load("DNA").records[0]
    decoded = reproduction.decode_statlog_dna(record)
    for i in range(60):  # A = 100, C = 010, G = 001, T = 000
        bits = "".join(record[f"V{3 * i + j + 1}"] for j in range(3))
        assert {"100": "A", "010": "C", "001": "G", "000": "T"}[bits] == decoded[f"N{i + 1}"]


# Mean test accuracy % of every method on the first two seeded random splits of Voting (200
# training records, 235 test; K2-AS< on the first only), as the reproduction computes them:
# pinned, so that a change in any method's algorithm or in the split order shows here. The
# paper's Voting row (Table 2): naive-ALL 89.69, naive-AS 93.47, CB 94.95, CIG-AS 94.91,
# CGR-AS 95.53, CDC-AS 95.55 (means over 30 splits; docs/results/singh_provan.md).
VOTING_TWO_SPLITS = {
    "naive-ALL": 90.64, "naive-AS": 95.11, "K2-AS": 95.53, "K2-AS<": 96.17, "CB": 95.74,
    "CIG-AS": 95.74, "CGR-AS": 95.74, "CDC-AS": 95.74, "SelectiveTAN": 95.11, "ALL/K2": 95.11,
    "CIG-AS/K2": 96.38, "CGR-AS/K2": 96.17, "CDC-AS/K2": 95.96, "CB/learned": 95.11,
    "CIG-AS/learned": 95.53, "CGR-AS/learned": 95.74, "CDC-AS/learned": 95.96,
}


def test_every_method_on_voting(reproduction, tmp_path):
    methods = list(reproduction.METHODS)
    task = reproduction.prepare("Voting")
    result = reproduction.run(task, methods, repeats=2, fewer={"K2-AS<": 1})
    assert result.methods == methods
    for m in methods:
        mean, _ = result.accuracy(m)
        assert round(mean, 2) == VOTING_TWO_SPLITS[m], (m, mean)
        assert result.splits(m) == (1 if m == "K2-AS<" else 2)
    # naive-ALL and CB use every attribute; the selections use fewer
    assert {n for n, _ in result.selected["naive-ALL"] + result.selected["CB"]} == {16}
    assert set(result.selected["naive-ALL"]) == {(16, 16)}
    for m in ("naive-AS", "CIG-AS", "CGR-AS", "CDC-AS", "SelectiveTAN"):
        assert all(0 < n < 16 for n, _ in result.selected[m]), m
    for m in ("naive-AS", "SelectiveTAN"):  # the class is a parent of every attribute
        assert all(n == blanket for n, blanket in result.selected[m]), m
    assert all(blanket <= n for n, blanket in result.selected["CB"])
    accuracy = {r["method"]: r for r in reproduction.accuracy_results(result)["rows"]}
    assert list(accuracy) == methods
    for m in methods:
        assert accuracy[m]["splits"] == result.splits(m)
        assert round(accuracy[m]["ours"], 2) == VOTING_TWO_SPLITS[m]
    # the paper's numbers next to ours: Table 2 and Table 6's naive-ALL cell
    assert (accuracy["naive-ALL"]["paper"], accuracy["naive-ALL"]["paper sd"]) == (89.69, 1.48)
    tests = {r["X"]: r for r in reproduction.tests_rows(result)}
    assert tests["CDC-AS"]["vs naive-ALL"].endswith("/ -5.86 (-23.74) −")
    # how much of the paper Voting reproduces: the eight methods of Table 2, and the verdicts
    # of Tables 4–9 (three X, five others) but Table 8's "?" cell and the three against K2-AS<,
    # which ran one split here: no t-test
    agreement = reproduction.agreement_row(result)
    assert (agreement["accuracies"], agreement["verdicts"]) == (8, 11)
    assert 0 <= agreement["within"] <= 8 and 0 <= agreement["agree"] <= 11


def test_wrapper_models_use_their_own_selection(reproduction):
    import pandas as pd

    task = reproduction.prepare("Voting")
    frame, labels = pd.DataFrame(task.records[:200]), pd.Series(task.labels[:200])
    models, _ = reproduction.factories(task, ["naive-AS", "CB"])
    naive_as, cb = models["naive-AS"](), models["CB"]()
    naive_as.learn_many(frame, labels)
    cb.learn_many(frame, labels)
    assert naive_as.structure.method == "naive-as"
    assert all(naive_as.structure.parents[a] == (CLASS,) for a in naive_as.structure.selected)
    assert set(cb.structure.selected) == set(task.records[0])
    assert cb.structure.method == "all + cb"


ARGV = ["--repeats", "2", "--methods", "naive-ALL", "CDC-AS"]


def test_command_line(reproduction, tmp_path):
    results = tmp_path / "results.json"
    reproduction.main([*ARGV, "--datasets", "Voting1", "Mushroom", "--results", str(results)])
    # the results file holds the tables for the docs, the paper's numbers beside ours
    record = json.loads(results.read_text())
    assert record["notes"] == "Not run: Mushroom (no installed package ships it)."
    coverage = {r["data set"]: r for r in record["tables"]["datasets"]["rows"]}
    assert coverage["Voting1"]["status"] == "complete" and coverage["Voting1"]["splits"] == 2
    assert coverage["Mushroom"]["status"] == "not run: no installed package ships it"
    rows = {r["method"]: r for r in record["tables"]["accuracy-Voting1"]["rows"]}
    assert set(rows) == {"naive-ALL", "CDC-AS"} and rows["CDC-AS"]["splits"] == 2
    assert (rows["CDC-AS"]["paper"], rows["CDC-AS"]["paper sd"]) == (90.37, 1.48)
    [test] = record["tables"]["tests"]["rows"]
    assert test["X"] == "CDC-AS" and test["vs naive-ALL"].endswith("/ -3.29 (-9.69) −")
    # Voting1 row and the total: two accuracies (naive-ALL, CDC-AS), one verdict (CDC-AS
    # against naive-ALL: significant in the paper, a tie or not on two splits)
    agreement = record["tables"]["agreement"]["rows"]
    assert [r["data set"] for r in agreement] == ["Voting1", "all data sets run"]
    assert agreement[0] == agreement[1] | {"data set": "Voting1"}
    assert (agreement[0]["accuracies"], agreement[0]["verdicts"]) == (2, 1)
    assert agreement[0]["agree"] == int(test["vs naive-ALL"].split(" / ")[0].endswith("−"))


def test_a_run_cut_short_resumes_with_the_data_sets_it_completed(reproduction, tmp_path):
    results = tmp_path / "results.json"
    argv = [*ARGV, "--datasets", "Voting1", "Voting", "--results", str(results)]
    reproduction.main(argv)
    full = json.loads(results.read_text())
    assert "--resume" not in full["command"]
    # what a run stopped during Voting leaves: Voting1 complete, Voting not yet run; Voting1's
    # accuracy marked so that a rerun of it would show
    cut = json.loads(results.read_text())
    cut["tables"]["datasets"]["rows"][1] = {"data set": "Voting", "status": "not yet run"}
    del cut["tables"]["accuracy-Voting"]
    cut["tables"]["tests"]["rows"] = [r for r in cut["tables"]["tests"]["rows"]
                                      if r["data set"] == "Voting1"]
    cut["tables"]["agreement"]["rows"] = cut["tables"]["agreement"]["rows"][:1]
    cut["tables"]["accuracy-Voting1"]["rows"][0]["ours"] = -1.0
    results.write_text(json.dumps(cut))
    reproduction.main([*argv, "--resume"])
    resumed = json.loads(results.read_text())
    assert resumed["command"] == full["command"]
    assert resumed["tables"]["accuracy-Voting1"]["rows"][0]["ours"] == -1.0  # kept, not rerun
    assert [r["ours"] for r in resumed["tables"]["accuracy-Voting"]["rows"]] \
        == [r["ours"] for r in full["tables"]["accuracy-Voting"]["rows"]]
    assert [r["status"] for r in resumed["tables"]["datasets"]["rows"]] == ["complete"] * 2
    assert resumed["tables"]["tests"]["rows"] == full["tables"]["tests"]["rows"]
    assert resumed["tables"]["agreement"]["rows"] == full["tables"]["agreement"]["rows"]
    # a results file of another command is not resumed, in one line
    with pytest.raises(SystemExit, match=r"holds a run of .* --repeats 2 "):
        reproduction.main([*argv[:1], "3", *argv[2:], "--resume"])


def test_the_notes_name_the_data_sets_not_yet_run(reproduction):
    done = {"Chess": reproduction.Done({"data set": "Chess", "status": "complete"}),
            "Splice": reproduction.Done({"data set": "Splice", "status": "not yet run"}),
            "Mushroom": reproduction.Done({"data set": "Mushroom",
                                           "status": "not run: no installed package ships it"})}
    assert reproduction.coverage_notes(done, list(done)) == (
        "Not run: Mushroom (no installed package ships it). "
        "Not yet run (the run stopped before them): Splice.")


INFO_AS = ("CIG-AS", "CGR-AS", "CDC-AS")


def _mark(cell: str, side: int) -> str:
    """The significance mark of one side of a tests-table cell ("ours / paper"): "−" when X is
    significantly more accurate, "+" when less, "" for a tie, None where the side has none."""
    if cell is None:  # a method not run on the data set
        return None
    part = cell.split(" / ")[side].strip()
    if part == "—":
        return None
    return part[-1] if part[-1] in "−+" else ""


def test_the_reading_of_docs_results_singh_provan_md_holds_in_the_committed_results(
        reproduction):
    """docs/results/singh_provan.md's "Reading the results", statement by statement, on the
    results file its tables come from (a data set the file does not hold is left out)."""
    tables = reproduction._results.load("reproduce_singh_provan")["tables"]
    accuracy = {name.removeprefix("accuracy-"): {r["method"]: r for r in t["rows"]}
                for name, t in tables.items() if name.startswith("accuracy-")}
    agreement = {r["data set"]: r for r in tables["agreement"]["rows"]}
    tests = {(r["X"], r["data set"]): r for r in tables["tests"]["rows"]}
    assert {"Voting", "Voting1", "Chess"} <= set(accuracy)

    def within(data_set: str, method: str) -> bool:
        row = accuracy[data_set][method]
        return abs(row["ours"] - row["paper"]) <= row["paper sd"]

    # 1. Voting and Voting1 reproduce: every accuracy within one of the paper's SDs; Info-AS
    # significantly ahead of naive-ALL and naive-AS on both, as in the paper
    for data_set in ("Voting", "Voting1"):
        assert agreement[data_set]["within"] == agreement[data_set]["accuracies"] == 8
        for x in INFO_AS:
            for other in ("naive-ALL", "naive-AS"):
                cell = tests[x, data_set][f"vs {other}"]
                assert _mark(cell, 0) == _mark(cell, 1) == "−", (x, data_set, other)
    # … and a verdict of ours opposite to the paper's (one side "−", the other "+") only on
    # Soybean, for CGR-AS against naive-ALL and CB and CDC-AS against naive-AS (item 5);
    # elsewhere they differ as a tie and a significant difference only
    opposite = {(row["X"], row["data set"], other) for row in tests.values()
                for other in reproduction.TEST_OTHERS
                if {_mark(row[f"vs {other}"], 0), _mark(row[f"vs {other}"], 1)} == {"−", "+"}}
    assert opposite == ({("CGR-AS", "Soybean", "naive-ALL"), ("CGR-AS", "Soybean", "CB"),
                         ("CDC-AS", "Soybean", "naive-AS")} if "Soybean" in accuracy else set())
    for x, _, other in opposite:  # less accurate here, more in the paper
        assert (_mark(tests[x, "Soybean"][f"vs {other}"], 0), _mark(
            tests[x, "Soybean"][f"vs {other}"], 1)) == ("+", "−")
    # 2. where CB puts the class: within half a point on Voting and Chess; on Voting1 the class
    # first is ahead for CB and every Info-AS method, significantly so for CDC-AS
    for data_set in ("Voting", "Chess"):
        for method in ("CB", *INFO_AS):
            rows = accuracy[data_set]
            assert abs(rows[f"{method}/learned"]["ours"] - rows[method]["ours"]) < 0.5, (
                data_set, method)
    for method in ("CB", *INFO_AS):
        assert (accuracy["Voting1"][f"{method}/learned"]["ours"]
                < accuracy["Voting1"][method]["ours"]), method
    assert accuracy["Voting1"]["CDC-AS/learned"]["vs CDC-AS"].endswith("worse")
    # 3. Chess: naive-ALL, naive-AS and K2-AS reproduce, Info-AS is more than two of the
    # paper's SDs below it; Info-AS still significantly ahead of naive-ALL, tied with naive-AS
    # and K2-AS where the paper has it ahead; K2 on Info-AS's order is significantly better than
    # CDC-AS and still below the paper's Info-AS
    chess = accuracy["Chess"]
    assert all(within("Chess", m) for m in ("naive-ALL", "naive-AS", "K2-AS"))
    for x in INFO_AS:
        assert chess[x]["paper"] - chess[x]["ours"] > 2 * chess[x]["paper sd"], x
        row = tests[x, "Chess"]
        assert _mark(row["vs naive-ALL"], 0) == "−"
        for other in ("naive-AS", "K2-AS"):
            assert (_mark(row[f"vs {other}"], 0), _mark(row[f"vs {other}"], 1)) == ("", "−")
        assert chess[f"{x}/K2"]["vs CDC-AS"].endswith("better")
        assert chess[f"{x}/K2"]["ours"] < min(chess[m]["paper"] for m in INFO_AS)
    # 4. SelectiveTAN: the highest mean on Chess, significantly above CDC-AS; within one of its
    # SDs of the best mean on Voting and Voting1; it learns faster than every Info-AS method
    # on every data set but Splice
    assert max(chess, key=lambda m: chess[m]["ours"]) == "SelectiveTAN"
    assert chess["SelectiveTAN"]["vs CDC-AS"].endswith("better")
    for data_set, rows in accuracy.items():
        best = max(r["ours"] for r in rows.values())
        if data_set in ("Voting", "Voting1"):
            assert best - rows["SelectiveTAN"]["ours"] <= rows["SelectiveTAN"]["ours sd"]
        if data_set != "Splice":
            assert all(rows["SelectiveTAN"]["learn"] < rows[x]["learn"] for x in INFO_AS), (
                data_set)
    # 5. Soybean: every accuracy within one of the paper's SDs but naive-ALL's (above it);
    # naive-ALL, CB and K2-AS< significantly ahead of CDC-AS; the class placed by CB's
    # orientation costs every /learned row more than 10 points
    if "Soybean" in accuracy:
        soybean = accuracy["Soybean"]
        outside = {m for m, row in soybean.items()
                   if row["paper"] is not None and not within("Soybean", m)}
        assert outside == {"naive-ALL"}
        assert soybean["naive-ALL"]["ours"] > soybean["naive-ALL"]["paper"]
        assert all(soybean[m]["vs CDC-AS"].endswith("better")
                   for m in ("naive-ALL", "CB", "K2-AS<"))
        for method in ("CB", *INFO_AS):
            assert soybean[method]["ours"] - soybean[f"{method}/learned"]["ours"] > 10, method
    # 6. Splice: all verdicts but two as the paper's — naive-ALL and CB significantly ahead of
    # every Info-AS method; ties here where the paper has CGR-AS and CDC-AS ahead of naive-AS;
    # CB, CGR-AS and CDC-AS less than a point below the paper, just outside one of its SDs;
    # every Info-AS /learned row more than 10 points below its class-first row
    if "Splice" in accuracy:
        splice = accuracy["Splice"]
        differ = {(x, other) for (x, data_set), row in tests.items() if data_set == "Splice"
                  for other in reproduction.TEST_OTHERS
                  if _mark(row[f"vs {other}"], 1) is not None
                  and _mark(row[f"vs {other}"], 0) != _mark(row[f"vs {other}"], 1)}
        assert differ == {("CGR-AS", "naive-AS"), ("CDC-AS", "naive-AS")}
        assert all(_mark(tests[x, "Splice"]["vs naive-AS"], 0) == "" for x, _ in differ)
        for x in INFO_AS:
            for other in ("naive-ALL", "CB"):
                cell = tests[x, "Splice"][f"vs {other}"]
                assert _mark(cell, 0) == _mark(cell, 1) == "+", (x, other)
            assert splice[x]["ours"] - splice[f"{x}/learned"]["ours"] > 10, x
        outside = {m for m, row in splice.items()
                   if row["paper"] is not None and not within("Splice", m)}
        assert outside == {"CB", "CGR-AS", "CDC-AS"}
        assert all(0 < splice[m]["paper"] - splice[m]["ours"] < 1 for m in outside)
        assert all(8 < splice[x]["network"] < 12 for x in INFO_AS)  # about a sixth of 60
    # Cost: CGR-AS learns faster than K2-AS< and CB wherever they run; on Chess most of its
    # fit is CB's (CGR-AS/K2, the same selection without CB, takes under half of it)
    for data_set, rows in accuracy.items():
        for other in ("K2-AS<", "CB"):
            if other in rows:
                assert rows["CGR-AS"]["learn"] < rows[other]["learn"], (data_set, other)
    assert chess["CGR-AS/K2"]["learn"] < chess["CGR-AS"]["learn"] / 2
