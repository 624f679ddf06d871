"""benchmarks/alternate.py: the run order, the reading of the results, and the check that each
run imported the revision it was meant to (a real script on two real, tiny packages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmark_scripts import load_script

alternate = load_script("alternate")

# each revision's value per run, in the order that revision runs
VALUES = {"old": [10.0, 14.0, 11.0], "new": [7.0, 8.0, 9.0]}

SCRIPT = """\
import argparse, importlib.util, json, sys
import streamnb
parser = argparse.ArgumentParser()
parser.add_argument("--log")
parser.add_argument("--stray", default=None)
parser.add_argument("--results")
args = parser.parse_args()
with open(args.log, "a") as log:
    log.write(streamnb.REV + "\\n")
with open(args.log) as log:
    runs = [line.strip() for line in log].count(streamnb.REV)
if args.stray:  # a streamnb module found outside the revision's directory
    spec = importlib.util.spec_from_file_location("streamnb.stray", args.stray)
    sys.modules["streamnb.stray"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules["streamnb.stray"])
rows = [{"what": "rate", "value": streamnb.VALUES[runs - 1]},
        {"what": "label only", "value": "n/a"}]
if streamnb.REV == "new":
    rows.append({"what": "only in new", "value": 1.0})
record = {"tables": {"t": {"columns": [{"key": "what"}, {"key": "value"}], "rows": rows}}}
with open(args.results, "w") as out:
    json.dump(record, out)
"""


def package(root: Path, rev: str) -> Path:
    (root / rev / "streamnb").mkdir(parents=True)
    (root / rev / "streamnb" / "__init__.py").write_text(
        f"REV = {rev!r}\nVALUES = {VALUES[rev]!r}\n")
    return root / rev


@pytest.fixture
def setup(tmp_path: Path) -> tuple[dict, Path, Path]:
    sides = {rev: alternate.Side(rev, rev, package(tmp_path, rev)) for rev in ("old", "new")}
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "fake.py").write_text(SCRIPT)
    return sides, tmp_path / "scripts", tmp_path / "runs.log"


def bench(log: Path, *extra: str, better: str = "higher") -> object:
    return alternate.Benchmark("fake.py", ("--log", str(log), *extra),
                               (alternate.Measure("t", ("value",), better),))


def test_runs_alternate_and_the_medians_and_ratio_come_from_each_revision(setup, tmp_path):
    sides, scripts, log = setup
    compared = alternate.compare("fake", bench(log), sides, 3, scripts, cwd=tmp_path,
                                 log=lambda _: None)
    assert log.read_text().split() == ["old", "new", "new", "old", "old", "new"]
    # one cell: the text value is not a number, and a row only one revision prints is left out
    assert [c.measure for c in compared] == ["t: rate: value"]
    assert compared[0].values == VALUES
    summary, per_round = alternate.rows("fake", compared)
    assert summary[0]["old"] == 11.0 and summary[0]["new"] == 8.0
    assert summary[0]["ratio"] == pytest.approx(8.0 / 11.0)
    assert summary[0]["old spread"] == pytest.approx(14.0 / 10.0)
    assert summary[0]["verdict"] == "worse"  # new's best (9) below old's worst (10)
    assert per_round[0]["old rounds"] == VALUES["old"]
    json.dumps(alternate._results.table(alternate.SUMMARY_COLUMNS, summary))


def test_order_alternates_which_revision_runs_first():
    assert alternate.order(4) == [(0, "old"), (0, "new"), (1, "new"), (1, "old"),
                                  (2, "old"), (2, "new"), (3, "new"), (3, "old")]


@pytest.mark.parametrize(("old", "new", "better", "expected"), [
    ([10, 14, 11], [7, 8, 9], "higher", "worse"),
    ([10, 14, 11], [7, 8, 9], "lower", "better"),
    ([10, 14, 11], [9, 12, 20], "higher", "same"),  # the ranges overlap
    ([1.0, 1.1], [1.2, 1.3], "lower", "worse"),
])
def test_verdict_is_worse_only_when_the_ranges_do_not_overlap(old, new, better, expected):
    cell = alternate.Cell("m", better, {"old": old, "new": new})
    assert alternate.verdict(cell) == expected


def test_a_revision_directory_without_streamnb_is_detected(setup, tmp_path):
    """PYTHONPATH naming no streamnb: Python falls back to the installed one, silently but for
    the launcher's line."""
    sides, scripts, log = setup
    empty = tmp_path / "empty"
    empty.mkdir()
    sides["old"] = alternate.Side("old", "old", empty)
    with pytest.raises(alternate.WrongPackage, match="streamnb came from"):
        alternate.compare("fake", bench(log), sides, 1, scripts, cwd=tmp_path,
                          log=lambda _: None)


def test_a_streamnb_module_loaded_from_elsewhere_during_the_run_is_detected(setup, tmp_path):
    """The package itself from the right place but one of its modules from another (as an
    editable install's finder serves a submodule the old revision lays out elsewhere)."""
    sides, scripts, log = setup
    stray = tmp_path / "elsewhere" / "stray.py"
    stray.parent.mkdir()
    stray.write_text("X = 1\n")
    with pytest.raises(alternate.WrongPackage, match=r"streamnb\.stray"):
        alternate.compare("fake", bench(log, "--stray", str(stray)), sides, 1, scripts,
                          cwd=tmp_path, log=lambda _: None)


def test_a_failing_run_reports_the_script_and_revision(setup, tmp_path):
    sides, scripts, log = setup
    (scripts / "fake.py").write_text("import streamnb\nraise SystemExit('no such option')\n")
    with pytest.raises(RuntimeError, match=r"fake.py on old \(old\) failed"):
        alternate.compare("fake", bench(log), sides, 1, scripts, cwd=tmp_path,
                          log=lambda _: None)


def test_the_overview_gain_is_above_one_when_the_new_revision_is_faster():
    """Gain: new / old for a rate, old / new for a time; worse measures named."""
    summary = [{"benchmark": "b", "measure": "rate", "better": "higher", "old": 100.0,
                "new": 120.0, "verdict": "same"},
               {"benchmark": "b", "measure": "time", "better": "lower", "old": 10.0,
                "new": 20.0, "verdict": "worse"},
               {"benchmark": "b", "measure": "other time", "better": "lower", "old": 10.0,
                "new": 8.0, "verdict": "same"}]
    rounds = [{"benchmark": "b", "measure": "rate", "options": "--n 5",
               "old commit": "a" * 40, "new commit": "b" * 40,
               "old rounds": [1.0, 2.0], "new rounds": [1.0, 2.0]}]
    tables = {"summary": {"rows": summary}, "rounds": {"rows": rounds}}
    (row,) = alternate.overview(tables)["rows"]
    assert row["lowest gain"] == pytest.approx(0.5)
    assert row["median gain"] == pytest.approx(1.2)
    assert row["worse"] == "time"
    assert row["revisions"] == "aaaaaaa → bbbbbbb" and row["options"] == "--n 5"
    assert row["rounds"] == 2


@pytest.mark.parametrize("bad", [["--args", "bench_tan"], ["--args", "bench_poll=--repeats 3"],
                                 ["--rounds", "0"]])
def test_a_command_line_mistake_is_one_line_before_anything_is_built(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        alternate.main(["bench_tan", "--old", "HEAD", *bad])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "error: " in err.splitlines()[-1] and "Traceback" not in err
