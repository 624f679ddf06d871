"""The side-by-side spam filter benchmark (benchmarks/spam_filters.py) on 200 real SpamAssassin
messages with the real bogofilter and spamprobe, so that the harness cannot rot unnoticed (the
full tables are in docs/benchmarks.md)."""

from __future__ import annotations

import shutil
import sys

import pytest
from benchmark_scripts import load_script

# The stream opens with 134 spam messages in a row; messages 600-799 hold 96 ham and 104 spam.
START, COUNT = 600, 200

pytestmark = pytest.mark.skipif(
    not (shutil.which("bogofilter") and shutil.which("spamprobe")),
    reason="Debian's bogofilter and spamprobe are not installed (.ci/run installs them)")


@pytest.fixture(scope="module")
def bench():
    yield load_script("spam_filters")
    del sys.modules["spam_filters"]


@pytest.fixture(scope="module")
def corpus(bench):
    return bench.corpora()["spamassassin"]


@pytest.fixture(scope="module")
def samples(bench, corpus, tmp_path_factory):
    return bench.write_samples(corpus, tmp_path_factory.mktemp("messages"), COUNT, start=START)


def test_samples_are_the_stream_slice_with_raw_bytes_on_disk(samples):
    assert [s.index for s in samples] == list(range(START, START + COUNT))
    assert {s.label for s in samples} == {"spam", "ham"}
    assert all(s.path.read_bytes() == s.raw for s in samples)


def test_bogofilter_spamprobe_and_a_streamnb_model_score_every_message(
        bench, corpus, samples, tmp_path):
    chosen = bench.select(bench.systems(), "bogofilter,spamprobe,streamnb-indifferent")
    results = bench.run(samples, chosen, tmp_path, corpus.tokenize)
    assert [r.name for r in results] == ["bogofilter", "spamprobe", "streamnb-indifferent"]
    for r in results:
        assert len(r.scores) == len(r.labels) == COUNT
        assert r.labels == [s.label for s in samples]
        assert r.metrics["seconds"] > 0
        assert 0.5 < r.metrics["accuracy"] <= 1
    bogofilter = results[0]
    assert bogofilter.metrics["AUC"] > 0.5
    assert all(0 <= s <= 1 for s in bogofilter.scores)
    counts = dict(part.split() for part in bogofilter.verdicts.split(";")[0].split(" / "))
    assert sum(int(v.replace(",", "")) for v in counts.values()) == COUNT
    # one row per system in each corpus table, the summary and the CSV
    tables = bench.tables({"spamassassin": results})
    for name in ("spamassassin_operating_points", "spamassassin_at_threshold"):
        assert [row["system"] for row in tables[name]["rows"]] == [
            bench.DESCRIPTIONS.get(r.name, r.name) for r in results]
    assert [row["system"] for row in tables["summary"]["rows"]] == [
        bench.DESCRIPTIONS["bogofilter"], bench.DESCRIPTIONS["spamprobe"]]
    # streamnb systems alone (a --systems … --merge run): no summary, so a merge keeps the file's
    assert "summary" not in bench.tables({"spamassassin": results[2:]})
    bench.write_csv(results, tmp_path / "table.csv")
    assert len((tmp_path / "table.csv").read_text().splitlines()) == 1 + len(results)


def test_bogofilter_autoupdate_then_correct_equals_score_then_register(
        bench, corpus, samples, tmp_path):
    """The fast mode (score with -u, fix the unsure and wrong ones) gives the same scores as
    scoring and registering every message separately."""
    chosen = {"auto": lambda s: bench.Bogofilter(s.directory),
              "plain": lambda s: bench.Bogofilter(s.directory, autoupdate=False)}
    auto, plain = bench.run(samples[:80], chosen, tmp_path, corpus.tokenize)
    assert auto.scores == plain.scores
    assert auto.verdicts.split(";")[0] == plain.verdicts.split(";")[0]  # the S/H/U counts


def test_metrics_from_scores(bench):
    m = bench.score(["spam", "ham", "spam", "ham"], [0.9, 0.1, 0.4, 0.6], threshold=0.5)
    assert m["accuracy"] == 0.5
    assert m["AUC"] == 0.75
    assert m["1-ROCA %"] == pytest.approx(25)
    # the ROC's cutoffs: 0.9 (spam), 0.6 (ham), 0.4 (spam), 0.1 (ham)
    assert m["spam miss % at ham loss 0.1 %"] == 50  # cutoff 0.9: no ham lost, one spam missed
    assert m["ham loss % at spam miss 1 %"] == 50  # cutoff 0.4: both spam caught, one ham lost
    assert m["ham misclassified %"] == 50
    assert m["spam misclassified %"] == 50


def test_log_odds_of_a_model_that_has_seen_one_class(bench):
    assert bench.log_odds({}) == 0
    assert bench.log_odds({"spam": 0.0}) == float("inf")
    assert bench.log_odds({"ham": 0.0}) == float("-inf")
    assert bench.log_odds({"spam": -1.0, "ham": -3.0}) == 2.0
    assert bench.log_odds({"spam": float("-inf"), "ham": float("-inf")}) == 0


def test_select_keeps_the_list_order_and_takes_wildcards(bench):
    available = bench.systems()
    chosen = bench.select(available, "spamprobe,streamnb-tan*")
    assert list(chosen) == ["spamprobe", "streamnb-tan", "streamnb-tan-text", "streamnb-tan-ddr",
                            "streamnb-tan-ddr-text", "streamnb-tan-bayes",
                            "streamnb-tan-bayes-text", "streamnb-tan-cmi",
                            "streamnb-tan-cmi-text"]
    with pytest.raises(SystemExit):
        bench.select(available, "nonesuch")
