"""The service's poll step without Kafka: ``PartitionedModel.classify`` of a poll's records,
then ``learn`` of each partition's labelled records (what ``streamnb.consumers.service`` does
per poll).

Workloads (``--workload``, one or more): ``spamassassin``, the SpamAssassin stream in its order
(``streamnb.datasets.iter_spamassassin_stream``), each e-mail as the feature message the demo
would send, ``{token: True}`` of ``streamnb.features.email.tokenize_email`` (dozens of new tokens
per message); ``zipf``, the feature messages of ``benchmarks/bench_service.py`` (~20 tokens of a
5,000-token vocabulary: few new tokens per batch). Records are spread over ``--partitions``
partitions (one or more counts; message ``i`` to partition ``i % P``), all owned by this
process. The model learns the first ``--train`` messages in polls, then the next ``--measure``
messages are polled in polls of ``--poll`` records and timed. Reported per workload and
partition count: µs per message of the whole step, of ``classify`` and of the learning (median
over ``--repeats`` runs, each on a fresh model).

``--ab``: each repeat also runs the two-encodings path (every model encodes the records it
learns: the sum, then the state; ``PartitionedModel`` takes that path where one encoding cannot
apply), the two in alternating order, and the figures are the medians of the paired ratios one
encoding / two. For an A/B of two versions of ``consumers/state.py``, run it under each checkout
in alternation (``--json`` prints one line of figures per configuration and writes no results
file) and compare the paired ratios::

    PYTHONPATH=/path/to/A python benchmarks/bench_poll.py --json
    PYTHONPATH=/path/to/B python benchmarks/bench_poll.py --json

Otherwise it writes ``benchmarks/results/bench_poll.json`` (``--results``, ``--no-results``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from streamnb.consumers.state import PartitionedModel, PartitionState, model_factory
from streamnb.datasets import iter_spamassassin_stream
from streamnb.features.email import tokenize_email

sys.path.insert(0, str(Path(__file__).parent))
import _results  # a sibling script, not a package


def feature_messages(n: int) -> tuple[list[dict], list[str]]:
    X, y = [], []
    for m in list(iter_spamassassin_stream())[:n]:
        X.append(dict.fromkeys(sorted(tokenize_email(m.text)), True))
        y.append(m.label)
    return X, y


def zipf_messages(n: int) -> tuple[list[dict], list[str]]:
    from bench_service import messages  # this directory is the script's, so on sys.path

    bodies = [json.loads(m) for m in messages(n, 0, True, 0)]
    return [b["features"] for b in bodies], [b["label"] for b in bodies]


def run(X: list[dict], y: list[str], model: str, partitions: int, train: int, poll: int,
        before: bool = False) -> dict[str, float]:
    """µs per timed message of the step, ``classify`` and learning; ``before``: every model
    encodes the records it learns (the two-encodings path, the reference of ``--ab``)."""
    pm = PartitionedModel(model_factory(model))
    if before:
        pm._once = None
    factory = pm.factory
    for p in range(partitions):
        pm.take(("t", p), PartitionState(factory(), 0))
    pm.rebuild()
    timed = {"step": 0.0, "classify": 0.0, "learn": 0.0}
    n_timed = 0
    for start in range(0, len(X), poll):
        end = min(start + poll, len(X))
        t0 = time.perf_counter()
        pm.classify(X[start:end])
        t1 = time.perf_counter()
        for p in range(partitions):
            rows = [i for i in range(start, end) if i % partitions == p]
            if rows:
                pm.learn(("t", p), [X[i] for i in rows], [y[i] for i in rows],
                         [i // partitions for i in rows])
                pm.advance(("t", p), rows[-1] // partitions + 1)
        t2 = time.perf_counter()
        if start >= train:
            timed["step"] += t2 - t0
            timed["classify"] += t1 - t0
            timed["learn"] += t2 - t1
            n_timed += end - start
    return {k: 1e6 * v / n_timed for k, v in timed.items()}


def measure(X: list[dict], y: list[str], args: argparse.Namespace,
            partitions: int) -> dict[str, float]:
    """The medians of ``args.repeats`` runs; with ``args.ab`` those of both paths
    (``<figure> before``) and of the paired ratios (``<figure> ratio``)."""
    options = (X, y, args.model, partitions, args.train, args.poll)
    if not args.ab:
        runs = [run(*options) for _ in range(args.repeats)]
        return {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    pairs = []
    for i in range(args.repeats):  # alternate which path runs first: both see the same load
        first = run(*options, before=bool(i % 2))
        second = run(*options, before=not i % 2)
        pairs.append((second, first) if i % 2 else (first, second))
    result: dict[str, float] = {}
    for k in pairs[0][0]:
        result[k] = statistics.median(once[k] for once, _ in pairs)
        result[k + " before"] = statistics.median(before[k] for _, before in pairs)
        result[k + " ratio"] = statistics.median(once[k] / before[k] for once, before in pairs)
    return result


FIGURES = ("step", "classify", "learn")


def columns(ab: bool) -> list[dict[str, str]]:
    shown = [_results.column("workload"), _results.column("partitions")]
    shown += [_results.column(k, f"{k}, µs/msg", ".1f") for k in FIGURES]
    if ab:
        shown += [_results.column(f"{k} before", f"{k}, two encodings, µs/msg", ".1f")
                  for k in FIGURES]
        shown += [_results.column(f"{k} ratio", f"{k}: one / two encodings", ".3f")
                  for k in FIGURES]
    return shown


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", nargs="+", choices=("spamassassin", "zipf"),
                        default=["spamassassin", "zipf"])
    parser.add_argument("--model", default="indifferent")
    parser.add_argument("--partitions", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--measure", type=int, default=2000)
    parser.add_argument("--poll", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ab", action="store_true",
                        help="paired ratios against the two-encodings path")
    parser.add_argument("--json", action="store_true",
                        help="one line of JSON per configuration, no results file")
    _results.add_arguments(parser, "bench_poll")
    args = parser.parse_args(argv)
    rows = []
    for workload in args.workload:
        X, y = (feature_messages if workload == "spamassassin" else zipf_messages)(
            args.train + args.measure)
        for partitions in args.partitions:
            result = measure(X, y, args, partitions)
            row = {"workload": workload, "partitions": partitions, **result}
            if args.json:
                print(json.dumps(row), flush=True)
                continue
            rows.append(row)
            print(f"{workload}, {args.model}, {partitions} partitions, polls of {args.poll}, "
                  f"µs per message (median of {args.repeats}):")
            for k, v in result.items():
                print(f"  {k:16s} {v:8.3f}" if k.endswith("ratio") else f"  {k:16s} {v:8.1f}",
                      flush=True)
    if args.json:
        return
    tables = {"poll_step": _results.table(columns(args.ab), rows)}
    _results.write_from_args(
        args, "bench_poll", tables, argv=argv, script=__file__,
        notes=f"{args.model}, polls of {args.poll}: {args.train:,} messages learned, the next "
              f"{args.measure:,} timed; medians of {args.repeats} runs.")


if __name__ == "__main__":
    main()
