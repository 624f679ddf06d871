"""streamnb's continuous models side by side with scikit-learn (docs/continuous.md).

Pairs (the shrinkages correspond as stated):

- ``LDA()`` vs ``LinearDiscriminantAnalysis(solver="lsqr")``: same model (ML pooled covariance).
- ``LDA(shrinkage=0.1)`` vs ``solver="lsqr", shrinkage=0.1``: same model ((1−α)Σ + α tr Σ/p I,
  which is linear, so shrinking the pooled matrix equals sklearn's prior-weighted shrunk classes).
- ``LDA(shrinkage="ledoit-wolf")`` vs ``shrinkage="auto"``: *different* estimators (ours: LW
  towards tr/p·I on the class-centred records; sklearn: LW per class on standardised data).
- ``QDA(shrinkage=0.1)`` vs ``QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=0.1)``:
  same model. (Unregularised QDA is skipped: sklearn refuses the rank-deficient classes of
  glass, ionosphere, optdigits.)
- ``QDA(shrinkage="ledoit-wolf")`` vs ``solver="eigen", shrinkage="auto"``: different, as above.
- ``NaiveBayes()`` (Gaussian on floats) and ``KernelNB()`` vs ``GaussianNB()``.

Protocol: streamnb.evaluate.stratified_kfold, 10 folds × 5 seeds (0–4), every model trained
with its batch method (``learn_many`` / ``fit``) on the training fold and scored with
``predict_proba_many`` / ``predict_proba`` on the test fold. Accuracy: mean ± standard error
over the 50 folds. Throughput: records per second of learning and of predicting, summed over
folds; the ratio is streamnb / scikit-learn (> 1: streamnb faster).

Run: ``python benchmarks/continuous_vs_sklearn.py [--datasets iris,wdbc] [--seeds 5]``; it writes
``benchmarks/results/continuous_vs_sklearn.json`` (``--results``, ``--no-results``), the table of
docs/continuous.md.
"""

from __future__ import annotations

import argparse
import math
import time

import _results  # benchmarks/_results.py
import numpy as np
import pandas as pd
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.naive_bayes import GaussianNB

from streamnb import LDA, QDA, KernelNB, NaiveBayes
from streamnb.datasets import load
from streamnb.evaluate import stratified_kfold

DATASETS = ("iris", "wine", "wdbc", "diabetes", "glass", "ionosphere", "segment",
            "optdigits-test")

PAIRS = {
    "LDA": (LDA, lambda: LinearDiscriminantAnalysis(solver="lsqr")),
    "LDA α=0.1": (lambda: LDA(shrinkage=0.1),
                  lambda: LinearDiscriminantAnalysis(solver="lsqr", shrinkage=0.1)),
    "LDA LW / auto": (lambda: LDA(shrinkage="ledoit-wolf"),
                      lambda: LinearDiscriminantAnalysis(solver="lsqr", shrinkage="auto")),
    "QDA α=0.1": (lambda: QDA(shrinkage=0.1),
                  lambda: QuadraticDiscriminantAnalysis(solver="eigen", shrinkage=0.1)),
    "QDA LW / auto": (lambda: QDA(shrinkage="ledoit-wolf"),
                      lambda: QuadraticDiscriminantAnalysis(solver="eigen", shrinkage="auto")),
    "Gaussian NB": (lambda: NaiveBayes(), GaussianNB),
    "KernelNB / GaussianNB": (KernelNB, GaussianNB),
}


COLUMNS = [_results.column("dataset"), _results.column("pair"),
           _results.column("streamnb", "streamnb accuracy %", ".2f"),
           _results.column("streamnb se", "±", ".2f"),
           _results.column("sklearn", "scikit-learn accuracy %", ".2f"),
           _results.column("sklearn se", "±", ".2f"),
           _results.column("refused", "folds scikit-learn refused"),
           _results.column("learn ratio", fmt=".2f"), _results.column("predict ratio", fmt=".2f"),
           _results.column("learn rate", "streamnb learn rec/s", ",.0f"),
           _results.column("predict rate", "streamnb predict rec/s", ",.0f")]


