"""Evaluation protocols for any river classifier: stratified k-fold cross-validation (repeated,
seeded, optionally training on a fraction of each training fold), R random train/test splits of
fixed sizes, a holdout split, and prequential runs, all scored the same way.

Each protocol trains a fresh model per split from a *factory* (a zero-argument callable such
as ``IndifferentNB`` or ``lambda: TAN(weight="ddr")``), optionally discretising numeric
attributes with cut points fitted on the training part only, and scores every test record in
log space: accuracy, LogScore (Σ −log P(true class), Cerquides' metric), log-loss, Brier score,
exact AUC (one-vs-rest for more than two classes), plus learning and prediction time; two-class
prequential runs also get the TREC spam track's 1-ROCA % and ham / spam misclassification %.
Peers (river's own classifiers, scikit-learn models wrapped for river) run through the same
code, so a comparison differs only in the model.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from streamnb.evaluate.metrics import brier_score, log_loss, one_vs_rest_auc
from streamnb.evaluate.prequential import (
    FeedbackRule,
    PrequentialResult,
    check_feedback,
    prequential,
)
from streamnb.evaluate.significance import (
    TTest,
    corrected_resampled_t_test,
    paired_t_test,
    unpaired_t_test,
)
from streamnb.evaluate.splits import holdout, random_splits, stratified_kfold

__all__ = ["METRICS", "SPAM_TRACK_METRICS", "Evaluation", "Score", "compare_prequential",
           "cross_validate", "score_log_proba", "validate_holdout", "validate_random_splits"]

ModelFactory = Callable[[], Any]
#: metric → True when higher is better
#: the TREC spam track's operating points (Score's fields, in %) and the keys of
#: :func:`~streamnb.evaluate.metrics.operating_points` they hold
OPERATING_POINTS = {"miss_at_ham_0_1": "spam miss % at ham loss 0.1 %",
                    "miss_at_ham_0_5": "spam miss % at ham loss 0.5 %",
                    "miss_at_ham_1": "spam miss % at ham loss 1 %",
                    "ham_at_miss_1": "ham loss % at spam miss 1 %",
                    "ham_at_miss_3": "ham loss % at spam miss 3 %",
                    "ham_at_miss_5": "ham loss % at spam miss 5 %"}
METRICS = {"accuracy": True, "log_score": False, "log_loss": False, "brier": False,
           "auc": True, "one_minus_roca": False, "ham_misclassification": False,
           "spam_misclassification": False, **dict.fromkeys(OPERATING_POINTS, False)}
#: the TREC spam track's measures, in % (NaN but for two-class prequential runs)
SPAM_TRACK_METRICS = ("one_minus_roca", "ham_misclassification", "spam_misclassification",
                      *OPERATING_POINTS)
_HEADINGS = {"one_minus_roca": "1-ROCA %", "ham_misclassification": "ham misclass. %",
             "spam_misclassification": "spam misclass. %",
             "miss_at_ham_0_1": "spam miss % @ ham 0.1 %",
             "miss_at_ham_0_5": "spam miss % @ ham 0.5 %", "miss_at_ham_1": "spam miss % @ ham 1 %",
             "ham_at_miss_1": "ham loss % @ spam 1 %", "ham_at_miss_3": "ham loss % @ spam 3 %",
             "ham_at_miss_5": "ham loss % @ spam 5 %"}


def _cell(text: str) -> str:
    """``text`` as a markdown table cell: a ``|`` (a river pipeline's name) escaped."""
    return text.replace("|", "\\|")


@dataclass(frozen=True)
class Score:
    """One model scored on one test set."""

    model: str
    repeat: int
    fold: int
    n_train: int
    n_test: int
    accuracy: float
    log_score: float
    log_loss: float
    brier: float
    auc: float
    learn_seconds: float
    predict_seconds: float
    one_minus_roca: float = math.nan  # 100 · (1 − AUC)
    ham_misclassification: float = math.nan  # % of the other classes called ``positive``
    spam_misclassification: float = math.nan  # % of ``positive`` called another class
    miss_at_ham_0_1: float = math.nan  # the operating points (OPERATING_POINTS), in %
    miss_at_ham_0_5: float = math.nan
    miss_at_ham_1: float = math.nan
    ham_at_miss_1: float = math.nan
    ham_at_miss_3: float = math.nan
    ham_at_miss_5: float = math.nan


@dataclass
class Evaluation:
    """The scores of every model on every split of one protocol run, and what the reports
    plot: per model, the confidence of each prediction and whether it was right (reliability
    diagrams), and for prequential runs the learning curves and each model's
    :class:`PrequentialResult` (every prediction: ROC curves, rolling accuracy)."""

    protocol: str
    dataset: str
    classes: list
    scores: list[Score] = field(default_factory=list)
    confidence: dict[str, list[float]] = field(default_factory=dict)
    correct: dict[str, list[bool]] = field(default_factory=dict)
    curves: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    results: dict[str, PrequentialResult] = field(default_factory=dict)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(s.model for s in self.scores))

    def values(self, model: str, metric: str) -> np.ndarray:
        """``metric`` of ``model`` on each split, in split order."""
        if metric not in METRICS and metric not in ("learn_seconds", "predict_seconds"):
            raise ValueError(f"unknown metric {metric!r}; choose one of {sorted(METRICS)}")
        if model not in self.models:
            raise ValueError(f"unknown model {model!r}; evaluated: {self.models}")
        return np.array([getattr(s, metric) for s in self.scores if s.model == model])

    def summary(self, metric: str) -> dict[str, tuple[float, float]]:
        """model → (mean, standard error of the mean) of ``metric`` over the splits."""
        out = {}
        for model in self.models:
            v = self.values(model, metric)
            spread = len(v) > 1 and np.isfinite(v).all()  # an infinite LogScore has no SE
            se = float(v.std(ddof=1) / math.sqrt(len(v))) if spread else float("nan")
            out[model] = (float(v.mean()), se)
        return out

    def compare(self, a: str, b: str, metric: str = "accuracy", test: str = "paired"
                ) -> TTest:
        """Two-tailed t-test of ``a`` against ``b`` on ``metric`` over the splits:
        ``"paired"``, ``"unpaired"`` (Zhang) or ``"corrected"`` (Nadeau–Bengio, for repeated
        cross-validation and random splits, whose training sets overlap)."""
        x, y = self.values(a, metric), self.values(b, metric)
        if test == "paired":
            return paired_t_test(x, y)
        if test == "unpaired":
            return unpaired_t_test(x, y)
        if test == "corrected":
            first = [s for s in self.scores if s.model == a]
            n_train = float(np.mean([s.n_train for s in first]))
            n_test = float(np.mean([s.n_test for s in first]))
            return corrected_resampled_t_test(x, y, n_train=n_train, n_test=n_test)
        raise ValueError(f"test must be 'paired', 'unpaired' or 'corrected', got {test!r}")

    def to_markdown(self, metrics: Sequence[str] | None = None,
                    baseline: str | None = None, test: str = "paired",
                    alpha: float = 0.05) -> str:
        """A table: one row per model, mean ± standard error of each metric (default:
        accuracy, LogScore, log-loss, Brier, AUC, and the spam track's measures where they
        were computed); with a ``baseline``, each other model's accuracy is marked better (+),
        worse (−) or tied (=) by ``test`` at level ``alpha``."""
        if metrics is None:
            metrics = ["accuracy", "log_score", "log_loss", "brier", "auc"]
            metrics += [m for m in SPAM_TRACK_METRICS
                        if any(np.isfinite(getattr(s, m)) for s in self.scores)]
        head = ["model", *(_HEADINGS.get(m, m) for m in metrics)] \
            + ([f"vs {_cell(baseline)} (accuracy)"] if baseline else [])
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        summaries = {m: self.summary(m) for m in metrics}
        for model in self.models:
            cells = [_cell(model)]
            for m in metrics:
                mean, se = summaries[m][model]
                scale = 100.0 if m == "accuracy" else 1.0
                digits = 2 if m in ("accuracy", "log_score", "ham_misclassification",
                                    "spam_misclassification", *OPERATING_POINTS) else 4
                cells.append(f"{mean * scale:.{digits}f} ± {se * scale:.{digits}f}"
                             if np.isfinite(se) else f"{mean * scale:.{digits}f}")
            if baseline:
                if model == baseline or len(self.values(model, "accuracy")) < 2:
                    cells.append("")
                else:
                    t = self.compare(model, baseline, "accuracy", test)
                    cells.append({"better": "+", "worse": "−", "tie": "="}[t.verdict(alpha)]
                                 + f" (p = {t.p_value:.3g})")
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def to_csv(self, path: str) -> None:
        """Every score, one row per (model, split)."""
        import csv

        names = [f.name for f in fields(Score)]
        with open(path, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["protocol", "dataset", *names])
            for s in self.scores:
                writer.writerow([self.protocol, self.dataset, *(getattr(s, n) for n in names)])


