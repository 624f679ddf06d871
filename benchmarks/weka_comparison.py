"""Accuracy of streamnb's TAN and AODE side by side with Weka 3.6's, on the same folds and files.

Protocol: stratified 10-fold cross-validation repeated with 5 seeds
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
  values, θ = (N + 0.5)/(N_pa + 0.5·r), class prior (N(c) + 0.5)/(N + 0.5·k)), ``TAN()``
  (streamnb's defaults: the same edge score and estimates, missing values skipped),
  ``TAN(weight="cmi", estimator="indifferent")`` (Friedman's tree, Indifferent estimates),
  ``TAN(weight="cmi", estimator=MEstimate(m=0.5))`` (against Weka's ``-S ENTROPY``) and
  ``AODE()`` (Laplace, frequency limit 1, every attribute a candidate parent).

Weka runs in one JVM per job (benchmarks/WekaEvaluate.java: Weka's command line, called in-process
for each fold and classifier), which needs a JDK's source-file launcher (Java 11 or later).

Reported per data set: mean accuracy ± standard error over the 50 folds, and whether streamnb is
within one standard error (Weka's) of Weka's mean or better. ``--quick`` runs 1 seed.

Run: ``python benchmarks/weka_comparison.py [--datasets vote,DNA] [--jobs 2] [--resume]``; it
writes ``benchmarks/results/weka_comparison.json`` (``--results``, ``--no-results``), the tables
of docs/weka.md, again after each data set, listing the data sets it covers and those not yet
run. ``--resume`` keeps the data sets that file already covers (measured with the same
protocol) and runs the others, so an interrupted run continues where it stopped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import queue
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _results  # benchmarks/_results.py
import numpy as np

from streamnb import AODE, TAN
from streamnb.datasets import TabularDataset, load, names
from streamnb.estimators import MEstimate
from streamnb.evaluate import stratified_kfold
from streamnb.features import MDLDiscretizer
from streamnb.features.discretize import interval_labels

WEKA_JAR = Path("/usr/share/java/weka.jar")
WEKA_EVALUATE = Path(__file__).resolve().parent / "WekaEvaluate.java"
# DNA last: it takes longer than the others together
DATASETS = ("vote", "soybean", "breast-cancer", "credit-g", "diabetes", "HouseVotes84",
            "Soybean", "kr-vs-kp", "DNA")


def weka_tan(score: str, alpha: float = 0.5) -> tuple[str, ...]:
    """BayesNet with the TAN search; ``score`` weighs a candidate edge by the gain in the local
    score of the child: ``BAYES`` (Weka's default, Dirichlet marginal likelihood with the
    estimator's α) or ``ENTROPY`` (log-likelihood: N·I(X_i; X_j | C), Friedman's CMI);
    ``alpha``: the estimator's pseudo-count per cell (Weka's default 0.5; 1 is streamnb's
    default, Indifferent's +1). ``-D``: no ADTree (same counts; the ADTree runs out of memory
    on DNA's 180 attributes)."""
    return ("weka.classifiers.bayes.BayesNet", "-D", "-Q",
            "weka.classifiers.bayes.net.search.local.TAN", "--", "-S", score, "-E",
            "weka.classifiers.bayes.net.estimate.SimpleEstimator", "--", "-A", f"{alpha:g}")


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
        "streamnb TAN (default)": tan(),
        # Friedman's tree with the Indifferent estimates
        "streamnb TAN (cmi)": tan(weight="cmi", estimator="indifferent"),
        "streamnb TAN (cmi, m=0.5)": tan(weight="cmi", estimator=MEstimate(m=0.5)),
        # refresh_every=0: the candidates are fixed (all of them unless capped)
        "streamnb AODE": lambda: AODE(max_candidates=min(n, aode_candidates or n),
                                      refresh_every=0, domains=domains),
    }


# streamnb's TAN configured as Weka's BayesNet-TAN defaults: the Bayesian edge score (α = 0.5),
# mode-filled missing values, every count + 0.5
WEKA_SETTINGS = "streamnb TAN (Weka's settings)"
WEKA_MODELS = {"Weka TAN": WEKA_TAN, "Weka TAN (CMI)": WEKA_TAN_CMI, "Weka AODE": WEKA_AODE}
COLUMNS = ("Weka TAN", "Weka TAN (CMI)", WEKA_SETTINGS, "streamnb TAN (default)",
           "streamnb TAN (cmi)", "streamnb TAN (cmi, m=0.5)", "Weka AODE", "streamnb AODE")
