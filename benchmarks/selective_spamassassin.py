"""Selective TAN on the SpamAssassin stream, against naive Bayes and TAN (docs/selective.md).

Prequential (predict, then learn, message by message in time order) on the 6,046 messages,
under both event models: ``bernoulli`` (each message a set of binary token attributes
``{token: True}``) and ``text`` (one text attribute ``{"tokens": bag}``: the tokens in the
model's network binary, every other token through the multinomial; docs/selective.md "On the
text event model"); tokens are ``tokenize_email(message.raw)``, sorted so that the order they
are first registered in does not follow the process's string hashing. TAN and the selective
models see the same top-K token preselection: their pairwise counts (and Info-AS's candidates)
are the K tokens of highest I(token; class) in the counts, refreshed at every relearn; every
relearn_every messages the structure is re-learned. Naive Bayes uses the whole vocabulary.
Reported: accuracy, AUC, LogScore (Σ −log P(true class)), the size of the last selection, and
time.

Run: ``python benchmarks/selective_spamassassin.py [--candidates 100] [--relearn-every 500]
[--event-model text|bernoulli|both] [--only NAME] [--exclude NAME] [--merge]``; it writes
``benchmarks/results/selective_spamassassin.json`` (``--results``, ``--no-results``). A run in
parts: ``--exclude SelectiveBN``, then ``--only SelectiveBN --merge`` (CB's search at every
relearn is most of the time), which adds its rows and its command to the file.
"""

from __future__ import annotations

import argparse
import time

import _results  # benchmarks/_results.py
from spam_streams import event_model_streams  # benchmarks/spam_streams.py

from streamnb import TAN, IndifferentNB, NaiveBayes, SelectiveBN, SelectiveNB, SelectiveTAN
from streamnb.estimators import MEstimate
from streamnb.evaluate import prequential

COLUMNS = [_results.column("model"), _results.column("event model"),
           _results.column("accuracy", fmt=".4f"), _results.column("AUC", fmt=".4f"),
           _results.column("LogScore", fmt=",.1f"),
           _results.column("selected", "selected (last relearn)"),
           _results.column("seconds", fmt=".1f")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=100, help="top-K tokens")
    parser.add_argument("--relearn-every", type=int, default=500)
    parser.add_argument("--limit", type=int, default=0, help="first N messages only")
    parser.add_argument("--event-model", choices=("text", "bernoulli", "both"), default="both")
    parser.add_argument("--only", default="", help="models whose name contains this only")
    parser.add_argument("--exclude", default="", help="leave out the models whose name "
                        "contains this (e.g. 'SelectiveBN': CB's search is most of the time)")
    _results.add_arguments(parser, "selective_spamassassin", merge=True)
    args = parser.parse_args(argv)
    k, every = args.candidates, args.relearn_every
    models = {
        "Indifferent NB (all tokens)": IndifferentNB,
        "NB m-estimate m=0.1 (all tokens)": lambda: NaiveBayes(estimator=MEstimate(m=0.1)),
        # the same tree weight and estimates as SelectiveTAN's defaults
        f"TAN (top {k})": lambda: TAN(weight="cmi", estimator="indifferent", max_candidates=k,
                                      relearn_every=every),
        f"SelectiveTAN cgr (top {k})": lambda: SelectiveTAN(metric="cgr", max_candidates=k,
                                                             relearn_every=every, seed=0),
        f"SelectiveTAN cdc (top {k})": lambda: SelectiveTAN(metric="cdc", max_candidates=k,
                                                             relearn_every=every, seed=0),
        f"SelectiveTAN cig (top {k})": lambda: SelectiveTAN(metric="cig", max_candidates=k,
                                                             relearn_every=every, seed=0),
        f"SelectiveTAN cgr χ² 0.01 (top {k})": lambda: SelectiveTAN(
            metric="cgr", significance=0.01, max_candidates=k, relearn_every=every, seed=0),
        f"SelectiveNB cgr (top {k})": lambda: SelectiveNB(metric="cgr", max_candidates=k,
                                                           relearn_every=every, seed=0),
        f"SelectiveBN cgr, CB (top {k})": lambda: SelectiveBN(metric="cgr", max_candidates=k,
                                                               relearn_every=every, seed=0),
        f"SelectiveTAN cgr α=0.1 (top {k})": lambda: SelectiveTAN(
            metric="cgr", max_candidates=k, relearn_every=every, alpha=0.1, seed=0),
        f"SelectiveNB cgr α=0.1 (top {k})": lambda: SelectiveNB(
            metric="cgr", max_candidates=k, relearn_every=every, alpha=0.1, seed=0),
    }
    only = {"Indifferent NB (all tokens)": "bernoulli",
            "NB m-estimate m=0.1 (all tokens)": "text",
            f"SelectiveTAN cgr α=0.1 (top {k})": "text",
            f"SelectiveNB cgr α=0.1 (top {k})": "text"}  # the other models: both
    messages, streams = event_model_streams(args.limit or None)
    print(f"{len(messages)} messages in time order, "
          f"{sum(m.label == 'spam' for m in messages)} spam; "
          f"top-{k} token candidates, relearn every {every}\n")
    rows = []
    for name, make in models.items():
        if args.only not in name or (args.exclude and args.exclude in name):
            continue
        for event_model, stream in streams.items():
            if (args.event_model not in ("both", event_model)
                    or only.get(name, event_model) != event_model):
                continue
            model = make()
            start = time.perf_counter()
            result = prequential(model, stream, positive="spam", every=len(stream))
            seconds = time.perf_counter() - start
            structure = getattr(model, "structure", None)
            selected = (len(structure.selected) if hasattr(structure, "selected")
                        else "all" if structure is None else len(structure.parents))
            rows.append({"model": name, "event model": event_model,
                         "accuracy": result.accuracy(), "AUC": result.auc(),
                         "LogScore": result.log_score(), "selected": selected,
                         "seconds": seconds})
            print(_results.render_row(COLUMNS, rows[-1]), flush=True)
    limited = [f"the first {len(messages):,} messages" if args.limit else "",
               f"{args.event_model} event model only" if args.event_model != "both" else ""]
    if not args.merge:  # a merged file's coverage is its parts' (their commands are shown)
        limited += [f"models named `{args.only}`" if args.only else "",
                    f"models named `{args.exclude}` left out" if args.exclude else ""]
    limited = [x for x in limited if x]
    _results.write_from_args(
        args, "selective_spamassassin", {"models": _results.table(COLUMNS, rows)}, argv=argv,
        script=__file__, notes=f"Limited run: {', '.join(limited)}." if limited else "",
        merge_key=("model", "event model"))


if __name__ == "__main__":
    main()
