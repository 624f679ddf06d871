"""Variants of SpamFilter tried against issue 12's targets (the table "Tried in round 2" in
docs/spam.md), prequentially on SpamAssassin and the SMS Spam Collection.

Every variant is built from `SpamFilter` itself (formulas live once, in the library): extra
tokens are passed as an already tokenised ``{token: 1}`` message, a second scorer is a second
`SpamFilter` on other tokens, and a different training rule calls ``learn_one`` again. Score
each message, then learn it, every message in stream order, default settings. Prints, per
variant and corpus, accuracy, exact AUC, 1-ROCA %, ham called spam %, spam called ham %, the
error counts at thresholds 0, 0.25 and 0.5, and the seconds of the run. Run:
``python benchmarks/spam_filter_variants.py [--corpus spamassassin,sms] [--variants a,b]``.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from streamnb import SpamFilter
from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
from streamnb.evaluate import exact_auc
from streamnb.features import email as _email
from streamnb.features import tokenize_text
from streamnb.features.text import is_email


@dataclass
class Message:
    raw: str | bytes
    spam: bool
    tokens: frozenset[str]
    words: list[str]  # the visible words in order (for word pairs and character n-grams)
    header_names: frozenset[str]


class _VisibleText(_email._Reader):
    """The e-mail tokeniser's reader, returning the visible text of the text parts instead of
    tokens (benchmark use only: the word order the set of tokens does not keep)."""

    def tokens(self) -> str:  # type: ignore[override]
        self.entity(1, len(self.text), 0, "text/plain", top=True)
        return " ".join(self.visible)


_EMAIL_WORD = re.compile(r"[a-z0-9_$!]+(?:'[a-z0-9_$!]+)*")
_SMS_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*|\d+")
_FIELD = re.compile(r"^([!-9;-~]+):", re.M)
# Fields the receiving side adds (delivery, the mailbox's client, scanners): not the sender's.
_DELIVERY_FIELDS = frozenset({"received", "delivered-to", "return-path", "delivery-date",
                              "x-keywords", "x-status", "status", "x-uid", "envelope-to",
                              "x-original-to", "lines", "content-length"})


def _words_and_headers(raw: str | bytes) -> tuple[list[str], frozenset[str]]:
    if not is_email(raw):
        return _SMS_WORD.findall(str(raw).lower()), frozenset()
    text = raw[:_email._MAX_MESSAGE].decode("latin-1") if isinstance(raw, bytes) else raw
    body = text.find("\n\n")
    names = frozenset(n.lower() for n in _FIELD.findall(text[: body if body >= 0 else None]))
    names = frozenset(n for n in names if n not in _DELIVERY_FIELDS
                      and not n.startswith(("x-spam", "x-virus", "x-mailscanner")))
    text = text[text.find("\n"):] if text.startswith("From ") else "\n" + text
    visible = _VisibleText(text, isinstance(raw, bytes)).tokens()
    return [w for w in _EMAIL_WORD.findall(visible) if 2 <= len(w) <= 40], names


def messages(corpus: str) -> list[Message]:
    stream = (((m.raw, m.label) for m in iter_spamassassin_stream()) if corpus == "spamassassin"
              else ((m.text, m.label) if hasattr(m, "text") else tuple(m)
                    for m in iter_sms_spam_stream()))
    out = []
    for raw, label in stream:
        words, names = _words_and_headers(raw)
        out.append(Message(raw, label == "spam", tokenize_text(raw), words, names))
    return out


def _bag(tokens) -> dict[str, int]:
    return dict.fromkeys(sorted(tokens), 1)


def _label(m: Message) -> str:
    return "spam" if m.spam else "ham"


def word_pairs(words: list[str], window: int, limit: int = 200) -> set[str]:
    """Orthogonal sparse bigrams (CRM114/OSBF): each word of the first ``limit`` with each of
    the next ``window`` words, the distance in the token (``window`` 1: plain bigrams)."""
    w = words[:limit]
    return {f"{w[i]}~{k}~{w[i + k]}" for i in range(len(w))
            for k in range(1, window + 1) if i + k < len(w)}


def char_grams(words: list[str], n: int = 4, limit: int = 1000) -> set[str]:
    text = " ".join(words)[:limit]
    return {"c4:" + text[i:i + n] for i in range(len(text) - n + 1)}


# -- variants: each maps the stream to its per-message scores (score, then learn) -------------
def default(stream: list[Message]) -> Iterator[float]:
    f = SpamFilter()
    for m in stream:
        yield f.score_one(m.raw)
        f.learn_one(m.raw, _label(m))


def thick(margin: float, ham_times: int, spam_times: int) -> Callable:
    """Thick-threshold training: a message called wrong (or within ``margin`` of the
    threshold) is learned ``ham_times``/``spam_times`` times instead of once."""
    def variant(stream: list[Message]) -> Iterator[float]:
        f = SpamFilter()
        for m in stream:
            z = f.score_one(m.raw)
            yield z
            times = 1
            if (z > 0) != m.spam or abs(z) < margin:
                times = spam_times if m.spam else ham_times
            for _ in range(times):
                f.learn_one(m.raw, _label(m))
    return variant


def extra_tokens(extra: Callable[[Message], set[str]]) -> Callable:
    """The tokens of the message plus ``extra(message)``, in one filter."""
    def variant(stream: list[Message]) -> Iterator[float]:
        f = SpamFilter()
        for m in stream:
            bag = _bag(m.tokens | extra(m))
            yield f.score_one(bag)
            f.learn_one(bag, _label(m))
    return variant


def second_scorer(extra: Callable[[Message], set[str]], weight: float) -> Callable:
    """z + weight · z′, z′ the score of a second filter on ``extra(message)`` alone."""
    def variant(stream: list[Message]) -> Iterator[float]:
        f, g = SpamFilter(), SpamFilter()
        for m in stream:
            bag = _bag(extra(m))
            yield f.score_one(m.raw) + weight * g.score_one(bag)
            f.learn_one(m.raw, _label(m))
            g.learn_one(bag, _label(m))
    return variant


def received_once(stream: list[Message]) -> Iterator[float]:
    """Per-field deduplication of the relay chain: of a message's ``received:`` tokens only
    the one with the largest |log-ratio| is scored (all are learned)."""
    f = SpamFilter()
    for m in stream:
        explained = f.explain_one(m.raw)
        relays = [e for e in explained if e["token"].startswith("received:")]
        drop = {e["token"] for e in relays[1:]}  # explain_one: strongest first
        yield f.score_one(_bag(m.tokens - drop)) if drop else f.score_one(m.raw)
        f.learn_one(m.raw, _label(m))


def fisher_asymmetric(spam_weight: float, ham_weight: float) -> Callable:
    """The Fisher part weighted by its sign: z = mean_K d + w± · ln(I/(1 − I))."""
    def variant(stream: list[Message]) -> Iterator[float]:
        multinomial, both = SpamFilter(fisher_weight=0.0), SpamFilter(fisher_weight=1.0)
        for m in stream:
            d = multinomial.score_one(m.raw)
            fisher = both.score_one(m.raw) - d
            yield d + (spam_weight if fisher > 0 else ham_weight) * fisher
            multinomial.learn_one(m.raw, _label(m))
            both.learn_one(m.raw, _label(m))
    return variant


VARIANTS: dict[str, Callable[[list[Message]], Iterator[float]]] = {
    "default": default,
    "thick: wrong learned twice": thick(0.0, 2, 2),
    "thick: |z|<0.5 or wrong, ham 3x, spam 2x": thick(0.5, 3, 2),
    "thick: |z|<1 or wrong, twice": thick(1.0, 2, 2),
    "received: one per message": received_once,
    "header names (sender's fields)": extra_tokens(
        lambda m: {"header:" + n for n in m.header_names}),
    "OSB pairs (window 4) as tokens": extra_tokens(lambda m: word_pairs(m.words, 4)),
    "bigrams as tokens": extra_tokens(lambda m: word_pairs(m.words, 1)),
    "bigrams, second scorer w=1/2": second_scorer(lambda m: word_pairs(m.words, 1), 0.5),
    "char 4-grams, second scorer w=1/4": second_scorer(lambda m: char_grams(m.words), 0.25),
    "Fisher weight 0 (z>0) / 1/4 (z<0)": fisher_asymmetric(0.0, 0.25),
}


def measure(stream: list[Message], variant: Callable) -> tuple[dict[str, float], float]:
    start = time.perf_counter()
    scores = np.fromiter(variant(stream), dtype=np.float64, count=len(stream))
    seconds = time.perf_counter() - start
    truth = np.array([m.spam for m in stream])
    auc = exact_auc(truth, scores)
    out = {"accuracy": float(np.mean((scores > 0) == truth)), "AUC": auc,
           "1-ROCA %": 100 * (1 - auc),
           "ham→spam %": 100 * float(np.mean(scores[~truth] > 0)),
           "spam→ham %": 100 * float(np.mean(scores[truth] <= 0))}
    for t in (0.0, 0.25, 0.5):
        out[f"errors t={t}"] = (int(np.sum(scores[~truth] > t)), int(np.sum(scores[truth] <= t)))
    return out, seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="spamassassin,sms")
    parser.add_argument("--variants", default=None,
                        help=f"comma-separated (default: all): {', '.join(VARIANTS)}")
    args = parser.parse_args(argv)
    chosen = [v.strip() for v in args.variants.split(",")] if args.variants else list(VARIANTS)
    print("| variant | corpus | accuracy | AUC | 1-ROCA % | ham→spam % | spam→ham % "
          "| ham/spam errors at t = 0 · 0.25 · 0.5 | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for corpus in args.corpus.split(","):
        stream = messages(corpus)
        for name in chosen:
            m, seconds = measure(stream, VARIANTS[name])
            errors = " · ".join(f"{h}/{s}" for h, s in (m[f"errors t={t}"]
                                                         for t in (0.0, 0.25, 0.5)))
            print(f"| {name} | {corpus} | {m['accuracy']:.4f} | {m['AUC']:.5f} "
                  f"| {m['1-ROCA %']:.3f} | {m['ham→spam %']:.2f} | {m['spam→ham %']:.2f} "
                  f"| {errors} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
