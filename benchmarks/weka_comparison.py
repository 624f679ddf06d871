"""Accuracy of streamnb's TAN and AODE side by side with Weka 3.6's, on the same folds and files.

Protocol (issue 3): stratified 10-fold cross-validation repeated with 5 seeds
(:func:`streamnb.evaluate.stratified_kfold`, seeds 0..4) on each data set. For every fold the
numeric attributes are discretised with :class:`streamnb.features.MDLDiscretizer` fitted on the
training fold only (Fayyad & Irani, the cuts of Weka's supervised ``Discretize``, which is what
Weka's ``BayesNet`` applies to numeric attributes itself; Weka 3.6's ``AODE`` refuses numeric
attributes), and the discretised training and test folds are written as ARFF files with the
same header (declared values: the data set's nominal domains and the training fold's
intervals). Both tools read those files:

- Weka: ``BayesNet -D -Q weka.classifiers.bayes.net.search.local.TAN -- -S BAYES -E
  weka.classifiers.bayes.net.estimate.SimpleEstimator -- -A 0.5`` (Weka's defaults: edges
  weighed by the Bayesian score gain, every count + 0.5), the same with ``-S ENTROPY`` (edges
  weighed by conditional mutual information, Friedman's TAN and streamnb's ``weight="cmi"``),
  and ``AODE`` (defaults: Laplace, frequency limit 1), trained with ``-t train.arff``,
  predicting ``-T test.arff -p 0``; we count the correct predictions.
- streamnb, each model given the declared domains of the ARFF header and learned with
  ``learn_many`` on the training records: ``TAN(weight="bayes", missing="mode",
  estimator=MEstimate(m=0.5))`` (Weka's settings: the same edge score, mode-filled missing
  values, θ = (N + 0.5)/(N_pa + 0.5·r), class prior (N(c) + 0.5)/(N + 0.5·k)), the same with
  streamnb's default estimator (Indifferent), ``TAN()`` (streamnb's defaults: CMI, missing
  values skipped), ``TAN(estimator=MEstimate(m=0.5))`` (against Weka's ``-S ENTROPY``) and
  ``AODE()`` (Laplace, frequency limit 1, every attribute a candidate parent).

Reported per data set: mean accuracy ± standard error over the 50 folds, and whether streamnb is
within one standard error (Weka's) of Weka's mean or better. ``--quick`` runs 1 seed.

Run: ``python benchmarks/weka_comparison.py [--datasets vote,DNA] [--jobs 2]``; it writes
``benchmarks/results/weka_comparison.json`` (``--results``, ``--no-results``), the tables of
docs/weka.md.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _results  # benchmarks/_results.py
import numpy as np

from streamnb import AODE, TAN
from streamnb.datasets import TabularDataset, load
from streamnb.estimators import MEstimate
from streamnb.evaluate import stratified_kfold
from streamnb.features import MDLDiscretizer
from streamnb.features.discretize import interval_labels

WEKA_JAR = Path("/usr/share/java/weka.jar")
DATASETS = ("vote", "soybean", "breast-cancer", "credit-g", "diabetes", "HouseVotes84",
            "Soybean", "DNA", "kr-vs-kp")


def weka_tan(score: str) -> tuple[str, ...]:
    """BayesNet with the TAN search; ``score`` weighs a candidate edge by the gain in the local
    score of the child: ``BAYES`` (Weka's default, Dirichlet marginal likelihood with the
    estimator's α) or ``ENTROPY`` (log-likelihood: N·I(X_i; X_j | C), Friedman's CMI). ``-D``:
    no ADTree (same counts; the ADTree runs out of memory on DNA's 180 attributes)."""
    return ("weka.classifiers.bayes.BayesNet", "-D", "-Q",
            "weka.classifiers.bayes.net.search.local.TAN", "--", "-S", score, "-E",
            "weka.classifiers.bayes.net.estimate.SimpleEstimator", "--", "-A", "0.5")


WEKA_TAN = weka_tan("BAYES")
WEKA_TAN_CMI = weka_tan("ENTROPY")
WEKA_AODE = ("weka.classifiers.bayes.AODE", "-F", "1")
WEKA_NAIVE_BAYES = ("weka.classifiers.bayes.NaiveBayes",)


def _streamnb_models(domains: dict[str, list[str]], aode_candidates: int | None = None
                     ) -> dict[str, Callable[[], Any]]:
    """Each streamnb column's model factory. ``max_candidates`` = the number of attributes, so
    every attribute can be a tree parent (TAN) or a super-parent (AODE), as in Weka."""
    n = len(domains)

    def tan(**options):
        return lambda: TAN(relearn_every=0, max_candidates=n, domains=domains, **options)

    return {
        WEKA_SETTINGS: tan(weight="bayes", missing="mode", estimator=MEstimate(m=0.5)),
        "streamnb TAN (bayes, mode)": tan(weight="bayes", missing="mode"),
        "streamnb TAN (default)": tan(),
        "streamnb TAN (cmi, m=0.5)": tan(estimator=MEstimate(m=0.5)),
        # refresh_every=0: the candidates are fixed (all of them unless capped)
        "streamnb AODE": lambda: AODE(max_candidates=min(n, aode_candidates or n),
                                      refresh_every=0, domains=domains),
    }


# streamnb's TAN configured as Weka's BayesNet-TAN defaults: the Bayesian edge score (α = 0.5),
# mode-filled missing values, every count + 0.5
WEKA_SETTINGS = "streamnb TAN (Weka's settings)"
WEKA_MODELS = {"Weka TAN": WEKA_TAN, "Weka TAN (CMI)": WEKA_TAN_CMI, "Weka AODE": WEKA_AODE}
COLUMNS = ("Weka TAN", "Weka TAN (CMI)", WEKA_SETTINGS, "streamnb TAN (bayes, mode)",
           "streamnb TAN (default)", "streamnb TAN (cmi, m=0.5)", "Weka AODE", "streamnb AODE")
# (streamnb column, the Weka column it is judged against: Weka's defaults)
VERDICTS = ((WEKA_SETTINGS, "Weka TAN"), ("streamnb TAN (bayes, mode)", "Weka TAN"),
            ("streamnb TAN (default)", "Weka TAN"), ("streamnb AODE", "Weka AODE"))
# pairs whose per-fold differences and agreement are reported
PAIRS = (*VERDICTS, ("streamnb TAN (cmi, m=0.5)", "Weka TAN (CMI)"))


# -- ARFF files --------------------------------------------------------------------------------
def _quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def write_arff(path: Path, relation: str, domains: dict[str, list[str]], target: str,
               classes: Sequence[str], records: Sequence[dict], labels: Sequence[str]) -> None:
    """A dense ARFF file of nominal attributes (``?`` for a missing value), class last."""
    lines = [f"@relation {_quote(relation)}", ""]
    lines += [f"@attribute {_quote(a)} {{{','.join(_quote(v) for v in values)}}}"
              for a, values in domains.items()]
    lines += [f"@attribute {_quote(target)} {{{','.join(_quote(c) for c in classes)}}}", "",
              "@data"]
    for record, label in zip(records, labels, strict=True):
        cells = ["?" if record[a] is None else _quote(record[a]) for a in domains]
        lines.append(",".join([*cells, _quote(label)]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@dataclass
class Fold:
    """One fold, discretised on its training part: records, labels and the ARFF header's
    declared values."""

    train_records: list[dict]
    train_labels: list[str]
    test_records: list[dict]
    test_labels: list[str]
    domains: dict[str, list[str]]


def discretised_fold(data: TabularDataset, train: np.ndarray, test: np.ndarray) -> Fold:
    train_records = [data.records[i] for i in train]
    train_labels = [data.labels[i] for i in train]
    test_records = [data.records[i] for i in test]
    domains = {a: list(data.domains[a]) for a in data.nominal}
    if data.numeric:
        discretiser = MDLDiscretizer().fit(train_records, train_labels)
        train_records = discretiser.transform(train_records)
        test_records = discretiser.transform(test_records)
        domains.update({a: interval_labels(discretiser.cuts.get(a, [])) for a in data.numeric})
    domains = {a: domains[a] for a in data.attributes}
    return Fold(train_records, train_labels, test_records, [data.labels[i] for i in test],
                domains)


# -- running the two tools ---------------------------------------------------------------------
_PREDICTION = re.compile(r"^\s*\d+\s+\d+:\S*\s+(\d+):")


def weka_version() -> str:
    """The version of the Weka the comparison runs (its first line of ``weka.core.Version``)."""
    done = subprocess.run(["java", "-cp", str(WEKA_JAR), "weka.core.Version"],
                          capture_output=True, text=True, check=False, timeout=120)
    return (done.stdout.strip().splitlines() or ["unknown"])[0]


def weka_predictions(classifier: Sequence[str], train: Path, test: Path,
                     classes: Sequence[str]) -> list[str]:
    """Weka's predicted class of each test record (``-p 0``: one line per record)."""
    done = subprocess.run(["java", "-Xmx1g", "-cp", str(WEKA_JAR), classifier[0], "-t",
                           str(train), "-T", str(test), "-p", "0", *classifier[1:]],
                          capture_output=True, text=True, check=False, timeout=600)
    if done.returncode != 0 or "inst#" not in done.stdout:  # Weka may exit 0 on an error
        raise RuntimeError(f"Weka failed on {train}: "
                           f"{(done.stderr.strip() or done.stdout.strip())[-2000:]}")
    return [classes[int(m.group(1)) - 1] for line in done.stdout.splitlines()
            if (m := _PREDICTION.match(line))]


def streamnb_predictions(make: Callable[[], Any], fold: Fold) -> list:
    model = make()
    model.learn_many(fold.train_records, fold.train_labels)
    if isinstance(model, TAN):
        model.relearn()
    return list(model.predict_many(fold.test_records))


def accuracy(predicted: Sequence, labels: Sequence) -> float:
    if len(predicted) != len(labels):
        raise RuntimeError(f"{len(predicted)} predictions for {len(labels)} test records")
    return sum(p == y for p, y in zip(predicted, labels, strict=True)) / len(labels)


def fold_files(data: TabularDataset, train: np.ndarray, test: np.ndarray, directory: Path
               ) -> tuple[Fold, Path, Path]:
    """The fold discretised on its training part, and its training and test ARFF files for
    Weka in ``directory``."""
    fold = discretised_fold(data, train, test)
    classes = list(data.classes)
    train_file, test_file = directory / "train.arff", directory / "test.arff"
    write_arff(train_file, data.name, fold.domains, data.target, classes, fold.train_records,
               fold.train_labels)
    write_arff(test_file, data.name, fold.domains, data.target, classes, fold.test_records,
               fold.test_labels)
    return fold, train_file, test_file


def run_fold(data: TabularDataset, train: np.ndarray, test: np.ndarray, directory: Path,
             aode_candidates: int | None = None, weka: bool = True) -> dict[str, float]:
    """Accuracy of every column on one fold, and the share of test records on which each
    streamnb model predicts what the Weka model it is judged against predicts (keys
    ``"streamnb … = Weka …"``). ``aode_candidates`` caps streamnb AODE's candidate parents;
    ``weka=False`` runs only the streamnb columns."""
    fold, train_file, test_file = fold_files(data, train, test, directory)
    classes = list(data.classes)
    predictions = {name: weka_predictions(args, train_file, test_file, classes)
                   for name, args in WEKA_MODELS.items()} if weka else {}
    for name, make in _streamnb_models(fold.domains, aode_candidates).items():
        predictions[name] = streamnb_predictions(make, fold)
    result = {name: accuracy(p, fold.test_labels) for name, p in predictions.items()}
    for name, other in PAIRS:
        if other in predictions:
            result[f"{name} = {other}"] = accuracy(predictions[name], predictions[other])
    return result


def compare(name: str, k: int = 10, seeds: Sequence[int] = range(5), jobs: int = 2,
            aode_candidates: int | None = None,
            only_folds: int | None = None, weka: bool = True) -> dict[str, list[float]]:
    """Per-fold results of :func:`run_fold` on data set ``name`` (folds in seed order; the
    first ``only_folds`` of them if given)."""
    data = load(name)
    folds = [split for seed in seeds for split in stratified_kfold(data.labels, k=k, seed=seed)]
    folds = folds[:only_folds]
    with tempfile.TemporaryDirectory(prefix=f"weka-{name}-") as tmp:
        directories = [Path(tmp) / str(i) for i in range(len(folds))]
        for d in directories:
            d.mkdir()
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(
                lambda job: run_fold(data, *job[0], job[1], aode_candidates, weka),
                zip(folds, directories, strict=True)))
    return {key: [r[key] for r in results] for key in results[0]}


# -- report ------------------------------------------------------------------------------------
def mean_se(values: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    return float(a.mean()), float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else 0.0


def verdict(ours: Sequence[float], weka: Sequence[float]) -> str:
    """"yes" when streamnb's mean is at least Weka's mean minus Weka's standard error."""
    m, _ = mean_se(ours)
    w, se = mean_se(weka)
    return "yes" if m >= w - se - 1e-12 else "NO"


def accuracy_table(results: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    """Mean accuracy (%) ± standard error per data set and column, and the verdicts."""
    present = next(iter(results.values()))
    shown = [c for c in COLUMNS if c in present]
    verdicts = [(o, w) for o, w in VERDICTS if w in present]
    columns = [_results.column("data set")]
    for c in shown:
        columns += [_results.column(c, fmt=".2f"), _results.column(f"{c} se", "±", ".2f")]
    columns += [_results.column(f"{ours} ≥", f"{ours.removeprefix('streamnb ')} ≥ Weka − SE")
                for ours, _ in verdicts]
    rows = []
    for name, folds in results.items():
        row: dict[str, Any] = {"data set": name}
        for c in shown:
            m, se = mean_se(folds[c])
            row |= {c: 100 * m, f"{c} se": 100 * se}
        row |= {f"{ours} ≥": verdict(folds[ours], folds[weka]) for ours, weka in verdicts}
        rows.append(row)
    return _results.table(columns, rows)


def paired_table(results: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    """Mean per-fold difference streamnb − Weka (percentage points) ± its standard error, and
    the share of test records on which the two predict the same class."""
    pairs = [(o, w) for o, w in PAIRS if w in next(iter(results.values()))]
    columns = [_results.column("data set")]
    for ours, weka in pairs:
        columns += [_results.column(f"{ours} − {weka}", fmt="+.2f"),
                    _results.column(f"{ours} − {weka} se", "±", ".2f")]
    columns += [_results.column(f"{ours} = {weka}", f"same prediction as {weka}: "
                                f"{ours.removeprefix('streamnb ')}", ".2%")
                for ours, weka in pairs]
    rows = []
    for name, folds in results.items():
        row: dict[str, Any] = {"data set": name}
        for ours, weka in pairs:
            m, se = mean_se(np.subtract(folds[ours], folds[weka]))
            row |= {f"{ours} − {weka}": 100 * m, f"{ours} − {weka} se": 100 * se,
                    f"{ours} = {weka}": float(np.mean(folds[f"{ours} = {weka}"]))}
        rows.append(row)
    return _results.table(columns, rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help="comma-separated registry names (default: the nine of issue 3)")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one seed instead of five")
    parser.add_argument("--jobs", type=int, default=2, help="folds run at the same time")
    parser.add_argument("--aode-max-candidates", type=int, default=0,
                        help="cap streamnb AODE's candidate parents (default 0: every attribute)")
    parser.add_argument("--only-folds", type=int, help="run only the first N folds")
    parser.add_argument("--no-weka", action="store_true",
                        help="run only the streamnb columns")
    parser.add_argument("--json", help="also write every fold's results to this file")
    _results.add_arguments(parser, "weka_comparison")
    args = parser.parse_args(argv)
    if not WEKA_JAR.exists():
        print(f"error: {WEKA_JAR} is missing: apt-get install --no-install-recommends weka",
              file=sys.stderr)
        return 1
    seeds = range(1 if args.quick else args.seeds)
    results = {}
    for name in args.datasets.split(","):
        start = time.perf_counter()
        results[name] = compare(name, args.folds, seeds, args.jobs,
                                args.aode_max_candidates or None, args.only_folds,
                                not args.no_weka)
        summary = ", ".join(f"{c} {100 * mean_se(results[name][c])[0]:.2f}" for c in COLUMNS
                            if c in results[name])
        print(f"{name}: {summary} ({time.perf_counter() - start:.0f} s)", flush=True)
    n_folds = len(next(iter(results.values()))[WEKA_SETTINGS])
    options = [f"streamnb AODE with at most {args.aode_max_candidates} candidate parents"
               ] if args.aode_max_candidates else []
    tables = {"accuracy": accuracy_table(results), "paired": paired_table(results)}
    for table in tables.values():
        print("\n" + _results.render(table))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    _results.write_from_args(
        args, "weka_comparison", tables, argv=argv, script=__file__,
        notes=f"{args.folds}-fold stratified CV × {len(seeds)} seed(s), {n_folds} folds per data "
              f"set{''.join('; ' + o for o in options)}.", extra_machine={"weka": weka_version()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
