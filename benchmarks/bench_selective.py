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

Run: ``python benchmarks/bench_selective.py`` (``--quick`` for a smaller run).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd


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


def selection_phase(records: int, sizes: list[int]) -> None:
    from streamnb.structure import DiscreteData, info_as, k2_as, naive_as

    print(f"Selection phase on {records} records (2 classes, attributes of 3 values); "
          "s = seconds, sel = attributes selected, ms/eval = per candidate evaluated:")
    print("| attributes | Info-AS CGR s | sel | ms/eval | Info-AS χ² 0.01 s | sel "
          "| naive-AS s | sel | K2-AS s | sel | ms/eval | K2-AS / Info-AS: total, per eval |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        values, y = sample(records, n, seed=n)
        data = DiscreteData(values, y, [3] * n, 2, [f"a{i}" for i in range(n)])
        info, t_info = timed(info_as, data, metric="cgr")
        tested, t_tested = timed(info_as, data, metric="cgr", significance=0.01)
        naive, t_naive = timed(naive_as, data)
        k2sel, t_k2 = timed(k2_as, data)
        e_info = t_info / evaluations(n, len(info.selected)) * 1e3
        e_k2 = t_k2 / evaluations(n, len(k2sel.selected)) * 1e3
        print(f"| {n} | {t_info:.3f} | {len(info.selected)} | {e_info:.2f} | {t_tested:.3f} | "
              f"{len(tested.selected)} | {t_naive:.3f} | {len(naive.selected)} | {t_k2:.2f} | "
              f"{len(k2sel.selected)} | {e_k2:.2f} | {t_k2 / t_info:.0f}x, {e_k2 / e_info:.0f}x |",
              flush=True)


def relearn_time(n_attributes: int, targets: list[int], reservoir: int) -> None:
    from streamnb import SelectiveBN, SelectiveNB, SelectiveTAN

    print(f"\nRelearn time against records seen ({n_attributes} attributes, reservoir "
          f"{reservoir:,} records):")
    makers = {
        "SelectiveNB": lambda: SelectiveNB(relearn_every=0, reservoir_size=reservoir, seed=0),
        "SelectiveTAN": lambda: SelectiveTAN(relearn_every=0, reservoir_size=reservoir,
                                             seed=0),
        "SelectiveBN (CB)": lambda: SelectiveBN(relearn_every=0, reservoir_size=reservoir,
                                                seed=0),
    }
    print("| records seen | " + " | ".join(f"{name} relearn ms" for name in makers)
          + " | learn_many records/s |")
    print("|---|" + "---|" * (len(makers) + 1))
    models = {name: make() for name, make in makers.items()}
    seen = 0
    learn_seconds = 0.0
    for target in targets:
        while seen < target:
            take = min(50_000, target - seen)
            X, y = frame(*sample(take, n_attributes, seed=seen + 1))
            for model in models.values():
                _, t = timed(model.learn_many, X, y)
                learn_seconds += t
            seen += take
        row = []
        for model in models.values():  # the median of 3: the machine is shared
            t = sorted(timed(model.relearn)[1] for _ in range(3))[1]
            row.append(f"{t * 1e3:.0f}")
        rate = seen * len(models) / learn_seconds
        print(f"| {seen:,} | " + " | ".join(row) + f" | {rate:,.0f} |", flush=True)
    for name, model in models.items():
        print(f"  {name}: selected {model.structure.selected}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--reservoir", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    sizes = [5, 10, 20] if args.quick else [5, 10, 20, 40]
    targets = [10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000]
    selection_phase(args.records, sizes)
    relearn_time(20, targets, args.reservoir)


if __name__ == "__main__":
    main()
