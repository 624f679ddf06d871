"""The evaluation harness: metrics and t-tests against scikit-learn / scipy / hand values,
protocols on real UCI data (Debian weka ARFFs) and the SpamAssassin stream."""

from __future__ import annotations

import math

import numpy as np
import pytest
from river import compose, naive_bayes, preprocessing
from scipy import stats
from sklearn import metrics as skm

from streamnb import IndifferentNB, NaiveBayes
from streamnb.datasets import iter_spamassassin_stream, load
from streamnb.evaluate import (
    brier_score,
    compare_prequential,
    corrected_resampled_t_test,
    cross_validate,
    log_loss,
    one_vs_rest_auc,
    paired_t_test,
    prequential,
    score_log_proba,
    stratified_kfold,
    unpaired_t_test,
    validate_holdout,
    validate_random_splits,
)
from streamnb.evaluate.report import reliability_curve, write_report
from streamnb.features import MDLDiscretizer, tokenize_email

RNG = np.random.default_rng(7)
PROBA = RNG.dirichlet(np.ones(3), size=40)
TRUTH = RNG.integers(0, 3, size=40)


def test_log_loss_and_brier_match_scikit_learn():
    logs = np.log(PROBA)
    assert log_loss(logs[np.arange(40), TRUTH]) == pytest.approx(
        skm.log_loss(TRUTH, PROBA, labels=[0, 1, 2]), rel=1e-12)
    # scikit-learn's binary Brier is the mean squared error of the positive class only: the
    # multi-class sum over both classes is twice it
    binary = PROBA[:, :2] / PROBA[:, :2].sum(axis=1, keepdims=True)
    y = TRUTH % 2
    assert brier_score(binary, y) == pytest.approx(
        2 * skm.brier_score_loss(y, binary[:, 1]), rel=1e-12)


def test_auc_matches_scikit_learn_one_vs_rest():
    logs = np.log(PROBA)
    assert one_vs_rest_auc(logs, TRUTH) == pytest.approx(
        skm.roc_auc_score(TRUTH, PROBA, multi_class="ovr", average="macro"), rel=1e-12)
    binary = np.log(PROBA[:, :2] / PROBA[:, :2].sum(axis=1, keepdims=True))
    assert one_vs_rest_auc(binary, TRUTH % 2) == pytest.approx(
        skm.roc_auc_score(TRUTH % 2, np.exp(binary[:, 1])), rel=1e-12)


def test_score_log_proba_hand_values():
    logs = np.log(np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]]))
    scores = score_log_proba(logs, np.array([0, 1, 1]))
    assert scores["accuracy"] == pytest.approx(2 / 3)  # ties go to the first class
    assert scores["log_score"] == pytest.approx(-math.log(0.5) - math.log(0.1) - math.log(0.8))
    assert scores["brier"] == pytest.approx((0.5 + 2 * 0.81 + 2 * 0.04) / 3)


A = [0.90, 0.85, 0.88, 0.92, 0.81, 0.86]
B = [0.86, 0.84, 0.85, 0.87, 0.83, 0.80]


def test_t_tests_match_scipy_and_the_corrected_formula():
    paired = paired_t_test(A, B)
    assert (paired.statistic, paired.p_value) == pytest.approx(tuple(stats.ttest_rel(A, B)))
    unpaired = unpaired_t_test(A, B)
    assert (unpaired.statistic, unpaired.p_value) == pytest.approx(tuple(stats.ttest_ind(A, B)))
    welch = unpaired_t_test(A, B, equal_var=False)
    assert welch.p_value == pytest.approx(stats.ttest_ind(A, B, equal_var=False).pvalue)
    d = np.subtract(A, B)
    t = d.mean() / math.sqrt((1 / 6 + 10 / 90) * d.var(ddof=1))  # Nadeau & Bengio
    corrected = corrected_resampled_t_test(A, B, n_train=90, n_test=10)
    assert corrected.statistic == pytest.approx(t)
    assert corrected.p_value == pytest.approx(2 * stats.t.sf(abs(t), 5))
    assert corrected.p_value > paired.p_value  # the correction widens the variance


