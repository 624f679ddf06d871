"""Who are the ham messages the default SpamFilter calls spam? (issue 12's ham→spam target)

The default ``SpamFilter`` runs prequentially over SpamAssassin in time order (score, then
learn, every message). For each ham message it calls spam, the script reads the counts of its
sender tokens (``from:<domain>``, ``from:<word>``) *at the moment it was scored*: was the sender
domain seen before, and more often in ham than in spam? A sender reputation (an auto-whitelist,
as SpamAssassin's AWL) can only correct errors whose sender was seen before in ham; the count
of those bounds what such a feature could gain on this stream.

Run: ``python benchmarks/spam_ham_errors.py`` (about a minute).
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass

from streamnb import SpamFilter
from streamnb.datasets import iter_spamassassin_stream


@dataclass(frozen=True)
class HamError:
    position: int  # in the stream, from 0
    group: str  # the corpus folder (hard-ham-1, easy-ham-2, ...)
    score: float
    domains: dict[str, tuple[float, float]]  # sender domain token -> (ham, spam) counts then


def sender_counts(model: SpamFilter, tokens: frozenset[str]) -> dict[str, tuple[float, float]]:
    """(ham, spam) message counts of the message's sender-domain tokens; (0, 0) if unseen."""
    stats = model.stats
    known = stats.schema.text_values[0] if stats.schema.text_values else {}
    out = {}
    for token in sorted(t for t in tokens if t.startswith("from:") and "." in t):
        column = known.get(token)
        counts = []
        for label in ("ham", "spam"):
            c = stats.labels.index.get(label)
            counts.append(0.0 if column is None or c is None
                          else float(stats.value_counts[c, column]))
        out[token] = (counts[0], counts[1])
    return out


def ham_errors(limit: int | None = None) -> tuple[list[HamError], int]:
    """The default filter's ham→spam errors (score > 0) over the stream, and its length."""
    model, errors, n = SpamFilter(), [], 0
    for n, message in enumerate(iter_spamassassin_stream(), start=1):
        if limit is not None and n > limit:
            n -= 1
            break
        tokens = model.tokens(message.raw)
        score = model.score_one(message.raw)
        if message.label == "ham" and score > model.threshold:
            errors.append(HamError(n - 1, message.group, score, sender_counts(model, tokens)))
        model.learn_one(message.raw, message.label)
    return errors, n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=None, help="only the first N messages")
    args = parser.parse_args()
    errors, n = ham_errors(args.limit)
    never = sum(all(h + s == 0 for h, s in e.domains.values()) for e in errors)
    hammy = sum(any(h > s for h, s in e.domains.values()) for e in errors)
    print(f"{n:,} messages; {len(errors)} ham called spam")
    print(f"  sender domain never seen before:           {never}")
    print(f"  a sender domain seen more often in ham:     {hammy}")
    print("  by corpus folder: " + ", ".join(f"{g} {k}" for g, k in
                                              Counter(e.group for e in errors).most_common()))
    for e in errors:
        senders = ", ".join(f"{t} ham {h:g} / spam {s:g}" for t, (h, s) in e.domains.items())
        print(f"  #{e.position:<5} {e.group:11s} z = {e.score:5.2f}  {senders or '(no domain)'}")


if __name__ == "__main__":
    main()
