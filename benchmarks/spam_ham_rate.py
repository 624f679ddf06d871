"""The ham loss the operator sets against the one they get: ``SpamFilter(max_ham_rate=r)``
prequentially on both corpora, next to bogofilter and spamprobe in the same run.

For each corpus and each target r (0.1 %, 0.5 %, 1 %), the filter scores every message, calls
it spam iff its score is above the threshold in force, then learns it (full, immediate
feedback). Reported: the realised share of ham called spam and the share of spam missed, over
the whole stream and after the warm-up (from the first message scored with a learned
threshold on). bogofilter and spamprobe have no such setting: each is run prequentially once,
and its spam miss is read off its ROC at the realised ham rate of each target — the best any
fixed cutoff chosen with hindsight could do for it. Run:
``python benchmarks/spam_ham_rate.py [--corpora spamassassin,sms] [--limit N]``; the results go
to ``benchmarks/results/spam_ham_rate.json``, the table of docs/spam.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _results
from spam_filters import (
    SPAM,
    Setup,
    corpora,
    run_system,
    systems,
    tool_versions,
    write_samples,
)

from streamnb import SpamFilter
from streamnb.evaluate import operating_points

TARGETS = (0.001, 0.005, 0.01)


def run_target(samples: list, rate: float) -> dict[str, float]:
    f = SpamFilter(max_ham_rate=rate)
    called, learned = [], []
    start = time.perf_counter()
    for s in samples:
        learned.append(f.threshold_learned)
        called.append(f.score_one(s.text) > f.current_threshold)
        f.learn_one(s.text, s.label)
    seconds = time.perf_counter() - start
    spam = np.array([s.label == SPAM for s in samples])
    called, learned = np.array(called), np.array(learned)
    warm_up = int(np.argmax(learned)) if learned.any() else len(samples)
    after = np.arange(len(samples)) >= warm_up
    return {
        "target %": 100 * rate,
        "ham called spam %": 100 * float(called[~spam].mean()),
        "spam missed %": 100 * float((~called[spam]).mean()),
        "warm-up messages": warm_up,
        "ham called spam after warm-up %": 100 * float(called[~spam & after].mean()),
        "spam missed after warm-up %": 100 * float((~called[spam & after]).mean()),
        "final threshold": f.current_threshold,
        "messages/s": len(samples) / seconds,
    }


COLUMNS = [
    _results.column("corpus"), _results.column("target %", "target ham loss %", ".1f"),
    _results.column("warm-up messages", fmt=",d"),
    _results.column("ham called spam after warm-up %", "ham loss % after warm-up", ".3f"),
    _results.column("spam missed after warm-up %", "spam miss % after warm-up", ".2f"),
    _results.column("ham called spam %", "ham loss % (whole stream)", ".3f"),
    _results.column("spam missed %", "spam miss % (whole stream)", ".2f"),
    _results.column("bogofilter spam missed %", "bogofilter spam miss % at that ham loss", ".2f"),
    _results.column("spamprobe spam missed %", "spamprobe spam miss % at that ham loss", ".2f"),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", default="spamassassin,sms")
    parser.add_argument("--limit", type=int, default=None, help="first N messages of each")
    _results.add_arguments(parser, "spam_ham_rate")
    args = parser.parse_args(argv)
    known = corpora()
    rows = []
    for name in args.corpora.split(","):
        corpus = known[name]
        with tempfile.TemporaryDirectory() as scratch:
            samples = write_samples(corpus, Path(scratch) / "messages", args.limit)
            spam = np.array([s.label == SPAM for s in samples])
            tools, available = {}, systems()
            for tool in ("bogofilter", "spamprobe"):
                directory = Path(scratch) / tool
                directory.mkdir()
                setup = Setup(directory, lambda s, corpus=corpus: corpus.tokenize(s))
                tools[tool] = run_system(tool, available[tool], samples, setup).scores
        for rate in TARGETS:
            row = {"corpus": name, **run_target(samples, rate)}
            # the tools' best fixed cutoff at the ham loss the filter realised (whole stream)
            realised = row["ham called spam %"]
            for tool, scores in tools.items():
                row[f"{tool} spam missed %"] = operating_points(
                    spam, scores, ham_losses=[realised], spam_misses=[])[
                    f"spam miss % at ham loss {realised:g} %"]
            rows.append(row)
    table = _results.table(COLUMNS, rows)
    print(_results.render(table))
    _results.write_from_args(args, "spam_ham_rate", {"targets": table}, argv=argv,
                             script=__file__, extra_machine=tool_versions(),
                             notes="" if args.limit is None else f"first {args.limit} messages")


if __name__ == "__main__":
    main()
