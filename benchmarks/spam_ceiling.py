"""How low can spam miss at 0.1 % ham loss go on these corpora? SpamFilter against strong
discriminative references on the same streams (the ceiling table of docs/spam.md).

Corpora, their stream order and the measures are benchmarks/spam_filters.py's (its `corpora`,
`write_samples`, `run_system` and `streamnb.evaluate.operating_points`): spam miss % at ham
loss 0.1 / 0.5 / 1 % and 1-ROCA %. Systems, each on SpamAssassin and the SMS collection:

- ``SpamFilter()`` and ``SpamFilter(ppm_order=4, ppm_weight=0.5)``, prequential (score each
  message, then learn it, in stream order);
- **online references**: scikit-learn's ``SGDClassifier`` (``log_loss`` or ``modified_huber``,
  α of `ALPHAS`, the default learning rate), prequential in batches of `BATCH` messages:
  each batch is scored by the model that has learned every earlier batch, then learned by one
  ``partial_fit`` call (message by message within it: SGD's updates are per message);
- **refitted references**: ``LinearSVC`` (C = 1) fitted to convergence on every earlier
  message, refitted every `BATCH` messages during the first `REFIT_WARM_UP` and every
  `REFIT_EVERY` after: prequential, no look-ahead, converged like the look-ahead bounds, but
  scoring with a model up to `REFIT_EVERY` messages old;
- **look-ahead bounds**: ``LogisticRegression`` (liblinear, C = 10) and ``LinearSVC`` (C = 1),
  10-fold stratified cross-validation (shuffled, seed 0): each message is scored by a model
  fitted on the nine folds it is not in, i.e. on 90 % of the corpus, later messages included,
  and fitted to convergence. No streaming filter has that information; the out-of-fold scores of
  the ten models are ranked together.

Features (every reference): the message text (e-mail: headers and body as received, decoded as
UTF-8 with replacement) hashed into 2**20 features by ``HashingVectorizer`` — ``words``: word
unigrams and bigrams (scikit-learn's default token pattern, lower-cased); ``char4``: character
4-grams inside word boundaries (``analyzer="char_wb"``) of the first `CHAR_LIMIT` characters;
``words+char4``: both, side by side — binary, each row l2-normalised. The hashing is stateless,
so computing every message's row up front looks at no label.

The results file also lists, per corpus, the hams scored most spam-like by SpamFilter and by
the best streaming (online or refitted) and the best look-ahead reference (stream index, id,
subject or text, how many hams came before it, its rank under the other two): they decide the
0.1 % operating point. Run::

    python benchmarks/spam_ceiling.py [--corpus spamassassin,sms] [--limit N]
        [--systems a,b,…] [--results PATH | --no-results]

writes benchmarks/results/spam_ceiling.json (``python benchmarks/tables.py`` renders it).
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import _results
import numpy as np

# a sibling script: run as `python benchmarks/spam_ceiling.py`, its directory is on the path
import spam_filters as sf

from streamnb import SpamFilter
from streamnb.evaluate import operating_points

POINTS = ("spam miss % at ham loss 0.1 %", "spam miss % at ham loss 0.5 %",
          "spam miss % at ham loss 1 %", "1-ROCA %")
CORPUS_NAMES = {"spamassassin": "SpamAssassin", "sms": "SMS"}
N_FEATURES = 2**20
CHAR_LIMIT = 5000  # characters read for character n-grams (an e-mail's headers and first lines)
WORD_LIMIT = 100_000  # characters read for words: caps the few megabyte-sized attachments
FOLDS = 10
BATCH = 10  # messages per partial_fit of the online references
REFIT_EVERY = 100  # messages between two refits of a refitted reference (after its warm-up)
REFIT_WARM_UP = 1000  # messages during which it refits every `BATCH`: a young model ages fast
#: the online references' L2 penalties: scikit-learn's default, and a weaker one (one pass over
#: a few thousand messages leaves the default's learning rate 1/(α·t) small early on)
ALPHAS = (1e-4, 1e-6)
TOP_HAMS = 10  # hams listed per system in the results file
#: whose most spam-like hams the results file lists: SpamFilter and each family's best
ROLES = ("SpamFilter", "best online", "best look-ahead")  # online: "online" or "refitted"


# -- features -------------------------------------------------------------------------------------
def _vectorizer(kind: str) -> Any:
    from sklearn.feature_extraction.text import HashingVectorizer

    common = {"n_features": N_FEATURES, "binary": True, "norm": "l2", "alternate_sign": False}
    if kind == "words":
        return HashingVectorizer(ngram_range=(1, 2), **common)
    if kind == "char4":
        return HashingVectorizer(analyzer="char_wb", ngram_range=(4, 4), **common)
    raise ValueError(f"unknown feature set {kind!r}")


def features(texts: list[str], kind: str) -> Any:
    """The l2-normalised binary hashed rows of ``texts`` for feature set ``kind`` (``words``,
    ``char4`` or ``words+char4``), a CSR matrix."""
    from scipy.sparse import hstack
    from sklearn.preprocessing import normalize

    if kind == "words+char4":
        return normalize(hstack([features(texts, "words"), features(texts, "char4")]).tocsr())
    limit = CHAR_LIMIT if kind == "char4" else WORD_LIMIT
    return _vectorizer(kind).transform([t[:limit] for t in texts]).tocsr()


# -- the references -------------------------------------------------------------------------------
def online_sgd(rows: Any, spam: np.ndarray, loss: str, alpha: float = 1e-4,
               batch: int = BATCH) -> np.ndarray:
    """Prequential scores of ``SGDClassifier(loss, alpha)``: the messages in stream order,
    `BATCH` at a time, each batch scored by the model that learned every earlier batch (0 before the
    first), then learned by one ``partial_fit`` (which updates message by message within the
    batch). Batches of one give the same scores up to the 9-message lag; they cost a
    ``partial_fit`` call each, whose fixed cost grows with the 2**20 weights."""
    from sklearn.linear_model import SGDClassifier

    model = SGDClassifier(loss=loss, alpha=alpha, random_state=0)
    scores = np.zeros(len(spam))
    for start in range(0, len(spam), batch):
        part = slice(start, start + batch)
        if start:
            scores[part] = model.decision_function(rows[part])
        model.partial_fit(rows[part], spam[part], classes=[False, True])
    return scores


def cross_validated(rows: Any, spam: np.ndarray, make: Callable[[], Any]) -> np.ndarray:
    """Out-of-fold decision scores of ``make()`` under `FOLDS`-fold stratified
    cross-validation (shuffled, seed 0)."""
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=min(FOLDS, int(spam.sum()), int((~spam).sum())),
                            shuffle=True, random_state=0)
    scores = np.zeros(len(spam))
    for train, test in folds.split(np.zeros(len(spam)), spam):
        scores[test] = make().fit(rows[train], spam[train]).decision_function(rows[test])
    return scores


def refitted(rows: Any, spam: np.ndarray, make: Callable[[], Any], every: int = REFIT_EVERY,
             warm_up: int = REFIT_WARM_UP, step: int = BATCH) -> np.ndarray:
    """Prequential scores of ``make()`` refitted to convergence on every earlier message, every
    ``step`` messages during the first ``warm_up`` and every ``every`` after: the messages
    from one refit to the next are scored by the model fitted on all messages before the
    first of them. The first ``step`` messages score 0; while the earlier messages hold one
    class only, a message scores ±1, the margin of a model that calls everything that class."""
    scores = np.zeros(len(spam))
    starts = sorted({*range(step, warm_up, step),
                     *range(max(warm_up, step), len(spam), every)})
    for start, stop in zip(starts, [*starts[1:], len(spam)], strict=True):
        seen = spam[:start]
        if seen.all() or not seen.any():
            scores[start:stop] = 1.0 if seen.all() else -1.0
            continue
        scores[start:stop] = make().fit(rows[:start], seen).decision_function(rows[start:stop])
    return scores


def _logistic() -> Any:
    from sklearn.linear_model import LogisticRegression

    # the dual problem: far fewer messages than hashed features
    return LogisticRegression(C=10.0, solver="liblinear", dual=True, random_state=0)


def _linear_svc() -> Any:
    from sklearn.svm import LinearSVC

    return LinearSVC(C=1.0, random_state=0)  # liblinear shuffles: seeded, the same scores


FEATURE_SETS = ("words", "char4", "words+char4")


@dataclass(frozen=True)
class System:
    """One row of the table: ``family`` is "SpamFilter", "online", "refitted" or
    "look-ahead"."""

    name: str
    family: str
    feature_set: str | None  # the hashed features it reads (None: SpamFilter's own)
    description: str
    alpha: float = 1e-4  # an online reference's L2 penalty (scikit-learn's default 1e-4)


def catalogue() -> dict[str, System]:
    out = {"spamfilter": System("spamfilter", "SpamFilter", None,
                                "streamnb SpamFilter() (prequential)"),
           "spamfilter-ppm": System("spamfilter-ppm", "SpamFilter", None,
                                    sf.DESCRIPTIONS["streamnb SpamFilter + PPM"]
                                    + " (prequential)")}
    for kind in FEATURE_SETS:
        for loss, alpha in product(("log_loss", "modified_huber"), ALPHAS):
            name = f"sgd-{loss.replace('_', '-')}-{kind}" + ("" if alpha == 1e-4 else
                                                              f"-alpha{alpha:g}")
            out[name] = System(name, "online", kind,
                               f"SGDClassifier({loss}, α={alpha:g}), {kind}, partial_fit on "
                               f"{BATCH}-message batches (prequential)", alpha)
        name = f"refit-svm-{kind}"
        out[name] = System(name, "refitted", kind,
                           f"LinearSVC(C=1), {kind}, refitted on all earlier messages every "
                           f"{BATCH} for {REFIT_WARM_UP:,}, then every {REFIT_EVERY} "
                           "(prequential)")
        for model, label in (("logreg", "LogisticRegression(C=10)"), ("svm", "LinearSVC(C=1)")):
            name = f"cv-{model}-{kind}"
            out[name] = System(name, "look-ahead", kind,
                               f"{label}, {kind}, {FOLDS}-fold cross-validated (look-ahead)")
    return out


# -- a corpus's run -------------------------------------------------------------------------------
def run_corpus(samples: list[sf.Sample], chosen: list[System], scratch: Path,
               report: Callable[[System, dict[str, float], float], None] | None = None
               ) -> dict[str, np.ndarray]:
    """Every chosen system's per-message scores on ``samples`` (name → scores)."""
    spam = np.array([s.label == sf.SPAM for s in samples])
    texts = [s.text for s in samples]
    rows: dict[str, Any] = {}
    scores: dict[str, np.ndarray] = {}
    for system in chosen:
        start = time.perf_counter()
        if system.feature_set is not None and system.feature_set not in rows:
            rows[system.feature_set] = features(texts, system.feature_set)
        if system.family == "SpamFilter":
            params = sf.PPM_SETTINGS if system.name == "spamfilter-ppm" else {}
            directory = scratch / system.name
            directory.mkdir(parents=True, exist_ok=True)
            result = sf.run_system(
                system.name, lambda _setup, params=params: sf.TextModel(SpamFilter(**params)),
                samples, sf.Setup(directory, lambda s: frozenset()))
            scores[system.name] = np.asarray(result.scores)
        elif system.family == "online":
            loss = "log_loss" if "log-loss" in system.name else "modified_huber"
            scores[system.name] = online_sgd(rows[system.feature_set], spam, loss,
                                             system.alpha)
        elif system.family == "refitted":
            scores[system.name] = refitted(rows[system.feature_set], spam, _linear_svc)
        else:
            make = _logistic if "logreg" in system.name else _linear_svc
            scores[system.name] = cross_validated(rows[system.feature_set], spam, make)
        if report is not None:
            report(system, operating_points(spam, scores[system.name]),
                   time.perf_counter() - start)
    return scores


