"""Variants of SpamFilter and its settings, prequentially on SpamAssassin and the SMS Spam
Collection (the tables of docs/spam.md).

Every variant is built from `SpamFilter` itself (formulas live once, in the library): extra
tokens are passed as an already tokenised ``{token: 1}`` message, a second scorer is a second
`SpamFilter` on other tokens, a different training rule calls ``learn_one`` again, and a setting
is a `SpamFilter` parameter. Score each message, then learn it, every message in stream order.
Three tables: ``default``, the default `SpamFilter` through `streamnb.evaluate.prequential`
(its scores also give the thresholds of ``sensitivity``); ``sensitivity``, each setting ×2/÷2
with the others fixed, and other thresholds; ``variants``, other tokens, scorers and training
rules: accuracy, exact AUC, ham called spam %, the error counts at thresholds 0, 0.25 and 0.5,
and the seconds of the run. Run::

    python benchmarks/spam_filter_variants.py [--corpus spamassassin,sms] [--variants a,b]
        [--merge]

It writes ``benchmarks/results/spam_filter_variants.json`` (``--results``, ``--no-results``; a
run of some ``--variants`` with ``--merge`` adds its rows to the file, its command to the
file's).
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import _results  # benchmarks/_results.py
import numpy as np

from streamnb import SpamFilter
from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
from streamnb.evaluate import exact_auc, prequential
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
def setting(**params: Any) -> Callable:
    """`SpamFilter` with ``params``, every message scored then learned."""
    def variant(stream: list[Message]) -> Iterator[float]:
        f = SpamFilter(**params)
        for m in stream:
            yield f.score_one(m.raw)
            f.learn_one(m.raw, _label(m))
    return variant


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


#: name (no comma: ``--variants`` splits on commas): (description, variant); the default is
#: `default_run`'s
VARIANTS: dict[str, tuple[str, Callable[[list[Message]], Iterator[float]]]] = {
    "thick-wrong-2x": (
        "thick-threshold training: a message called wrong is learned twice", thick(0.0, 2, 2)),
    "thick-0.5-ham3x-spam2x": (
        "thick: wrong or \\|z\\| < 0.5, ham learned 3×, spam 2×", thick(0.5, 3, 2)),
    "thick-1-2x": (
        "thick: wrong or \\|z\\| < 1, learned twice", thick(1.0, 2, 2)),
    "received-once": (
        "relay chain deduplicated: only the strongest `received:` token scored",
        received_once),
    "header-names": (
        "header field names as tokens (`header:list-id`; delivery-side fields left out)",
        extra_tokens(lambda m: {"header:" + n for n in m.header_names})),
    "osb-tokens": (
        "OSB word pairs (window 4, first 200 words) as tokens",
        extra_tokens(lambda m: word_pairs(m.words, 4))),
    "bigram-tokens": ("adjacent word pairs (bigrams) as tokens",
                      extra_tokens(lambda m: word_pairs(m.words, 1))),
    "bigram-scorer": (
        "bigrams as a second scorer, z + ½ z′",
        second_scorer(lambda m: word_pairs(m.words, 1), 0.5)),
    "char4-scorer": (
        "character 4-grams (first 1,000 visible characters) as a second scorer, z + ¼ z′",
        second_scorer(lambda m: char_grams(m.words), 0.25)),
    "fisher-by-sign": (
        "Fisher part weighted by its sign: 0 when spammy, ¼ when hammy",
        fisher_asymmetric(0.0, 0.25)),
}
#: name: (description, variant): each default setting ×2/÷2 with the others fixed
SETTINGS: dict[str, tuple[str, Callable[[list[Message]], Iterator[float]]]] = {
    "K/2": ("K ÷2 (`top_tokens=12`)", setting(top_tokens=12)),
    "K*2": ("K ×2 (`top_tokens=50`)", setting(top_tokens=50)),
    "K=inf": ("K = ∞ (`top_tokens=None`)", setting(top_tokens=None)),
    "alpha/2": ("α ÷2 (0.05)", setting(alpha=0.05)),
    "alpha*2": ("α ×2 (0.2)", setting(alpha=0.2)),
    "s/2": ("s ÷2 (0.05)", setting(s=0.05)),
    "s*2": ("s ×2 (0.2)", setting(s=0.2)),
    "min_dev/2": ("min_dev ÷2 (0.1)", setting(min_dev=0.1)),
    "min_dev*2": ("min_dev ×2 (0.4)", setting(min_dev=0.4)),
    "w/2": ("w ÷2 (`fisher_weight=1/16`)", setting(fisher_weight=1 / 16)),
    "w*2": ("w ×2 (`fisher_weight=1/4`)", setting(fisher_weight=1 / 4)),
}
DEFAULT = "**default** (K=25, α=0.1, s=0.1, min_dev=0.2, w=⅛, t=0)"
#: the thresholds other than 0 the default's scores are read at (sensitivity)
THRESHOLDS = (0.25, -0.25, 0.5)
CORPORA = {"spamassassin": "SA", "sms": "SMS"}
UNSURE = 0.5  # SpamFilter's default unsure band, |z| < 0.5


def default_run(stream: list[Message]) -> tuple[dict[str, Any], np.ndarray, float]:
    """The default `SpamFilter` through `prequential`: its measures and its scores."""
    start = time.perf_counter()
    result = prequential(SpamFilter(), ((m.raw, _label(m)) for m in stream), positive="spam")
    seconds = time.perf_counter() - start
    scores = np.asarray(result.score, dtype=np.float64)
    truth = np.array([m.spam for m in stream])
    sure = np.abs(scores) >= UNSURE
    ham, spam = result.misclassification()
    return {"accuracy": result.accuracy(), "AUC": result.auc(),
            "1-ROCA %": result.one_minus_roca(), "ham→spam %": ham, "spam→ham %": spam,
            "log-loss": result.log_loss(), "unsure %": 100 * float(np.mean(~sure)),
            "accuracy on the rest": float(np.mean((scores[sure] > 0) == truth[sure])),
            "ham→spam on the rest %": 100 * float(np.mean(scores[sure & ~truth] > 0))
            }, scores, seconds


def measure(stream: list[Message], scores: np.ndarray, threshold: float = 0.0
            ) -> dict[str, Any]:
    truth = np.array([m.spam for m in stream])
    auc = exact_auc(truth, scores)
    out: dict[str, Any] = {"accuracy": float(np.mean((scores > threshold) == truth)),
                           "AUC": auc, "1-ROCA %": 100 * (1 - auc),
                           "ham→spam %": 100 * float(np.mean(scores[~truth] > threshold)),
                           "spam→ham %": 100 * float(np.mean(scores[truth] <= threshold))}
    out["errors"] = " · ".join(f"{int(np.sum(scores[~truth] > t))}/"
                               f"{int(np.sum(scores[truth] <= t))}" for t in (0.0, 0.25, 0.5))
    return out


def run(stream: list[Message], variant: Callable) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    scores = np.fromiter(variant(stream), dtype=np.float64, count=len(stream))
    seconds = time.perf_counter() - start
    return measure(stream, scores), seconds


def _columns(corpora: list[str], keys: dict[str, tuple[str, str]], seconds: bool
             ) -> list[dict[str, str]]:
    columns = [_results.column("variant")]
    for corpus in corpora:
        columns += [_results.column(f"{CORPORA[corpus]} {k}", f"{CORPORA[corpus]} {label}", fmt)
                    for k, (label, fmt) in keys.items()]
    if seconds:
        columns += [_results.column(f"{CORPORA[c]} seconds", fmt=".1f") for c in corpora]
    return columns


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="spamassassin,sms")
    names = ["default", *SETTINGS, *VARIANTS]
    parser.add_argument("--variants", default=None,
                        help=f"comma-separated (default: all): {', '.join(names)}")
    _results.add_arguments(parser, "spam_filter_variants", merge=True)
    args = parser.parse_args(argv)
    chosen = [v.strip() for v in args.variants.split(",")] if args.variants else names
    unknown = [v for v in chosen if v not in names]
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r}; one of: {', '.join(names)}")
    corpora = [c.strip() for c in args.corpus.split(",")]
    if any(c not in CORPORA for c in corpora):
        parser.error(f"--corpus: one or more of {', '.join(CORPORA)}")
    rows: dict[str, dict[str, dict[str, Any]]] = {"default": {}, "sensitivity": {},
                                                   "variants": {}}
    for corpus in corpora:
        stream = messages(corpus)
        tag = CORPORA[corpus]

        def add(table: str, label: str, measured: dict[str, Any], seconds: float | None = None,
                tag: str = tag) -> None:
            row = rows[table].setdefault(label, {"variant": label})
            row.update({f"{tag} {k}": v for k, v in measured.items()})
            if seconds is not None:
                row[f"{tag} seconds"] = seconds
            print(f"{tag:4s} {label[:60]:60s} " + " ".join(
                f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}"
                for k, v in measured.items() if k in ("accuracy", "AUC", "ham→spam %",
                                                      "errors")), flush=True)

        if "default" in chosen:
            summary, scores, seconds = default_run(stream)
            label = (f"SpamAssassin ({len(stream):,} e-mails, time order)"
                     if corpus == "spamassassin"
                     else f"SMS Spam Collection ({len(stream):,} SMS, file order)")
            rows["default"][label] = {"variant": label, **summary}
            add("sensitivity", DEFAULT, measure(stream, scores))
            add("variants", DEFAULT, measure(stream, scores), seconds)
            for t in THRESHOLDS:
                add("sensitivity", f"threshold t = {t:+g}".replace("-", "−"),
                    measure(stream, scores, t))
        for name in chosen:
            for table, family in (("sensitivity", SETTINGS), ("variants", VARIANTS)):
                if name in family:
                    label, variant = family[name]
                    measured, seconds = run(stream, variant)
                    add(table, label, measured, seconds if table == "variants" else None)
    keys = {"accuracy": ("acc", ".4f"), "AUC": ("AUC", ".5f"), "ham→spam %": ("h→s %", ".2f")}
    tables = {
        "default": _results.table([
            _results.column("variant", "corpus"), _results.column("accuracy", fmt=".4f"),
            _results.column("AUC", fmt=".5f"), _results.column("1-ROCA %", fmt=".3f"),
            _results.column("ham→spam %", fmt=".2f"), _results.column("spam→ham %", fmt=".2f"),
            _results.column("log-loss", fmt=".4f"),
            _results.column("unsure %", f"unsure (\\|z\\| < {UNSURE:g}) %", ".2f"),
            _results.column("accuracy on the rest", fmt=".4f"),
            _results.column("ham→spam on the rest %", fmt=".2f")],
            rows["default"].values()),
        "sensitivity": _results.table(_columns(corpora, {**keys, "spam→ham %": (
            "s→h %", ".2f")}, False), rows["sensitivity"].values()),
        "variants": _results.table(_columns(corpora, {**keys, "errors": ("errors", "")}, True),
                                   rows["variants"].values())}
    tables = {name: t for name, t in tables.items() if t["rows"]}
    _results.write_from_args(
        args, "spam_filter_variants", tables, argv=argv, script=__file__,
        notes="" if corpora == list(CORPORA) else f"Corpora: {', '.join(corpora)}.",
        merge_key=("variant",))


if __name__ == "__main__":
    main()
