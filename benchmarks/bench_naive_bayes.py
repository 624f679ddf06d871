"""Throughput of streamnb's naive Bayes against river and scikit-learn, in one process.

A synthetic bag-of-words stream: ``--n`` messages of ``--tokens`` draws from a
``--vocabulary``-word Zipf vocabulary, two classes whose word rankings differ. Reported:

- one-by-one prequential (predict_proba_one, then learn_one), records/s: streamnb NaiveBayes
  (Laplace) and IndifferentNB vs river MultinomialNB, and vs river BernoulliNB (whose
  prediction is O(vocabulary), so it runs prequentially only on ``--bernoulli-n`` messages:
  the first ones, and the last ones after learning the rest; streamnb runs on the same ones);
- batch prequential at ``--batch`` records (predict_proba_many, then learn_many) vs
  scikit-learn MultinomialNB (DictVectorizer.transform + predict_proba + partial_fit).

Targets (issue 2): one-by-one ≥ 15× river MultinomialNB and ≥ 500× river BernoulliNB; batch
≥ 2× scikit-learn. Run: ``python benchmarks/bench_naive_bayes.py``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np


def make_stream(n: int, tokens: int, vocabulary: int, seed: int
                ) -> tuple[list[dict[str, int]], list[int]]:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocabulary + 1)
    p /= p.sum()
    # class 1 ranks the vocabulary differently: a fixed random permutation of 10% of the words
    ranking = np.arange(vocabulary)
    swap = rng.choice(vocabulary, vocabulary // 10, replace=False)
    ranking[swap] = rng.permutation(swap)
    words = np.array([f"w{i}" for i in range(vocabulary)])
    ys = (rng.random(n) < 0.4).astype(int)
    draws = rng.choice(vocabulary, size=(n, tokens), p=p)
    xs = []
    for y, row in zip(ys, draws, strict=True):
        ids = ranking[row] if y else row
        xs.append(dict.fromkeys(words[ids].tolist(), 1))
    return xs, ys.tolist()


def prequential_one(model, xs, ys) -> tuple[float, float]:
    correct = 0
    start = time.perf_counter()
    for x, y in zip(xs, ys, strict=True):
        proba = model.predict_proba_one(x)
        if proba and max(proba, key=proba.__getitem__) == y:
            correct += 1
        model.learn_one(x, y)
    seconds = time.perf_counter() - start
    return len(xs) / seconds, correct / len(xs)


def prequential_batches(predict: Callable, learn: Callable, xs, ys, batch: int
                        ) -> tuple[float, float]:
    correct = 0
    start = time.perf_counter()
    for lo in range(0, len(xs), batch):
        bx, by = xs[lo: lo + batch], ys[lo: lo + batch]
        if lo:
            correct += int((predict(bx) == np.asarray(by)).sum())
        learn(bx, by)
    seconds = time.perf_counter() - start
    return len(xs) / seconds, correct / (len(xs) - min(batch, len(xs)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--vocabulary", type=int, default=5_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--bernoulli-n", type=int, default=3_000,
                        help="messages for river BernoulliNB (>= --n: the whole stream, ~10 min)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeat", type=int, default=3, help="runs per model (median)")
    args = parser.parse_args()

    from river import naive_bayes
    from sklearn.feature_extraction import DictVectorizer
    from sklearn.naive_bayes import MultinomialNB

    from streamnb import IndifferentNB, NaiveBayes

    xs, ys = make_stream(args.n, args.tokens, args.vocabulary, args.seed)
    print(f"stream: {args.n:,} messages, {args.tokens} Zipf draws from {args.vocabulary:,} words, "
          f"2 classes ({np.mean(ys):.0%} class 1)\n")

    print(f"one-by-one prequential (predict_proba_one, then learn_one); median of "
          f"{args.repeat} runs")
    rates = {}
    for name, factory in [("streamnb NaiveBayes(laplace)", lambda: NaiveBayes()),
                          ("streamnb IndifferentNB", IndifferentNB),
                          ("river MultinomialNB", naive_bayes.MultinomialNB)]:
        runs = [prequential_one(factory(), xs, ys) for _ in range(args.repeat)]
        rate, acc = float(np.median([r for r, _ in runs])), runs[0][1]
        rates[name] = rate
        print(f"  {name:32s} {rate:>10,.0f} rec/s   accuracy {acc:.4f}")
    prefix = min(args.bernoulli_n, args.n)
    river_b, acc_b = prequential_one(naive_bayes.BernoulliNB(), xs[:prefix], ys[:prefix])
    ours_b, _ = prequential_one(NaiveBayes(), xs[:prefix], ys[:prefix])
    print(f"  {'river BernoulliNB (first ' + format(prefix, ',') + ')':32s} {river_b:>10,.0f} "
          f"rec/s   accuracy {acc_b:.4f}")
    print(f"  {'streamnb NaiveBayes (same prefix)':32s} {ours_b:>10,.0f} rec/s")
    ratios = f"{ours_b / river_b:6.1f}x on the first {prefix:,}"
    if prefix < args.n:
        # BernoulliNB's prediction cost grows with the vocabulary seen, so also compare at
        # steady state: both learn all but the last messages (not timed), then run
        # prequentially on them
        river_late, ours_late = naive_bayes.BernoulliNB(), NaiveBayes()
        for x, y in zip(xs[:-prefix], ys[:-prefix], strict=True):
            river_late.learn_one(x, y)
            ours_late.learn_one(x, y)
        river_w, _ = prequential_one(river_late, xs[-prefix:], ys[-prefix:])
        ours_w, _ = prequential_one(ours_late, xs[-prefix:], ys[-prefix:])
        print(f"  {'river BernoulliNB (last ' + format(prefix, ',') + ')':32s} "
              f"{river_w:>10,.0f} rec/s")
        print(f"  {'streamnb NaiveBayes (same window)':32s} {ours_w:>10,.0f} rec/s")
        ratios += f", {ours_w / river_w:6.1f}x on the last {prefix:,}"
    multinomial = rates["river MultinomialNB"]
    print(f"  ratio NaiveBayes / river MultinomialNB:   "
          f"{rates['streamnb NaiveBayes(laplace)'] / multinomial:6.1f}x  (target 15x)")
    print(f"  ratio IndifferentNB / river MultinomialNB: "
          f"{rates['streamnb IndifferentNB'] / multinomial:6.1f}x  (target 15x)")
    print(f"  ratio NaiveBayes / river BernoulliNB:     {ratios}  (target 500x)")

    print(f"\nbatch prequential, batches of {args.batch:,} (predict, then learn)")
    model = NaiveBayes()
    ours, acc = prequential_batches(lambda bx: model.predict_many(bx).to_numpy(),
                                    model.learn_many, xs, ys, args.batch)
    print(f"  {'streamnb NaiveBayes learn/predict_many':40s} {ours:>10,.0f} rec/s   "
          f"accuracy {acc:.4f}")
    vectorizer = DictVectorizer().fit([{f"w{i}": 1 for i in range(args.vocabulary)}])
    sk = MultinomialNB()

    def sk_learn(bx, by):
        sk.partial_fit(vectorizer.transform(bx), by, classes=[0, 1])

    sk_rate, sk_acc = prequential_batches(lambda bx: sk.predict(vectorizer.transform(bx)),
                                          sk_learn, xs, ys, args.batch)
    print(f"  {'scikit-learn MultinomialNB partial_fit':40s} {sk_rate:>10,.0f} rec/s   "
          f"accuracy {sk_acc:.4f}")
    print(f"  ratio streamnb / scikit-learn: {ours / sk_rate:6.1f}x  (target 2x)")


if __name__ == "__main__":
    main()
