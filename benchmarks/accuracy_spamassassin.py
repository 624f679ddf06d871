"""Accuracy of every estimator on the SpamAssassin stream (the table in docs/accuracy.md).

Prequential (predict, then learn, message by message in time order) and a time-ordered holdout
(learn the first 70% in one batch, score the last 30%). Run:
``python benchmarks/accuracy_spamassassin.py``.
"""

from __future__ import annotations

import numpy as np

from streamnb import Dirichlet, IndifferentNB, MEstimate, NaiveBayes
from streamnb.datasets import iter_spamassassin_stream
from streamnb.evaluate import exact_auc, prequential
from streamnb.features import tokenize_email

MODELS = {
    "ml (MAPNB)": lambda: NaiveBayes(estimator="ml"),
    "laplace": lambda: NaiveBayes(estimator="laplace"),
    "m-estimate m=0.1": lambda: NaiveBayes(estimator=MEstimate(m=0.1)),
    "m-estimate m=0.01": lambda: NaiveBayes(estimator=MEstimate(m=0.01)),
    "bibl (uniform)": lambda: NaiveBayes(estimator="bibl"),
    "bibl σ=4 (every cell)": lambda: NaiveBayes(estimator=Dirichlet(value_prior=4.0)),
    "indifferent": IndifferentNB,
}


def main() -> None:
    messages = list(iter_spamassassin_stream())
    stream = [({t: True for t in tokenize_email(m.text)}, m.label) for m in messages]
    cut = int(0.7 * len(stream))
    train, test = stream[:cut], stream[cut:]
    truth = np.array([y for _, y in test])
    print(f"{len(stream)} messages; holdout: first {cut} learned, last {len(test)} scored\n")
    print("| estimator | prequential accuracy | prequential AUC | prequential LogScore "
          "| holdout accuracy | holdout AUC |")
    print("|---|---|---|---|---|---|")
    for name, make in MODELS.items():
        result = prequential(make(), stream, positive="spam", every=len(stream))
        model = make()
        model.learn_many([x for x, _ in train], [y for _, y in train])
        logs = [model.predict_log_proba_one(x) for x, _ in test]
        predicted = np.array([max(lp, key=lp.__getitem__) for lp in logs])
        log_odds = [lp["spam"] - lp["ham"] for lp in logs]
        print(f"| {name} | {result.accuracy():.4f} | {result.auc():.4f} | "
              f"{result.log_score():,.1f} | {np.mean(predicted == truth):.4f} | "
              f"{exact_auc(truth == 'spam', log_odds):.4f} |")


if __name__ == "__main__":
    main()
