"""The Bernoulli and the multinomial event model side by side, for every estimator, on both
spam corpora (the table in docs/text.md).

Prequential (score each message, then learn it), whole stream, in the corpus order: token
attributes ``{token: True}`` (Bernoulli: every absent token of the vocabulary is a factor)
against one text attribute ``{"tokens": set}`` (binary multinomial: only the message's
tokens). Run: ``python benchmarks/text_event_models.py``.
"""

from __future__ import annotations

import time

from streamnb import Dirichlet, IndifferentNB, MEstimate, NaiveBayes
from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
from streamnb.evaluate import prequential
from streamnb.features import tokenize_email, tokenize_sms

ESTIMATORS = {
    "ml (MAPNB)": lambda: NaiveBayes(estimator="ml"),
    "laplace": lambda: NaiveBayes(estimator="laplace"),
    "m-estimate m=0.1 (Lidstone)": lambda: NaiveBayes(estimator=MEstimate(m=0.1)),
    "bibl σ=4": lambda: NaiveBayes(estimator=Dirichlet(value_prior=4.0)),
    "indifferent": IndifferentNB,
}


def corpora() -> dict[str, list[tuple[frozenset, str]]]:
    return {
        "SpamAssassin": [(tokenize_email(m.raw), m.label) for m in iter_spamassassin_stream()],
        "SMS": [(tokenize_sms(m.text), m.label) for m in iter_sms_spam_stream()],
    }


def main() -> None:
    print("| corpus | estimator | event model | accuracy | AUC | 1-ROCA % | ham→spam % | "
          "spam→ham % | msg/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for corpus, messages in corpora().items():
        streams = {
            "Bernoulli (tokens)": [(dict.fromkeys(t, True), y) for t, y in messages],
            "multinomial (text)": [({"tokens": t}, y) for t, y in messages],
        }
        for name, make in ESTIMATORS.items():
            for model_name, stream in streams.items():
                start = time.perf_counter()
                r = prequential(make(), stream, positive="spam", every=len(stream))
                rate = len(stream) / (time.perf_counter() - start)
                print(f"| {corpus} | {name} | {model_name} | {r.accuracy():.4f} | "
                      f"{r.auc():.5f} | {r.one_minus_roca():.3f} | "
                      f"{r.ham_misclassification():.2f} | {r.spam_misclassification():.2f} | "
                      f"{rate:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
