"""One-by-one prequential throughput of LDA, QDA and KernelNB against river's GaussianNB.

A synthetic numeric stream: ``--n`` records of ``d`` attributes, three Gaussian classes with
different means and random (fixed-seed) covariances. Each model runs prequentially, one record
at a time (``predict_proba_one`` then ``learn_one``), in the same process as river's
``GaussianNB`` on the same records; the rate (records/s) and the ratio to river's are printed
for every ``--dims`` (default 8 and 50) and ``--shrinkage`` setting of LDA/QDA, with
streamnb's own Gaussian ``NaiveBayes`` (the same model as river's) as the reference. Each model
run follows a river run, and the best of ``--repeat`` such pairs is kept, so that the ratio
compares the two under the same machine load.

Run: ``python benchmarks/bench_discriminant_one.py`` (``--n 5000``, ``--repeat 1`` by
default); the results go to ``benchmarks/results/bench_discriminant_one.json``, the table of
docs/continuous.md.
"""

from __future__ import annotations

import argparse

import _results
import numpy as np
from bench_naive_bayes import prequential_one  # the same one-by-one loop


def make_stream(n: int, d: int, seed: int) -> tuple[list[dict[str, float]], list[int]]:
    rng = np.random.default_rng(seed)
    means = rng.normal(0.0, 1.0, (3, d))
    mixers = rng.normal(0.0, 1.0, (3, d, d)) / np.sqrt(d)
    ys = rng.integers(0, 3, n)
    z = rng.normal(0.0, 1.0, (n, d))
    rows = means[ys] + np.einsum("nij,nj->ni", mixers[ys], z)
    names = [f"x{i}" for i in range(d)]
    return [dict(zip(names, row.tolist(), strict=True)) for row in rows], ys.tolist()


def paired(factory, river_factory, xs, ys, repeat: int) -> tuple[float, float, float]:
    """Best rates of the model and of river's GaussianNB over ``repeat`` runs, each model run
    right after a river run (so both see the same machine load), and the model's accuracy."""
    runs = [(prequential_one(river_factory(), xs, ys), prequential_one(factory(), xs, ys))
            for _ in range(repeat)]
    return max(r[0] for r, _ in runs), max(m[0] for _, m in runs), runs[0][1][1]


COLUMNS = [_results.column("d", fmt="d"), _results.column("model"),
           _results.column("records/s", fmt=",.0f"),
           _results.column("river records/s", "river GaussianNB records/s", ",.0f"),
           _results.column("vs river", "ratio to river", ".2f"),
           _results.column("accuracy", fmt=".3f")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000, help="records per stream")
    parser.add_argument("--dims", type=int, nargs="+", default=[8, 50])
    parser.add_argument("--shrinkage", nargs="+", default=["none", "0.1", "ledoit-wolf"],
                        help="LDA/QDA shrinkage settings (none, a number, ledoit-wolf)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    _results.add_arguments(parser, "bench_discriminant_one")
    args = parser.parse_args(argv)

    from river import naive_bayes

    from streamnb import LDA, QDA, KernelNB, NaiveBayes

    def parse(value: str) -> float | str | None:
        return None if value == "none" else value if value == "ledoit-wolf" else float(value)

    rows = []
    for d in args.dims:
        xs, ys = make_stream(args.n, d, args.seed)
        river_acc = prequential_one(naive_bayes.GaussianNB(), xs, ys)[1]
        print(f"d = {d}, {args.n:,} records, one by one (predict_proba_one + learn_one); "
              f"river GaussianNB accuracy {river_acc:.3f}")
        print(f"  {'model':28s} {'records/s':>10s} {'river rec/s':>11s} {'accuracy':>9s} "
              f"{'vs river':>9s}")
        models = [(f"{name} shrinkage={s}", lambda cls=cls, s=s: cls(shrinkage=parse(s)))
                  for name, cls in (("LDA", LDA), ("QDA", QDA)) for s in args.shrinkage]
        models += [("KernelNB", KernelNB), ("NaiveBayes (Gaussian)", NaiveBayes)]
        for name, factory in models:
            river_rate, rate, acc = paired(factory, naive_bayes.GaussianNB, xs, ys, args.repeat)
            print(f"  {name:28s} {rate:>10,.0f} {river_rate:>11,.0f} {acc:>9.3f} "
                  f"{rate / river_rate:>8.2f}x")
            rows.append({"d": d, "model": name, "records/s": rate,
                         "river records/s": river_rate, "vs river": rate / river_rate,
                         "accuracy": acc})
    _results.write_from_args(args, "bench_discriminant_one",
                             {"one_by_one": _results.table(COLUMNS, rows)}, argv=argv,
                             script=__file__)


if __name__ == "__main__":
    main()
