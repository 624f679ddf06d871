"""Selective TAN on the SpamAssassin stream, against naive Bayes and TAN (docs/selective.md).

Prequential (predict, then learn, message by message in time order) on the 6,046 messages,
each a set of binary token attributes (``tokenize_email``). TAN and the selective models see the
same top-K token preselection: their pairwise counts (and Info-AS's candidates) are the K tokens
of highest I(token; class) in the counts, refreshed at every relearn; every relearn_every
messages the structure is re-learned. Indifferent NB uses the whole vocabulary. Reported:
accuracy, AUC, LogScore (Σ −log P(true class)), the size of the last selection, and time.

Run: ``python benchmarks/selective_spamassassin.py [--candidates 100] [--relearn-every 500]``.
"""

from __future__ import annotations

import argparse
import time

from streamnb import TAN, IndifferentNB, SelectiveNB, SelectiveTAN
from streamnb.datasets import iter_spamassassin_stream
from streamnb.evaluate import prequential
from streamnb.features import tokenize_email


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=100, help="top-K tokens")
    parser.add_argument("--relearn-every", type=int, default=500)
    parser.add_argument("--limit", type=int, default=0, help="first N messages only")
    args = parser.parse_args()
    k, every = args.candidates, args.relearn_every
    models = {
        "Indifferent NB (all tokens)": IndifferentNB,
        f"TAN (top {k})": lambda: TAN(max_candidates=k, relearn_every=every),
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
    }
    messages = list(iter_spamassassin_stream())
    if args.limit:
        messages = messages[: args.limit]
    stream = [({t: True for t in tokenize_email(m.text)}, m.label) for m in messages]
    print(f"{len(stream)} messages in time order, {sum(y == 'spam' for _, y in stream)} spam; "
          f"top-{k} token candidates, relearn every {every}\n")
    print("| model | accuracy | AUC | LogScore | selected (last relearn) | seconds |")
    print("|---|---|---|---|---|---|")
    for name, make in models.items():
        model = make()
        start = time.perf_counter()
        result = prequential(model, stream, positive="spam", every=len(stream))
        seconds = time.perf_counter() - start
        structure = getattr(model, "structure", None)
        selected = (len(structure.selected) if hasattr(structure, "selected")
                    else "all" if structure is None else len(structure.parents))
        print(f"| {name} | {result.accuracy():.4f} | {result.auc():.4f} | "
              f"{result.log_score():,.1f} | {selected} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
