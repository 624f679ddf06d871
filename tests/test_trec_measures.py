"""The TREC spam track's measures (1-ROCA %, ham / spam misclassification %, ROC curve,
log-loss, rolling accuracy) against scikit-learn and hand computations, and the feedback modes
of the prequential protocol (delayed, partial) checked label by label."""

from __future__ import annotations

import csv
import math
import re
from collections import Counter

import numpy as np
import pytest
from sklearn import metrics as skm

from streamnb import IndifferentNB
from streamnb.cli import main
from streamnb.datasets import iter_spamassassin_stream, load
from streamnb.evaluate import (
    PartialFeedback,
    compare_prequential,
    exact_auc,
    misclassification_rates,
    prequential,
    roc_curve,
    rolling_accuracy,
)
from streamnb.evaluate.report import (
    plot_accuracy_curves,
    plot_learning_curves,
    write_report,
    write_roc_csv,
)
from streamnb.features import tokenize_email

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def spam_stream():
    messages = list(iter_spamassassin_stream())[:400]
    return [({t: True for t in tokenize_email(m.text)}, m.label) for m in messages]


class Scripted:
    """Returns the probabilities scripted for record ``x["i"]`` and learns nothing."""

    def __init__(self, proba: list[dict]) -> None:
        self.proba = proba

    def predict_proba_one(self, x: dict) -> dict:
        return self.proba[x["i"]]

    def learn_one(self, x: dict, y) -> None:
        pass


class Recorder:
    """Remembers, at each prediction, which records it had learned (in the order learned)."""

    def __init__(self) -> None:
        self.learned: list[tuple[int, str]] = []
        self.seen_at_prediction: list[list[int]] = []

    def predict_proba_one(self, x: dict) -> dict:
        self.seen_at_prediction.append([i for i, _ in self.learned])
        return {"spam": 0.5, "ham": 0.5}

    def learn_one(self, x: dict, y) -> None:
        self.learned.append((x["i"], y))


class Majority:
    """Always the majority class of the whole stream, with a constant probability."""

    def __init__(self, majority, minority) -> None:
        self.proba = {majority: 0.8, minority: 0.2}

    def predict_proba_one(self, x: dict) -> dict:
        return dict(self.proba)

    def learn_one(self, x: dict, y) -> None:
        pass


def _labelled(n: int, seed: int = 0) -> list[tuple[dict, str]]:
    rng = np.random.default_rng(seed)
    return [({"i": i}, "spam" if rng.random() < 0.4 else "ham") for i in range(n)]


# ---- the measures -----------------------------------------------------------------------


def test_roc_curve_equals_scikit_learn_with_ties():
    rng = np.random.default_rng(11)
    truth = rng.random(300) < 0.35
    scores = np.round(rng.normal(truth * 1.0, 1.0), 1)  # rounded: many tied scores
    fpr, tpr, thresholds = roc_curve(truth, scores)
    ref_fpr, ref_tpr, ref_thresholds = skm.roc_curve(truth, scores, drop_intermediate=False)
    np.testing.assert_array_equal(fpr, ref_fpr)
    np.testing.assert_array_equal(tpr, ref_tpr)
    np.testing.assert_array_equal(thresholds[1:], ref_thresholds[1:])
    assert thresholds[0] == math.inf and len(thresholds) == len(np.unique(scores)) + 1
    # its trapezoid area is the exact (Mann–Whitney) AUC, and scikit-learn's
    area = float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))
    assert area == pytest.approx(exact_auc(truth, scores), abs=1e-12)
    assert exact_auc(truth, scores) == pytest.approx(skm.roc_auc_score(truth, scores),
                                                     abs=1e-12)


def test_roc_curve_hand_values_with_infinite_scores_and_one_class():
    fpr, tpr, thresholds = roc_curve([True, False, True, False, False],
                                     [math.inf, 1.0, 1.0, -math.inf, -math.inf])
    # +inf: 1 spam; 1.0: 1 spam and 1 ham tied (one diagonal step); −inf: 2 ham
    assert fpr.tolist() == [0.0, 0.0, 1 / 3, 1.0]
    assert tpr.tolist() == [0.0, 0.5, 1.0, 1.0]
    assert thresholds.tolist() == [math.inf, math.inf, 1.0, -math.inf]
    fpr, tpr, _ = roc_curve([True, True], [0.2, 0.1])
    assert np.isnan(fpr).all() and tpr.tolist() == [0.0, 0.5, 1.0]


