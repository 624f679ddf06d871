"""Per-record cost and memory of NaiveBayes as the vocabulary grows.

For each vocabulary size V (default 10k, 100k and 1M distinct tokens) a model learns V tokens
(messages of ``--tokens`` new tokens each, ``learn_many`` in batches of 1,000), then the cost
per record is timed for ``learn_one``, ``learn_many`` (batches of ``--batch``),
``predict_proba_one``, ``predict_proba_many`` (same batches) and both prequential orders of a
batch: ``prequential_many`` (``predict_proba_many`` then ``learn_many`` of the records, each
encoding them) and ``prequential_encoded`` (``encode_many`` once, then both). The messages'
known tokens are drawn from the vocabulary (``--draws``: uniformly, the worst case for the CPU
caches, or by Zipf's law, as words are) and each brings one new token (a stream's vocabulary
keeps growing). Each figure is the median of ``--repeats`` runs on fresh messages. The table
ends with the ratio of the cost at the largest V to that at the smallest: 1.0 means no
O(vocabulary) work per record or batch. After it, the two prequential orders on records of 20
nominal and 5 numeric attributes (whose encoding costs more than a message's), as DataFrames
and as dicts.

Memory: RSS growth per distinct token after learning the largest V tokens, for streamnb
NaiveBayes (``learn_many``) and river MultinomialNB (``learn_one``; river's ``learn_many``
needs a DataFrame of V columns) on the same messages, each measured in a subprocess of its own
(``--rss``) so that neither sees the other's heap. RSS includes the token strings themselves,
which both models keep.

Targets: learn_many's cost at 1M tokens ≤ 1.5× that at 10k; ≤ 120 B of RSS per
distinct token at 1M. Run: ``python benchmarks/bench_vocabulary.py``; writes
benchmarks/results/bench_vocabulary.json (``--results``/``--no-results``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import _results  # a sibling script, not a package
import numpy as np

PATHS = ("learn_one", "learn_many", "predict_proba_one", "predict_proba_many",
         "prequential_many", "prequential_encoded")


def new_messages(start: int, n: int, tokens: int) -> Iterator[dict[str, bool]]:
    """``n`` messages of ``tokens`` tokens never seen before (numbered from ``start``)."""
    for i in range(n):
        first = start + i * tokens
        yield {f"tok{j}": True for j in range(first, first + tokens)}


def learn_vocabulary(model, vocabulary: int, tokens: int, learn: Callable) -> None:
    """Teach ``model`` ``vocabulary`` distinct tokens, in batches of 1,000 messages."""
    rng = np.random.default_rng(0)
    n = vocabulary // tokens
    for start in range(0, n, 1000):
        size = min(1000, n - start)
        learn(model, list(new_messages(start * tokens, size, tokens)),
              rng.integers(0, 2, size).tolist())


def drawn_messages(rng: np.random.Generator, vocabulary: int, n: int, tokens: int,
                   fresh: int, draws: str = "uniform") -> list[dict[str, bool]]:
    """Messages of ``tokens − 1`` known tokens and one new one (``fresh`` onwards). Known
    tokens are drawn uniformly (every draw likely a cache miss at 1M tokens: the worst case)
    or by Zipf's law over ranks scattered at random over the vocabulary (text's frequencies;
    its frequent tokens stay in the CPU caches)."""
    if draws == "uniform":
        ids = rng.integers(0, vocabulary, size=(n, tokens - 1))
    else:
        p = 1.0 / np.arange(1, vocabulary + 1)
        ranks = rng.choice(vocabulary, size=(n, tokens - 1), p=p / p.sum())
        ids = np.random.default_rng(vocabulary).permutation(vocabulary)[ranks]
    return [{**{f"tok{j}": True for j in row.tolist()}, f"new{fresh + i}": True}
            for i, row in enumerate(ids)]


def time_paths(vocabulary: int, args: argparse.Namespace) -> dict[str, float]:
    """Median seconds per record of each path at ``vocabulary`` distinct tokens."""
    from streamnb import NaiveBayes

    model = NaiveBayes()
    learn_vocabulary(model, vocabulary, args.tokens, lambda m, xs, ys: m.learn_many(xs, ys))
    rng = np.random.default_rng(1)
    costs: dict[str, list[float]] = {path: [] for path in PATHS}
    fresh = 0
    n, b = args.records, args.batch
    for _ in range(args.repeats):
        xs = {path: drawn_messages(rng, vocabulary, n, args.tokens, fresh + i * n, args.draws)
              for i, path in enumerate(PATHS)}
        fresh += len(PATHS) * n
        ys = rng.integers(0, 2, n).tolist()
        gc.collect()
        start = time.perf_counter()
        for x, y in zip(xs["learn_one"], ys, strict=True):
            model.learn_one(x, y)
        costs["learn_one"].append((time.perf_counter() - start) / n)
        start = time.perf_counter()
        for i in range(0, n, b):
            model.learn_many(xs["learn_many"][i:i + b], ys[i:i + b])
        costs["learn_many"].append((time.perf_counter() - start) / n)
        start = time.perf_counter()
        for x in xs["predict_proba_one"]:
            model.predict_proba_one(x)
        costs["predict_proba_one"].append((time.perf_counter() - start) / n)
        start = time.perf_counter()
        for i in range(0, n, b):
            model.predict_proba_many(xs["predict_proba_many"][i:i + b])
        costs["predict_proba_many"].append((time.perf_counter() - start) / n)
        start = time.perf_counter()
        for i in range(0, n, b):
            model.predict_proba_many(xs["prequential_many"][i:i + b])
            model.learn_many(xs["prequential_many"][i:i + b], ys[i:i + b])
        costs["prequential_many"].append((time.perf_counter() - start) / n)
        start = time.perf_counter()
        for i in range(0, n, b):
            batch = model.encode_many(xs["prequential_encoded"][i:i + b])
            model.predict_proba_many(batch)
            model.learn_many(batch, ys[i:i + b])
        costs["prequential_encoded"].append((time.perf_counter() - start) / n)
    return {path: statistics.median(values) for path, values in costs.items()}


def time_mixed(args: argparse.Namespace) -> dict[str, tuple[float, float]]:
    """Prequential batches of records of 20 nominal (20 values each) and 5 numeric attributes,
    as DataFrames and as dicts: µs per record encoding twice (``predict_proba_many`` then
    ``learn_many``) and once (``encode_many``, then both); median of ``--repeats``."""
    import pandas as pd

    from streamnb import NaiveBayes

    rng = np.random.default_rng(2)
    values = [f"v{j}" for j in range(20)]
    frames = [pd.DataFrame({f"a{i}": rng.choice(values, 1000) for i in range(20)}
                           | {f"x{i}": rng.normal(size=1000) for i in range(5)})
              for _ in range(20)]
    ys = [rng.integers(0, 2, 1000).tolist() for _ in frames]
    out = {}
    for kind, batches in (("DataFrame", frames),
                          ("dicts", [f.to_dict(orient="records") for f in frames])):
        twice, once = [], []
        for _ in range(args.repeats):
            plain, shared = NaiveBayes(), NaiveBayes()
            plain.learn_many(batches[0], ys[0])
            shared.learn_many(batches[0], ys[0])
            start = time.perf_counter()
            for X, y in zip(batches[1:], ys[1:], strict=True):
                plain.predict_proba_many(X)
                plain.learn_many(X, y)
            twice.append((time.perf_counter() - start) / (1000 * (len(batches) - 1)))
            start = time.perf_counter()
            for X, y in zip(batches[1:], ys[1:], strict=True):
                batch = shared.encode_many(X)
                shared.predict_proba_many(batch)
                shared.learn_many(batch, y)
            once.append((time.perf_counter() - start) / (1000 * (len(batches) - 1)))
        out[kind] = (statistics.median(twice), statistics.median(once))
    return out


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def measure_rss(library: str, vocabulary: int, tokens: int) -> None:
    """(Subprocess) RSS growth per distinct token of ``library``'s model, printed as JSON."""
    if library == "streamnb":
        from streamnb import NaiveBayes

        model = NaiveBayes()

        def learn(m, xs, ys):
            m.learn_many(xs, ys)
    else:
        from river.naive_bayes import MultinomialNB

        model = MultinomialNB()

        def learn(m, xs, ys):
            for x, y in zip(xs, ys, strict=True):
                m.learn_one(x, y)
    learn(model, [{"warm": True}, {"up": True}], [0, 1])  # lazily allocated machinery
    gc.collect()
    before = rss_bytes()
    learn_vocabulary(model, vocabulary, tokens, learn)
    gc.collect()
    after = rss_bytes()
    print(json.dumps({"library": library, "tokens": vocabulary,
                      "bytes_per_token": (after - before) / vocabulary}))


