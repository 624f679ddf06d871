"""The docs' results tables are generated from the committed results files
(benchmarks/tables.py, benchmarks/_results.py), so the docs cannot drift from the runs."""

from __future__ import annotations

import json
import math
import re

import pytest
from benchmark_scripts import BENCHMARKS, load_script

tables = load_script("tables")
results = tables._results  # the sibling it imported


def test_committed_docs_tables_equal_what_the_results_files_give():
    stale = [path.name for path in tables.documents()
             if tables.generate(path.read_text()) != path.read_text()]
    assert not stale, f"run `python benchmarks/tables.py`: out of date in {stale}"


def test_no_docs_line_outside_a_results_table_carries_a_date():
    """A measurement's date lives in its results file, shown by the generated block: a date
    typed anywhere else in README or docs marks a hand-typed, drifting number."""
    dated = [f"{path.relative_to(tables.ROOT)}:{number}: {line}" for path in tables.documents()
             for number, line in tables.dated_lines(
                 path.read_text(), path.relative_to(tables.ROOT).as_posix())]
    assert not dated, "dates outside the results tables:\n" + "\n".join(dated)


def test_every_undated_exception_is_still_in_its_page():
    """The allow-list shrinks with the pages: an entry whose line is gone is removed."""
    for document, fragment in tables.UNDATED:
        assert fragment in (tables.ROOT / document).read_text(), (document, fragment)


@pytest.mark.parametrize("line", [
    "Measured on 2026-11-22. The stratified splits",
    "Run 23 November 2026 (2 shared cores)",
    "| a | 1.0 | (timed Nov 23, 2026) |",
])
def test_a_date_outside_a_block_is_found_and_inside_one_is_not(line):
    results_block = ("<!-- table:demo.main -->\n*Measured 2026-01-02 with `x`.*\n\n| a |\n"
                     "<!-- /table:demo.main -->\n")
    text = f"# Page\n\n{results_block}\n{line}\nLast line, 2.5 s.\n"
    assert tables.dated_lines(text) == [(9, line)]
    assert tables.dated_lines(text.replace(line, "Measured by the benchmark.")) == []


def test_the_allow_list_excuses_its_line_in_its_page_only():
    document, fragment = tables.UNDATED[0]
    text = f"Intro.\nThe messages' time span ({fragment}).\n"
    assert tables.dated_lines(text, document) == []
    assert tables.dated_lines(text, "docs/other.md") == [(2, text.splitlines()[1])]


def test_every_results_file_is_shown_in_the_docs():
    shown = {m["name"] for path in tables.documents()
             for m in tables.BLOCK.finditer(path.read_text())}
    # the files in this format (a "tables" key); a script with its own format renders itself
    files = {path.stem for path in (BENCHMARKS / "results").glob("*.json")
             if "tables" in json.loads(path.read_text())}
    assert files, "no results files committed"
    assert files <= shown


def test_the_spam_filter_operating_points_are_in_the_benchmarks_page():
    record = results.load("spam_filters")
    assert {"spamassassin_operating_points", "sms_operating_points", "summary"} <= set(
        record["tables"])
    page = (BENCHMARKS.parent / "docs" / "benchmarks.md").read_text()
    for corpus in ("spamassassin", "sms"):
        assert f"<!-- table:spam_filters.{corpus}_operating_points -->" in page
        systems = {row["system"] for row in record["tables"][f"{corpus}_operating_points"]["rows"]}
        assert {"streamnb SpamFilter", "bogofilter (CLI, own word list)",
                "spamprobe (CLI, own database)"} <= systems


def _record(tmp_path, rows):
    columns = [results.column("system"), results.column("rate", "rate, msg/s", ",.0f"),
               results.column("share", "share %", ".2f")]
    path = results.write("demo", {"main": results.table(columns, rows)}, argv=["--fast"],
                         script=str(BENCHMARKS / "demo.py"), notes="Limited run.",
                         path=tmp_path / "demo.json")
    return json.loads(path.read_text())


