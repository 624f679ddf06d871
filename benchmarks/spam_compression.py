"""Adaptive character-level compression models (PPM) as spam scorers, alone and added to
`SpamFilter`'s score: the grid that chose ``SpamFilter(ppm_order, ppm_weight)``.

The family is the TREC 2005/2006 spam-track winners' (Bratko, Cormack, Filipič, Lynam, Zupan,
"Spam filtering using statistical data compression models", JMLR 7, 2006): one adaptive
context model per class, a message scored by how much better the spam model codes it. The
models are `streamnb.stats.ppm.ByteContexts` (adaptive interpolated PPM-D, the C kernel) on
what `SpamFilter` reads of a message (`streamnb.models.spam_filter.ppm_bytes`: its first 2,500
bytes), and the combination is SpamFilter's with ``ppm_order``: z + w · (ln P_spam(x) −
ln P_ham(x)) / 2500, z the default filter's log-odds. Every message of each corpus, score then
learn, in stream order; per scorer the TREC operating points (spam miss % at ham loss 0.1 / 0.5
/ 1 %, 1-ROCA %). The settings are chosen on SpamAssassin (the lowest spam miss at 0.1 % ham
loss) and checked on the SMS collection. Run::

    python benchmarks/spam_compression.py [--corpus spamassassin,sms] [--orders 4,5,6]
                                          [--weights 1,2,4,8] [--results PATH | --no-results]

writes benchmarks/results/spam_compression.json (the table in docs/spam.md). Scores are
cached in ``--cache`` (a directory of .npy per corpus and scorer) so that the weights are read
off the same runs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import _results
import numpy as np

# a sibling script: run as `python benchmarks/spam_compression.py`, its directory is on the path
from spam_filter_variants import Message, messages

from streamnb import SpamFilter
from streamnb.evaluate import operating_points
from streamnb.models.spam_filter import PPM_BYTES, ppm_bytes
from streamnb.stats.ppm import ByteContexts

POINTS = ("spam miss % at ham loss 0.1 %", "spam miss % at ham loss 0.5 %",
          "spam miss % at ham loss 1 %", "1-ROCA %")
CORPUS_NAMES = {"spamassassin": "SpamAssassin", "sms": "SMS"}
MEMORY = 1 << 26  # SpamFilter's default ppm_memory


def ppm_ratios(stream: list[Message], order: int) -> np.ndarray:
    """Per message ln P_spam(x) − ln P_ham(x) (nats), score then learn, stream order."""
    model = ByteContexts(order, MEMORY)
    out = np.zeros(len(stream))
    for i, m in enumerate(stream):
        data = ppm_bytes(m.raw)
        if data:
            ham, spam = model.score(data)
            out[i] = spam - ham
            model.learn(data, int(m.spam))
    return out


def default_scores(stream: list[Message]) -> np.ndarray:
    f = SpamFilter()
    out = np.zeros(len(stream))
    for i, m in enumerate(stream):
        out[i] = f.score_one(m.raw)
        f.learn_one(m.raw, "spam" if m.spam else "ham")
    return out


def cached(cache: Path, name: str, compute: Callable[[], np.ndarray]
           ) -> tuple[np.ndarray, float | None]:
    path = cache / f"{name}.npy"
    if path.exists():
        return np.load(path), None
    start = time.perf_counter()
    scores = compute()
    seconds = time.perf_counter() - start
    np.save(path, scores)
    return scores, seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="spamassassin,sms")
    parser.add_argument("--orders", default="4,5,6")
    parser.add_argument("--weights", default="1,2,4,8", help="w in z + w·ppm, comma-separated")
    parser.add_argument("--cache", default="/tmp/spam_compression")
    _results.add_arguments(parser, "spam_compression")
    args = parser.parse_args(argv)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    corpora = args.corpus.split(",")
    orders = [int(k) for k in args.orders.split(",")]
    weights = [float(w) for w in args.weights.split(",") if w]
    rows: dict[str, dict[str, float | str]] = {}

    def add(name: str, corpus: str, spam: np.ndarray, scores: np.ndarray) -> None:
        points = operating_points(spam, scores)
        row = rows.setdefault(name, {"scorer": name})
        row.update({f"{corpus}: {k}": points[k] for k in POINTS})
        print(f"{corpus:12} {name:40} " + " ".join(f"{points[k]:7.3f}" for k in POINTS),
              flush=True)

    for corpus in corpora:
        stream = messages(corpus)
        spam = np.array([m.spam for m in stream])
        z, _ = cached(cache, f"{corpus}-default", lambda stream=stream: default_scores(stream))
        add("SpamFilter()", corpus, spam, z)
        for order in orders:
            ratio, seconds = cached(cache, f"{corpus}-ppm{order}",
                                    lambda o=order, stream=stream: ppm_ratios(stream, o))
            if seconds is not None:
                print(f"{corpus} PPM order {order}: {seconds:.1f} s", flush=True)
            add(f"PPM order {order} alone", corpus, spam, ratio)
            for w in weights:
                # the order of SpamFilter's own sum: z + (w · ratio) / PPM_BYTES
                add(f"SpamFilter(ppm_order={order}, ppm_weight={w:g})", corpus, spam,
                    z + w * ratio / PPM_BYTES)
    columns = [_results.column("scorer")]
    for corpus in corpora:
        label = CORPUS_NAMES.get(corpus, corpus)
        columns += [_results.column(f"{corpus}: {k}",
                                    f"{label}: {k.replace('ham loss', 'ham')}",
                                    ".3f" if k == "1-ROCA %" else ".2f") for k in POINTS]
    _results.write_from_args(args, "spam_compression",
                             {"grid": _results.table(columns, rows.values())},
                             argv=argv, script=__file__)


if __name__ == "__main__":
    main()
