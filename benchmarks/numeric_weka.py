"""TAN, AODE and naive Bayes on numeric attributes as they come (docs/attribute-kinds.md) side by
side with Weka's BayesNet-TAN, AODE and NaiveBayes on Weka's supervised (MDL) discretisation.

Same folds and harness as ``weka_comparison.py`` (stratified k-fold, seeds 0..s−1): on each fold
Weka learns the MDL-discretised ARFF files that harness writes (cut points fitted on the training
fold; Weka's own BayesNet and ``NaiveBayes -D`` discretise the same way), and streamnb learns the
fold's raw records — floats and all, given the data set's declared nominal domains, which Weka reads
from the ARFF header — with ``TAN(relearn_every=0)`` (defaults: the Bayesian edge score, Jeffreys'
estimates) and ``AODE()``, each in MDL intervals of its fixed bins chosen at the structure update
after the training fold (``numeric="mdl"``, the default) and in the fixed bins alone
(``numeric="bins"``), ``TAN`` with Friedman's CMI tree and the Indifferent estimates
(``weight="cmi", estimator="indifferent"``) and with Weka's settings (``weight="bayes",
missing="mode", estimator=MEstimate(m=0.5)``, docs/weka.md) in MDL intervals, with ``SelectiveNB``
and ``SelectiveTAN`` in MDL intervals (their defaults; Weka has no learner of their names), and with
``NaiveBayes`` in MDL intervals (``numeric="mdl"``, Weka's ``NaiveBayes -D``), on fixed bins and on
Gaussians. Weka's TAN also runs with the CMI edge score (Weka's ``ENTROPY``) and +1 a cell, as
streamnb's ``TAN(weight="cmi", estimator="indifferent")``. As the batch reference, ``TAN``, ``AODE``
and ``NaiveBayes`` also learn the fold's records discretised by ``MDLDiscretizer`` on its exact cuts
fitted on the training fold (cuts between distinct values, as Weka's). Reported per data set: mean
accuracy ± standard error over the folds, and the always-majority rate of the training folds. The
results file is rewritten after each data set.

Run: ``python benchmarks/numeric_weka.py [--datasets diabetes,Vehicle] [--seeds 1] [--jobs 2]
[--merge]`` (``--jobs``: folds run at the same time, each in a process of its own; ``--merge``:
add the data sets' rows to the results file, replacing their earlier rows).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import partial
from pathlib import Path

import _results
import numpy as np
from weka_comparison import (
    WEKA_AODE,
    WEKA_NAIVE_BAYES,
    WEKA_TAN,
    accuracy,
    fold_files,
    mean_se,
    weka_predictions,
    weka_tan,
)

from streamnb import AODE, TAN, MEstimate, NaiveBayes, SelectiveNB, SelectiveTAN
from streamnb.datasets import load
from streamnb.evaluate import stratified_kfold
from streamnb.features import MDLDiscretizer

# each made with the data set's declared nominal domains (``domains=``, in fold_accuracies), as
# Weka reads them from the ARFF header: a value a training fold lacks still counts in the
# smoothing's #A_i
MODELS = {"streamnb TAN": partial(TAN, relearn_every=0),
          "streamnb TAN (bins)": partial(TAN, relearn_every=0, numeric="bins"),
          # Friedman's tree with the Indifferent estimates
          "streamnb TAN (cmi)": partial(TAN, relearn_every=0, weight="cmi",
                                        estimator="indifferent"),
          "streamnb TAN (Weka's settings)": partial(
              TAN, relearn_every=0, weight="bayes", missing="mode", estimator=MEstimate(m=0.5)),
          "streamnb AODE": AODE,
          "streamnb AODE (bins)": partial(AODE, numeric="bins"),
          "streamnb SelectiveNB": partial(SelectiveNB, relearn_every=0, seed=0),
          "streamnb SelectiveTAN": partial(SelectiveTAN, relearn_every=0, seed=0),
          "streamnb NB (MDL)": partial(NaiveBayes, numeric="mdl", relearn_every=0),
          "streamnb NB (bins)": partial(NaiveBayes, numeric="bins"),
          "streamnb NB (Gaussian)": NaiveBayes}
# learned on the records discretised by MDLDiscretizer's exact cuts of the training fold
EXACT_CUTS = {"streamnb TAN (exact cuts)": partial(TAN, relearn_every=0),
              "streamnb AODE (exact cuts)": AODE,
              "streamnb NB (exact cuts)": NaiveBayes}
WEKA = {"Weka TAN (MDL)": WEKA_TAN, "Weka AODE (MDL)": WEKA_AODE,
        "Weka NaiveBayes (MDL)": WEKA_NAIVE_BAYES,
        # streamnb's TAN (cmi) in Weka: the CMI edge score, +1 a cell
        "Weka TAN (CMI, α=1) (MDL)": weka_tan("ENTROPY", alpha=1.0)}


def fold_accuracies(name: str, train: np.ndarray, test: np.ndarray, directory: Path
                    ) -> dict[str, float]:
    data = load(name)
    train_records, train_labels = [data.records[i] for i in train], [data.labels[i] for i in train]
    test_records, labels = [data.records[i] for i in test], [data.labels[i] for i in test]
    domains = {a: list(data.domains[a]) for a in data.nominal}
    out = {}
    for column, make in MODELS.items():
        model = make(domains=domains)
        model.learn_many(train_records, train_labels)
        model.relearn()  # the structure and the intervals of the whole training fold
        out[column] = accuracy(model.predict_many(test_records), labels)
    cuts = MDLDiscretizer().fit(train_records, train_labels)
    cut_train, cut_test = cuts.transform(train_records), cuts.transform(test_records)
    for column, make in EXACT_CUTS.items():
        model = make(domains=domains)
        model.learn_many(cut_train, train_labels)
        model.relearn()
        out[column] = accuracy(model.predict_many(cut_test), labels)
    _, train_file, test_file = fold_files(data, train, test, directory)
    for column, args in WEKA.items():
        predicted = weka_predictions(args, train_file, test_file, list(data.classes))
        out[column] = accuracy(predicted, labels)
    majority = max(set(train_labels), key=train_labels.count)
    out["majority"] = float(np.mean([y == majority for y in labels]))
    return out


def fold_task(name: str, train: np.ndarray, test: np.ndarray) -> dict[str, float]:
    """One fold in a process of its own, with its own directory for Weka's files."""
    with tempfile.TemporaryDirectory(prefix=f"numeric-{name}-") as tmp:
        return fold_accuracies(name, train, test, Path(tmp))