def score_log_proba(log_proba: np.ndarray, truth: np.ndarray,
                    known: np.ndarray | None = None) -> dict[str, float]:
    """The metrics of a test set from its ``(n, k)`` log-probabilities (columns in class
    order) and the true classes' column indices. A predicted class is the argmax; a record
    whose probabilities are all −inf counts as wrong. ``known`` marks the records whose true
    class the model had seen: LogScore and log-loss are taken over those only (no model can
    give probability to a class it has never seen; :class:`PrequentialResult` does the same).
    """
    n = len(truth)
    log_p_true = log_proba[np.arange(n), truth]
    if known is not None:
        log_p_true = log_p_true[known]
    predicted = np.argmax(log_proba, axis=1)
    defined = np.isfinite(log_proba).any(axis=1)
    with np.errstate(divide="ignore"):
        log_score = float(-log_p_true.sum())
    return {"accuracy": float(np.mean((predicted == truth) & defined)) if n else float("nan"),
            "log_score": log_score, "log_loss": log_loss(log_p_true),
            "brier": brier_score(np.exp(log_proba), truth), "auc": one_vs_rest_auc(log_proba,
                                                                                  truth)}


def _log_proba(model: Any, records: list[dict], classes: list, batch: bool
               ) -> tuple[np.ndarray, np.ndarray]:
    """``(n, k)`` log P(c | x) over ``classes`` (a class the model never saw: −inf), and
    per class whether the model knows it."""
    column = {c: i for i, c in enumerate(classes)}
    out = np.full((len(records), len(classes)), -np.inf)
    known = np.zeros(len(classes), dtype=bool)
    if batch and hasattr(model, "predict_log_proba_many"):
        import pandas as pd

        frame = model.predict_log_proba_many(pd.DataFrame(records))
        for c in frame.columns:
            out[:, column[c]] = frame[c].to_numpy()
            known[column[c]] = True
        return out, known
    one = model.predict_log_proba_one if hasattr(model, "predict_log_proba_one") else None
    for r, x in enumerate(records):
        if one is not None:
            logs = one(x)
        else:
            with np.errstate(divide="ignore"):
                logs = {c: math.log(p) if p > 0 else -math.inf
                        for c, p in model.predict_proba_one(x).items()}
        for c, v in logs.items():
            if c in column:
                out[r, column[c]] = v
                known[column[c]] = True
    return out, known


