"""TAN throughput: batch learning, prediction against pgmpy, relearn time against records seen.

Synthetic data: ``--attributes`` nominal attributes of cardinality ``--values`` and 2 classes,
each attribute depending on the class and on the previous attribute (a chain, so the tree has
something to find). Reported in one run:

- batch learning (``learn_many`` in batches of 10,000): records/s — target ≥ 100k for 20
  attributes of cardinality 3;
- prediction: streamnb ``predict_proba_many`` on ``--predict-n`` records vs pgmpy's
  ``predict_probability`` (same tree, maximum-likelihood CPDs) on the first ``--pgmpy-n`` of
  them, as records/s; the decisions are compared on those — target ≥ 500× pgmpy;
- relearn time (pairwise counts → tree) after 10k, 100k and 1M records: it must not grow.

Run: ``python benchmarks/bench_tan.py`` (pgmpy is in the test extra); writes
benchmarks/results/bench_tan.json (``--results``/``--no-results``).
"""

from __future__ import annotations

import argparse
import time

import _results  # a sibling script, not a package
import numpy as np
import pandas as pd


def sample(n: int, attributes: int, values: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    columns = {}
    previous = rng.integers(0, values, n)
    for i in range(attributes):
        # with probability 0.6 copy (previous + class) mod values, else uniform
        copy = rng.random(n) < 0.6
        value = np.where(copy, (previous + y) % values, rng.integers(0, values, n))
        columns[f"a{i}"] = np.array([f"v{v}" for v in range(values)])[value]
        previous = value
    return pd.DataFrame(columns), np.where(y == 1, "pos", "neg")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attributes", type=int, default=20)
    parser.add_argument("--values", type=int, default=3)
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--pgmpy-n", type=int, default=200)
    parser.add_argument("--predict-n", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=0)
    _results.add_arguments(parser, "bench_tan")
    args = parser.parse_args(argv)
    measured: list[dict] = []  # rows: measure, value, unit, target

    from streamnb import TAN

    X, y = sample(args.n, args.attributes, args.values, args.seed)
    model = TAN(relearn_every=0)
    start = time.perf_counter()
    for lo in range(0, args.n, 10_000):
        model.learn_many(X.iloc[lo: lo + 10_000], pd.Series(y[lo: lo + 10_000]))
    learn_seconds = time.perf_counter() - start
    start = time.perf_counter()
    model.relearn()
    relearn_seconds = time.perf_counter() - start
    print(f"{args.attributes} attributes x {args.values} values, 2 classes, {args.n:,} records")
    print(f"  TAN learn_many: {args.n / learn_seconds:,.0f} records/s (target 100,000)")
    print(f"  relearn: {relearn_seconds * 1e3:.1f} ms; tree: {model.structure.parents}")
    measured.append({"measure": f"learn_many, batches of 10,000 ({args.attributes} attributes "
                                f"x {args.values} values)",
                     "value": args.n / learn_seconds, "unit": "records/s", "target": "≥ 100,000"})

    start = time.perf_counter()
    model.predict_proba_many(X.iloc[: args.predict_n])
    ours_rate = args.predict_n / (time.perf_counter() - start)
    test = X.iloc[: args.pgmpy_n]  # pgmpy is slow: fewer records, same per-record rate
    ours = model.predict_proba_many(test)
    try:
        from pgmpy.models import DiscreteBayesianNetwork as Network
    except ImportError:
        try:
            from pgmpy.models import BayesianNetwork as Network
        except ImportError:
            Network = None
    if Network is not None:
        edges = [("class", name) for name in X.columns]
        edges += [(parent, child) for child, parent in model.structure.parents.items()
                  if parent is not None]
        network = Network(edges)
        train = X.iloc[:20_000].assign(**{"class": y[:20_000]})
        network.fit(train)  # maximum likelihood
        start = time.perf_counter()
        theirs = network.predict_probability(test)
        theirs_rate = len(test) / (time.perf_counter() - start)
        agree = np.mean(np.argmax(ours[["neg", "pos"]].to_numpy(), axis=1)
                        == np.argmax(theirs[["class_neg", "class_pos"]].to_numpy(), axis=1))
        measured += [
            {"measure": "predict_proba_many", "value": ours_rate, "unit": "records/s"},
            {"measure": f"pgmpy predict_probability ({len(test):,} records)",
             "value": theirs_rate, "unit": "records/s"},
            {"measure": "predict_proba_many / pgmpy", "value": ours_rate / theirs_rate,
             "unit": "×", "target": "≥ 500"},
            {"measure": "decisions equal to pgmpy's", "value": 100 * agree, "unit": "%"}]
        print(f"  predict: streamnb {ours_rate:,.0f} records/s, pgmpy {theirs_rate:,.1f} "
              f"records/s: {ours_rate / theirs_rate:,.0f}x (target 500x); decisions agree on "
              f"{agree:.1%}")
    else:
        print(f"  predict: streamnb {ours_rate:,.0f} records/s (pgmpy not installed)")
        measured.append({"measure": "predict_proba_many", "value": ours_rate,
                         "unit": "records/s"})

    print("  relearn time vs records seen:")
    model = TAN(relearn_every=0)
    seen = 0
    for target in (10_000, 100_000, 1_000_000):
        while seen < target:
            batch_x, batch_y = sample(50_000, args.attributes, args.values, args.seed + seen)
            take = min(50_000, target - seen)
            model.learn_many(batch_x.iloc[:take], pd.Series(batch_y[:take]))
            seen += take
        start = time.perf_counter()
        model.relearn()
        milliseconds = (time.perf_counter() - start) * 1e3
        print(f"    {seen:>9,} records: {milliseconds:7.1f} ms")
        measured.append({"measure": f"relearn after {seen:,} records", "value": milliseconds,
                         "unit": "ms", "target": "flat"})
    columns = [_results.column("measure"), _results.column("value", fmt=",.1f"),
               _results.column("unit"), _results.column("target")]
    _results.write_from_args(args, "bench_tan", {"tan": _results.table(columns, measured)},
                             argv=argv, script=__file__)


if __name__ == "__main__":
    main()
