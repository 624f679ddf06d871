"""The ham loss the operator sets against the one they get: ``SpamFilter(max_ham_rate=r)``
prequentially on both corpora, next to bogofilter and spamprobe in the same run.

For each corpus and each target r (0.1 %, 0.5 %, 1 %), the filter scores every message, calls
it spam iff its score is above the threshold in force, then learns it (full, immediate
feedback). Reported: the realised share of ham called spam and the share of spam missed, over
the whole stream and after the warm-up (from the first message scored with a learned
threshold on). bogofilter and spamprobe have no such setting: each is run prequentially once,
and its spam miss is read off its ROC at the realised ham rate of each target — the best any
fixed cutoff chosen with hindsight could do for it. Run:
``python benchmarks/spam_ham_rate.py [--corpora spamassassin,sms] [--limit N] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from spam_filters import (
    SPAM,
    Setup,
    corpora,
    run_system,
    systems,
    write_samples,
)

from streamnb import SpamFilter

TARGETS = (0.001, 0.005, 0.01)


def spam_miss_at_ham_rate(spam: np.ndarray, scores: np.ndarray, ham_rate: float) -> float:
    """The smallest share of spam at or below a cutoff that calls at most ``ham_rate`` of the
    ham spam (spam iff score > cutoff), over every cutoff: a point of the ROC."""
    ham = np.sort(scores[~spam])[::-1]
    allowed = int(np.floor(ham_rate * len(ham) + 1e-9))  # ham that may lie above the cutoff
    cutoff = ham[allowed] if allowed < len(ham) else -np.inf
    return float(np.mean(scores[spam] <= cutoff))


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", default="spamassassin,sms")
    parser.add_argument("--limit", type=int, default=None, help="first N messages of each")
    parser.add_argument("--json", default="benchmarks/results/spam_ham_rate.json")
    args = parser.parse_args(argv)
    known = corpora()
    results: dict[str, dict] = {}
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
                tools[tool] = np.asarray(run_system(tool, available[tool], samples, setup).scores)
        rows = []
        for rate in TARGETS:
            row = run_target(samples, rate)
            realised = row["ham called spam %"] / 100
            for tool, scores in tools.items():
                row[f"{tool} spam missed % at the same ham rate"] = 100 * spam_miss_at_ham_rate(
                    spam, scores, realised)
            rows.append(row)
            print(f"{name} target {100 * rate:.1f} %: " + ", ".join(
                f"{k} {v:.3f}" for k, v in row.items() if k != "target %"), flush=True)
        results[name] = {"messages": len(samples), "spam": int(spam.sum()), "rows": rows}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"command": " ".join(
        ["python", "benchmarks/spam_ham_rate.py", *(argv if argv is not None else sys.argv[1:])]),
        "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