def test_misclassification_rates_hand_values_and_scikit_learn():
    truth = np.array([True, True, True, True, False, False, False, False, False, False])
    called = np.array([True, True, True, False, True, False, False, False, False, False])
    assert misclassification_rates(truth, called) == (100 / 6, 25.0)
    rng = np.random.default_rng(2)
    truth, called = rng.random(200) < 0.3, rng.random(200) < 0.4
    (tn, fp), (fn, tp) = skm.confusion_matrix(truth, called)
    ham, spam = misclassification_rates(truth, called)
    assert ham == pytest.approx(100 * fp / (fp + tn)) and spam == pytest.approx(
        100 * fn / (fn + tp))
    assert all(math.isnan(v) for v in misclassification_rates([], []))


def test_rolling_accuracy_equals_a_window_by_hand():
    rng = np.random.default_rng(5)
    correct = rng.random(237) < 0.7
    at = [10, 50, 99, 100, 101, 200, 237]
    for window in (1, 7, 100, 1000):
        expected = [(i, float(np.mean(correct[max(0, i - window):i]))) for i in at]
        got = rolling_accuracy(correct, window, at)
        assert [i for i, _ in got] == at
        assert [a for _, a in got] == pytest.approx([a for _, a in expected], abs=1e-15)
    with pytest.raises(ValueError, match="window must be a positive integer"):
        rolling_accuracy(correct, 0, at)
    with pytest.raises(ValueError, match="outside"):
        rolling_accuracy(correct, 5, [238])


def test_prequential_measures_against_scikit_learn(spam_stream):
    r = prequential(IndifferentNB(), spam_stream, positive="spam", every=50)
    y = np.array([label == "spam" for label in r.labels])
    assert r.one_minus_roca() == pytest.approx(100 * (1 - skm.roc_auc_score(y, r.score)),
                                               abs=1e-9)
    fpr, tpr, _ = r.roc_curve()
    ref_fpr, ref_tpr, _ = skm.roc_curve(y, r.score, drop_intermediate=False)
    np.testing.assert_array_equal(fpr, ref_fpr)
    np.testing.assert_array_equal(tpr, ref_tpr)
    (tn, fp), (fn, tp) = skm.confusion_matrix(y, [p == "spam" for p in r.predicted])
    assert r.ham_misclassification() == pytest.approx(100 * fp / (fp + tn))
    assert r.spam_misclassification() == pytest.approx(100 * fn / (fn + tp))
    # two classes: every error is one or the other (a record predicted before anything was
    # learned, with no class at all, is not called spam)
    assert fp + fn == sum(t != p for t, p in zip(r.labels, r.predicted, strict=True))
    # at a log-odds threshold: the decision of the ROC curve's point at that threshold
    for threshold in (-5.0, 0.0, 3.0):
        called = np.asarray(r.score) >= threshold
        (tn, fp), (fn, tp) = skm.confusion_matrix(y, called)
        assert r.misclassification(threshold) == pytest.approx(
            (100 * fp / (fp + tn), 100 * fn / (fn + tp)))
    # the operating points: the best ROC point within each ham loss / spam miss, by brute force
    points = r.operating_points()
    for h in (0.1, 0.5, 1.0):
        within = fpr <= h / 100 * (1 + 1e-9)
        assert points[f"spam miss % at ham loss {h:g} %"] == pytest.approx(
            100 * (1 - tpr[within].max()))
    for s in (1.0, 3.0, 5.0):
        within = 1 - tpr <= s / 100 * (1 + 1e-9)
        assert points[f"ham loss % at spam miss {s:g} %"] == pytest.approx(
            100 * fpr[within].min())
    summary = r.summary()
    assert summary["operating_points"] == points
    assert summary["one_minus_roca"] == r.one_minus_roca()
    assert (summary["ham_misclassification"], summary["spam_misclassification"]) == \
        r.misclassification()
    rolling = r.rolling_curve(100)
    assert [i for i, _ in rolling] == [i for i, _ in r.curve]
    # the window holds everything (pairs compared point by point: newer pytest's approx takes
    # no nested structures)
    rolling = r.rolling_curve(10_000)
    assert [n for n, _ in rolling] == [n for n, _ in r.curve]
    assert [a for _, a in rolling] == pytest.approx([a for _, a in r.curve])


