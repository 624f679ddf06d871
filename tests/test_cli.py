"""The command line: the demo and explain commands on the real corpus (small slices)."""

from __future__ import annotations

import re

from streamnb.cli import main


def test_demo_reports_scores_and_writes_the_learning_curve(tmp_path, capsys):
    png = tmp_path / "curve.png"
    assert main(["demo", "--no-kafka", "--limit", "300", "--no-progress", "--model",
                 "indifferent,ml", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "300 messages in time order" in out
    accuracy = [float(a) for a in re.findall(r"accuracy (\d\.\d+)", out)]
    assert len(accuracy) == 2 and all(0.5 < a <= 1.0 for a in accuracy)
    assert "AUC" in out and "LogScore" in out and "confusion" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_rejects_unknown_model(capsys):
    assert main(["demo", "--model", "nope", "--no-progress"]) == 2
    assert "unknown model" in capsys.readouterr().err
    assert main(["demo", "--model", "ml,laplace", "--no-progress"]) == 2
    assert "--no-kafka" in capsys.readouterr().err


def test_demo_runs_the_kafka_pipeline_by_default(tmp_path, capsys):
    """No broker configured: an embedded tansu, the service as its own process in a consumer
    group, SpamAssassin replayed into a topic, predictions read back and scored."""
    png = tmp_path / "kafka.png"
    assert main(["demo", "--limit", "200", "--no-progress", "--plot", str(png),
                 "--metrics-address", "127.0.0.1:0"]) == 0
    out = capsys.readouterr().out
    assert "embedded Kafka-protocol broker (tansu)" in out and "live metrics at http" in out
    assert "200 consumed, 200 learned, 200 predicted, 0 dead letters" in out
    accuracy = float(re.search(r"accuracy (\d\.\d+)", out).group(1))
    assert 0.5 < accuracy <= 1.0
    assert "through Kafka" in out and "AUC" in out and "LogScore" in out and "confusion" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_explain_prints_the_dependence_diagnostics(capsys):
    assert main(["explain", "--message", "400", "--train", "300", "--candidates", "20"]) == 0
    out = capsys.readouterr().out
    assert "TAN decision" in out and "log DF" in out and "Theorem 2 condition" in out
    assert re.search(r"log f_b = -?\d+\.\d+ = log DF -?\d+\.\d+ \+ log f_nb -?\d+\.\d+", out)