def _learn(model: Any, records: list[dict], labels: list, batch: bool) -> None:
    if batch and hasattr(model, "learn_many"):
        import pandas as pd

        model.learn_many(pd.DataFrame(records), pd.Series(labels))
        return
    for x, y in zip(records, labels, strict=True):
        model.learn_one(x, y)


def _uses_batches(model: Any, batch: str) -> bool:
    if batch not in ("auto", "one", "many"):
        raise ValueError(f"batch must be 'auto', 'one' or 'many', got {batch!r}")
    if batch == "auto":  # streamnb models: *_many gives the same counts, much faster
        return hasattr(model, "predict_log_proba_many") and hasattr(model, "learn_many")
    return batch == "many"


def _evaluate(models: Mapping[str, ModelFactory], records: Sequence[Mapping],
              labels: Sequence[Hashable], splits: Iterable[tuple[int, int, Any, Any]],
              protocol: str, dataset: str, discretizer: ModelFactory | None, batch: str,
              progress: bool, total: int, settings: dict[str, Any]) -> Evaluation:
    if not models:
        raise ValueError("models is empty: give at least one name → factory")
    if len(records) != len(labels):
        raise ValueError(f"{len(records)} records but {len(labels)} labels")
    classes = sorted(set(labels), key=str)
    column = {c: i for i, c in enumerate(classes)}
    codes = np.array([column[y] for y in labels], dtype=np.intp)
    evaluation = Evaluation(protocol=protocol, dataset=dataset, classes=classes,
                            settings=settings)
    bar = _bar(total * len(models), f"{protocol} {dataset}".strip(), progress)
    for repeat, fold, train, test in splits:
        train_x = [dict(records[i]) for i in train]
        test_x = [dict(records[i]) for i in test]
        train_y = [labels[i] for i in train]
        if discretizer is not None:  # cut points from the training part only
            d = discretizer()
            d.fit(train_x, train_y)
            train_x, test_x = d.transform(train_x), d.transform(test_x)
        for name, factory in models.items():
            model = factory()
            many = _uses_batches(model, batch)
            start = time.perf_counter()
            _learn(model, train_x, train_y, many)
            learned = time.perf_counter()
            logs, known = _log_proba(model, test_x, classes, many)
            predicted = time.perf_counter()
            metrics = score_log_proba(logs, codes[test], known[codes[test]])
            evaluation.scores.append(Score(
                model=name, repeat=repeat, fold=fold, n_train=len(train), n_test=len(test),
                learn_seconds=learned - start, predict_seconds=predicted - learned, **metrics))
            top = np.argmax(logs, axis=1)
            evaluation.confidence.setdefault(name, []).extend(
                np.exp(logs[np.arange(len(top)), top]).tolist())
            evaluation.correct.setdefault(name, []).extend((top == codes[test]).tolist())
            bar(1)
    bar(None)
    return evaluation