def test_log_loss_equals_scikit_learn_on_scripted_probabilities():
    rng = np.random.default_rng(3)
    p_spam = rng.uniform(0.02, 0.98, 60)
    stream = _labelled(60, seed=4)
    model = Scripted([{"spam": p, "ham": 1 - p} for p in p_spam])
    r = prequential(model, stream, positive="spam")
    y = [label == "spam" for _, label in stream]
    assert r.log_loss() == pytest.approx(skm.log_loss(y, p_spam), rel=1e-12)
    assert r.log_score() == pytest.approx(60 * skm.log_loss(y, p_spam), rel=1e-12)
    assert r.auc() == pytest.approx(skm.roc_auc_score(y, p_spam), abs=1e-12)
    # the threshold is on the log-odds: 0 is P(spam) ≥ 1/2
    called = p_spam >= 0.5
    (tn, fp), (fn, tp) = skm.confusion_matrix(y, called)
    assert r.misclassification(0.0) == pytest.approx((100 * fp / (fp + tn),
                                                      100 * fn / (fn + tp)))


@pytest.mark.parametrize("source", ["spamassassin", "vote"])
def test_an_always_majority_model_has_1_roca_50(source, spam_stream):
    if source == "spamassassin":
        stream, positive = spam_stream, "spam"
    else:
        vote = load("vote")
        stream, positive = list(zip(vote.records, vote.labels, strict=True)), "democrat"
    counts = Counter(label for _, label in stream)
    (majority, n_major), (minority, n_minor) = counts.most_common()
    r = prequential(Majority(majority, minority), stream, positive=positive)
    assert r.one_minus_roca() == 50.0
    expected = (0.0, 100.0) if majority != positive else (100.0, 0.0)
    assert r.misclassification() == expected
    assert r.accuracy() == pytest.approx(n_major / (n_major + n_minor))
    evaluation = compare_prequential({"majority": lambda: Majority(majority, minority)},
                                     stream, positive=positive)
    score = evaluation.scores[0]
    assert (score.one_minus_roca, score.ham_misclassification,
            score.spam_misclassification) == (50.0, *expected)
    table = evaluation.to_markdown()
    assert "1-ROCA %" in table and "| 50.0000 |" in table


# ---- feedback modes ---------------------------------------------------------------------


@pytest.mark.parametrize("delay", [0, 1, 3, 25])
def test_delayed_feedback_gives_each_label_after_delay_more_predictions(delay):
    stream = _labelled(40)
    model = Recorder()
    r = prequential(model, stream, positive="spam", delay=delay)
    assert r.n == 40 and all(r.fed_back)
    for i, seen in enumerate(model.seen_at_prediction):
        # record j's label is learned after record j + delay is predicted: before record i,
        # exactly the records j < i − delay, in stream order
        assert seen == list(range(max(0, i - delay))), i
    # the labels still pending at the end are learned after the last prediction
    assert model.learned == [(i, label) for i, (_, label) in enumerate(stream)]


def test_delayed_partial_feedback_learns_the_seeded_subset_late():
    stream = _labelled(300, seed=1)
    model = Recorder()
    r = prequential(model, stream, positive="spam", delay=4, feedback=0.3, seed=9)
    subset = np.random.default_rng(9).random(300) < 0.3
    assert r.fed_back == subset.tolist()
    for i, seen in enumerate(model.seen_at_prediction):
        assert seen == [j for j in range(max(0, i - 4)) if subset[j]]
    assert [i for i, _ in model.learned] == np.flatnonzero(subset).tolist()


def test_partial_feedback_is_the_seeded_subset_and_every_record_is_scored():
    stream = _labelled(2000, seed=2)
    model = Recorder()
    r = prequential(model, stream, positive="spam", feedback=0.1, seed=42)
    expected = np.random.default_rng(42).random(2000) < 0.1
    learned = [i for i, _ in model.learned]
    assert learned == np.flatnonzero(expected).tolist()  # exactly the seeded subset, in order
    assert len(learned) == sum(r.fed_back) == int(expected.sum())
    assert abs(len(learned) - 200) < 3 * math.sqrt(2000 * 0.1 * 0.9)  # Binomial(2000, 0.1)
    assert r.n == 2000 and len(r.score) == 2000 and len(model.seen_at_prediction) == 2000
    # reproducible with the seed, another subset with another seed
    again = prequential(Recorder(), stream, positive="spam", feedback=0.1, seed=42)
    other = prequential(Recorder(), stream, positive="spam", feedback=0.1, seed=43)
    assert again.fed_back == r.fed_back != other.fed_back
    # the rule of a longer stream starts with the same subset
    rule = PartialFeedback(0.1, seed=42)
    assert [rule(i) for i in range(5000)][:2000] == r.fed_back


