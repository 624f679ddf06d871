"""Singh & Provan (1995), Tables 2–9: selective Bayesian networks (Info-AS with CIG, CGR, CDC,
then CB) against naive Bayes on all attributes (naive-ALL), Langley & Sage's selective naive
Bayes (naive-AS) and CB on all attributes, with the paper's protocol: fixed train/test sizes,
30 stratified random splits, two-tailed paired t-tests at 95%. streamnb's SelectiveTAN (Info-AS
with CGR, then a Chow–Liu tree over the selection) runs alongside. CB puts the class first in
the ordering it gives K2 (``class_position="first"``, our reading of the paper); two groups of
diagnostic methods vary only that ordering: "/K2" (K2 on the class, then the attributes in the
selection's order) and "/learned" (CB with the class where its orientation puts it).

Every data set of the paper that an installed package ships, prepared as the paper describes
(see :func:`prepare` and ``streamnb.datasets.PAPER_DATASETS``); missing values stay missing
(the models do exact inference over them). Mushroom is shipped by no installed package.

Run: ``python benchmarks/reproduce_singh_provan.py [--repeats 30] [--datasets Voting Chess]
[--methods ...]``; it writes ``benchmarks/results/reproduce_singh_provan.json`` (``--results``,
``--no-results``), the tables of docs/results/singh_provan.md: per data set the accuracy of
every method with the paper's, the seconds per split, the paired t-tests of Tables 4–9, and how
many of the paper's accuracies and verdicts the run repeats. The file is written after every
data set and says which are complete; ``--resume`` reruns the same command keeping those.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import _results  # benchmarks/_results.py
import numpy as np
from _models import LearnedOnce  # benchmarks/_models.py

from streamnb import NaiveBayes, SelectiveBN, SelectiveNB, SelectiveTAN
from streamnb.datasets import load
from streamnb.evaluate import Evaluation, TTest, validate_random_splits
from streamnb.structure import DiscreteData, Selection, k2_as, naive_as

# -- the paper's numbers ---------------------------------------------------------------------
#: Tables 2–3: mean ± sample standard deviation of the accuracy (%) over 30 splits.
PAPER_ACCURACY: dict[str, dict[str, tuple[float, float] | None]] = {
    "Chess": {"naive-ALL": (86.71, 1.65), "naive-AS": (93.19, 1.42), "K2-AS": (94.09, 0.34),
              "K2-AS<": (95.47, 1.18), "CB": (94.66, 1.07), "CIG-AS": (96.13, 1.00),
              "CGR-AS": (96.08, 0.89), "CDC-AS": (96.26, 0.84)},
    "Voting": {"naive-ALL": (89.69, 1.48), "naive-AS": (93.47, 2.15), "K2-AS": (95.32, 1.12),
               "K2-AS<": (95.18, 0.82), "CB": (94.95, 0.85), "CIG-AS": (94.91, 0.96),
               "CGR-AS": (95.53, 1.14), "CDC-AS": (95.55, 1.05)},
    "Voting1": {"naive-ALL": (87.08, 1.70), "naive-AS": (88.34, 1.80), "K2-AS": (87.45, 2.62),
                "K2-AS<": (89.43, 2.08), "CB": (90.45, 1.67), "CIG-AS": (90.27, 1.85),
                "CGR-AS": (90.41, 1.52), "CDC-AS": (90.37, 1.48)},
    "Soybean": {"naive-ALL": (88.67, 2.05), "naive-AS": (87.43, 3.57), "K2-AS": (88.15, 3.16),
                "K2-AS<": (90.50, 3.11), "CB": (89.57, 2.58), "CIG-AS": (84.00, 4.39),
                "CGR-AS": (90.85, 2.02), "CDC-AS": (89.15, 2.58)},
    "Splice": {"naive-ALL": (95.41, 0.69), "naive-AS": (94.56, 0.63), "K2-AS": (94.94, 0.60),
               "K2-AS<": None, "CB": (96.35, 0.52), "CIG-AS": (94.58, 0.63),
               "CGR-AS": (95.03, 0.54), "CDC-AS": (95.02, 0.56)},
    "Mushroom": {"naive-ALL": (92.87, 0.51), "naive-AS": (98.30, 0.36), "K2-AS": (98.51, 0.23),
                 "K2-AS<": (99.27, 0.49), "CB": (99.64, 0.31), "CIG-AS": (99.33, 0.39),
                 "CGR-AS": (99.16, 0.53), "CDC-AS": (99.20, 0.55)},
}

#: Tables 4–9: other − Info-AS in accuracy points, the paired t statistic, and the verdict at
#: 95% ("−": Info-AS significantly better, "+": significantly worse, "": no significant
#: difference; "?": Table 8 prints a mark on Voting's K2-AS cell although t = −1.06).
#: No K2-AS< on Splice in the paper.
PAPER_TESTS: dict[tuple[str, str], dict[str, tuple[float, float, str]]] = {
    ("CIG-AS", "naive-ALL"): {"Chess": (-9.42, -30.34, "−"), "Voting": (-5.22, -21.14, "−"),
                              "Voting1": (-3.19, -8.91, "−"), "Soybean": (4.67, 5.03, "+"),
                              "Mushroom": (-6.46, -49.05, "−"), "Splice": (0.84, 5.36, "+")},
    ("CIG-AS", "naive-AS"): {"Chess": (-2.94, -9.98, "−"), "Voting": (-1.43, -3.65, "−"),
                             "Voting1": (-1.93, -5.47, "−"), "Soybean": (3.43, 3.95, "+"),
                             "Mushroom": (-1.03, -9.50, "−"), "Splice": (0.02, 0.12, "")},
    ("CIG-AS", "CB"): {"Chess": (-1.47, -4.78, "−"), "Voting": (0.04, 0.19, ""),
                       "Voting1": (0.19, 0.55, ""), "Soybean": (5.57, 6.00, "+"),
                       "Mushroom": (0.31, 4.82, "+"), "Splice": (1.77, 12.83, "+")},
    ("CGR-AS", "naive-ALL"): {"Chess": (-9.37, -26.53, "−"), "Voting": (-5.84, -24.26, "−"),
                              "Voting1": (-3.33, -9.59, "−"), "Soybean": (-2.18, -5.47, "−"),
                              "Mushroom": (-6.29, -41.17, "−"), "Splice": (0.39, 2.43, "+")},
    ("CGR-AS", "naive-AS"): {"Chess": (-2.89, -9.73, "−"), "Voting": (-2.06, -5.45, "−"),
                             "Voting1": (-2.07, -7.83, "−"), "Soybean": (-3.42, -4.78, "−"),
                             "Mushroom": (-0.86, -7.76, "−"), "Splice": (-0.47, -3.48, "−")},
    ("CGR-AS", "CB"): {"Chess": (-1.41, -4.22, "−"), "Voting": (-0.58, -3.70, "−"),
                       "Voting1": (0.04, 0.16, ""), "Soybean": (-1.28, -2.53, "−"),
                       "Mushroom": (0.48, 5.22, "+"), "Splice": (1.32, 10.22, "+")},
    ("CDC-AS", "naive-ALL"): {"Chess": (-9.56, -28.15, "−"), "Voting": (-5.86, -23.74, "−"),
                              "Voting1": (-3.29, -9.69, "−"), "Soybean": (-0.48, -0.98, ""),
                              "Mushroom": (-6.34, -41.11, "−"), "Splice": (0.41, 2.49, "+")},
    ("CDC-AS", "naive-AS"): {"Chess": (-3.07, -10.05, "−"), "Voting": (-2.07, -6.18, "−"),
                             "Voting1": (-2.03, -6.37, "−"), "Soybean": (-1.72, -2.31, "−"),
                             "Mushroom": (-0.91, -7.93, "−"), "Splice": (-0.46, -3.43, "−")},
    ("CIG-AS", "K2-AS"): {"Chess": (-2.04, -11.44, "−"), "Voting": (0.41, 1.70, ""),
                          "Voting1": (-2.82, -6.40, "−"), "Soybean": (4.15, 4.14, "+"),
                          "Mushroom": (-0.82, -11.98, "−"), "Splice": (0.36, 2.21, "+")},
    ("CIG-AS", "K2-AS<"): {"Chess": (-0.66, -2.34, "−"), "Voting": (0.27, 1.41, ""),
                           "Voting1": (-0.84, -2.24, "−"), "Soybean": (6.50, 9.68, "+"),
                           "Mushroom": (-0.06, -0.56, "")},
    ("CGR-AS", "K2-AS"): {"Chess": (-1.99, -13.63, "−"), "Voting": (-0.21, -1.06, "?"),
                          "Voting1": (-2.96, -6.82, "−"), "Soybean": (-2.70, -4.18, "−"),
                          "Mushroom": (-0.65, -7.50, "−"), "Splice": (-0.09, -0.71, "")},
    ("CGR-AS", "K2-AS<"): {"Chess": (-0.61, -2.62, "−"), "Voting": (-0.36, -1.94, ""),
                           "Voting1": (-0.98, -2.39, "−"), "Soybean": (-0.35, -0.59, ""),
                           "Mushroom": (0.11, 0.90, "")},
    ("CDC-AS", "K2-AS"): {"Chess": (-2.17, -14.43, "−"), "Voting": (-0.23, -1.21, ""),
                          "Voting1": (-2.92, -6.43, "−"), "Soybean": (-1.00, -1.91, ""),
                          "Mushroom": (-0.69, -7.64, "−"), "Splice": (-0.08, -0.62, "")},
    ("CDC-AS", "K2-AS<"): {"Chess": (-0.79, -3.22, "−"), "Voting": (-0.37, -2.48, "−"),
                           "Voting1": (-0.94, -2.18, "−"), "Soybean": (1.35, 2.22, "+"),
                           "Mushroom": (0.07, 0.55, "")},
    ("CDC-AS", "CB"): {"Chess": (-1.60, -5.62, "−"), "Voting": (-0.60, -3.70, "−"),
                       "Voting1": (0.09, 0.27, ""), "Soybean": (0.42, 1.01, ""),
                       "Mushroom": (0.43, 4.81, "+"), "Splice": (1.33, 10.28, "+")},
}

# -- the data sets -----------------------------------------------------------------------------
#: The four smallest soybean classes (53 records): without them, the paper's 630 records and
#: 15 classes.
SOYBEAN_DROPPED = ("2-4-d-injury", "cyst-nematode", "diaporthe-pod-&-stem-blight",
                   "herbicide-injury")
#: StatLog's coding of a nucleotide as three indicators (mlbench's DNA help page).
NUCLEOTIDES = {("1", "0", "0"): "A", ("0", "1", "0"): "C", ("0", "0", "1"): "G",
               ("0", "0", "0"): "T"}


@dataclass
class Task:
    """A data set prepared as the paper describes it, and its split sizes."""

    name: str
    records: list[dict[str, Any]]
    labels: list[str]
    train_size: int
    test_size: int
    source: str
    notes: str

    @property
    def n_attributes(self) -> int:
        return len(self.records[0])


def decode_statlog_dna(record: dict[str, str]) -> dict[str, str]:
    """The 60 nucleotides of a StatLog DNA record (V1..V180, three indicators each)."""
    return {f"N{i + 1}": NUCLEOTIDES[tuple(record[f"V{3 * i + j + 1}"] for j in range(3))]
            for i in range(60)}


def prepare(name: str) -> Task:
    """The paper's data set ``name`` from the installed copies (Table 1's split sizes)."""
    if name == "Chess":
        data = load("kr-vs-kp")
        return Task(name, data.records, data.labels, 1000, 2196, "kr-vs-kp (scikit-learn)",
                    "3196 records, 36 attributes: as in the paper.")
    if name in ("Voting", "Voting1"):
        data = load("vote")
        records = data.records
        notes = "435 records, 16 attributes, 392 missing votes kept as missing: as in the paper."
        if name == "Voting1":
            records = [{k: v for k, v in r.items() if k != "physician-fee-freeze"}
                       for r in records]
            notes = "Voting without physician-fee-freeze (15 attributes), as in the paper."
        return Task(name, records, data.labels, 200, 235, "vote (Debian weka)", notes)
    if name == "Soybean":
        data = load("soybean")
        keep = [i for i, y in enumerate(data.labels) if y not in SOYBEAN_DROPPED]
        return Task(name, [data.records[i] for i in keep], [data.labels[i] for i in keep], 430,
                    200, "soybean (Debian weka), four smallest classes left out",
                    f"683 records / 19 classes shipped; without {', '.join(SOYBEAN_DROPPED)} "
                    "(53 records): 630 records, 15 classes, 35 attributes, as the paper's "
                    "Table 1. Missing values kept as missing.")
    if name == "Splice":
        data = load("DNA")
        return Task(name, [decode_statlog_dna(r) for r in data.records], data.labels, 2000,
                    1175, "DNA (Debian r-cran-mlbench), StatLog coding decoded",
                    "StatLog's 180 indicators decoded back into the 60 nucleotides (A, C, G, T) "
                    "of the paper's 60 attributes; 3186 records (StatLog removed the records "
                    "with ambiguous nucleotides) where the paper has 3175.")
    if name == "Mushroom":
        raise LookupError("no installed package ships it")
    raise ValueError(f"unknown data set {name!r}; choose from {DATASETS}")


DATASETS = ("Chess", "Voting", "Voting1", "Soybean", "Splice", "Mushroom")


# -- the methods -------------------------------------------------------------------------------
class OnceBN(LearnedOnce, SelectiveBN):
    """`SelectiveBN` learned once per training part."""


class OnceTAN(LearnedOnce, SelectiveTAN):
    """`SelectiveTAN` learned once per training part."""


class NaiveAS(LearnedOnce, SelectiveNB):
    """naive-AS (Langley & Sage 1994 as run by Singh & Provan §2, §5.1): forward selection on
    the accuracy of naive Bayes learned on one half of the training set and scored on the
    other, continuing while the accuracy does not drop; then naive Bayes over the selection,
    learned from the whole training set."""

    def _select(self, data: DiscreteData) -> Selection:
        return naive_as(data, alpha=self.alpha, allow_ties=True, seed=0)


class AllAttributesCB(OnceBN):
    """CB over every attribute and the class (Singh & Provan's non-selective "CB")."""

    def _select(self, data: DiscreteData) -> Selection:
        n = data.n_attributes
        return Selection(tuple(data.names), tuple(range(n)), (math.nan,) * n, None, "all",
                         "every attribute")


class K2AS(OnceBN):
    """K2-AS (Singh & Provan §3): forward selection on the accuracy of K2 networks learned on
    one half of the training set and scored on the other, while it increases; then CB over
    the selection, learned from the whole training set."""

    allow_ties = False

    def _select(self, data: DiscreteData) -> Selection:
        return k2_as(data, max_parents=self.max_parents, alpha=self.alpha,
                     allow_ties=self.allow_ties, seed=0)


class K2ASTies(K2AS):
    """K2-AS<: K2-AS continuing while the accuracy does not drop."""

    allow_ties = True


METHODS = ("naive-ALL", "naive-AS", "K2-AS", "K2-AS<", "CB", "CIG-AS", "CGR-AS", "CDC-AS",
           "SelectiveTAN", "ALL/K2", "CIG-AS/K2", "CGR-AS/K2", "CDC-AS/K2", "CB/learned",
           "CIG-AS/learned", "CGR-AS/learned", "CDC-AS/learned")
#: what runs unless --methods says otherwise (K2-AS's wrapper costs a K2 search and inference
#: per candidate and step)
DEFAULT_METHODS = ("naive-ALL", "naive-AS", "CB", "CIG-AS", "CGR-AS", "CDC-AS",
                   "SelectiveTAN")


def factories(task: Task, methods: Sequence[str]) -> tuple[dict[str, Callable[[], Any]],
                                                          dict[str, list[Any]]]:
    """name → factory of a fresh model for each method, and name → the models made (in split
    order, to read their selections afterwards).

    The selective models learn their structure once, after ``learn_many`` of the training
    part (``_models.LearnedOnce``); every attribute is a candidate; the reservoir holds the
    whole training part, so every selection and network is learned from exact counts."""
    common = {"relearn_every": 0, "max_candidates": max(task.n_attributes, 2),
              "seed": 0}
    makers: dict[str, Callable[[], Any]] = {
        "naive-ALL": lambda: NaiveBayes(estimator="laplace"),
        "naive-AS": lambda: NaiveAS(**common),
        "K2-AS": lambda: K2AS(search="cb", **common),
        "K2-AS<": lambda: K2ASTies(search="cb", **common),
        "CB": lambda: AllAttributesCB(search="cb", **common),
        "CIG-AS": lambda: OnceBN(metric="cig", search="cb", **common),
        "CGR-AS": lambda: OnceBN(metric="cgr", search="cb", **common),
        "CDC-AS": lambda: OnceBN(metric="cdc", search="cb", **common),
        "SelectiveTAN": lambda: OnceTAN(metric="cgr", **common),
        "CIG-AS/K2": lambda: OnceBN(metric="cig", search="k2", **common),
        "CGR-AS/K2": lambda: OnceBN(metric="cgr", search="k2", **common),
        "CDC-AS/K2": lambda: OnceBN(metric="cdc", search="k2", **common),
        "ALL/K2": lambda: AllAttributesCB(search="k2", **common),
        "CB/learned": lambda: AllAttributesCB(search="cb", class_position="learned", **common),
        "CIG-AS/learned": lambda: OnceBN(metric="cig", search="cb",
                                              class_position="learned", **common),
        "CGR-AS/learned": lambda: OnceBN(metric="cgr", search="cb",
                                              class_position="learned", **common),
        "CDC-AS/learned": lambda: OnceBN(metric="cdc", search="cb",
                                              class_position="learned", **common),
    }
    made: dict[str, list[Any]] = {m: [] for m in methods}

    def tracked(method: str) -> Callable[[], Any]:
        def make() -> Any:
            model = makers[method]()
            made[method].append(model)
            return model
        return make

    return {m: tracked(m) for m in methods}, made


# -- a run -------------------------------------------------------------------------------------
@dataclass
class Result:
    """One data set's run: the scores of every method (all on the same splits; a method run on
    fewer splits has the first ones), the number of attributes each model used per split, and
    the wall time."""

    task: Task
    methods: list[str]
    evaluation: Evaluation
    selected: dict[str, list[tuple[int, int]]]
    seconds: float

    def splits(self, method: str) -> int:
        return len(self.evaluation.values(method, "accuracy"))

    def accuracy(self, method: str) -> tuple[float, float]:
        """Mean and sample standard deviation (%) over the splits, as the paper's tables."""
        v = 100 * self.evaluation.values(method, "accuracy")
        return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else math.nan

    def compare(self, a: str, b: str) -> tuple[TTest | None, int]:
        """Paired two-tailed t-test of ``a`` against ``b`` over the splits both ran (None if
        fewer than two), and how many those are."""
        evaluation = self.evaluation
        repeats = [{s.repeat for s in evaluation.scores if s.model == m} for m in (a, b)]
        common = repeats[0] & repeats[1]
        if len(common) < 2:
            return None, len(common)
        if common != repeats[0] or common != repeats[1]:
            evaluation = Evaluation(evaluation.protocol, evaluation.dataset, evaluation.classes,
                                    [s for s in evaluation.scores if s.repeat in common])
        return evaluation.compare(a, b, "accuracy", test="paired"), len(common)


def attributes_used(model: Any, n_attributes: int) -> tuple[int, int]:
    """Attributes in the model's network and in the class's Markov blanket — those the
    prediction reads when every attribute is observed (naive-ALL: all of them)."""
    if isinstance(model, NaiveBayes):
        return n_attributes, n_attributes
    structure = model.structure
    if structure is None:
        return 0, 0
    return len(structure.selected), len(structure.markov_blanket)


def run(task: Task, methods: Sequence[str], repeats: int, seed: int = 0,
        fewer: dict[str, int] | None = None) -> Result:
    """Every method on the same ``repeats`` stratified random splits of the task's sizes
    (``fewer``: method → a smaller number of splits for it, the first ones; 0 leaves it out)."""
    fewer = fewer or {}
    methods = [m for m in methods if fewer.get(m, repeats) > 0]
    models, made = factories(task, methods)
    groups: dict[int, list[str]] = {}
    for m in methods:
        groups.setdefault(min(fewer.get(m, repeats), repeats), []).append(m)
    start = time.perf_counter()
    evaluation = None
    for n, group in sorted(groups.items(), reverse=True):
        part = validate_random_splits({m: models[m] for m in group}, task.records, task.labels,
                                      task.train_size, task.test_size, repeats=n, seed=seed,
                                      dataset=task.name)
        if evaluation is None:
            evaluation = part
        else:
            evaluation.scores.extend(part.scores)
    seconds = time.perf_counter() - start
    selected = {m: [attributes_used(model, task.n_attributes) for model in made[m]]
                for m in methods}
    return Result(task, methods, evaluation, selected, seconds)


# -- the results file --------------------------------------------------------------------------
#: Tables 4–9's marks for the verdict of other − X (X "worse": X significantly less accurate)
PAPER_MARK = {"better": "+", "worse": "−", "tie": ""}


def _test_cell(result: Result, method: str, other: str, paper_convention: bool = True) -> str:
    """The paired t-test of ``method`` against ``other``: in the paper's convention (Tables
    4–9) other − method in points, (t), "−" when ``method`` is significantly more accurate and
    "+" when significantly less; otherwise method − other, (t), and better / worse / tie.
    Tests over fewer splits than the run's say over how many."""
    models = result.evaluation.models
    if other not in models or method not in models:
        return ""
    t, n = result.compare(other, method) if paper_convention else result.compare(method, other)
    if t is None:
        return ""
    note = f", {n} splits" if n < max(result.splits(m) for m in models) else ""
    if paper_convention:
        sign = PAPER_MARK[t.verdict(0.05)]
        return f"{100 * t.mean_difference:+.2f} ({t.statistic:.2f}{note}) {sign}".rstrip()
    return f"{100 * t.mean_difference:+.2f} ({t.statistic:.2f}{note}) {t.verdict(0.05)}"


ACCURACY = [_results.column("method"), _results.column("splits"),
            _results.column("ours", "ours: accuracy %", ".2f"),
            _results.column("ours sd", "± sd", ".2f"),
            _results.column("paper", "paper", ".2f"), _results.column("paper sd", "± sd", ".2f"),
            _results.column("network", "attributes in the network (mean)", ".1f"),
            _results.column("network min", "min"), _results.column("network max", "max"),
            _results.column("blanket", "in the class's Markov blanket (mean)", ".1f"),
            _results.column("vs naive-ALL", "− naive-ALL (t)"),
            _results.column("vs CDC-AS", "− CDC-AS (t)"),
            _results.column("learn", "seconds per split: learn", ".2f"),
            _results.column("predict", "predict", ".2f")]
#: which data sets the file covers: a run writes the file after every data set, so one cut
#: short still holds those it completed
COVERAGE = [_results.column("data set"), _results.column("train"), _results.column("test"),
            _results.column("splits"), _results.column("status"),
            _results.column("seconds", "wall time (s)", ".0f")]
COMPLETE, PENDING = "complete", "not yet run"
#: Tables 4–9's X: the Info-AS methods, then ours and the diagnostics
TEST_TARGETS = ("CIG-AS", "CGR-AS", "CDC-AS", "SelectiveTAN", "CIG-AS/K2", "CGR-AS/K2",
                "CDC-AS/K2", "CIG-AS/learned", "CGR-AS/learned", "CDC-AS/learned")
TEST_OTHERS = ("naive-ALL", "naive-AS", "K2-AS", "K2-AS<", "CB")
AGREEMENT = [_results.column("data set"),
             _results.column("accuracies", "accuracies of Tables 2–3 compared"),
             _results.column("within", "within one of the paper's standard deviations"),
             _results.column("verdicts", "verdicts of Tables 4–9 compared"),
             _results.column("agree", "the same verdict here")]


def accuracy_results(result: Result) -> dict[str, Any]:
    """Tables 2–3 for one data set, ours and the paper's, with each method's attributes,
    tests against naive-ALL and CDC-AS, and time."""
    rows = []
    for m in result.methods:
        used = [n for n, _ in result.selected[m]]
        ours = result.accuracy(m)
        paper = PAPER_ACCURACY.get(result.task.name, {}).get(m)
        rows.append({
            "method": m, "splits": result.splits(m), "ours": ours[0], "ours sd": ours[1],
            "paper": paper[0] if paper else None, "paper sd": paper[1] if paper else None,
            "network": float(np.mean(used)), "network min": min(used),
            "network max": max(used),
            "blanket": float(np.mean([b for _, b in result.selected[m]])),
            "vs naive-ALL": _test_cell(result, m, "naive-ALL", paper_convention=False)
            if m != "naive-ALL" else "",
            "vs CDC-AS": _test_cell(result, m, "CDC-AS", paper_convention=False)
            if m != "CDC-AS" else "",
            "learn": float(result.evaluation.values(m, "learn_seconds").mean()),
            "predict": float(result.evaluation.values(m, "predict_seconds").mean())})
    task = result.task
    return _results.table(ACCURACY, rows, title=f"{task.name}: train {task.train_size}, test "
                          f"{task.test_size} ({result.seconds:.0f} s)")


def tests_rows(result: Result) -> list[dict[str, str]]:
    """Tables 4–9 for one data set: per X (an Info-AS method) a cell per other method, "other
    − X (t) verdict, ours / paper"."""
    rows = []
    for x in (m for m in TEST_TARGETS if m in result.methods):
        row = {"X": x, "data set": result.task.name}
        for o in (o for o in TEST_OTHERS if o in result.methods):
            paper = PAPER_TESTS.get((x, o), {}).get(result.task.name)
            theirs = f"{paper[0]:+.2f} ({paper[1]:.2f}) {paper[2]}".rstrip() if paper else "—"
            row[f"vs {o}"] = f"{_test_cell(result, x, o)} / {theirs}"
        rows.append(row)
    return rows


def agreement_row(result: Result) -> dict[str, Any]:
    """How much of the paper one data set reproduces: the paper's accuracies (Tables 2–3) that
    ours is within one of the paper's standard deviations of, and the paper's verdicts (Tables
    4–9) that our t-tests repeat. Table 8's "?" cell is no verdict and is not counted."""
    name, methods = result.task.name, result.methods
    paper = {m: a for m, a in PAPER_ACCURACY.get(name, {}).items() if a and m in methods}
    within = sum(abs(result.accuracy(m)[0] - mean) <= sd for m, (mean, sd) in paper.items())
    verdicts = agree = 0
    for (x, other), cells in PAPER_TESTS.items():
        if name not in cells or cells[name][2] == "?" or x not in methods \
                or other not in methods:
            continue
        t, _ = result.compare(other, x)
        if t is not None:
            verdicts += 1
            agree += PAPER_MARK[t.verdict(0.05)] == cells[name][2]
    return {"data set": name, "accuracies": len(paper), "within": within,
            "verdicts": verdicts, "agree": agree}


def tests_results(rows: Sequence[dict[str, str]], methods: Sequence[str],
                  datasets: Sequence[str]) -> dict[str, Any]:
    """Tables 4–9 over the data sets run, X by X in `TEST_TARGETS` order."""
    rows = sorted(rows, key=lambda r: (TEST_TARGETS.index(r["X"]), datasets.index(r["data set"])))
    columns = [_results.column("X"), _results.column("data set"),
               *(_results.column(f"vs {o}") for o in TEST_OTHERS if o in methods)]
    return _results.table(columns, rows)


@dataclass
class Done:
    """A data set's part of the results file."""

    coverage: dict[str, Any]
    accuracy: dict[str, Any] | None = None
    tests: list[dict[str, str]] | None = None
    agreement: dict[str, Any] | None = None


def completed(path: str, command: str) -> dict[str, Done]:
    """The data sets a results file holds complete, if it is a run of ``command``."""
    try:
        record = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise SystemExit(f"--resume: cannot read {path}: {error}") from None
    if record.get("command") != command:
        raise SystemExit(f"--resume: {path} holds a run of `{record.get('command')}`, not of "
                         f"`{command}`")
    tables = record["tables"]

    def part(table: str, name: str) -> list[dict[str, Any]]:
        return [r for r in tables[table]["rows"] if r["data set"] == name]

    return {row["data set"]: Done(row, tables[f"accuracy-{row['data set']}"],
                                  part("tests", row["data set"]),
                                  part("agreement", row["data set"])[0])
            for row in tables["datasets"]["rows"] if row["status"] == COMPLETE}


def results_tables(done: dict[str, Done], methods: Sequence[str],
                   datasets: Sequence[str]) -> dict[str, Any]:
    """The results file's tables: ``datasets`` (what the file covers), ``accuracy-<data set>``
    (Tables 2–3), ``tests`` (Tables 4–9) and ``agreement`` (how much of them reproduces, per
    data set and over all that ran)."""
    tables = {"datasets": _results.table(COVERAGE, [done[d].coverage for d in datasets])}
    tables |= {f"accuracy-{d}": done[d].accuracy for d in datasets if done[d].accuracy}
    tables["tests"] = tests_results([r for d in datasets for r in done[d].tests or []],
                                    methods, datasets)
    rows = [done[d].agreement for d in datasets if done[d].agreement]
    total = {"data set": "all data sets run"} | {
        key: sum(r[key] for r in rows) for key in ("accuracies", "within", "verdicts", "agree")}
    tables["agreement"] = _results.table(AGREEMENT, [*rows, total])
    return tables


def coverage_notes(done: dict[str, Done], datasets: Sequence[str]) -> str:
    notes = []
    if skipped := [f"{d} ({done[d].coverage['status'].removeprefix('not run: ')})"
                   for d in datasets if done[d].coverage["status"].startswith("not run:")]:
        notes.append("Not run: " + "; ".join(skipped) + ".")
    if pending := [d for d in datasets if done[d].coverage["status"] == PENDING]:
        notes.append("Not yet run (the run stopped before them): " + ", ".join(pending) + ".")
    return " ".join(notes)


def _fewer(spec: str) -> tuple[str, str, int]:
    try:
        dataset, method, repeats = spec.split(":")
        return dataset, method, int(repeats)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected DATASET:METHOD:REPEATS, got {spec!r}"
                                         ) from error


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="random splits (paper: 30)")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--methods", nargs="+", default=list(DEFAULT_METHODS),
                        choices=METHODS)
    parser.add_argument("--seed", type=int, default=0, help="seed of the splits")
    parser.add_argument("--fewer", type=_fewer, action="append", default=[],
                        metavar="DATASET:METHOD:REPEATS",
                        help="run METHOD on DATASET over the first REPEATS splits only, 0: not "
                             "at all (for a method too slow there; repeatable)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the data sets the results file holds complete from a run of "
                             "the same command, and run the others")
    _results.add_arguments(parser, "reproduce_singh_provan")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    if args.resume and args.no_results:
        parser.error("--resume continues the results file: not with --no-results")
    methods = [m for m in METHODS if m in args.methods]
    datasets = list(dict.fromkeys(args.datasets))
    recorded = [a for a in argv if a != "--resume"]  # a resumed run is the same command
    command = _results.command(recorded, __file__)
    done = completed(args.results, command) if args.resume else {}
    for name in datasets:
        done.setdefault(name, Done({"data set": name, "status": PENDING}))

    def write() -> None:
        _results.write_from_args(args, "reproduce_singh_provan",
                                 results_tables(done, methods, datasets), argv=recorded,
                                 script=__file__, notes=coverage_notes(done, datasets))

    tasks: dict[str, Task] = {}  # prepared first: the file names at once what cannot run
    for name in datasets:
        if done[name].coverage["status"] == COMPLETE:
            print(f"{name}: complete in {args.results}", flush=True)
            continue
        try:
            tasks[name] = prepare(name)
        except LookupError as error:
            done[name] = Done({"data set": name, "status": f"not run: {error}"})
            print(f"{name}: not run ({error})", flush=True)
    for name, task in tasks.items():
        result = run(task, methods, args.repeats, args.seed,
                     {m: n for d, m, n in args.fewer if d == name})
        accuracy = accuracy_results(result)
        done[name] = Done({"data set": name, "train": task.train_size, "test": task.test_size,
                           "splits": max(result.splits(m) for m in result.methods),
                           "status": COMPLETE, "seconds": result.seconds},
                          accuracy, tests_rows(result), agreement_row(result))
        print(f"### {accuracy['title']}\n\n{_results.render(accuracy)}\n", flush=True)
        write()
    tables = results_tables(done, methods, datasets)
    print(_results.render(tables["tests"]))
    write()
    return tables


if __name__ == "__main__":
    main()