def _bar(total: int, desc: str, enabled: bool) -> Callable[[int | None], None]:
    """A tqdm progress bar when asked for and installed (the ``progress`` extra)."""
    if enabled:
        try:
            from tqdm import tqdm
        except ImportError:
            enabled = False
    if not enabled:
        return lambda step: None
    bar = tqdm(total=total, desc=desc, unit="fit")

    def step(n: int | None) -> None:
        if n is None:
            bar.close()
        else:
            bar.update(n)

    return step


def cross_validate(models: Mapping[str, ModelFactory], records: Sequence[Mapping],
                   labels: Sequence[Hashable], k: int = 10, repeats: int = 1, seed: int = 0,
                   train_fraction: float = 1.0, discretizer: ModelFactory | None = None,
                   batch: str = "auto", dataset: str = "", progress: bool = False
                   ) -> Evaluation:
    """Stratified k-fold cross-validation, ``repeats`` times, every model on the same folds.

    Parameters
    ----------
    models
        Name → factory of a fresh river classifier.
    records, labels
        The data set (``{attribute: value}`` records, missing values as None).
    k, repeats, seed
        Folds per repeat, repeats, and the seed of the fold assignment
        (:func:`~streamnb.evaluate.splits.stratified_kfold`).
    train_fraction
        Train on this stratified fraction of each training fold (Cerquides' 10%: 0.1) and
        test on the whole test fold.
    discretizer
        Factory of a discretiser with ``fit(records, labels)`` / ``transform(records)`` (e.g.
        :class:`~streamnb.features.MDLDiscretizer`), fitted on each training part only.
    batch
        ``"auto"`` (``learn_many``/``predict_log_proba_many`` where the model has them: the
        same counts as one by one, faster), ``"one"`` or ``"many"``.

    Examples
    --------
    >>> from streamnb import IndifferentNB, NaiveBayes
    >>> from streamnb.datasets import load
    >>> vote = load("vote")
    >>> result = cross_validate({"indifferent": IndifferentNB,
    ...                          "ml": lambda: NaiveBayes(estimator="ml")},
    ...                         vote.records, vote.labels, k=5, seed=1, dataset="vote")
    >>> sorted(result.summary("accuracy"))
    ['indifferent', 'ml']
    >>> len(result.values("ml", "accuracy"))
    5

    """
    if not 0 < train_fraction <= 1:
        raise ValueError(f"train_fraction must be in (0, 1], got {train_fraction!r}")
    folds = stratified_kfold(labels, k=k, seed=seed, repeats=repeats)

    def splits():
        for n, (train, test) in enumerate(folds):
            if train_fraction < 1:
                train, _ = holdout(train, train_fraction, labels=labels, seed=seed * 1000 + n)
            yield n // k, n % k, train, test

    return _evaluate(models, records, labels, splits(), "cv", dataset, discretizer, batch,
                     progress, len(folds), {"k": k, "repeats": repeats, "seed": seed,
                                            "train_fraction": train_fraction})


def validate_random_splits(models: Mapping[str, ModelFactory], records: Sequence[Mapping],
                           labels: Sequence[Hashable], train_size: int,
                           test_size: int | None = None, repeats: int = 30, seed: int = 0,
                           discretizer: ModelFactory | None = None, batch: str = "auto",
                           dataset: str = "", progress: bool = False) -> Evaluation:
    """``repeats`` random stratified splits of fixed sizes (Singh & Provan's protocol), every
    model on the same splits; compare with :meth:`Evaluation.compare` (``"paired"``)."""
    parts = random_splits(labels, train_size, test_size, repeats=repeats, seed=seed)
    splits = ((r, 0, train, test) for r, (train, test) in enumerate(parts))
    return _evaluate(models, records, labels, splits, "splits", dataset, discretizer, batch,
                     progress, len(parts), {"train_size": train_size, "test_size": test_size,
                                            "repeats": repeats, "seed": seed})