def test_feedback_rules_and_full_feedback_defaults(spam_stream):
    model = Recorder()
    r = prequential(model, _labelled(30), positive="spam", feedback=lambda i, x, y: y == "spam")
    assert [label for _, label in model.learned] == ["spam"] * sum(r.fed_back)
    full = prequential(IndifferentNB(), spam_stream, positive="spam", feedback=1.0, delay=0)
    default = prequential(IndifferentNB(), spam_stream, positive="spam")
    assert full.score == default.score and full.fed_back == [True] * len(spam_stream)


def test_delay_and_partial_feedback_cost_accuracy_on_spam(spam_stream):
    immediate = prequential(IndifferentNB(), spam_stream, positive="spam")
    late = prequential(IndifferentNB(), spam_stream, positive="spam", delay=100)
    partial = prequential(IndifferentNB(), spam_stream, positive="spam", feedback=0.2, seed=0)
    assert late.accuracy() < immediate.accuracy()
    assert partial.accuracy() < immediate.accuracy()
    # record 0's label comes after record 100 is predicted: records 0..100 had nothing learned
    assert late.predicted[:101] == [None] * 101 and late.predicted[101] is not None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"delay": -1}, "delay must be an integer >= 0"),
    ({"delay": 1.5}, "delay must be an integer >= 0"),
    ({"delay": True}, "delay must be an integer >= 0"),
    ({"feedback": 0}, r"feedback must be a fraction in \(0, 1\]"),
    ({"feedback": 1.5}, r"feedback must be a fraction in \(0, 1\]"),
    ({"feedback": math.nan}, r"feedback must be a fraction in \(0, 1\]"),
    ({"feedback": "half"}, r"feedback must be a fraction in \(0, 1\]"),
])
def test_feedback_options_are_validated(kwargs, message):
    with pytest.raises(ValueError, match=message):
        prequential(Recorder(), _labelled(5), positive="spam", **kwargs)
    with pytest.raises(ValueError, match=message):
        compare_prequential({"r": Recorder}, _labelled(5), positive="spam", **kwargs)


def test_compare_prequential_passes_the_feedback_modes_on(spam_stream, tmp_path):
    evaluation = compare_prequential({"indifferent": IndifferentNB}, spam_stream,
                                     positive="spam", every=50, delay=10, feedback=0.5, seed=1)
    alone = prequential(IndifferentNB(), spam_stream, positive="spam", every=50, delay=10,
                        feedback=0.5, seed=1)
    score = evaluation.scores[0]
    assert score.accuracy == pytest.approx(alone.accuracy())
    assert score.one_minus_roca == pytest.approx(alone.one_minus_roca(), rel=1e-12)
    assert (score.ham_misclassification, score.spam_misclassification) == \
        alone.misclassification()
    assert score.log_loss == pytest.approx(alone.log_loss(), rel=1e-9)
    assert evaluation.results["indifferent"].fed_back == alone.fed_back
    assert evaluation.settings == {"every": 50, "positive": "spam", "delay": 10,
                                   "feedback": 0.5, "seed": 1}
    written = write_report(evaluation, tmp_path, window=100)
    assert {"roc_csv", "roc", "accuracy_curves", "learning_curve"} <= set(written)
    with open(written["roc_csv"]) as f:
        rows = list(csv.DictReader(f))
    fpr, tpr, thresholds = alone.roc_curve()
    assert [float(row["fpr"]) for row in rows] == fpr.tolist()
    assert [float(row["tpr"]) for row in rows] == tpr.tolist()
    assert [float(row["threshold"]) for row in rows] == thresholds.tolist()
    assert {row["model"] for row in rows} == {"indifferent"}
    for key in ("roc", "accuracy_curves", "learning_curve"):
        assert written[key].read_bytes()[:8] == PNG