def test_t_tests_on_identical_scores_and_bad_input():
    assert paired_t_test(A, A).p_value == 1.0
    assert unpaired_t_test([0.5, 0.5], [0.5, 0.5]).verdict() == "tie"
    with pytest.raises(ValueError, match="equal lengths"):
        paired_t_test(A, B[:-1])
    with pytest.raises(ValueError, match="finite"):
        paired_t_test([1.0, math.inf], [0.0, 0.0])


def test_cross_validation_scores_each_fold_like_fitting_by_hand():
    vote = load("vote")
    result = cross_validate({"indifferent": IndifferentNB}, vote.records, vote.labels,
                            k=5, repeats=2, seed=3, dataset="vote")
    folds = stratified_kfold(vote.labels, k=5, seed=3, repeats=2)
    assert len(result.scores) == 10
    classes = sorted(set(vote.labels))
    for score, (train, test) in zip(result.scores, folds, strict=True):
        model = IndifferentNB()
        for i in train:
            model.learn_one(vote.records[i], vote.labels[i])
        right = sum(model.predict_one(vote.records[i]) == vote.labels[i] for i in test)
        assert score.accuracy == pytest.approx(right / len(test))
        logs = [model.predict_log_proba_one(vote.records[i]) for i in test]
        assert score.log_score == pytest.approx(
            -sum(lp[vote.labels[i]] for lp, i in zip(logs, test, strict=True)))
        assert (score.n_train, score.n_test) == (len(train), len(test))
    assert sorted(result.classes) == classes
    mean, se = result.summary("accuracy")["indifferent"]
    values = result.values("indifferent", "accuracy")
    assert (mean, se) == pytest.approx((values.mean(), values.std(ddof=1) / math.sqrt(10)))


def test_batch_and_one_by_one_give_the_same_scores_and_training_fraction():
    vote = load("vote")
    models = {"ml": lambda: NaiveBayes(estimator="ml")}
    many = cross_validate(models, vote.records, vote.labels, k=3, seed=1, batch="many",
                          train_fraction=0.1)
    one = cross_validate(models, vote.records, vote.labels, k=3, seed=1, batch="one",
                         train_fraction=0.1)
    for a, b in zip(many.scores, one.scores, strict=True):
        assert a.accuracy == b.accuracy
        assert a.log_loss == pytest.approx(b.log_loss, rel=1e-9)
        assert a.n_train == round(0.1 * (vote.n_rows - a.n_test))


def test_discretiser_is_fitted_on_the_training_part_only():
    diabetes = load("diabetes")
    fitted = []

    def discretizer():
        d = MDLDiscretizer()
        fitted.append(d)
        return d

    result = cross_validate({"nb": IndifferentNB}, diabetes.records, diabetes.labels, k=3,
                            seed=2, discretizer=discretizer)
    folds = stratified_kfold(diabetes.labels, k=3, seed=2)
    for d, (train, _) in zip(fitted, folds, strict=True):
        alone = MDLDiscretizer().fit([diabetes.records[i] for i in train],
                                     [diabetes.labels[i] for i in train])
        assert d.cuts == alone.cuts
    whole = MDLDiscretizer().fit(diabetes.records, diabetes.labels)
    assert any(d.cuts != whole.cuts for d in fitted)  # a leak would give the whole-data cuts
    assert result.summary("accuracy")["nb"][0] > 0.7


def test_random_splits_holdout_and_a_river_peer():
    vote = load("vote")
    peer = {"river BernoulliNB": lambda: compose.Pipeline(preprocessing.OneHotEncoder(),
                                                          naive_bayes.BernoulliNB()),
            "indifferent": IndifferentNB}
    splits = validate_random_splits(peer, vote.records, vote.labels, train_size=200,
                                    test_size=100, repeats=3, seed=0)
    assert [(s.n_train, s.n_test) for s in splits.scores] == [(200, 100)] * 6
    assert splits.summary("accuracy")["river BernoulliNB"][0] > 0.8
    t = splits.compare("indifferent", "river BernoulliNB", test="paired")
    assert 0.0 <= t.p_value <= 1.0
    held = validate_holdout({"indifferent": IndifferentNB}, vote.records, vote.labels,
                            test_fraction=0.3)
    assert held.scores[0].n_test == round(0.3 * vote.n_rows)
    assert held.scores[0].n_train + held.scores[0].n_test == vote.n_rows


