"""Adaptive character-level compression models as spam scorers (issue 12, round 3): a PPM
model per class over the bytes of each message, prequentially on SpamAssassin and the SMS Spam
Collection, alone and combined with `SpamFilter`'s score.

The family is the TREC 2005/2006 spam-track winners' (Bratko, Cormack, Filipič, Lynam, Zupan,
"Spam filtering using statistical data compression models", JMLR 7, 2006): one adaptive
context model per class, a message classified by the class whose model codes it in fewer bits
(minimum cross-entropy), messages truncated to their first 2,500 bytes. Their state is counts,
per class: c(h, s) how often byte s followed the context h (the last k bytes, k = 0..order),
n(h) = Σ_s c(h, s) and d(h) the number of distinct bytes seen after h — mergeable (c and n add,
d is recounted from c) and decayable like the project's other count statistics.

The model here is PPM-D in its *interpolated* (blended) form rather than with exclusion::

    P_k(s | h) = max(c(h, s) − ½, 0) / n(h)  +  d(h) / (2 n(h)) · P_{k−1}(s | h')   (n(h) > 0)
    P_k(s | h) = P_{k−1}(s | h')                                                     (n(h) = 0)
    P_{−1}(s) = 1/256

(h' the context one byte shorter). The D escape gives each context d/(2n) of escape mass, as in
PPM-D, and the interpolation keeps every P_k a normalised distribution over the 256 bytes
without the exclusion bookkeeping (which would need the symbol set of every context). The
score of a message x of L bytes is its per-byte log-likelihood ratio

    ppm(x) = (ln P_spam(x) − ln P_ham(x)) / L        (nats per byte, > 0: spam)

and two readings of "the model of class c" are measured, as in the paper:

* ``static`` — the class models as learned so far (their "MCE");
* ``adaptive`` — each class model also learns the message as it codes it, byte by byte (their
  "minimum description length update", AMDL): a message that repeats itself pays for its
  content once. Computed exactly, vectorised: the in-message counts of each key before each
  position are group ranks.

The combination with SpamFilter's log-odds z is a fixed sum of log-odds with one weight chosen
on one corpus and checked on the other (see ``--weights``): ``--combine mean`` adds w · ppm(x),
the per-byte ratio; ``--combine total`` adds w · ppm(x) · L / limit, the whole message's
log-likelihood ratio scaled so that w means the same for a message of ``limit`` bytes — a short
text (an SMS) then moves z little. Scores are cached
in ``--cache`` (a directory of .npy per corpus and scorer) so that the combinations are read
off the same runs. Run::

    python benchmarks/spam_compression.py [--corpus spamassassin,sms] [--orders 4,5,6]
                                          [--modes static,adaptive] [--weights 1,2,4,8]
                                          [--combine mean|total] [--text raw|sender|body]

Prototype only: numpy, with an open-addressing table of the exact context keys (an order-k
context and its byte fit in 8(k + 1) ≤ 56 bits, so order ≤ 6: no key is confused with another).
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np

# a sibling script: run as `python benchmarks/spam_compression.py`, its directory is on the path
from spam_filter_variants import _DELIVERY_FIELDS, Message, measure, messages

from streamnb import SpamFilter

MAX_ORDER = 6  # 7 bytes (context + symbol) and the order tag fit in 63 bits
# flag bit: a context key (its n, d) rather than a (context, byte) key (its c)
_CONTEXT = np.int64(1) << np.int64(60)


_FIELD_NAME = re.compile(rb"^([!-9;-~]+):")


def message_bytes(m: Message, limit: int, text: str = "raw") -> bytes:
    """The first ``limit`` bytes a compression model reads, the SMS text in UTF-8 or an e-mail
    without its mbox ``From `` envelope line (the receiving side's, dated): ``raw`` the rest as
    received; ``sender`` without the header fields the receiving side adds (the relay chain,
    delivery, scanners: the variant harness's list); ``body`` the body alone."""
    raw = m.raw if isinstance(m.raw, bytes) else m.raw.encode("utf-8")
    if raw.startswith(b"From "):
        raw = raw[raw.find(b"\n") + 1:]
    end = raw.find(b"\n\n")
    if text == "raw" or end < 0 or not isinstance(m.raw, bytes):
        return raw[:limit]
    if text == "body":
        return raw[end + 2:][:limit]
    kept, keep = [], True
    for line in raw[:end].split(b"\n"):
        field = _FIELD_NAME.match(line)
        if field:
            name = field.group(1).decode("latin-1").lower()
            keep = name not in _DELIVERY_FIELDS and not name.startswith(
                ("x-spam", "x-virus", "x-mailscanner"))
        if keep:
            kept.append(line)
    return (b"\n".join(kept) + b"\n" + raw[end + 1:])[:limit]


class KeyTable:
    """Exact int64 key → dense slot (0, 1, 2, ... in order of first sight), open addressing
    with linear probing, a whole batch of keys per call (vectorised)."""

    def __init__(self, bits: int = 26) -> None:
        self.bits, self.size = bits, 1 << bits
        self.table = np.full(self.size, -1, dtype=np.int64)  # keys are >= 0; -1: empty
        self.slot = np.zeros(self.size, dtype=np.int64)
        self.count = 0

    def slots(self, keys: np.ndarray) -> np.ndarray:
        unique, inverse = np.unique(keys, return_inverse=True)
        if self.count + len(unique) > 0.7 * self.size:
            raise MemoryError("key table too full; raise bits")
        position = ((unique.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
                    >> np.uint64(64 - self.bits)).astype(np.int64)
        found = np.empty(len(unique), dtype=np.int64)
        pending = np.arange(len(unique))
        while len(pending):
            at = position[pending]
            held = self.table[at]
            hit = held == unique[pending]
            found[pending[hit]] = self.slot[at[hit]]
            empty = held == -1
            claim, first = np.unique(at[empty], return_index=True)
            winners = pending[empty][first]
            self.table[claim] = unique[winners]
            self.slot[claim] = self.count + np.arange(len(winners))
            found[winners] = self.slot[claim]
            self.count += len(winners)
            taken = ~hit & ~empty
            position[pending[taken]] = (position[pending[taken]] + 1) & (self.size - 1)
            losers = np.ones(int(empty.sum()), dtype=bool)
            losers[first] = False  # another key of the batch took the slot: probe it again
            pending = np.concatenate([pending[taken], pending[empty][losers]])
        return found[inverse]


def _group_rank(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each position, how many earlier positions hold the same key, and the sort order
    (stable) that groups equal keys with their positions ascending."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    start = np.ones(len(sk), dtype=bool)
    start[1:] = sk[1:] != sk[:-1]
    first = np.maximum.accumulate(np.where(start, np.arange(len(sk)), 0))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(sk)) - first
    return rank, order


class PPM:
    """Two interpolated PPM-D byte models (class 0 ham, 1 spam) of a given order."""

    def __init__(self, order: int, adaptive: bool) -> None:
        if not 0 <= order <= MAX_ORDER:
            raise ValueError(f"order must be in 0..{MAX_ORDER}")
        self.order, self.adaptive = order, adaptive
        self.keys = KeyTable()
        self.count = np.zeros((2, 1 << 20), dtype=np.int32)  # c for (h, s) keys, n for h keys
        self.distinct = np.zeros((2, 1 << 20), dtype=np.int32)  # d, at h keys

    def _slots(self, data: bytes) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per order k, the slots of the (context, byte) keys and of the context keys at the
        positions i ≥ k (a position with a shorter history has no order-k context)."""
        b = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
        sym, ctx = [], []
        packed = b  # packed[i] = bytes i−k..i (k + 1 of them), for i ≥ k
        for k in range(self.order + 1):
            if k:
                packed = (packed[:-1] << 8) | b[k:]
            tag = np.int64(k) << np.int64(56)
            sym.append(packed | tag)
            ctx.append((packed >> 8) | tag | _CONTEXT)
        flat = self.keys.slots(np.concatenate(sym + ctx))
        size = self.keys.count
        if size > self.count.shape[1]:
            grow = max(size, 2 * self.count.shape[1])
            self.count = np.pad(self.count, ((0, 0), (0, grow - self.count.shape[1])))
            self.distinct = np.pad(self.distinct, ((0, 0), (0, grow - self.distinct.shape[1])))
        cuts = np.cumsum([len(a) for a in sym + ctx])[:-1]
        parts = np.split(flat, cuts)
        return parts[: self.order + 1], parts[self.order + 1:]

    def log_likelihoods(self, sym: list[np.ndarray], ctx: list[np.ndarray]) -> np.ndarray:
        """ln P_c(message) for c = ham, spam (static or adaptive per ``self.adaptive``)."""
        L = len(sym[0])
        out = np.zeros(2)
        for c in (0, 1):
            p = np.full(L, 1.0 / 256)
            for k in range(self.order + 1):
                s, h = sym[k], ctx[k]
                cs = self.count[c, s].astype(np.float64)
                n = self.count[c, h].astype(np.float64)
                d = self.distinct[c, h].astype(np.float64)
                if self.adaptive and len(s):
                    rank_s, _ = _group_rank(s)
                    rank_h, order_h = _group_rank(h)
                    cs += rank_s
                    n += rank_h
                    # a byte new to h in this message and in the class model adds to d(h)
                    # for every later position with the same context h
                    new = ((rank_s == 0) & (self.count[c, s] == 0)).astype(np.int64)
                    sorted_new = new[order_h]
                    before = np.cumsum(sorted_new) - sorted_new
                    group_start = np.empty(len(h), dtype=np.int64)
                    group_start[order_h] = np.arange(len(h)) - rank_h[order_h]
                    inc = np.empty(len(h), dtype=np.int64)
                    inc[order_h] = before - before[group_start[order_h]]
                    d += inc
                lower = p[k:]
                seen = n > 0
                safe = np.where(seen, n, 1.0)
                blended = np.maximum(cs - 0.5, 0.0) / safe + d / (2 * safe) * lower
                p[k:] = np.where(seen, blended, lower)
            out[c] = np.log(p).sum()
        return out

    def learn(self, sym: list[np.ndarray], ctx: list[np.ndarray], c: int) -> None:
        for s, h in zip(sym, ctx, strict=True):
            if not len(s):
                continue
            slots, first, times = np.unique(s, return_index=True, return_counts=True)
            new = self.count[c, slots] == 0
            self.count[c, slots] += times.astype(np.int32)
            np.add.at(self.distinct[c], h[first[new]], 1)
            hs, ht = np.unique(h, return_counts=True)
            self.count[c, hs] += ht.astype(np.int32)


def ppm_scores(stream: list[Message], order: int, adaptive: bool, limit: int,
               text: str = "raw") -> np.ndarray:
    """Per-message ppm(x) (nats per byte, spam positive), score then learn, stream order."""
    model = PPM(order, adaptive)
    out = np.zeros(len(stream))
    for i, m in enumerate(stream):
        data = message_bytes(m, limit, text)
        if not data:
            continue
        sym, ctx = model._slots(data)
        ham, spam = model.log_likelihoods(sym, ctx)
        out[i] = (spam - ham) / len(data)
        model.learn(sym, ctx, int(m.spam))
    return out


def default_scores(stream: list[Message]) -> np.ndarray:
    f = SpamFilter()
    out = np.zeros(len(stream))
    for i, m in enumerate(stream):
        out[i] = f.score_one(m.raw)
        f.learn_one(m.raw, "spam" if m.spam else "ham")
    return out


def cached(cache: Path, name: str, compute) -> tuple[np.ndarray, float | None]:
    path = cache / f"{name}.npy"
    if path.exists():
        return np.load(path), None
    start = time.perf_counter()
    scores = compute()
    seconds = time.perf_counter() - start
    np.save(path, scores)
    return scores, seconds


def post_hoc(spam: np.ndarray, scores: np.ndarray, ham_rate: float = 0.005) -> str:
    """The threshold, read off the whole run afterwards, with ham errors ≤ ``ham_rate`` of the
    ham and the fewest errors in all: whether the ranking *could* meet issue 12's targets at
    some operating point (not a default: it is tuned on the very stream it is measured on)."""
    ham, spam_scores = np.sort(scores[~spam]), np.sort(scores[spam])
    allowed = int(ham_rate * len(ham))
    best = None
    for t in ham[len(ham) - allowed - 1:]:  # ham errors = ham scored above t
        h = len(ham) - int(np.searchsorted(ham, t, side="right"))
        s = int(np.searchsorted(spam_scores, t, side="right"))
        if h <= allowed and (best is None or h + s < best[1] + best[2]):
            best = (float(t), h, s)
    t, h, s = best
    return f"t={t:.2f}: {h}/{s}, acc {1 - (h + s) / len(scores):.4f}"


def row(name: str, corpus: str, stream: list[Message], scores: np.ndarray,
        seconds: float | None) -> str:
    m, _ = measure(stream, lambda s: iter(scores))
    errors = " · ".join(f"{h}/{s}" for h, s in (m[f"errors t={t}"] for t in (0.0, 0.25, 0.5)))
    secs = f"{seconds:.1f}" if seconds is not None else "(cached)"
    best = post_hoc(np.array([x.spam for x in stream]), scores)
    return (f"| {name} | {corpus} | {m['accuracy']:.4f} | {m['AUC']:.5f} | {m['1-ROCA %']:.3f} "
            f"| {m['ham→spam %']:.2f} | {m['spam→ham %']:.2f} | {errors} | {best} | {secs} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="spamassassin,sms")
    parser.add_argument("--orders", default="4,5,6")
    parser.add_argument("--modes", default="static,adaptive")
    parser.add_argument("--limit", type=int, default=2500, help="bytes read per message")
    parser.add_argument("--text", default="raw", choices=("raw", "sender", "body"),
                        help="what of an e-mail the model reads (see message_bytes)")
    parser.add_argument("--weights", default="", help="w in z + w·ppm, comma-separated")
    parser.add_argument("--combine", default="mean", choices=("mean", "total"))
    parser.add_argument("--cache", default="/tmp/spam_compression")
    args = parser.parse_args(argv)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    weights = [float(w) for w in args.weights.split(",") if w]
    print("| scorer | corpus | accuracy | AUC | 1-ROCA % | ham→spam % | spam→ham % "
          "| ham/spam errors at t = 0 · 0.25 · 0.5 | post hoc: ham ≤ 0.5 % | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for corpus in args.corpus.split(","):
        stream = messages(corpus)
        z, seconds = cached(cache, f"{corpus}-default",
                            lambda stream=stream: default_scores(stream))
        print(row("SpamFilter default", corpus, stream, z, seconds), flush=True)
        length = np.array([len(message_bytes(m, args.limit, args.text)) for m in stream])
        scale = length / args.limit if args.combine == "total" else np.ones(len(stream))
        for mode in args.modes.split(","):
            for order in map(int, args.orders.split(",")):
                name = f"{corpus}-ppm{order}-{mode}-{args.limit}-{args.text}"
                ppm, seconds = cached(cache, name,
                                      lambda o=order, a=mode == "adaptive", stream=stream:
                                      ppm_scores(stream, o, a, args.limit, args.text))
                print(row(f"PPM-D order {order}, {mode}, {args.text}, {args.limit} B", corpus,
                          stream, ppm, seconds), flush=True)
                for w in weights:
                    print(row(f"SpamFilter + {w:g} · PPM-D order {order} {mode}"
                              f" ({args.combine})", corpus, stream, z + w * scale * ppm, None),
                          flush=True)


if __name__ == "__main__":
    main()