def test_plot_writers(tmp_path):
    curve = [(10, 0.5), (20, 0.6), (30, 0.7)]
    assert plot_accuracy_curves({"a": curve}, {"a": [(10, 0.5), (20, 0.7), (30, 0.9)]},
                                tmp_path / "acc.png", "t", window=10).read_bytes()[:8] == PNG
    assert plot_learning_curves({"a": curve}, tmp_path / "lc.png", "t").read_bytes()[:8] == PNG
    path = write_roc_csv({"a": roc_curve([True, False], [1.0, 0.0]),
                          "b": roc_curve([True, False], [0.0, 1.0])}, tmp_path / "roc.csv")
    assert path.read_text().splitlines()[1:] == ["a,inf,0.0,0.0", "a,1.0,0.0,1.0",
                                                 "a,0.0,1.0,1.0", "b,inf,0.0,0.0",
                                                 "b,1.0,1.0,0.0", "b,0.0,1.0,1.0"]


# ---- the command line -------------------------------------------------------------------


def _row(out: str, model: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.startswith(f"| {model} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_evaluate_command_with_delay_and_partial_feedback(tmp_path, capsys, spam_stream):
    code = main(["evaluate", "--protocol", "prequential", "--dataset", "spamassassin",
                 "--limit", "400", "--model", "indifferent", "--delay", "10", "--feedback",
                 "0.5", "--seed", "1", "--window", "100", "--no-progress", "--out",
                 str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "delay=10, feedback=0.5, seed=1" in out
    head = [cell.strip() for cell in next(
        line for line in out.splitlines() if line.startswith("| model |")).strip("|").split("|")]
    assert head[:15] == ["model", "accuracy", "log_score", "log_loss", "brier", "auc", "1-ROCA %",
                    "ham misclass. %", "spam misclass. %", "spam miss % @ ham 0.1 %",
                    "spam miss % @ ham 0.5 %", "spam miss % @ ham 1 %", "ham loss % @ spam 1 %",
                    "ham loss % @ spam 3 %", "ham loss % @ spam 5 %"]
    cells = _row(out, "indifferent")
    alone = prequential(IndifferentNB(), spam_stream, positive="spam", delay=10,
                        feedback=0.5, seed=1)
    assert float(cells[1]) == pytest.approx(100 * alone.accuracy(), abs=0.005)
    assert float(cells[3]) == pytest.approx(alone.log_loss(), abs=5e-5)
    assert float(cells[6]) == pytest.approx(alone.one_minus_roca(), abs=5e-5)
    assert float(cells[7]) == pytest.approx(alone.ham_misclassification(), abs=0.005)
    assert float(cells[8]) == pytest.approx(alone.spam_misclassification(), abs=0.005)
    points = list(alone.operating_points().values())[:6]
    assert [float(c) for c in cells[9:15]] == pytest.approx(points, abs=0.005)
    for name in ("roc.csv", "roc.png", "accuracy_curves.png", "learning_curve.png"):
        assert (tmp_path / name).stat().st_size > 0


def test_evaluate_command_prequential_on_a_tabular_set(tmp_path, capsys):
    vote = load("vote")
    assert main(["evaluate", "--protocol", "prequential", "--dataset", "vote", "--model",
                 "indifferent", "--delay", "5", "--no-progress", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    positive = sorted(set(vote.labels))[-1]
    assert f"positive={positive}" in out and "1-ROCA %" in out
    alone = prequential(IndifferentNB(), list(zip(vote.records, vote.labels, strict=True)),
                        positive=positive, delay=5)
    assert float(_row(out, "indifferent")[6]) == pytest.approx(alone.one_minus_roca(),
                                                               abs=5e-5)


def test_evaluate_command_cv_has_no_spam_track_columns(tmp_path, capsys):
    assert main(["evaluate", "--protocol", "cv", "--dataset", "vote", "--folds", "3",
                 "--model", "indifferent", "--no-progress", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1-ROCA" not in out and not (tmp_path / "roc.csv").exists()


@pytest.mark.parametrize(("options", "message"), [
    (["--delay", "-1"], "--delay must be an integer >= 0"),
    (["--feedback", "0"], r"--feedback must be a fraction in \(0, 1\]"),
    (["--feedback", "1.5"], r"--feedback must be a fraction in \(0, 1\]"),
    (["--window", "0"], "--window must be a positive number"),
    (["--protocol", "cv", "--delay", "2"], "--delay applies to --protocol prequential only"),
])
def test_evaluate_command_rejects_bad_feedback_options(options, message, tmp_path, capsys):
    argv = ["evaluate", "--protocol", "prequential", "--dataset", "spamassassin",
            "--no-progress", "--out", str(tmp_path), *options]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not list(tmp_path.iterdir())  # nothing ran
    lines = captured.err.splitlines()
    assert len(lines) == 1 and re.search(message, lines[0]) and "Traceback" not in lines[0]