# (streamnb column, the Weka column it is judged against: Weka's defaults)
VERDICTS = ((WEKA_SETTINGS, "Weka TAN"), ("streamnb TAN (default)", "Weka TAN"),
            ("streamnb TAN (cmi)", "Weka TAN"), ("streamnb AODE", "Weka AODE"))
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


class Weka:
    """One JVM running Weka's command line for many runs (WekaEvaluate.java): `run` returns what
    ``java -cp weka.jar <class> <options>`` prints, without a JVM start per run, which costs more
    than the run itself on the small data sets. Not thread-safe: one per job."""

    _END = "WekaEvaluate: end\n"
    _ERROR = "WekaEvaluate: error "

    def __init__(self) -> None:
        # the JVM's own messages, should it die; open as long as the JVM, closed by close()
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self._process = subprocess.Popen(
            ["java", "-Xmx1g", "-cp", str(WEKA_JAR), str(WEKA_EVALUATE)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            encoding="utf-8")

    def run(self, args: Sequence[str]) -> str:
        """Weka's output for the command line ``args`` (a classifier's class name, then its
        options); RuntimeError with Weka's message (and warnings) when Weka fails."""
        if any(c in a for a in args for c in "\t\n"):
            raise ValueError(f"a tab or newline in Weka's arguments {list(args)}")
        assert self._process.stdin is not None and self._process.stdout is not None
        try:
            self._process.stdin.write("\t".join(args) + "\n")
            self._process.stdin.flush()
        except BrokenPipeError:
            pass  # the JVM is gone: reported below
        lines = []
        for line in self._process.stdout:
            if line == self._END:
                return "".join(lines)
            if line.startswith(self._ERROR):
                raise RuntimeError(line.removeprefix(self._ERROR).strip())
            lines.append(line)
        code = self._process.wait()
        self._stderr.seek(0)
        raise RuntimeError(f"Weka's JVM exited with code {code}: "
                           f"{self._stderr.read().decode(errors='replace').strip()[-2000:]}")

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=60)
        finally:
            if self._process.poll() is None:
                self._process.kill()
            self._stderr.close()

    def __enter__(self) -> Weka:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def weka_predictions(classifier: Sequence[str], train: Path, test: Path, classes: Sequence[str],
                     weka: Weka | None = None) -> list[str]:
    """Weka's predicted class of each test record (``-p 0``: one line per record), run in the
    JVM ``weka`` (without it, in a JVM of its own)."""
    with contextlib.ExitStack() as stack:
        session = weka or stack.enter_context(Weka())
        try:
            output = session.run([classifier[0], "-t", str(train), "-T", str(test), "-p", "0",
                                  *classifier[1:]])
        except RuntimeError as error:
            raise RuntimeError(f"Weka failed on {train}: {error}") from None
    return [classes[int(m.group(1)) - 1] for line in output.splitlines()
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
             aode_candidates: int | None = None, weka: Weka | None = None) -> dict[str, float]:
    """Accuracy of every column on one fold, and the share of test records on which each
    streamnb model predicts what the Weka model it is judged against predicts (keys
    ``"streamnb … = Weka …"``). ``aode_candidates`` caps streamnb AODE's candidate parents;
    without ``weka`` only the streamnb columns run."""
    fold, train_file, test_file = fold_files(data, train, test, directory)
    classes = list(data.classes)
    predictions = {name: weka_predictions(args, train_file, test_file, classes, weka)
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
    jobs = max(1, min(jobs, len(folds)))
    with tempfile.TemporaryDirectory(prefix=f"weka-{name}-") as tmp, \
            contextlib.ExitStack() as stack:
        directories = [Path(tmp) / str(i) for i in range(len(folds))]
        for d in directories:
            d.mkdir()
        idle: queue.SimpleQueue[Weka | None] = queue.SimpleQueue()  # a JVM for each job
        for _ in range(jobs):
            idle.put(stack.enter_context(Weka()) if weka else None)

        def run(split: tuple[np.ndarray, np.ndarray], directory: Path) -> dict[str, float]:
            session = idle.get()
            try:
                return run_fold(data, *split, directory, aode_candidates, session)
            finally:
                idle.put(session)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(run, folds, directories))
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


