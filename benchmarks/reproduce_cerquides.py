"""Cerquides & López de Màntaras, "The Indifferent Naive Bayes classifier": MAPNB (maximum
likelihood frequencies), BIBL (uniform Dirichlet priors) and IndifferentNB (eq. 16–17), with
the paper's protocol: 5 equal-frequency intervals for continuous attributes (fitted on each
training fold), cross-validation training on the whole learning fold and on 10% of it,
accuracy and LogScore (eq. 18). The paper reports its results as win counts over 16 data sets
(its Figures 4–5); we count wins over every data set of its Table 1 that an installed package
ships, with a paired t-test per data set.

Run: ``python benchmarks/reproduce_cerquides.py [--folds 10] [--repeats 5]``; it writes
``benchmarks/results/reproduce_cerquides.json`` (``--results``, ``--no-results``), the tables of
docs/results/cerquides.md.
"""

from __future__ import annotations

import argparse
import math
import time

import _results  # benchmarks/_results.py

from streamnb import IndifferentNB, NaiveBayes
from streamnb.datasets import PAPER_DATASETS, load
from streamnb.evaluate import cross_validate
from streamnb.features import EqualFrequencyDiscretizer

MODELS = {"MAPNB": lambda: NaiveBayes(estimator="ml"),
          "BIBL": lambda: NaiveBayes(estimator="bibl"),
          "IndifferentNB": IndifferentNB}
# what the paper reports with 10% of the learning fold (section 5, Figures 4–5)
PAPER_CLAIMS = [
    ("IndifferentNB vs MAPNB, accuracy", "better on 10 of 16 data sets (up to +40%)"),
    ("IndifferentNB vs MAPNB, LogScore", "better on 14 of 16 (up to almost 100%)"),
    ("IndifferentNB vs BIBL, accuracy", "better on 12 of 16 (up to +6%)"),
    ("IndifferentNB vs BIBL, LogScore", "better on 11 of 16 (up to 11%)"),
]


COLUMNS = [_results.column("paper", "data set (paper)"), _results.column("copy", "copy used"),
           _results.column("training", fmt=".0%")]
for _metric, _label, _scale, _fmt in (("accuracy", "acc %", 100, ".2f"),
                                      ("log_score", "LogScore", 1, ".1f")):
    for _model in MODELS:
        COLUMNS += [_results.column(f"{_model} {_metric}", f"{_model} {_label}", _fmt),
                    _results.column(f"{_model} {_metric} se", "±", _fmt)]
SCALE = {"accuracy": 100, "log_score": 1}
WIN_COLUMNS = [_results.column("comparison"), _results.column("paper", "paper (16 data sets)"),
               _results.column("better", "better here on"), _results.column("of", "of"),
               _results.column("gain", "best gain", "+.0%")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    _results.add_arguments(parser, "reproduce_cerquides")
    args = parser.parse_args(argv)
    entries = [e for e in PAPER_DATASETS if e.paper.startswith("Cerquides")]
    rows: list[dict] = []
    wins = {claim: [0, 0, 0.0] for claim, _ in PAPER_CLAIMS}  # wins, data sets, best gain
    for entry in entries:
        if entry.dataset is None:
            rows.append({"paper": entry.name, "copy": "not shipped by any installed package"})
            continue
        data = load(entry.dataset)
        for fraction in (1.0, 0.1):
            start = time.perf_counter()
            result = cross_validate(MODELS, data.records, data.labels, k=args.folds,
                                    repeats=args.repeats, seed=0, train_fraction=fraction,
                                    discretizer=lambda: EqualFrequencyDiscretizer(bins=5),
                                    dataset=data.name)
            row = {"paper": entry.name, "copy": data.name, "training": fraction}
            for metric, scale in SCALE.items():
                for model, (mean, se) in result.summary(metric).items():
                    row[f"{model} {metric}"] = mean * scale
                    row[f"{model} {metric} se"] = se * scale if math.isfinite(mean) else None
            rows.append(row)
            print(_results.render_row(COLUMNS, row), f"({time.perf_counter() - start:.0f} s)",
                  flush=True)
            if fraction == 0.1:
                for rival in ("MAPNB", "BIBL"):
                    for metric, higher in (("accuracy", True), ("log_score", False)):
                        ours, theirs = result.summary(metric)["IndifferentNB"][0], \
                            result.summary(metric)[rival][0]
                        name = (f"IndifferentNB vs {rival}, "
                                f"{'accuracy' if metric == 'accuracy' else 'LogScore'}")
                        better = ours > theirs if higher else ours < theirs
                        gain = ((ours - theirs) / theirs if higher else
                                (theirs - ours) / theirs if math.isfinite(theirs) else 1.0)
                        wins[name][0] += better
                        wins[name][1] += 1
                        wins[name][2] = max(wins[name][2], gain)
    win_rows = [{"comparison": claim, "paper": paper, "better": wins[claim][0],
                 "of": wins[claim][1], "gain": wins[claim][2]} for claim, paper in PAPER_CLAIMS]
    for row in win_rows:
        print(_results.render_row(WIN_COLUMNS, row))
    _results.write_from_args(
        args, "reproduce_cerquides",
        {"accuracy": _results.table(COLUMNS, rows), "wins": _results.table(WIN_COLUMNS, win_rows)},
        argv=argv, script=__file__,
        notes=(f"{args.folds}-fold CV × {args.repeats} (seeded), 5 equal-frequency intervals "
               "fitted on each training fold; mean ± standard error over the folds; LogScore "
               "summed over each test fold; wins with 10% of the learning fold."))


if __name__ == "__main__":
    main()