def rss_in_subprocess(library: str, vocabulary: int, tokens: int) -> float:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--rss", library,
                          "--sizes", str(vocabulary), "--tokens", str(tokens)],
                         check=True, capture_output=True, text=True).stdout
    return float(json.loads(out)["bytes_per_token"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="vocabulary sizes, comma-separated")
    parser.add_argument("--tokens", type=int, default=20, help="tokens per message")
    parser.add_argument("--records", type=int, default=2000, help="timed records per path")
    parser.add_argument("--batch", type=int, default=100, help="learn_many/predict batch size")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--draws", choices=["uniform", "zipf"], default="uniform",
                        help="how the timed messages draw their known tokens")
    parser.add_argument("--rss", choices=["streamnb", "river"],
                        help="(internal) measure one library's RSS per token and exit")
    _results.add_arguments(parser, "bench_vocabulary")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.rss:
        measure_rss(args.rss, sizes[-1], args.tokens)
        return
    from streamnb._accel.kernels import ACCELERATED

    print(f"streamnb NaiveBayes (laplace), {args.tokens} tokens/message ({args.draws} draws), "
          f"batches of "
          f"{args.batch}, {args.records} records x {args.repeats} repeats per path, "
          f"C kernels: {ACCELERATED}")
    print(f"{'distinct tokens':>22} " + " ".join(f"{p + ' us':>22}" for p in PATHS))
    results = {}
    for vocabulary in sizes:
        results[vocabulary] = costs = time_paths(vocabulary, args)
        print(f"{vocabulary:>22,} " + " ".join(f"{costs[p] * 1e6:>22.2f}" for p in PATHS),
              flush=True)
    low, high = sizes[0], sizes[-1]
    print(f"{f'ratio {high:,}/{low:,}':>22} " + " ".join(
        f"{results[high][p] / results[low][p]:>22.2f}" for p in PATHS))
    per_record = [{"distinct tokens": f"{v:,}", **{p: results[v][p] * 1e6 for p in PATHS}}
                  for v in sizes]
    per_record.append({"distinct tokens": f"ratio {high:,} / {low:,}",
                       **{p: results[high][p] / results[low][p] for p in PATHS}})
    mixed = []
    for kind, (twice, once) in time_mixed(args).items():
        mixed.append({"input": kind, "encoded twice": twice * 1e6, "encoded once": once * 1e6,
                      "ratio": twice / once})
        print(f"prequential, 20 nominal + 5 numeric attributes, batches of 1,000 {kind}: "
              f"encoded twice {twice * 1e6:.2f} us, once {once * 1e6:.2f} us per record "
              f"({twice / once:.2f}x)")
    ours = rss_in_subprocess("streamnb", high, args.tokens)
    river = rss_in_subprocess("river", high, args.tokens)
    print(f"RSS per distinct token at {high:,}: streamnb {ours:.0f} B, river MultinomialNB "
          f"{river:.0f} B (streamnb/river {ours / river:.2f})")
    column = _results.column
    tables = {
        "per_record": _results.table(
            [column("distinct tokens"), *(column(p, f"{p} µs", ".2f") for p in PATHS)],
            per_record),
        "mixed": _results.table(
            [column("input"), column("encoded twice", "encoded twice, µs/record", ".2f"),
             column("encoded once", "encoded once, µs/record", ".2f"),
             column("ratio", fmt=".2f")], mixed),
        "rss": _results.table(
            [column("library"), column("bytes", f"RSS B per distinct token at {high:,}", ".0f")],
            [{"library": "streamnb NaiveBayes", "bytes": ours},
             {"library": "river MultinomialNB", "bytes": river}]),
    }
    _results.write_from_args(
        args, "bench_vocabulary", tables, argv=argv, script=__file__,
        notes=f"{args.tokens} tokens a message ({args.draws} draws), batches of {args.batch}; "
              f"medians of {args.repeats} runs of {args.records:,} records.")


if __name__ == "__main__":
    main()
