"""SpamFilter's prequential rate on raw e-mail against bogofilter and river.

Every SpamAssassin message (``m.raw``, the bytes as received, in time order), one pass:

- **streamnb SpamFilter**, prequential: ``score_one(raw)`` then ``learn_one(raw, label)`` —
  tokenising, scoring and learning each message, from an empty filter;
- the same in batches of 250 (the chunks below): ``score_many`` of a batch, then
  ``learn_many`` of it (each message tokenised once), another empty filter;
- **river** ``BagOfWords() | MultinomialNB()``, prequential on the same messages as text
  (``m.text``: river's ``BagOfWords`` takes a ``str``): ``predict_proba_one`` then
  ``learn_one``, from an empty model;
- **bogofilter** 1.2.5 ``-M -T`` (tokenise and score every message of one mbox, in one process,
  in C) against a word list in which every message was registered before — its bulk
  tokenise+score rate, which does no learning at all (``bench_tokenizer.bogofilter_speed``).

SpamFilter and river run interleaved in chunks of 250 messages (each keeps its own state from
chunk to chunk), so that both see the same machine load; bogofilter runs after them, ``--repeat``
passes. Rates per CPU second (process time; bogofilter: its child processes' CPU time), and
per wall-clock second. Targets: SpamFilter ≥ 2× bogofilter's rate and ≥ 10× river's.

Run: ``python benchmarks/bench_spam_filter.py [--limit N] [--repeat 3]``; writes
benchmarks/results/bench_spam_filter.json (``--results``/``--no-results``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from river import feature_extraction, naive_bayes

from streamnb import SpamFilter
from streamnb.datasets import iter_spamassassin_stream

sys.path.insert(0, str(Path(__file__).parent))
import _results  # sibling scripts, not a package
from bench_tokenizer import bogofilter_speed

CHUNK = 250


def prequential_rates(messages: list) -> dict[str, tuple[float, float, float]]:
    """CPU seconds, wall seconds and accuracy of SpamFilter and river, interleaved by chunk."""
    spam_filter, batch_filter = SpamFilter(), SpamFilter()
    river = feature_extraction.BagOfWords() | naive_bayes.MultinomialNB()

    def streamnb_step(m) -> bool:
        predicted = spam_filter.score_one(m.raw) > spam_filter.threshold
        spam_filter.learn_one(m.raw, m.label)
        return predicted == (m.label == "spam")

    def river_step(m) -> bool:
        proba = river.predict_proba_one(m.text)
        predicted = max(proba, key=proba.get) if proba else None
        river.learn_one(m.text, m.label)
        return predicted == m.label

    def batch_chunk(chunk: list) -> int:
        raws, labels = [m.raw for m in chunk], [m.label for m in chunk]
        spam = batch_filter.score_many(raws) > batch_filter.threshold
        batch_filter.learn_many(raws, labels)
        return sum(s == (y == "spam") for s, y in zip(spam.tolist(), labels, strict=True))

    def each(step):
        return lambda chunk: sum(step(m) for m in chunk)

    systems = {"streamnb SpamFilter (tokenise + score + learn)": each(streamnb_step),
               "river BagOfWords | MultinomialNB (tokenise + score + learn)": each(river_step),
               f"streamnb SpamFilter, batches of {CHUNK} (score_many, then learn_many)":
                   batch_chunk}
    cpu = dict.fromkeys(systems, 0.0)
    wall = dict.fromkeys(systems, 0.0)
    right = dict.fromkeys(systems, 0)
    for start in range(0, len(messages), CHUNK):
        chunk = messages[start:start + CHUNK]
        for name, step in systems.items():
            c, w = time.process_time(), time.perf_counter()
            right[name] += step(chunk)
            cpu[name] += time.process_time() - c
            wall[name] += time.perf_counter() - w
    return {name: (cpu[name], wall[name], right[name] / len(messages)) for name in systems}


RATES = [_results.column("system"), _results.column("msg/s (CPU)", fmt=",.0f"),
         _results.column("msg/s (wall)", fmt=",.0f"),
         _results.column("prequential accuracy", fmt=".4f")]
RATIOS = [_results.column("ratio"), _results.column("CPU", fmt=".2f"),
          _results.column("wall", fmt=".2f"), _results.column("target", fmt="g")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=0, help="first N messages only")
    parser.add_argument("--repeat", type=int, default=3, help="bogofilter passes")
    _results.add_arguments(parser, "bench_spam_filter")
    args = parser.parse_args(argv)
    messages = list(iter_spamassassin_stream())
    if args.limit:
        messages = messages[:args.limit]
    n = len(messages)
    print(f"SpamAssassin in time order: {n:,} messages\n")
    rates = {name: (n / cpu, n / wall, accuracy)
             for name, (cpu, wall, accuracy) in prequential_rates(messages).items()}
    if shutil.which("bogofilter"):
        seconds = bogofilter_speed([m.raw for m in messages], [m.label for m in messages],
                                   args.repeat)
        name = "bogofilter -M -T (tokenise + score, C)"
        cpu, wall = seconds["bogofilter -M -T (tokenise + score)"]
        rates[name] = (n * args.repeat / cpu, n * args.repeat / wall, None)
    rows = [{"system": name, "msg/s (CPU)": cpu_rate, "msg/s (wall)": wall_rate,
             "prequential accuracy": accuracy}
            for name, (cpu_rate, wall_rate, accuracy) in rates.items()]
    ours, river, batches, *bogofilter = rates.values()
    ratios = [{"ratio": "SpamFilter in batches / one by one", "CPU": batches[0] / ours[0],
               "wall": batches[1] / ours[1]},
              {"ratio": "SpamFilter / river", "CPU": ours[0] / river[0],
               "wall": ours[1] / river[1], "target": 10}]
    if bogofilter:
        ratios.append({"ratio": "SpamFilter / bogofilter -M -T", "CPU": ours[0] / bogofilter[0][0],
                       "wall": ours[1] / bogofilter[0][1], "target": 2})
    tables = {"rates": _results.table(RATES, rows), "ratios": _results.table(RATIOS, ratios)}
    print(_results.render(tables["rates"]), "", _results.render(tables["ratios"]), sep="\n")
    _results.write_from_args(
        args, "bench_spam_filter", tables, argv=argv, script=__file__,
        notes=f"Limited run: the first {n:,} messages." if args.limit else "")


if __name__ == "__main__":
    main()