_SUBJECT = re.compile(r"^subject:[ \t]*(.*(?:\n[ \t].*)*)", re.I | re.M)


def headline(sample: sf.Sample) -> str:
    """An e-mail's subject (its header's ``Subject:``), or a short text's first 80 characters."""
    text = sample.text
    head = text[:text.find("\n\n")] if "\n\n" in text else ""
    found = _SUBJECT.search(head)
    line = found.group(1) if found else ("" if head else text)
    return " ".join(line.split())[:80]


def message_ids(corpus: str, samples: list[sf.Sample]) -> dict[int, str]:
    """Stream index → the corpus's own id (SpamAssassin: ``group/number``; others: none)."""
    if corpus != "spamassassin":
        return {}
    from streamnb.datasets import iter_spamassassin_stream

    wanted = {s.index for s in samples}
    return {i: f"{m.group}/{m.id}" for i, m in enumerate(iter_spamassassin_stream())
            if i in wanted}


def ham_ranks(scores: np.ndarray, spam: np.ndarray) -> np.ndarray:
    """Per message, its rank among the hams by score (1 = the most spam-like ham; spam: 0)."""
    ranks = np.zeros(len(scores), dtype=np.int64)
    hams = np.flatnonzero(~spam)
    order = hams[np.argsort(-scores[hams], kind="stable")]
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


