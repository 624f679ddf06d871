"""Accuracy of every estimator on the SpamAssassin stream (the table in docs/accuracy.md).

Prequential (predict, then learn, message by message in time order) and a time-ordered holdout
(learn the first 70% in one batch, score the last 30%). Run:
``python benchmarks/accuracy_spamassassin.py``; it writes
``benchmarks/results/accuracy_spamassassin.json`` (``--results``, ``--no-results``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from streamnb import Dirichlet, IndifferentNB, MEstimate, NaiveBayes
from streamnb.datasets import iter_spamassassin_stream
from streamnb.evaluate import exact_auc, prequential
from streamnb.features import tokenize_email

sys.path.insert(0, str(Path(__file__).parent))
import _results  # a sibling script, not a package

MODELS = {
    "ml (MAPNB)": lambda: NaiveBayes(estimator="ml"),
    "laplace": lambda: NaiveBayes(estimator="laplace"),
    "m-estimate m=0.1": lambda: NaiveBayes(estimator=MEstimate(m=0.1)),
    "m-estimate m=0.01": lambda: NaiveBayes(estimator=MEstimate(m=0.01)),
    "bibl (uniform)": lambda: NaiveBayes(estimator="bibl"),
    "bibl σ=4 (every cell)": lambda: NaiveBayes(estimator=Dirichlet(value_prior=4.0)),
    "indifferent": IndifferentNB,
}


COLUMNS = [_results.column("estimator"),
           _results.column("prequential accuracy", fmt=".4f"),
           _results.column("prequential AUC", fmt=".4f"),
           _results.column("prequential LogScore", fmt=",.1f"),
           _results.column("holdout accuracy", fmt=".4f"),
           _results.column("holdout AUC", fmt=".4f")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _results.add_arguments(parser, "accuracy_spamassassin")
    args = parser.parse_args(argv)
    messages = list(iter_spamassassin_stream())
    stream = [({t: True for t in tokenize_email(m.text)}, m.label) for m in messages]
    cut = int(0.7 * len(stream))
    train, test = stream[:cut], stream[cut:]
    truth = np.array([y for _, y in test])
    print(f"{len(stream)} messages; holdout: first {cut} learned, last {len(test)} scored\n")
    rows = []
    for name, make in MODELS.items():
        result = prequential(make(), stream, positive="spam", every=len(stream))
        model = make()
        model.learn_many([x for x, _ in train], [y for _, y in train])
        logs = [model.predict_log_proba_one(x) for x, _ in test]
        predicted = np.array([max(lp, key=lp.__getitem__) for lp in logs])
        log_odds = [lp["spam"] - lp["ham"] for lp in logs]
        row = {"estimator": name, "prequential accuracy": result.accuracy(),
               "prequential AUC": result.auc(), "prequential LogScore": result.log_score(),
               "holdout accuracy": float(np.mean(predicted == truth)),
               "holdout AUC": exact_auc(truth == "spam", log_odds)}
        rows.append(row)
        print(_results.render_row(COLUMNS, row), flush=True)
    tables = {"estimators": _results.table(COLUMNS, rows)}
    _results.write_from_args(args, "accuracy_spamassassin", tables, argv=argv, script=__file__)


if __name__ == "__main__":
    main()
