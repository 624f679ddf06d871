"""The Bernoulli and the multinomial event model side by side, for every estimator, on both
spam corpora (the table in docs/text.md).

Prequential (score each message, then learn it), whole stream, in the corpus order: token
attributes ``{token: True}`` (Bernoulli: every absent token of the vocabulary is a factor)
against one text attribute ``{"tokens": set}`` (binary multinomial: only the message's
tokens). Run: ``python benchmarks/text_event_models.py``; it writes
``benchmarks/results/text_event_models.json`` (``--results``, ``--no-results``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from streamnb import Dirichlet, IndifferentNB, MEstimate, NaiveBayes
from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
from streamnb.evaluate import prequential
from streamnb.features import tokenize_email, tokenize_sms

sys.path.insert(0, str(Path(__file__).parent))
import _results  # a sibling script, not a package

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


COLUMNS = [_results.column("corpus"), _results.column("estimator"),
           _results.column("event model"), _results.column("accuracy", fmt=".4f"),
           _results.column("AUC", fmt=".5f"), _results.column("1-ROCA %", fmt=".3f"),
           _results.column("ham→spam %", fmt=".2f"), _results.column("spam→ham %", fmt=".2f"),
           _results.column("msg/s", fmt=",.0f")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    _results.add_arguments(parser, "text_event_models")
    args = parser.parse_args(argv)
    rows = []
    for corpus, messages in corpora().items():
        streams = {
            "Bernoulli (tokens)": [(dict.fromkeys(t, True), y) for t, y in messages],
            "multinomial (text)": [({"tokens": t}, y) for t, y in messages],
        }
        for name, make in ESTIMATORS.items():
            for model_name, stream in streams.items():
                start = time.perf_counter()
                r = prequential(make(), stream, positive="spam", every=len(stream))
                row = {"corpus": corpus, "estimator": name, "event model": model_name,
                       "accuracy": r.accuracy(), "AUC": r.auc(),
                       "1-ROCA %": r.one_minus_roca(),
                       "ham→spam %": r.ham_misclassification(),
                       "spam→ham %": r.spam_misclassification(),
                       "msg/s": len(stream) / (time.perf_counter() - start)}
                rows.append(row)
                print(_results.render_row(COLUMNS, row), flush=True)
    _results.write_from_args(args, "text_event_models", {"event_models":
                             _results.table(COLUMNS, rows)}, argv=argv, script=__file__)


if __name__ == "__main__":
    main()