def dataset_row(name: str, results: Sequence[dict[str, float]], columns: Sequence[str]) -> dict:
    """Mean accuracy and its standard error per column over a data set's folds."""
    row = {"dataset": name}
    for column in columns:
        mean, se = mean_se([r[column] for r in results])
        row[column], row[f"{column} se"] = 100 * mean, 100 * se
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="diabetes,Vehicle")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="folds run at the same time")
    _results.add_arguments(parser, "numeric_weka", merge=True)
    args = parser.parse_args(argv)
    columns = ["majority", *MODELS, *EXACT_CUTS, *WEKA]
    table_columns = [_results.column("dataset")]
    for column in columns:
        table_columns += [_results.column(column, fmt=".1f"),
                          _results.column(f"{column} se", label="±", fmt=".1f")]
    names = args.datasets.split(",")
    splits = {name: [split for seed in range(args.seeds)
                     for split in stratified_kfold(load(name).labels, k=args.folds, seed=seed)]
              for name in names}
    results: dict[str, dict[int, dict[str, float]]] = {name: {} for name in names}
    done: dict[str, dict] = {}
    # every fold of every data set in one pool, the largest data set first, so that the workers
    # stay busy to the end; a data set's row is written when its last fold is in
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(fold_task, name, train, test): (name, index)
                   for name in sorted(names, key=lambda n: -len(splits[n][0][0]))
                   for index, (train, test) in enumerate(splits[name])}
        for future in as_completed(futures):
            name, index = futures[future]
            results[name][index] = future.result()
            if len(results[name]) < len(splits[name]):
                continue
            row = done[name] = dataset_row(
                name, [results[name][i] for i in range(len(splits[name]))], columns)
            print(row["dataset"], " ".join(f"{c}: {row[c]:.1f} ± {row[c + ' se']:.1f}"
                                           for c in columns), flush=True)
            rows = [done[n] for n in names if n in done]
            _results.write_from_args(args, "numeric_weka",
                                     {"accuracy": _results.table(table_columns, rows)},
                                     argv=argv, script=__file__,
                                     notes=f"{args.folds}-fold × {args.seeds} seed(s), accuracy %",
                                     merge_key=("dataset",))
    return 0


if __name__ == "__main__":
    sys.exit(main())