def test_a_results_file_names_the_command_machine_and_date(tmp_path):
    record = _record(tmp_path, [])
    assert record["command"] == "python benchmarks/demo.py --fast"
    assert {"cpu", "cores", "python", "numpy", "streamnb"} <= set(record["machine"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", record["date"])


def test_a_block_is_filled_from_its_results_file_under_one_provenance_line(tmp_path):
    record = _record(tmp_path, [{"system": "a | b", "rate": 12345.6, "share": math.inf},
                                {"system": "c", "rate": 7, "share": math.nan}])
    record["date"] = "2026-01-02"
    record["machine"] = {"cpu": "Some CPU", "cores": 2, "os": "Linux", "python": "3.11.7",
                         "numpy": "2.0", "river": "0.26", "load average": "1.0 / 2.0 / 3.0"}
    (tmp_path / "demo.json").write_text(json.dumps(record))
    text = ("# Page\n\n<!-- table:demo.main -->\nold table\n<!-- /table:demo.main -->\n"
            "kept\n")
    new = tables.generate(text, tmp_path)
    assert new == (
        "# Page\n\n<!-- table:demo.main -->\n\n"
        "*Measured 2026-01-02 with `python benchmarks/demo.py --fast` on Some CPU (2 cores, "
        "load average 1.0 / 2.0 / 3.0), Python 3.11.7, numpy 2.0, river 0.26.* "
        "*Limited run.*\n\n"
        "| system | rate, msg/s | share % |\n|---|---|---|\n"
        "| a \\| b | 12,346 | ∞ |\n| c | 7 | – |\n\n"
        "<!-- /table:demo.main -->\nkept\n")
    assert tables.generate(new, tmp_path) == new  # idempotent


def test_a_missing_table_or_file_is_one_clear_error(tmp_path):
    _record(tmp_path, [])
    with pytest.raises(SystemExit, match=r"demo\.json has no table 'other'"):
        tables.generate("<!-- table:demo.other -->\n<!-- /table:demo.other -->", tmp_path)
    with pytest.raises(SystemExit, match=r"table nonesuch\.main: no results file"):
        tables.generate("<!-- table:nonesuch.main -->\n<!-- /table:nonesuch.main -->",
                        tmp_path)


def test_the_poll_benchmark_writes_the_table_the_docs_show(tmp_path):
    """bench_poll.py's results file holds one row per workload and partition count, with the
    columns of the committed file (the table in docs/service.md)."""
    bench = load_script("bench_poll")
    path = tmp_path / "bench_poll.json"
    bench.main(["--workload", "zipf", "--partitions", "1", "2", "--train", "30", "--measure",
                "30", "--poll", "10", "--repeats", "1", "--ab", "--results", str(path)])
    written = json.loads(path.read_text())["tables"]["poll_step"]
    committed = results.load("bench_poll")["tables"]["poll_step"]
    assert written["columns"] == committed["columns"]
    assert [(r["workload"], r["partitions"]) for r in written["rows"]] == [("zipf", 1),
                                                                           ("zipf", 2)]
    for row in written["rows"]:
        assert row["step"] >= row["learn"] > 0 and row["step ratio"] > 0


@pytest.mark.slow
def test_the_feedback_modes_table_is_what_streamnb_evaluate_reports(tmp_path):
    """docs/evaluate.md: evaluate_feedback.py gives, mode by mode, the numbers `streamnb
    evaluate` reports for the same options (checked on the first 400 messages)."""
    import csv

    from streamnb.cli import main as cli

    bench = load_script("evaluate_feedback")
    bench.main(["--limit", "400", "--results", str(tmp_path / "feedback.json")])
    rows = json.loads((tmp_path / "feedback.json").read_text())["tables"]["modes"]["rows"]
    for mode, options in (("`--delay 100`", ["--delay", "100"]),
                          ("`--feedback 0.2 --seed 0`", ["--feedback", "0.2", "--seed", "0"])):
        out = tmp_path / mode.strip("`").replace(" ", "")
        assert cli(["evaluate", "--protocol", "prequential", "--dataset", "spamassassin",
                    "--model", "indifferent", "--model", "laplace", "--limit", "400",
                    "--no-progress", "--out", str(out), *options]) == 0
        with open(out / "scores.csv", newline="") as f:
            reported = {r["model"]: r for r in csv.DictReader(f)}
        for row in (r for r in rows if r["feedback"] == mode):
            cli_row = reported[row["model"]]
            assert row["accuracy"] == pytest.approx(100 * float(cli_row["accuracy"]))
            for key in ("one_minus_roca", "ham_misclassification", "spam_misclassification",
                        "log_loss"):
                assert row[key] == pytest.approx(float(cli_row[key])), (mode, key)
    assert {r["feedback"] for r in rows} == {"immediate", "`--delay 100`",
                                             "`--feedback 0.2 --seed 0`"}


def test_a_run_in_parts_merges_its_rows_and_records_each_command(tmp_path):
    """``--merge`` (benchmarks/_results.py): a part's rows replace the rows of the same key in
    their place, others are appended, and the file's command runs every part."""
    columns = [results.column("model"), results.column("accuracy", fmt=".2f")]
    path = tmp_path / "demo.json"

    def part(argv, rows, **merge):
        results.write("demo", {"main": results.table(columns, rows)}, argv=argv,
                      script=str(BENCHMARKS / "demo.py"), path=path, **merge)
        return json.loads(path.read_text())

    part(["--exclude", "B"], [{"model": "A", "accuracy": 0.5}, {"model": "C", "accuracy": 0.7}])
    record = part(["--only", "B", "--merge"], [{"model": "B", "accuracy": 0.6},
                                               {"model": "C", "accuracy": 0.8}],
                  merge_key=("model",))
    assert [(r["model"], r["accuracy"]) for r in record["tables"]["main"]["rows"]] == [
        ("A", 0.5), ("C", 0.8), ("B", 0.6)]
    assert record["command"] == ("python benchmarks/demo.py --exclude B && "
                                 "python benchmarks/demo.py --only B --merge")
    assert [p["command"] for p in record["parts"]] == record["command"].split(" && ")
    assert record["command"] in results.provenance(record)
    # the same part again replaces its earlier run instead of adding a third command
    again = part(["--only", "B", "--merge"], [{"model": "B", "accuracy": 0.9}],
                 merge_key=("model",))
    assert again["command"] == record["command"]
    assert [r["accuracy"] for r in again["tables"]["main"]["rows"]] == [0.5, 0.8, 0.9]
    # the first part run again as a merge replaces the first run, in its place
    first = part(["--exclude", "B", "--merge"], [{"model": "A", "accuracy": 0.4},
                                                 {"model": "C", "accuracy": 0.3}],
                 merge_key=("model",))
    assert first["command"] == ("python benchmarks/demo.py --exclude B --merge && "
                                "python benchmarks/demo.py --only B --merge")
    assert [r["accuracy"] for r in first["tables"]["main"]["rows"]] == [0.4, 0.3, 0.9]
    # an empty key replaces a part's tables whole and keeps the tables only the file has
    other = [results.column("n")]
    results.write("demo", {"extra": results.table(other, [{"n": 1}])}, argv=["--more"],
                  script=str(BENCHMARKS / "demo.py"), path=path, merge_key=())
    merged = json.loads(path.read_text())
    assert set(merged["tables"]) == {"main", "extra"}
    assert merged["command"].endswith("&& python benchmarks/demo.py --more")


def test_merging_tables_whose_columns_differ_is_one_clear_error(tmp_path):
    path = tmp_path / "demo.json"

    def write(columns, merge_key):
        results.write("demo", {"main": results.table(columns, [{"model": "A"}])}, argv=[],
                      script=str(BENCHMARKS / "demo.py"), path=path, merge_key=merge_key)

    write([results.column("model")], None)
    with pytest.raises(SystemExit, match="cannot merge table 'main' of demo"):
        write([results.column("model"), results.column("x")], ("model",))