def validate_holdout(models: Mapping[str, ModelFactory], records: Sequence[Mapping],
                     labels: Sequence[Hashable], test_fraction: float = 0.3, seed: int = 0,
                     discretizer: ModelFactory | None = None, batch: str = "auto",
                     dataset: str = "", progress: bool = False) -> Evaluation:
    """One stratified random split: train on ``1 − test_fraction`` of the records, test on
    the rest."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    test, train = holdout(np.arange(len(labels)), test_fraction, labels=labels, seed=seed)
    return _evaluate(models, records, labels, [(0, 0, train, test)], "holdout", dataset,
                     discretizer, batch, progress, 1,
                     {"test_fraction": test_fraction, "seed": seed})


def compare_prequential(models: Mapping[str, ModelFactory],
                        stream: Sequence[tuple[Any, Hashable]], positive: Hashable | None = None,
                        every: int = 100, dataset: str = "", progress: bool = False,
                        delay: int = 0, feedback: float | FeedbackRule | None = None,
                        seed: int = 0) -> Evaluation:
    """Every model predicts each record, then learns it, in stream order; one score per model
    over the whole stream, and its learning curve. ``positive`` (default: the last class) is
    the class scored by AUC; with two classes the scores also hold the TREC spam track's
    1-ROCA % and ham / spam misclassification % at each model's decision. ``delay``,
    ``feedback`` and ``seed`` are :func:`~streamnb.evaluate.prequential.prequential`'s
    feedback modes (the same labels are learned by every model)."""
    check_feedback(delay, feedback)
    classes = sorted({y for _, y in stream}, key=str)
    if positive is None and classes:
        positive = classes[-1]
    evaluation = Evaluation(protocol="prequential", dataset=dataset, classes=classes,
                            settings={"every": every, "positive": positive, "delay": delay,
                                      "feedback": 1.0 if feedback is None else feedback,
                                      "seed": seed})
    column = {c: i for i, c in enumerate(classes)}
    truth = np.array([column[y] for _, y in stream], dtype=np.intp)
    bar = _bar(len(stream) * len(models), f"prequential {dataset}".strip(), progress)
    for name, factory in models.items():
        logs = np.full((len(stream), len(classes)), -np.inf)
        model = factory()
        original = model.predict_log_proba_one if hasattr(model, "predict_log_proba_one") \
            else None
        start = time.perf_counter()
        result = prequential(_Recording(model, logs, column, original), stream,
                             positive=positive, every=every, progress=lambda i: bar(1),
                             delay=delay, feedback=feedback, seed=seed)
        seconds = time.perf_counter() - start
        evaluation.curves[name] = result.curve
        evaluation.results[name] = result
        metrics = score_log_proba(logs, truth, np.array(result.known, dtype=bool))
        if len(classes) == 2:  # before both classes were seen the score is 0, not ±inf
            metrics["auc"] = result.auc()
            metrics["one_minus_roca"] = result.one_minus_roca()
            metrics["ham_misclassification"], metrics["spam_misclassification"] = \
                result.misclassification()
            points = result.operating_points()
            metrics.update((k, points[key]) for k, key in OPERATING_POINTS.items())
        evaluation.scores.append(Score(model=name, repeat=0, fold=0, n_train=len(stream),
                                       n_test=len(stream), learn_seconds=seconds,
                                       predict_seconds=0.0, **metrics))
        top = np.argmax(logs, axis=1)
        evaluation.confidence[name] = np.exp(logs[np.arange(len(top)), top]).tolist()
        evaluation.correct[name] = (top == truth).tolist()
    bar(None)
    return evaluation


class _Recording:
    """A model seen through :func:`prequential`, keeping each prediction's log-probabilities
    (row ``i`` for the i-th record) for the common scoring."""

    def __init__(self, model: Any, logs: np.ndarray, column: dict, one: Any) -> None:
        self.model, self.logs, self.column, self.one, self.row = model, logs, column, one, 0

    def predict_log_proba_one(self, x: Any) -> dict:
        if self.one is not None:
            logs = self.one(x)
        else:
            logs = {c: math.log(p) if p > 0 else -math.inf
                    for c, p in self.model.predict_proba_one(x).items()}
        for c, v in logs.items():
            if c in self.column:
                self.logs[self.row, self.column[c]] = v
        self.row += 1
        return logs

    def learn_one(self, x: Any, y: Hashable) -> None:
        self.model.learn_one(x, y)
