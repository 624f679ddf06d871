"""The command line: the demo and explain commands on the real corpus (small slices)."""

from __future__ import annotations

import re

from streamnb.cli import main


def test_demo_reports_scores_and_writes_the_learning_curve(tmp_path, capsys):
    png = tmp_path / "curve.png"
    assert main(["demo", "--limit", "300", "--no-progress", "--model", "indifferent,ml",
                 "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "300 messages in time order" in out
    accuracy = [float(a) for a in re.findall(r"accuracy (\d\.\d+)", out)]
    assert len(accuracy) == 2 and all(0.5 < a <= 1.0 for a in accuracy)
    assert "AUC" in out and "LogScore" in out and "confusion" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_rejects_unknown_model(capsys):
    assert main(["demo", "--model", "nope", "--no-progress"]) == 2
    assert "unknown model" in capsys.readouterr().err


def test_explain_prints_the_dependence_diagnostics(capsys):
    assert main(["explain", "--message", "400", "--train", "300", "--candidates", "20"]) == 0
    out = capsys.readouterr().out
    assert "TAN decision" in out and "log DF" in out and "Theorem 2 condition" in out
    assert re.search(r"log f_b = -?\d+\.\d+ = log DF -?\d+\.\d+ \+ log f_nb -?\d+\.\d+", out)
