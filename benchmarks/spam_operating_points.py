"""The spam filters at fixed operating points on both corpora: the results file behind
README.md's table.

Each system of ``benchmarks/spam_filters.py`` runs prequentially (scores, then learns, every
message, from an empty state) on SpamAssassin (time order) and on the SMS Spam Collection (file
order). From its per-message scores this script reads the TREC spam track's operating points:
the least spam missed (spam misclassification %) among the thresholds that lose at most 0.1 %,
or 1 %, of the ham (ham misclassification %), and 1-ROCA %. The results, with the command, the
machine and the date, go to ``benchmarks/results/spam_operating_points.json``; ``table`` prints
README's table from that file (tests/test_docs.py checks that README shows it).

Run: ``python benchmarks/spam_operating_points.py run`` (both corpora, about 40 minutes on two
busy cores; bogofilter and spamprobe from Debian), then ``python benchmarks/spam_operating_points.py
table``. ``run --scores spamassassin=A.csv --scores sms=B.csv`` reads the per-message scores
that ``spam_filters.py --scores`` wrote instead of running the systems again.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from streamnb.evaluate import operating_points as evaluate_points

sys.path.insert(0, str(Path(__file__).resolve().parent))
import spam_filters  # a script beside this one, not a package

RESULTS = Path(__file__).resolve().parent / "results" / "spam_operating_points.json"
SYSTEMS = ["bogofilter", "spamprobe", "sgd-logreg", "river-mnb-tokens", "streamnb SpamFilter"]
CORPORA = {"spamassassin": "SpamAssassin", "sms": "SMS"}
HAM_LOSSES = [0.1, 1.0]  # % of the ham called spam


def operating_points(labels: list[str], scores: list[float]) -> dict[str, Any]:
    """Spam missed % at each ham loss of `HAM_LOSSES` (the best ROC point whose ham
    misclassification is at most that loss) and 1-ROCA %, from one system's scores.

    Examples
    --------
    >>> operating_points(["spam", "ham", "spam", "ham"], [0.9, 0.1, 0.4, 0.5])
    {'spam_missed_percent': {'0.1': 50.0, '1.0': 50.0}, 'one_minus_roca_percent': 25.0}

    """
    spam = np.asarray(labels) == spam_filters.SPAM
    points = evaluate_points(spam, scores, ham_losses=HAM_LOSSES, spam_misses=())
    return {"spam_missed_percent": {str(loss): round(points[f"spam miss % at ham loss {loss:g} %"],
                                                     4) for loss in HAM_LOSSES},
            "one_minus_roca_percent": round(points["1-ROCA %"], 4)}


def read_scores(path: str) -> tuple[list[str], dict[str, list[float]]]:
    """The labels and each system's scores from a ``spam_filters.py --scores`` file."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    labels = [row[1] for row in body]
    return labels, {name: [float(row[i]) for row in body] for i, name in enumerate(header)
                    if i >= 2}


def run_corpus(corpus: str) -> tuple[list[str], dict[str, list[float]]]:
    """Every system of `SYSTEMS` on the whole corpus, prequentially."""
    source = spam_filters.corpora()[corpus]
    chosen = spam_filters.select(spam_filters.systems(), ",".join(SYSTEMS))
    with tempfile.TemporaryDirectory(prefix="spam_operating_points_") as scratch:
        samples = spam_filters.write_samples(source, Path(scratch) / "messages")
        results = spam_filters.run(samples, chosen, Path(scratch), source.tokenize,
                                   report=lambda r: print(f"{corpus}: {r.name} done",
                                                          file=sys.stderr))
    return [s.label for s in samples], {r.name: r.scores for r in results}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def table(results: dict[str, Any]) -> str:
    """README's markdown table from a results file's contents."""
    losses = results["ham_loss_percent"]
    head = ["system", *(f"{CORPORA[c]}: spam missed at {loss:g} % ham lost"
                        for c in CORPORA for loss in losses)]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    for name in results["systems"]:
        cells = [spam_filters.DESCRIPTIONS.get(name, name)]
        for corpus in CORPORA:
            points = results["corpora"][corpus]["systems"][name]["spam_missed_percent"]
            cells += [f"{points[str(loss)]:.1f} %" for loss in losses]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the systems and write the results file")
    run.add_argument("--scores", action="append", default=[], metavar="CORPUS=PATH",
                     help="read a corpus's scores from a spam_filters.py --scores file")
    run.add_argument("--out", default=str(RESULTS))
    show = commands.add_parser("table", help="print README's table from the results file")
    show.add_argument("--results", default=str(RESULTS))
    args = parser.parse_args(argv)
    if args.command == "table":
        print(table(json.loads(Path(args.results).read_text())))
        return
    given = dict(item.split("=", 1) for item in args.scores)
    unknown = set(given) - set(CORPORA)
    if unknown:
        parser.error(f"--scores: unknown corpus {sorted(unknown)[0]!r}; corpora: "
                     f"{', '.join(CORPORA)}")
    results: dict[str, Any] = {
        "command": "python benchmarks/spam_operating_points.py " + " ".join(argv or sys.argv[1:]),
        "machine": machine(),
        "date": dt.date.today().isoformat(),
        "protocol": "prequential: every system starts empty, scores each message, then learns "
                    "it with its label; SpamAssassin in time order, SMS in file order",
        "ham_loss_percent": HAM_LOSSES,
        "systems": SYSTEMS,
        "corpora": {},
    }
    for corpus in CORPORA:
        labels, scores = read_scores(given[corpus]) if corpus in given else run_corpus(corpus)
        missing = [name for name in SYSTEMS if name not in scores]
        if missing:
            raise SystemExit(f"{corpus}: no scores for {', '.join(missing)}")
        results["corpora"][corpus] = {
            "messages": len(labels),
            "spam": labels.count(spam_filters.SPAM),
            "systems": {name: operating_points(labels, scores[name]) for name in SYSTEMS},
        }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))
    print(f"\nresults: {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