def run(name: str, seeds: int = 5, folds: int = 10) -> list[dict]:
    data = load(name)
    if data.nominal:
        raise SystemExit(f"{name} has nominal attributes")
    x = np.array([[np.nan if r[a] is None else float(r[a]) for a in data.numeric]
                  for r in data.records])
    labels = np.array(data.labels, dtype=object)
    frame = pd.DataFrame(x, columns=list(data.numeric))
    rows = []
    for pair, (ours, theirs) in PAIRS.items():
        acc = {"streamnb": [], "sklearn": []}
        secs = {(w, s): 0.0 for w in ("streamnb", "sklearn") for s in ("learn", "predict")}
        n_learn = n_predict = failed = 0
        for train, test in stratified_kfold(data.labels, k=folds, seed=0, repeats=seeds):
            n_learn += len(train)
            n_predict += len(test)
            model = ours()
            t = time.perf_counter()
            model.learn_many(frame.iloc[train], labels[train])
            secs["streamnb", "learn"] += time.perf_counter() - t
            t = time.perf_counter()
            proba = model.predict_proba_many(frame.iloc[test])
            secs["streamnb", "predict"] += time.perf_counter() - t
            guess = np.asarray(proba.columns, dtype=object)[proba.to_numpy().argmax(axis=1)]
            acc["streamnb"].append(float((guess == labels[test]).mean()))
            reference = theirs()
            t = time.perf_counter()
            try:
                reference.fit(x[train], labels[train])
            except np.linalg.LinAlgError:  # sklearn refuses a rank-deficient class (tol=1e-4)
                failed += 1
                continue
            secs["sklearn", "learn"] += time.perf_counter() - t
            t = time.perf_counter()
            p = reference.predict_proba(x[test])
            secs["sklearn", "predict"] += time.perf_counter() - t
            acc["sklearn"].append(float((reference.classes_[p.argmax(axis=1)]
                                         == labels[test]).mean()))
        a, b = np.array(acc["streamnb"]), np.array(acc["sklearn"])
        compared = len(b) > 1  # the folds sklearn accepted
        rows.append({
            "dataset": name, "pair": pair,
            "streamnb": 100 * a.mean(), "streamnb se": 100 * a.std(ddof=1) / math.sqrt(len(a)),
            "sklearn": 100 * b.mean() if compared else None,
            "sklearn se": 100 * b.std(ddof=1) / math.sqrt(len(b)) if compared else None,
            "refused": failed or None,
            # per fold, over the folds both ran
            "learn ratio": secs["sklearn", "learn"] / secs["streamnb", "learn"] * len(a)
            / len(b) if compared else None,
            "predict ratio": secs["sklearn", "predict"] / secs["streamnb", "predict"] * len(a)
            / len(b) if compared else None,
            "learn rate": n_learn / secs["streamnb", "learn"],
            "predict rate": n_predict / secs["streamnb", "predict"],
        })
        print(_results.render_row(COLUMNS, rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--seeds", type=int, default=5)
    _results.add_arguments(parser, "continuous_vs_sklearn")
    args = parser.parse_args(argv)
    names = args.datasets.split(",")
    rows = [r for name in names for r in run(name, seeds=args.seeds)]
    limited = [f"data sets {', '.join(names)} only" if set(names) != set(DATASETS) else "",
               f"{args.seeds} seeds" if args.seeds != 5 else ""]
    limited = [x for x in limited if x]
    _results.write_from_args(
        args, "continuous_vs_sklearn", {"pairs": _results.table(COLUMNS, rows)}, argv=argv,
        script=__file__, notes=f"Limited run: {', '.join(limited)}." if limited else "")


if __name__ == "__main__":
    main()