def test_prequential_comparison_equals_the_prequential_run(tmp_path):
    messages = list(iter_spamassassin_stream())[:300]
    stream = [({t: True for t in tokenize_email(m.text)}, m.label) for m in messages]
    result = compare_prequential({"indifferent": IndifferentNB}, stream, positive="spam",
                                 every=50, dataset="spamassassin")
    alone = prequential(IndifferentNB(), stream, positive="spam", every=50)
    score = result.scores[0]
    assert score.accuracy == pytest.approx(alone.accuracy())
    assert score.log_score == pytest.approx(alone.log_score(), rel=1e-9)
    assert score.auc == pytest.approx(alone.auc(), rel=1e-9)
    assert result.curves["indifferent"] == alone.curve
    written = write_report(result, tmp_path)
    assert {"summary", "scores", "reliability", "learning_curve"} <= set(written)
    assert "| indifferent |" in written["summary"].read_text()
    assert written["scores"].read_text().count("\n") == 2


def test_report_marks_significant_differences(tmp_path):
    vote = load("vote")
    result = cross_validate({"indifferent": IndifferentNB,
                             "ml": lambda: NaiveBayes(estimator="ml")},
                            vote.records, vote.labels, k=10, seed=0)
    table = result.to_markdown(baseline="indifferent")
    row = next(line for line in table.splitlines() if line.startswith("| ml |"))
    t = result.compare("ml", "indifferent")
    assert f"(p = {t.p_value:.3g})" in row
    conf, acc, n = reliability_curve(result.confidence["ml"], result.correct["ml"])
    assert n.sum() == vote.n_rows and ((acc >= 0) & (acc <= 1)).all()
    assert ((conf >= 0.5) & (conf <= 1)).all()  # two classes: the top one has p >= 1/2


def test_evaluate_command_writes_the_report(tmp_path, capsys):
    from streamnb.cli import main

    code = main(["evaluate", "--dataset", "diabetes", "--protocol", "cv", "--folds", "3",
                 "--discretize", "mdl", "--model", "indifferent", "--model", "tan",
                 "--model", "river:preprocessing.OneHotEncoder|naive_bayes.BernoulliNB",
                 "--no-progress",
                 "--out", str(tmp_path)])
    assert code == 0
    out = capsys.readouterr().out
    assert "| tan |" in out and "naive_bayes.BernoulliNB |" in out
    assert (tmp_path / "scores.csv").read_text().count("\n") == 1 + 3 * 3
    assert (tmp_path / "reliability.png").stat().st_size > 0


def test_model_names_are_checked():
    from streamnb.cli_evaluate import model_factory

    with pytest.raises(ValueError, match="unknown model 'nb'"):
        model_factory("nb")
    with pytest.raises(ValueError, match="no river class"):
        model_factory("river:naive_bayes.NoSuchNB")
    assert model_factory("river:preprocessing.OneHotEncoder|naive_bayes.BernoulliNB")()


def test_reliability_curve_equals_a_binning_by_hand():
    """Each prediction goes to bin ⌊confidence · bins⌋ (1.0 to the last bin); per non-empty bin
    the mean confidence, the share correct and the count, computed here with plain loops."""
    rng = np.random.default_rng(7)
    confidence = np.concatenate([rng.uniform(0.0, 1.0, 500), [0.0, 0.1, 0.5, 1.0, 0.9999]])
    correct = rng.uniform(size=len(confidence)) < confidence
    for bins in (1, 4, 10):
        groups: dict[int, list[int]] = {}
        for i, c in enumerate(confidence.tolist()):
            groups.setdefault(min(int(c * bins), bins - 1), []).append(i)
        want = [(sum(confidence[i] for i in g) / len(g), sum(correct[i] for i in g) / len(g),
                 len(g)) for _, g in sorted(groups.items())]
        conf, acc, n = reliability_curve(confidence, correct, bins=bins)
        assert n.tolist() == [w[2] for w in want]
        np.testing.assert_allclose(conf, [w[0] for w in want], rtol=1e-12)
        np.testing.assert_allclose(acc, [w[1] for w in want], rtol=1e-12)
