"""The command line: the demo and explain commands on the real corpus (small slices)."""

from __future__ import annotations

import re

from streamnb.cli import main


def test_demo_reports_scores_and_writes_the_learning_curve(tmp_path, capsys):
    """The first 1,500 messages (32 % ham, so a constant model scores 0.68): the printed
    accuracies are those of streamnb.evaluate.prequential on the same token records, and
    above the majority class's share."""
    from streamnb import IndifferentNB, NaiveBayes
    from streamnb.datasets import iter_spamassassin_stream
    from streamnb.evaluate import prequential
    from streamnb.features import tokenize_text

    png = tmp_path / "curve.png"
    assert main(["demo", "--no-kafka", "--limit", "1500", "--no-progress", "--model",
                 "indifferent,ml", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "1500 messages in time order" in out
    accuracy = [float(a) for a in re.findall(r"accuracy (\d\.\d+)", out)]
    messages = list(iter_spamassassin_stream())[:1500]
    stream = [(dict.fromkeys(tokenize_text(m.text), True), m.label) for m in messages]
    want = [prequential(make(), stream, positive="spam").accuracy()
            for make in (IndifferentNB, lambda: NaiveBayes(estimator="ml"))]
    assert accuracy == [round(a, 4) for a in want]
    majority = max(sum(m.label == c for m in messages) for c in ("spam", "ham")) / 1500
    assert all(a > majority for a in accuracy), (accuracy, majority)
    assert "AUC" in out and "LogScore" in out and "confusion" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


TREC_LINE = re.compile(r"TREC spam track: 1-ROCA (\d+\.\d+)%   ham misclassification "
                       r"(\d+\.\d+)%   spam misclassification (\d+\.\d+)%")


def assert_curve_files(directory, models):
    """roc.csv (a row per ROC point of each model), roc.png and accuracy_curves.png next to
    the learning curve."""
    import csv

    rows = list(csv.DictReader((directory / "roc.csv").open()))
    assert {r["model"] for r in rows} == set(models)
    for model in models:
        points = [(float(r["fpr"]), float(r["tpr"])) for r in rows if r["model"] == model]
        assert points[0] == (0.0, 0.0) and points[-1] == (1.0, 1.0)
    for name in ("roc.png", "accuracy_curves.png"):
        assert (directory / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_runs_the_spam_filter_on_raw_text_and_prints_the_trec_measures(tmp_path, capsys):
    png = tmp_path / "out" / "learning_curve.png"
    assert main(["demo", "--no-kafka", "--limit", "400", "--no-progress", "--plot",
                 str(png)]) == 0
    out = capsys.readouterr().out
    assert "== spam-filter: SpamFilter() ==" in out
    accuracy = float(re.search(r"accuracy (\d\.\d+)", out).group(1))
    auc = float(re.search(r"AUC (\d\.\d+)", out).group(1))
    one_minus_roca, ham, spam = map(float, TREC_LINE.search(out).groups())
    assert abs(one_minus_roca - 100 * (1 - auc)) < 0.006
    # the first 400 messages are 99 % spam: equal to the library's number, not just "high"
    from streamnb import SpamFilter
    from streamnb.datasets import iter_spamassassin_stream
    from streamnb.evaluate import prequential

    messages = list(iter_spamassassin_stream())[:400]
    result = prequential(SpamFilter(), [(m.text, m.label) for m in messages], positive="spam")
    assert accuracy == round(result.accuracy(), 4) and auc == round(result.auc(), 4)
    assert 0 <= ham <= 100 and 0 <= spam <= 100 and "log-loss" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert_curve_files(png.parent, ["spam-filter"])


def test_demo_all_runs_every_registered_model(tmp_path, capsys):
    """``--model all``: every registered model that can read the messages, which is all of
    them: the SpamFilter reads the raw messages, every other model the token dicts (the
    continuous ones as naive-Bayes factors beside an empty numeric block); one table row per
    model, with the TREC measures."""
    from streamnb.models.registry import CONTINUOUS, MODELS

    png = tmp_path / "all.png"
    assert main(["demo", "--no-kafka", "--limit", "150", "--no-progress", "--model", "all",
                 "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "| model | accuracy | AUC | 1-ROCA % | ham % | spam % | log-loss |" in out
    rows = re.findall(r"^\| ([a-z-]+) \| (\d\.\d+) \|", out, re.MULTILINE)
    assert sorted(name for name, _ in rows) == sorted(MODELS)
    assert set(CONTINUOUS) <= {name for name, _ in rows} and "left out" not in out
    assert len(TREC_LINE.findall(out)) == len(MODELS)
    assert_curve_files(tmp_path, sorted(MODELS))


def test_demo_rejects_unknown_model(capsys):
    assert main(["demo", "--model", "nope", "--no-progress"]) == 2
    assert "unknown model" in capsys.readouterr().err
    assert main(["demo", "--model", "ml,laplace", "--no-progress"]) == 2
    assert "--no-kafka" in capsys.readouterr().err


def test_demo_runs_the_kafka_pipeline_by_default(tmp_path, capsys):
    """No broker configured: an embedded tansu, the service as its own process in a consumer
    group, SpamAssassin replayed into a topic, predictions read back and scored."""
    png = tmp_path / "kafka.png"
    assert main(["demo", "--limit", "1500", "--no-progress", "--plot", str(png),
                 "--metrics-address", "127.0.0.1:0"]) == 0
    out = capsys.readouterr().out
    assert "embedded Kafka-protocol broker (tansu)" in out and "live metrics at http" in out
    assert "1500 consumed, 1500 learned, 1500 predicted, 0 dead letters" in out
    accuracy = float(re.search(r"accuracy (\d\.\d+)", out).group(1))
    from streamnb.datasets import iter_spamassassin_stream

    # the first 200 messages are 197 spam: 1,500 hold 32 % ham, where a constant model scores 0.68
    labels = [m.label for _, m in zip(range(1500), iter_spamassassin_stream(), strict=False)]
    majority = max(labels.count("spam"), labels.count("ham")) / 1500
    assert majority < accuracy <= 1.0, (accuracy, majority)
    assert "through Kafka" in out and "AUC" in out and "LogScore" in out and "confusion" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the default model is the spam filter; its published scores give the ROC curve
    assert "streamnb serve --model spam-filter" in out and "spam-filter through Kafka" in out
    assert TREC_LINE.search(out) and "log-loss" in out
    assert_curve_files(tmp_path, ["spam-filter"])


def test_explain_prints_the_dependence_diagnostics(capsys):
    assert main(["explain", "--message", "400", "--train", "300", "--candidates", "20"]) == 0
    out = capsys.readouterr().out
    assert "TAN decision" in out and "log DF" in out and "Theorem 2 condition" in out
    assert re.search(r"log f_b = -?\d+\.\d+ = log DF -?\d+\.\d+ \+ log f_nb -?\d+\.\d+", out)