def _present(results: Mapping[str, Mapping[str, list[float]]]) -> Collection[str]:
    """The columns a run measured (all of `COLUMNS`, or the streamnb ones)."""
    return next(iter(results.values())).keys() if results else COLUMNS


def accuracy_columns(present: Collection[str]) -> list[dict[str, str]]:
    columns = [_results.column("data set")]
    for c in COLUMNS:
        if c in present:
            columns += [_results.column(c, fmt=".2f"), _results.column(f"{c} se", "±", ".2f")]
    return columns + [_results.column(f"{ours} ≥", f"{ours.removeprefix('streamnb ')} ≥ Weka − SE")
                      for ours, weka in VERDICTS if weka in present]


def accuracy_row(name: str, folds: Mapping[str, list[float]]) -> dict[str, Any]:
    """Mean accuracy (%) ± standard error per column of data set ``name``, and the verdicts."""
    row: dict[str, Any] = {"data set": name}
    for c in COLUMNS:
        if c in folds:
            m, se = mean_se(folds[c])
            row |= {c: 100 * m, f"{c} se": 100 * se}
    return row | {f"{ours} ≥": verdict(folds[ours], folds[weka]) for ours, weka in VERDICTS
                  if weka in folds}


def accuracy_table(results: Mapping[str, Mapping[str, list[float]]]) -> dict[str, Any]:
    """Mean accuracy (%) ± standard error per data set and column, and the verdicts."""
    return _results.table(accuracy_columns(_present(results)),
                          [accuracy_row(name, folds) for name, folds in results.items()])


def paired_columns(present: Collection[str]) -> list[dict[str, str]]:
    pairs = [(o, w) for o, w in PAIRS if w in present]
    columns = [_results.column("data set")]
    for ours, weka in pairs:
        columns += [_results.column(f"{ours} − {weka}", fmt="+.2f"),
                    _results.column(f"{ours} − {weka} se", "±", ".2f")]
    return columns + [_results.column(f"{ours} = {weka}", f"same prediction as {weka}: "
                                      f"{ours.removeprefix('streamnb ')}", ".2%")
                      for ours, weka in pairs]


def paired_row(name: str, folds: Mapping[str, list[float]]) -> dict[str, Any]:
    """Mean per-fold difference streamnb − Weka (percentage points) ± its standard error, and
    the share of test records on which the two predict the same class."""
    row: dict[str, Any] = {"data set": name}
    for ours, weka in PAIRS:
        if weka in folds:
            m, se = mean_se(np.subtract(folds[ours], folds[weka]))
            row |= {f"{ours} − {weka}": 100 * m, f"{ours} − {weka} se": 100 * se,
                    f"{ours} = {weka}": float(np.mean(folds[f"{ours} = {weka}"]))}
    return row


def paired_table(results: Mapping[str, Mapping[str, list[float]]]) -> dict[str, Any]:
    """`paired_row` of every data set."""
    return _results.table(paired_columns(_present(results)),
                          [paired_row(name, folds) for name, folds in results.items()])


RUNS_COLUMNS = [_results.column("data set"), _results.column("folds"),
                _results.column("seconds", "time (s)", ".0f")]
#: table name: (its columns given the measured columns, the row of one data set's folds)
TABLES: dict[str, tuple[Callable[[Collection[str]], list[dict[str, str]]],
                        Callable[[str, Mapping[str, list[float]]], dict[str, Any]]]] = {
    "accuracy": (accuracy_columns, accuracy_row), "paired": (paired_columns, paired_row)}


def protocol(args: argparse.Namespace) -> str:
    """What a run measured, as its results file's notes say; `--resume` keeps only rows measured
    with the same protocol."""
    seeds = 1 if args.quick else args.seeds
    text = f"{args.folds}-fold stratified CV × {seeds} seed(s)"
    if args.only_folds:
        text += f", the first {args.only_folds} folds"
    if args.aode_max_candidates:
        text += f"; streamnb AODE with at most {args.aode_max_candidates} candidate parents"
    return text + ("; streamnb columns only" if args.no_weka else "")


def notes(protocol_text: str, done: Sequence[str], pending: Sequence[str]) -> str:
    text = f"{protocol_text}. Data sets: {', '.join(done) or 'none yet'}"
    return text + (f"; not yet run: {', '.join(pending)}." if pending else ".")


