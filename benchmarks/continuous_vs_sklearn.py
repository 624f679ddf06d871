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

Usage: PYTHONPATH=. python benchmarks/continuous_vs_sklearn.py [--datasets iris,wdbc] [--out F]
"""

from __future__ import annotations

import argparse
import datetime
import time

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
        rows.append({
            "dataset": name, "pair": pair,
            "streamnb": f"{100 * a.mean():.2f} ± {100 * a.std(ddof=1) / np.sqrt(len(a)):.2f}",
            "sklearn": (f"{100 * b.mean():.2f} ± {100 * b.std(ddof=1) / np.sqrt(len(b)):.2f}"
                        if len(b) > 1 else "—") + (f" ({failed} folds refused)" if failed else ""),
            "learn ratio": secs["sklearn", "learn"] / secs["streamnb", "learn"] * len(a)
            / max(len(b), 1),
            "predict ratio": secs["sklearn", "predict"] / secs["streamnb", "predict"] * len(a)
            / max(len(b), 1),
            "streamnb learn rec/s": n_learn / secs["streamnb", "learn"],
            "streamnb predict rec/s": n_predict / secs["streamnb", "predict"],
        })
        print(rows[-1], flush=True)
    return rows


def markdown(rows: list[dict]) -> str:
    """The rows as a markdown table (no tabulate dependency)."""
    head = ["dataset", "pair", "streamnb accuracy %", "scikit-learn accuracy %",
            "learn ratio", "predict ratio", "streamnb learn rec/s", "streamnb predict rec/s"]

    def ratio(v: float) -> str:
        return f"{v:.2f}" if v > 0 else "—"

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([
            r["dataset"], r["pair"], r["streamnb"], r["sklearn"], ratio(r["learn ratio"]),
            ratio(r["predict ratio"]), f"{r['streamnb learn rec/s']:,.0f}",
            f"{r['streamnb predict rec/s']:,.0f}"]) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", default=None, help="write the markdown table here")
    args = parser.parse_args()
    rows = [r for name in args.datasets.split(",") for r in run(name, seeds=args.seeds)]
    text = (f"Run {datetime.date.today().isoformat()}: `PYTHONPATH=. python "
            f"benchmarks/continuous_vs_sklearn.py --datasets {args.datasets}`\n\n"
            + markdown(rows))
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
