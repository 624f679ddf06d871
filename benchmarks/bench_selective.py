"""Cost of the selective classifiers (Singh & Provan §4.3, §5.6): selection and relearn time.

Synthetic data: 2 classes and ``n`` nominal attributes of cardinality 3; half of them form a
chain in which each shows the class or copies the previous one (informative alone, redundant
given its predecessor: something to select and dependences to model), the other half are
noise. Reported in one run:

1. **Selection phase against the number of attributes** (m = ``--records`` records, n = 5, 10,
   20, 40): Info-AS (CGR; one index-tree contingency table per candidate and step,
   O(m r n² (r + n)); also with the χ² stop) against the accuracy wrappers on the same data —
   naive-AS (a naive Bayes per candidate and step) and K2-AS (a K2 network learned and queried
   per candidate and step, the paper's comparison). Printed: seconds, attributes selected, the
   time per candidate evaluated, and the K2-AS / Info-AS ratios.
2. **Relearn time against records seen** (10k, 100k, 1M; median of 3 relearns): a relearn
   reads the counts and the reservoir (``reservoir_size`` records), never the stream, so its
   time must not grow with the records seen. SelectiveNB, SelectiveTAN and SelectiveBN (CB),
   learn_many in batches of 50,000.

Run: ``python benchmarks/bench_selective.py`` (``--quick`` for a smaller run); it writes
``benchmarks/results/bench_selective.json`` (``--results``, ``--no-results``), the tables of
docs/selective.md "Cost".
"""

from __future__ import annotations

import argparse
import time

import _results  # benchmarks/_results.py
import numpy as np
import pandas as pd

SELECTION = [_results.column("attributes"),
             _results.column("info", "Info-AS CGR", ".3f"), _results.column("info sel", "selected"),
             _results.column("info eval", "ms/eval", ".2f"),
             _results.column("tested", "Info-AS χ² 0.01", ".3f"),
             _results.column("tested sel", "selected"),
             _results.column("naive", "naive-AS", ".3f"), _results.column("naive sel", "selected"),
             _results.column("k2", "K2-AS", ".2f"), _results.column("k2 sel", "selected"),
             _results.column("k2 eval", "ms/eval", ".2f"),
             _results.column("total ratio", "K2-AS / Info-AS, total", ".0f"),
             _results.column("eval ratio", "K2-AS / Info-AS, per evaluation", ".0f")]
RELEARN_MODELS = ("SelectiveNB", "SelectiveTAN", "SelectiveBN (CB)")
RELEARN = ([_results.column("seen", "records seen", ",")]
           + [_results.column(name, f"{name} relearn ms", ",.0f") for name in RELEARN_MODELS]
           + [_results.column("rate", "learn_many records/s", ",.0f")])


def sample(n_records: int, n_attributes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Value indices (records, attributes) and classes. Even attributes form a chain: each
    copies the previous one with probability 0.5, else shows the class (value = class with
    probability 0.6, else uniform); so each is informative alone and largely redundant given
    its predecessor. Odd attributes are uniform noise."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n_records)
    values = np.empty((n_records, n_attributes), dtype=np.int64)
    previous = None
    for i in range(n_attributes):
        if i % 2:
            values[:, i] = rng.integers(0, 3, n_records)
            continue
        shown = np.where(rng.random(n_records) < 0.6, y, rng.integers(0, 3, n_records))
        if previous is not None:
            shown = np.where(rng.random(n_records) < 0.5, previous, shown)
        values[:, i] = previous = shown
    return values, y


def frame(values: np.ndarray, y: np.ndarray) -> tuple[pd.DataFrame, pd.Series]:
    names = np.array(["v0", "v1", "v2"])
    return (pd.DataFrame({f"a{i}": names[values[:, i]] for i in range(values.shape[1])}),
            pd.Series(np.where(y == 1, "pos", "neg")))


def timed(f, *args, **kwargs):
    start = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - start


def evaluations(n: int, selected: int) -> int:
    """Candidates a forward selection evaluated: every remaining one at each step, including
    the step that found nothing to add (unless every attribute was added)."""
    steps = range(min(selected + 1, n))
    return sum(n - s for s in steps)


def selection_phase(records: int, sizes: list[int]) -> list[dict]:
    from streamnb.structure import DiscreteData, info_as, k2_as, naive_as

    print(f"Selection phase on {records} records (2 classes, attributes of 3 values); "
          "seconds, attributes selected, ms per candidate evaluated:")
    rows = []
    for n in sizes:
        values, y = sample(records, n, seed=n)
        data = DiscreteData(values, y, [3] * n, 2, [f"a{i}" for i in range(n)])
        info, t_info = timed(info_as, data, metric="cgr")
        tested, t_tested = timed(info_as, data, metric="cgr", significance=0.01)
        naive, t_naive = timed(naive_as, data)
        k2sel, t_k2 = timed(k2_as, data)
        e_info = t_info / evaluations(n, len(info.selected)) * 1e3
        e_k2 = t_k2 / evaluations(n, len(k2sel.selected)) * 1e3
        rows.append({"attributes": n, "info": t_info, "info sel": len(info.selected),
                     "info eval": e_info, "tested": t_tested,
                     "tested sel": len(tested.selected), "naive": t_naive,
                     "naive sel": len(naive.selected), "k2": t_k2, "k2 sel": len(k2sel.selected),
                     "k2 eval": e_k2, "total ratio": t_k2 / t_info, "eval ratio": e_k2 / e_info})
        print(_results.render_row(SELECTION, rows[-1]), flush=True)
    return rows


def relearn_time(n_attributes: int, targets: list[int], reservoir: int) -> list[dict]:
    from streamnb import SelectiveBN, SelectiveNB, SelectiveTAN

    print(f"\nRelearn time against records seen ({n_attributes} attributes, reservoir "
          f"{reservoir:,} records):")
    makers = dict(zip(RELEARN_MODELS, (
        lambda: SelectiveNB(relearn_every=0, reservoir_size=reservoir, seed=0),
        lambda: SelectiveTAN(relearn_every=0, reservoir_size=reservoir, seed=0),
        lambda: SelectiveBN(relearn_every=0, reservoir_size=reservoir, seed=0)), strict=True))
    models = {name: make() for name, make in makers.items()}
    seen = 0
    learn_seconds = 0.0
    rows = []
    for target in targets:
        while seen < target:
            take = min(50_000, target - seen)
            X, y = frame(*sample(take, n_attributes, seed=seen + 1))
            for model in models.values():
                _, t = timed(model.learn_many, X, y)
                learn_seconds += t
            seen += take
        row: dict = {"seen": seen, "rate": seen * len(models) / learn_seconds}
        for name, model in models.items():  # the median of 3: the machine is shared
            row[name] = sorted(timed(model.relearn)[1] for _ in range(3))[1] * 1e3
        rows.append(row)
        print(_results.render_row(RELEARN, row), flush=True)
    for name, model in models.items():
        print(f"  {name}: selected {model.structure.selected}")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--reservoir", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true")
    _results.add_arguments(parser, "bench_selective")
    args = parser.parse_args(argv)
    sizes = [5, 10, 20] if args.quick else [5, 10, 20, 40]
    targets = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    selection = selection_phase(args.records, sizes)
    relearn = relearn_time(20, targets, args.reservoir)
    _results.write_from_args(
        args, "bench_selective", {"selection": _results.table(SELECTION, selection),
                                  "relearn": _results.table(RELEARN, relearn)},
        argv=argv, script=__file__, notes="Limited run (--quick)." if args.quick else "")


if __name__ == "__main__":
    main()
