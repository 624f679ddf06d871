"""benchmarks/forgetting_spamassassin.py (docs/service.md's forgetting and drift tables) on the
first messages of its streams: both studies in one run, one results file."""

from __future__ import annotations

import itertools
import json
import sys

import pytest
from benchmark_scripts import load_script


@pytest.fixture(scope="module")
def bench():
    yield load_script("forgetting_spamassassin")
    del sys.modules["forgetting_spamassassin"]


def test_both_tables_from_one_run_share_the_run_without_forgetting(bench, tmp_path,
                                                                   monkeypatch):
    spamassassin, sms = bench.iter_spamassassin_stream, bench.iter_sms_spam_stream
    monkeypatch.setattr(bench, "iter_spamassassin_stream",
                        lambda: itertools.islice(spamassassin(), 120))
    monkeypatch.setattr(bench, "iter_sms_spam_stream", lambda: itertools.islice(sms(), 80))
    path = tmp_path / "forgetting.json"
    bench.main(["--half-life", "0", "50", "--results", str(path)])
    tables = json.loads(path.read_text())["tables"]
    assert [r["half-life"] for r in tables["half_life"]["rows"]] == [0, 50]
    drift = tables["drift"]["rows"]
    assert [(r["stream"].split(" (")[0], r["detector"]) for r in drift] == [
        (stream, detector) for stream in ("SpamAssassin", "SpamAssassin, then SMS")
        for detector in ("none", *bench.DETECTORS)]
    assert "200 messages" in drift[-1]["stream"]
    # the run without forgetting nor detector is one run, shown in both tables
    assert tables["half_life"]["rows"][0]["1-ROCA %"] == drift[0]["1-ROCA %"]
    assert all(r["drifts"] == 0 for r in drift if r["detector"] == "none")
