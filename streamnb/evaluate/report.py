"""Reports of an :class:`~streamnb.evaluate.protocols.Evaluation`: a markdown summary, the
scores as CSV, and PNG plots (learning curves of prequential runs, reliability diagrams); for
prequential runs also the ROC curves (CSV and PNG) and the rolling and cumulative accuracy
curves in one figure. Plots need the ``plots`` extra (matplotlib)."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from streamnb.evaluate.protocols import Evaluation

__all__ = ["plot_accuracy_curves", "plot_learning_curves", "plot_reliability", "plot_roc",
           "reliability_curve", "write_report", "write_roc_csv"]

#: name → ``(fpr, tpr, thresholds)``, as :func:`~streamnb.evaluate.metrics.roc_curve` returns
RocCurves = Mapping[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
Curve = list[tuple[int, float]]


def reliability_curve(confidence: Sequence[float], correct: Sequence[bool], bins: int = 10
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-label calibration: the predictions binned by their confidence (the probability of
    the predicted class) into ``bins`` equal-width bins of [0, 1]; per non-empty bin the mean
    confidence, the accuracy and the number of predictions. A calibrated model's points lie
    on the diagonal.

    Examples
    --------
    >>> conf, acc, n = reliability_curve([0.95, 0.9, 0.6, 0.55], [True, True, False, True],
    ...                                  bins=4)
    >>> conf.tolist(), acc.tolist(), n.tolist()
    ([0.575, 0.925], [0.5, 1.0], [2, 2])

    """
    c = np.asarray(confidence, dtype=np.float64)
    ok = np.asarray(correct, dtype=np.float64)
    which = np.minimum((c * bins).astype(np.int64), bins - 1)
    n = np.bincount(which, minlength=bins)
    keep = n > 0
    mean_confidence = np.bincount(which, weights=c, minlength=bins)[keep] / n[keep]
    accuracy = np.bincount(which, weights=ok, minlength=bins)[keep] / n[keep]
    return mean_confidence, accuracy, n[keep]


def _figure(path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    return plt


def _finish(plt, fig, ax, path: Path, title: str, legend: str, small: bool = False) -> Path:
    """Grid, legend, title; write ``path`` and close the figure (every plot ends so)."""
    ax.grid(alpha=0.3)
    ax.legend(loc=legend, fontsize="small" if small else None)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_reliability(evaluation: Evaluation, path: str | Path, bins: int = 10) -> Path:
    """One reliability diagram with a line per model."""
    path = Path(path)
    plt = _figure(path)
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="calibrated")
    for model in evaluation.models:
        conf, acc, _ = reliability_curve(evaluation.confidence[model],
                                         evaluation.correct[model], bins)
        ax.plot(conf, acc, marker="o", linewidth=1.2, label=model)
    ax.set_xlabel("confidence (probability of the predicted class)")
    ax.set_ylabel("accuracy")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    return _finish(plt, fig, ax, path,
                   f"Reliability: {evaluation.dataset} ({evaluation.protocol})", "upper left",
                   small=True)