def best(points: dict[str, dict[str, float]], systems: list[System], *families: str
         ) -> str | None:
    """The system of ``families`` with the lowest spam miss at 0.1 % ham loss (ties: lower
    1-ROCA)."""
    found = [s.name for s in systems if s.family in families and s.name in points]
    return min(found, key=lambda n: (points[n][POINTS[0]], points[n]["1-ROCA %"]),
               default=None)


def top_hams(corpus: str, samples: list[sf.Sample], scores: dict[str, np.ndarray],
             roles: dict[str, str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The `TOP_HAMS` most spam-like hams under each system of ``roles`` (role → system name),
    one row each with the message's rank among the hams under every role and how many hams
    came before it in the stream; and per pair of roles how many of their top hams are the
    same messages."""
    spam = np.array([s.label == sf.SPAM for s in samples])
    ranks = {role: ham_ranks(scores[name], spam) for role, name in roles.items()}
    hams_before = np.cumsum(~spam) - ~spam
    ids = message_ids(corpus, samples)
    rows, tops = [], {}
    for role, name in roles.items():
        top = np.flatnonzero((ranks[role] >= 1) & (ranks[role] <= TOP_HAMS))
        top = top[np.argsort(ranks[role][top])]
        tops[role] = {int(i) for i in top}
        for i in top:
            rows.append({"corpus": corpus, "role": role, "system": name,
                         "rank": int(ranks[role][i]), "index": samples[i].index,
                         "id": ids.get(samples[i].index, ""), "hams before": int(hams_before[i]),
                         "subject": headline(samples[i]), "score": float(scores[name][i]),
                         **{f"rank under {other}": int(ranks[other][i]) for other in ranks}})
    listed = list(roles)
    shared = [{"corpus": corpus, "systems": f"{roles[a]} & {roles[b]}", "top": TOP_HAMS,
               "same messages": len(tops[a] & tops[b])}
              for k, a in enumerate(listed) for b in listed[k + 1:]]
    return rows, shared


# -- tables ---------------------------------------------------------------------------------------
def tables(points: dict[str, dict[str, dict[str, float]]], seconds: dict[str, dict[str, float]],
           systems: list[System], hams: list[dict[str, Any]], shared: list[dict[str, Any]]
           ) -> dict[str, Any]:
    corpora = list(points)
    columns = [_results.column("system"), _results.column("family")]
    for corpus in corpora:
        label = CORPUS_NAMES.get(corpus, corpus)
        columns += [_results.column(f"{corpus}: {k}",
                                    f"{label}: {k.replace('ham loss', 'ham')}",
                                    ".3f" if k == "1-ROCA %" else ".2f") for k in POINTS]
    timing = [_results.column("system")] + [
        _results.column(f"{corpus}: seconds", f"{CORPUS_NAMES.get(corpus, corpus)}: seconds",
                        ".1f") for corpus in corpora]
    rows, times = [], []
    for system in systems:
        if not any(system.name in points[c] for c in corpora):
            continue
        row: dict[str, Any] = {"system": system.description, "family": system.family}
        for corpus in corpora:
            row.update({f"{corpus}: {k}": v for k, v in points[corpus].get(system.name, {}).items()
                        if k in POINTS})
        rows.append(row)
        times.append({"system": system.description,
                      **{f"{c}: seconds": seconds[c].get(system.name) for c in corpora}})
    ham_columns = [_results.column(k) for k in (
        "corpus", "role", "system", "rank", "index", "id", "hams before", "subject", "score",
        *(f"rank under {role}" for role in ROLES))]
    return {"ceiling": _results.table(columns, rows),
            "seconds": _results.table(timing, times),
            "top_hams": _results.table(ham_columns, hams),
            "top_hams_shared": _results.table(
                [_results.column(k) for k in ("corpus", "systems", "top", "same messages")],
                shared)}


def main(argv: list[str] | None = None) -> None:
    known = sf.corpora()
    systems = catalogue()
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=",".join(known),
                        help=f"comma-separated (default: all): {', '.join(known)}")
    parser.add_argument("--limit", type=int, default=None, help="first N messages only")
    parser.add_argument("--systems", default=None,
                        help=f"comma-separated names or wildcards (default: all): "
                             f"{', '.join(systems)}")
    _results.add_arguments(parser, "spam_ceiling")
    args = parser.parse_args(argv)
    names = [c.strip() for c in args.corpus.split(",") if c.strip()]
    if unknown := [c for c in names if c not in known]:
        parser.error(f"unknown corpus {unknown[0]!r}; corpora: {', '.join(known)}")
    chosen = list(systems.values())
    if args.systems:
        picked = [n for p in args.systems.split(",") if p.strip()
                  for n in fnmatch.filter(systems, p.strip())]
        if not picked:
            parser.error(f"--systems matches none of: {', '.join(systems)}")
        chosen = [systems[n] for n in dict.fromkeys(picked)]
    points: dict[str, dict[str, dict[str, float]]] = {}
    seconds: dict[str, dict[str, float]] = {}
    hams: list[dict[str, Any]] = []
    shared: list[dict[str, Any]] = []
    for corpus in names:
        with tempfile.TemporaryDirectory(prefix="spam_ceiling_") as scratch:
            samples = sf.write_samples(known[corpus], Path(scratch) / "messages", args.limit)
            print(f"\n{corpus}: {len(samples):,} messages", flush=True)
            points[corpus], seconds[corpus] = {}, {}

            def report(system: System, found: dict[str, float], took: float,
                       corpus: str = corpus) -> None:
                points[corpus][system.name], seconds[corpus][system.name] = found, took
                print(f"{system.name:32} " + " ".join(f"{found[k]:7.3f}" for k in POINTS)
                      + f"  {took:6.1f} s", flush=True)

            scores = run_corpus(samples, chosen, Path(scratch) / "systems", report)
            found = ("spamfilter", best(points[corpus], chosen, "online", "refitted"),
                     best(points[corpus], chosen, "look-ahead"))
            roles = {role: n for role, n in zip(ROLES, found, strict=True) if n in scores}
            rows, pairs = top_hams(corpus, samples, scores, roles)
            hams += rows
            shared += pairs
        limited = [f"the first {args.limit:,} messages of each corpus" if args.limit else "",
                   f"systems {args.systems} only" if args.systems else ""]
        notes = "; ".join(x for x in limited if x)
        # written after each corpus, so that an interrupted run keeps the corpora it finished
        _results.write_from_args(args, "spam_ceiling",
                                 tables(points, seconds, chosen, hams, shared), argv=argv,
                                 script=__file__, notes=f"Limited run: {notes}." if notes else "")


if __name__ == "__main__":
    main()
