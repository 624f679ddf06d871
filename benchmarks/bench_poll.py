"""The service's poll step without Kafka: ``PartitionedModel.classify`` of a poll's records,
then ``learn`` of each partition's labelled records (what ``streamnb.consumers.service`` does
per poll).

Workload: the SpamAssassin stream in its order (``streamnb.datasets.iter_spamassassin_stream``),
each e-mail as the feature message the demo would send, ``{token: True}`` of
``streamnb.features.email.tokenize_email`` (dozens of new tokens per message); ``--workload
zipf``: the feature messages of ``benchmarks/bench_service.py`` instead (~20 tokens of a
5,000-token vocabulary: few new tokens per batch). Records are spread over ``--partitions``
partitions (message ``i`` to partition ``i % P``), all owned by this process. The model learns
the first ``--train`` messages in polls, then the next ``--measure`` messages are polled in
polls of ``--poll`` records and timed. Reported: µs per message of the whole step, of
``classify`` and of the learning (median over ``--repeats`` runs, each on a fresh model).

``--ab``: each repeat also runs the path before issue 15 item 2's one encoding (every model
encodes the records it learns: the sum, then the state; ``PartitionedModel`` still takes that
path where one encoding cannot apply), the two in alternating order, and the figures are the
medians of the paired ratios one encoding / before. For an A/B of two versions of
``consumers/state.py``, run it under each checkout in alternation (``--json`` prints one line of
figures) and compare the paired ratios::

    PYTHONPATH=/path/to/A python benchmarks/bench_poll.py --json
    PYTHONPATH=/path/to/B python benchmarks/bench_poll.py --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from streamnb.consumers.state import PartitionedModel, PartitionState, model_factory
from streamnb.datasets import iter_spamassassin_stream
from streamnb.features.email import tokenize_email


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
    pm = PartitionedModel(model_factory(model))
    if before:
        pm._once = None  # every model encodes the records (the reference of --ab)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workload", choices=("spamassassin", "zipf"), default="spamassassin")
    parser.add_argument("--model", default="indifferent")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--train", type=int, default=2000)
    parser.add_argument("--measure", type=int, default=2000)
    parser.add_argument("--poll", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ab", action="store_true",
                        help="paired ratios against the path before one encoding per batch")
    parser.add_argument("--json", action="store_true", help="one line of JSON")
    args = parser.parse_args()
    X, y = (feature_messages if args.workload == "spamassassin" else zipf_messages)(
        args.train + args.measure)
    options = (X, y, args.model, args.partitions, args.train, args.poll)
    if args.ab:
        result: dict[str, float] = {}
        pairs = []
        for i in range(args.repeats):
            first = run(*options, before=bool(i % 2))
            second = run(*options, before=not i % 2)
            pairs.append((second, first) if i % 2 else (first, second))
        for k in pairs[0][0]:
            result[k] = statistics.median(once[k] for once, _ in pairs)
            result[k + " before"] = statistics.median(before[k] for _, before in pairs)
            result[k + " ratio"] = statistics.median(once[k] / before[k]
                                                     for once, before in pairs)
    else:
        runs = [run(*options) for _ in range(args.repeats)]
        result = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.workload}, {args.model}, {args.partitions} partitions, polls of {args.poll}, "
          f"µs per message (median of {args.repeats}):")
    for k, v in result.items():
        print(f"  {k:16s} {v:8.3f}" if k.endswith("ratio") else f"  {k:16s} {v:8.1f}")


if __name__ == "__main__":
    main()