def completed(path: Path, protocol_text: str) -> dict[str, dict[str, dict[str, Any]]]:
    """The rows of each table of the data sets a results file covers: {table: {data set: row}};
    nothing if there is no file. SystemExit when the file's protocol is another."""
    if not path.exists():
        return {}
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        measured = record["notes"].partition(". Data sets: ")[0]
        tables = {name: record["tables"][name]["rows"] for name in ("runs", *TABLES)}
    except (ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"error: {path} is not a weka_comparison results file that lists its "
                         f"data sets ({type(error).__name__}: {error}); run without --resume"
                         ) from None
    if measured != protocol_text:
        raise SystemExit(f"error: {path} was measured with {measured!r}, this run is "
                         f"{protocol_text!r}: give the same options or run without --resume")
    return {name: {row["data set"]: row for row in rows} for name, rows in tables.items()}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(DATASETS),
                        help="comma-separated registry names (default: the nine of the protocol)")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one seed instead of five")
    parser.add_argument("--jobs", type=int, default=2, help="folds run at the same time")
    parser.add_argument("--aode-max-candidates", type=int, default=0,
                        help="cap streamnb AODE's candidate parents (default 0: every attribute)")
    parser.add_argument("--only-folds", type=int, help="run only the first N folds")
    parser.add_argument("--no-weka", action="store_true",
                        help="run only the streamnb columns")
    parser.add_argument("--resume", action="store_true",
                        help="keep the data sets the results file covers, run the others")
    parser.add_argument("--json", help="also write every fold's results of this run to this file")
    _results.add_arguments(parser, "weka_comparison")
    args = parser.parse_args(argv)
    requested = args.datasets.split(",")
    if unknown := [n for n in requested if n not in names()]:
        parser.error(f"unknown data set(s) {', '.join(unknown)}; see python -m streamnb.datasets")
    if args.resume and args.no_results:
        parser.error("--resume continues the results file: it cannot go with --no-results")
    if not WEKA_JAR.exists():
        print(f"error: {WEKA_JAR} is missing: apt-get install --no-install-recommends weka",
              file=sys.stderr)
        return 1
    seeds = range(1 if args.quick else args.seeds)
    measured = protocol(args)
    rows = completed(Path(args.results), measured) if args.resume else {}
    # the file's data sets stay, in the requested order, then the ones not requested this time
    order = [*requested, *(n for n in rows.get("runs", {}) if n not in requested)]
    present = set(COLUMNS) - (set(WEKA_MODELS) if args.no_weka else set())
    weka = {} if args.no_weka else {"weka": weka_version()}
    results: dict[str, dict[str, list[float]]] = {}

    def write() -> dict[str, dict[str, Any]]:
        done = [n for n in order if n in rows.get("runs", {})]
        tables = {name: _results.table(columns(present), [rows[name][n] for n in done])
                  for name, (columns, _) in TABLES.items()}
        tables["runs"] = _results.table(RUNS_COLUMNS, [rows["runs"][n] for n in done])
        _results.write_from_args(args, "weka_comparison", tables, argv=argv, script=__file__,
                                 notes=notes(measured, done, [n for n in order if n not in done]),
                                 extra_machine=weka)
        if args.json:
            Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
        return tables

    for name in requested:
        if name in rows.get("runs", {}):
            print(f"{name}: in {args.results} already", flush=True)
            continue
        start = time.perf_counter()
        results[name] = folds = compare(name, args.folds, seeds, args.jobs,
                                        args.aode_max_candidates or None, args.only_folds,
                                        not args.no_weka)
        seconds = time.perf_counter() - start
        for table, (_, row) in TABLES.items():
            rows.setdefault(table, {})[name] = row(name, folds)
        rows.setdefault("runs", {})[name] = {"data set": name, "folds": len(folds[WEKA_SETTINGS]),
                                             "seconds": seconds}
        tables = write()  # after each data set, so that an interrupted run keeps it
        summary = ", ".join(f"{c} {100 * mean_se(folds[c])[0]:.2f}" for c in COLUMNS
                            if c in folds)
        print(f"{name}: {summary} ({seconds:.0f} s)", flush=True)
    if not results:
        print("nothing to run: every data set is in the results file", file=sys.stderr)
        return 0
    for table in tables.values():
        print("\n" + _results.render(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