def plot_learning_curves(curves: dict[str, list[tuple[int, float]]], path: str | Path,
                         title: str, xlabel: str = "records seen (stream order)") -> Path:
    """Prequential accuracy so far against records seen, a line per model."""
    path = Path(path)
    plt = _figure(path)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    low = 1.0
    for name, curve in curves.items():
        xs, ys = zip(*curve, strict=True)
        ax.plot(xs, ys, label=name, linewidth=1.4)
        low = min(low, min(ys[len(ys) // 10:] or ys))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("prequential accuracy")
    ax.set_ylim(max(0.0, low - 0.05), 1.0)
    return _finish(plt, fig, ax, path, title, "lower right")


def write_roc_csv(curves: RocCurves, path: str | Path) -> Path:
    """The ROC curves as CSV, one row per point: ``model, threshold, fpr, tpr`` (threshold
    decreasing from ``inf``, the point that calls nothing positive).

    Examples
    --------
    >>> import tempfile
    >>> from streamnb.evaluate.metrics import roc_curve
    >>> path = Path(tempfile.mkdtemp()) / "roc.csv"
    >>> _ = write_roc_csv({"nb": roc_curve([True, False], [0.5, -0.5])}, path)
    >>> print(path.read_text(), end="")
    model,threshold,fpr,tpr
    nb,inf,0.0,0.0
    nb,0.5,0.0,1.0
    nb,-0.5,1.0,1.0

    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["model", "threshold", "fpr", "tpr"])
        for name, (fpr, tpr, thresholds) in curves.items():
            for f, t, th in zip(fpr, tpr, thresholds, strict=True):
                writer.writerow([name, repr(float(th)), repr(float(f)), repr(float(t))])
    return path


def plot_roc(curves: RocCurves, path: str | Path, title: str) -> Path:
    """ROC curves, a line per model: true-positive rate (spam called spam) against
    false-positive rate (ham called spam)."""
    path = Path(path)
    plt = _figure(path)
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1, label="chance")
    for name, (fpr, tpr, _) in curves.items():
        ax.plot(fpr, tpr, linewidth=1.4, label=name)
    ax.set_xlabel("false-positive rate (ham called spam)")
    ax.set_ylabel("true-positive rate (spam called spam)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    return _finish(plt, fig, ax, path, title, "lower right", small=True)


def plot_accuracy_curves(cumulative: Mapping[str, Curve], rolling: Mapping[str, Curve],
                         path: str | Path, title: str, window: int,
                         xlabel: str = "records seen (stream order)") -> Path:
    """One figure with, per model, the cumulative prequential accuracy (solid) and the
    accuracy over the last ``window`` records (dashed, same colour)."""
    path = Path(path)
    plt = _figure(path)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    low = 1.0
    for n, name in enumerate(dict.fromkeys([*cumulative, *rolling])):
        colour = f"C{n % 10}"
        for curve, style, label in ((cumulative.get(name), "-", "cumulative"),
                                    (rolling.get(name), "--", f"last {window}")):
            if not curve:
                continue
            xs, ys = zip(*curve, strict=True)
            ax.plot(xs, ys, color=colour, linestyle=style, linewidth=1.3,
                    label=f"{name}, {label}")
            low = min(low, min(ys[len(ys) // 10:] or ys))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("prequential accuracy")
    ax.set_ylim(max(0.0, low - 0.05), 1.0)
    return _finish(plt, fig, ax, path, title, "lower right", small=True)


def write_report(evaluation: Evaluation, directory: str | Path, baseline: str | None = None,
                 test: str = "paired", plots: bool = True, window: int = 500
                 ) -> dict[str, Path]:
    """``summary.md`` (the markdown table, with t-tests against ``baseline``), ``scores.csv``
    (every split), for two-class prequential runs ``roc.csv`` and, with matplotlib,
    ``reliability.png`` and for prequential runs ``learning_curve.png``,
    ``accuracy_curves.png`` (cumulative and over the last ``window`` records) and (two
    classes) ``roc.png``. Returns what was written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = {}
    settings = ", ".join(f"{k}={v}" for k, v in evaluation.settings.items())
    summary = directory / "summary.md"
    summary.write_text(f"# {evaluation.dataset}: {evaluation.protocol} ({settings})\n\n"
                       + evaluation.to_markdown(baseline=baseline, test=test) + "\n")
    written["summary"] = summary
    scores = directory / "scores.csv"
    evaluation.to_csv(str(scores))
    written["scores"] = scores
    rocs = {name: result.roc_curve() for name, result in evaluation.results.items()} \
        if len(evaluation.classes) == 2 else {}
    if rocs:
        written["roc_csv"] = write_roc_csv(rocs, directory / "roc.csv")
    if plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return written
        written["reliability"] = plot_reliability(evaluation, directory / "reliability.png")
        if evaluation.curves:
            written["learning_curve"] = plot_learning_curves(
                evaluation.curves, directory / "learning_curve.png",
                f"{evaluation.dataset}: prequential accuracy")
        if evaluation.results:
            written["accuracy_curves"] = plot_accuracy_curves(
                evaluation.curves,
                {name: r.rolling_curve(window) for name, r in evaluation.results.items()},
                directory / "accuracy_curves.png",
                f"{evaluation.dataset}: prequential accuracy, cumulative and rolling", window)
        if rocs:
            positive = evaluation.settings.get("positive")
            written["roc"] = plot_roc(rocs, directory / "roc.png",
                                      f"{evaluation.dataset}: ROC ({positive!s} positive)")
    return written
