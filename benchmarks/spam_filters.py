"""Spam filters side by side, prequentially: bogofilter, spamprobe, online logistic regression,
river's multinomial NB and the streamnb models on the SpamAssassin and SMS corpora (the tables
in docs/benchmarks.md and docs/accuracy.md).

Every system starts from an empty state and sees every message in stream order: it scores the
message, then learns it with its true label (full, immediate feedback). Metrics come from the
per-message scores: the TREC spam track's operating points (spam miss % at ham loss 0.1 / 0.5 /
1 %, ham loss % at spam miss 1 / 3 / 5 %, `streamnb.evaluate.operating_points`) and
1-ROCA % = 100·(1 − AUC); at each tool's own threshold accuracy, ham called spam % and spam
called ham %; and messages/s over the whole loop (tokenising and the filters' processes
included, wall clock), one system at a time. Run:
``python benchmarks/spam_filters.py [--corpus spamassassin,sms] [--limit N] [--systems a,b,…]
[--results PATH | --no-results] [--merge] [--csv PATH] [--scores PATH]``; the results file
(default benchmarks/results/spam_filters.json) feeds the docs' tables
(``python benchmarks/tables.py``); ``--systems … --merge`` measures those systems again and
replaces their rows in it.

A system is an object with ``score(sample) -> float`` (larger = spammier; called spam iff
``> threshold``) and ``learn(sample)``, built fresh by a function of a scratch directory: one
entry of `systems`. Systems that take the raw text (an object with ``score_one(text)`` → spam
log-odds and ``learn_one(text, label)``) are one line in `streamnb_text_systems`.
"""

from __future__ import annotations

import argparse
import csv
import fnmatch
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _results
import numpy as np

from streamnb.evaluate import exact_auc, operating_points
from streamnb.evaluate.metrics import HAM_LOSSES, SPAM_MISSES
from streamnb.features import tokenize_email, tokenize_sms
from streamnb.models.registry import CONTINUOUS, MODELS

SPAM, HAM = "spam", "ham"


# -- corpora --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Corpus:
    """A message stream: ``load()`` yields ``(raw text or bytes, label)`` pairs in stream order
    (a label is ``"spam"``/``"ham"`` or a bool, True for spam); ``tokenize`` maps a `Sample`
    to its tokens; ``as_mail`` makes the file the mail filters read from the raw bytes."""

    load: Callable[[], Iterable[tuple[str | bytes, Any]]]
    tokenize: Callable[[Sample], frozenset[str]]
    as_mail: Callable[[bytes], bytes] = lambda raw: raw


def spamassassin() -> Iterable[tuple[bytes, str]]:
    from streamnb.datasets import iter_spamassassin_stream

    for m in iter_spamassassin_stream():
        yield m.raw, m.label


def _as_mail_body(text: bytes) -> bytes:
    """A short text as the body of a header-less mail (the same line on every message)."""
    return b"Content-Type: text/plain; charset=utf-8\n\n" + text + b"\n"


def corpora() -> dict[str, Corpus]:
    """The corpora: SpamAssassin, and an SMS collection as soon as `streamnb.datasets`
    exposes its stream (any public ``iter_*``/``load_*`` function with "sms" in its name that
    yields ``(text, label)`` pairs or objects with ``.text`` and ``.label``)."""
    import streamnb.datasets as datasets

    found = {"spamassassin": Corpus(spamassassin, lambda s: tokenize_email(s.raw))}
    for name in sorted(dir(datasets)):
        if "sms" in name.lower() and name.startswith(("iter_", "load_")):
            loader = getattr(datasets, name)
            found["sms"] = Corpus(lambda loader=loader: _pairs(loader()),
                                  lambda s: tokenize_sms(s.text), _as_mail_body)
            break
    return found


def _pairs(items: Iterable[Any]) -> Iterable[tuple[str | bytes, Any]]:
    for item in items:
        yield (item.text, item.label) if hasattr(item, "text") else tuple(item)


@dataclass(frozen=True)
class Sample:
    """One message as every system sees it."""

    index: int
    raw: bytes  # as received: what the e-mail tokeniser reads
    text: str  # raw decoded as UTF-8 (undecodable bytes as U+FFFD): what text systems read
    label: str  # "spam" or "ham"
    path: Path  # the file the mail filters read (raw bytes, written once)


def write_samples(corpus: Corpus, directory: Path, limit: int | None = None,
                  start: int = 0) -> list[Sample]:
    """Messages ``start`` … ``start + limit − 1`` of the corpus, each written once to
    ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    samples = []
    for i, (message, label) in enumerate(corpus.load()):
        if i < start:
            continue
        if limit is not None and len(samples) >= limit:
            break
        raw = message.encode("utf-8") if isinstance(message, str) else bytes(message)
        text = message if isinstance(message, str) else raw.decode("utf-8", "replace")
        path = directory / f"{i:06d}.eml"
        path.write_bytes(corpus.as_mail(raw))
        samples.append(Sample(i, raw, text, _label(label), path))
    return samples


def _label(label: Any) -> str:
    if label in (SPAM, HAM):
        return label
    if isinstance(label, bool | int | np.bool_) and label in (0, 1):
        return SPAM if label else HAM
    raise ValueError(f"a label must be 'spam', 'ham' or a bool, got {label!r}")


# -- the systems ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Setup:
    """What a system's constructor gets: its own empty scratch directory and the corpus's
    tokeniser."""

    directory: Path
    tokenize: Callable[[Sample], frozenset[str]]


class Filter:
    """A system under test. ``score`` is called on each message before ``learn`` on the same
    message; larger scores are spammier and a message is called spam iff its score is above
    ``threshold``."""

    threshold = 0.0

    def score(self, sample: Sample) -> float:
        raise NotImplementedError

    def learn(self, sample: Sample) -> None:
        raise NotImplementedError

    def verdicts(self) -> str:
        """The tool's own verdicts, when it has them (e.g. bogofilter's S/H/U counts)."""
        return ""

    def close(self) -> None:
        pass


def log_odds(logs: dict[Any, float]) -> float:
    """log P(spam) − log P(ham) from per-class log scores of the classes seen so far: ±∞ while
    only one class has been seen (the model then calls everything that class), 0 before any."""
    if SPAM not in logs:
        return -math.inf if logs else 0.0
    if HAM not in logs:
        return math.inf
    if logs[SPAM] == logs[HAM]:  # includes both −∞ (no class can explain the message)
        return 0.0
    return logs[SPAM] - logs[HAM]


class _Features(Filter):
    """A filter on features computed from the sample once, in ``score``, and reused in
    ``learn``."""

    def __init__(self, features: Callable[[Sample], Any]) -> None:
        self._features = features
        self._last: tuple[int, Any] = (-1, None)

    def x(self, sample: Sample) -> Any:
        if self._last[0] != sample.index:
            self._last = (sample.index, self._features(sample))
        return self._last[1]


class RiverModel(_Features):
    """A river classifier (or a streamnb model) on ``features(sample)``; score = spam log-odds
    (from ``predict_log_proba_one``, river's ``joint_log_likelihood`` or
    ``predict_proba_one``)."""

    def __init__(self, model: Any, features: Callable[[Sample], Any]) -> None:
        super().__init__(features)
        self.model = model
        steps = getattr(model, "steps", None)  # a pipeline: features, then the classifier
        self._head = list(steps.values())[-1] if steps else model
        self._transforms = list(steps.values())[:-1] if steps else []

    def score(self, sample: Sample) -> float:
        x = self.x(sample)
        if hasattr(self.model, "predict_log_proba_one"):
            return log_odds(self.model.predict_log_proba_one(x))
        if hasattr(self._head, "joint_log_likelihood"):  # exact where probabilities saturate
            for step in self._transforms:
                x = step.transform_one(x)
            return log_odds(self._head.joint_log_likelihood(x))
        proba = self.model.predict_proba_one(x)
        return log_odds({c: math.log(p) if p > 0 else -math.inf for c, p in proba.items()})

    def learn(self, sample: Sample) -> None:
        self.model.learn_one(self.x(sample), sample.label)


class TextModel(Filter):
    """An object with ``score_one(raw)`` (spam log-odds) and ``learn_one(raw, label)`` on the
    raw message bytes, e.g. ``streamnb.SpamFilter``."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def score(self, sample: Sample) -> float:
        # the bytes as received, like the mail filters: each part is decoded with its charset
        return float(self.model.score_one(sample.raw))

    def learn(self, sample: Sample) -> None:
        self.model.learn_one(sample.raw, sample.label)


class HashedLogisticRegression(_Features):
    """scikit-learn's ``SGDClassifier(loss="log_loss")``, one ``partial_fit`` per message, on
    the corpus tokens hashed into 2**20 binary features (``HashingVectorizer``,
    ``alternate_sign=False``, ``binary=True``, no normalisation); score = the decision function
    (the spam log-odds)."""

    def __init__(self, tokenize: Callable[[Sample], frozenset[str]]) -> None:
        from sklearn.feature_extraction.text import HashingVectorizer
        from sklearn.linear_model import SGDClassifier

        vectorizer = HashingVectorizer(n_features=2**20, alternate_sign=False, binary=True,
                                       norm=None, analyzer=list)
        super().__init__(lambda s: vectorizer.transform([tokenize(s)]))
        self.model = SGDClassifier(loss="log_loss", random_state=0)
        self._fitted = False

    def score(self, sample: Sample) -> float:
        if not self._fitted:
            return 0.0
        assert list(self.model.classes_) == [HAM, SPAM]
        return float(self.model.decision_function(self.x(sample))[0])

    def learn(self, sample: Sample) -> None:
        self.model.partial_fit(self.x(sample), [sample.label], classes=[HAM, SPAM])
        self._fitted = True


_COMPLETE_NUMBER = re.compile(r"[01](\.\d+)?|\d(\.\d+)?e-\d{2,3}")


class Bogofilter(Filter):
    """bogofilter 1.2 through its command line, on its own word list in ``directory``.

    Score = the spamicity to 12 significant digits: ``-t`` with an explicit terse format gives
    the verdict letter of ``-T`` and more digits than ``-TT`` (whose 16 fixed decimals lose the
    small spamicities of ham) in one run; bogofilter cuts a longer number at about 20
    characters. ``-C``: no config file, the compiled-in defaults.

    bogofilter locks its word list for as long as a process has it open, so a long-lived bulk
    (``-b``) scorer and a registrar cannot alternate: one process per step is the fastest
    correct way. With ``autoupdate`` (the default) the scoring run also registers the message
    as its own verdict (``-u``), and ``learn`` runs a second process only for an unsure verdict
    (``-s``/``-n``) or a wrong one (``-Ns``/``-Sn``: undo, then register as the other class):
    the same word list and the same scores as score-then-register, in fewer processes.
    ``autoupdate=False``: ``-t``, then ``-s``/``-n``, for every message. ``verdicts``: the
    S/H/U counts (spam cutoff 0.99, ham cutoff 0.45) and the number of bogofilter runs."""

    threshold = 0.5
    FORMAT = ("-t", "--spamicity-tags=Spam,Ham,Unsure",
              "--spamicity-formats=%.12g,%.12g,%.12g", "--terse-format=%1.1c %p")

    def __init__(self, directory: Path, autoupdate: bool = True,
                 program: str = "bogofilter") -> None:
        self.program = shutil.which(program) or program
        self.directory = directory
        self.autoupdate = autoupdate
        self.counts: Counter[str] = Counter()
        self._pending: str | None = None  # "register", or the verdict it was registered as
        self.processes = 0

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        self.processes += 1
        done = subprocess.run([self.program, "-C", "-d", str(self.directory), *args],
                              capture_output=True, close_fds=False)
        if done.returncode == 3:  # 0/1/2: spam/ham/unsure; 3: error
            raise RuntimeError(f"bogofilter {' '.join(args)}: {done.stderr.decode().strip()}")
        return done

    def score(self, sample: Sample) -> float:
        if not (self.directory / "wordlist.db").exists():  # nothing registered yet
            self.counts["U"] += 1
            self._pending = "register"
            return 0.5
        update = ("-u",) if self.autoupdate else ()
        line = self._run(*self.FORMAT, *update, "-I", str(sample.path)).stdout.decode()
        verdict, spamicity = line.split()
        if not _COMPLETE_NUMBER.fullmatch(spamicity):  # bogofilter cuts its number at ~20
            raise RuntimeError(f"bogofilter printed a truncated spamicity: {line!r}")
        self.counts[verdict] += 1
        self._pending = verdict if self.autoupdate else "register"
        return float(spamicity)

    def learn(self, sample: Sample) -> None:
        spam = sample.label == SPAM
        if self._pending in ("register", "U"):  # not registered yet
            self._run("-s" if spam else "-n", "-I", str(sample.path))
        elif self._pending != ("S" if spam else "H"):  # registered as the wrong class
            self._run("-Ns" if spam else "-Sn", "-I", str(sample.path))
        self._pending = None

    def verdicts(self) -> str:
        return " / ".join(f"{k} {self.counts[k]:,}" for k in "SHU") + \
            f"; {self.processes:,} runs"


class Spamprobe(Filter):
    """SpamProbe 1.4 through its command line, on its own database in ``directory`` (created
    empty with ``create-db``): ``spamprobe score`` (score = its probability), then
    ``spamprobe spam``/``good`` (full training; ``train-spam``/``train-good`` would skip the
    messages it already classifies confidently). ``verdicts``: its own SPAM/GOOD calls (at
    its threshold 0.7)."""

    threshold = 0.5

    def __init__(self, directory: Path, program: str = "spamprobe") -> None:
        self.program = shutil.which(program) or program
        self.directory = directory
        self.counts: Counter[str] = Counter()
        self._run("-c", "create-db")

    def _run(self, *args: str) -> str:
        done = subprocess.run([self.program, "-d", str(self.directory), *args],
                              capture_output=True, close_fds=False)
        if done.returncode != 0:
            raise RuntimeError(f"spamprobe {' '.join(args)}: {done.stderr.decode().strip()}")
        return done.stdout.decode()

    def score(self, sample: Sample) -> float:
        verdict, probability, _digest = self._run("score", str(sample.path)).split()
        self.counts[verdict] += 1
        return float(probability)

    def learn(self, sample: Sample) -> None:
        self._run("spam" if sample.label == SPAM else "good", str(sample.path))

    def verdicts(self) -> str:
        return f"SPAM {self.counts['SPAM']:,} / GOOD {self.counts['GOOD']:,}"


#: SpamFilter's byte-context option as chosen on SpamAssassin (benchmarks/spam_compression.py)
PPM_SETTINGS = {"ppm_order": 4, "ppm_weight": 0.5}


def streamnb_text_systems() -> dict[str, Callable[[], Any]]:
    """Extra systems that take the raw text: name → constructor of a fresh object with
    ``score_one(text)`` (spam log-odds) and ``learn_one(text, label)``. One line each."""
    extra: dict[str, Callable[[], Any]] = {}
    try:
        from streamnb import SpamFilter  # type: ignore[attr-defined]
    except ImportError:
        pass
    else:
        extra["streamnb SpamFilter"] = SpamFilter
        extra["streamnb SpamFilter + PPM"] = lambda: SpamFilter(**PPM_SETTINGS)
    return extra


def _tokens(setup: Setup, value: bool | int) -> Callable[[Sample], dict[str, bool | int]]:
    """``{token: value}``, in sorted order: a model's sums then do not depend on the string
    hash seed (a frozenset's order does), so reruns give the same scores to the last bit."""
    return lambda s: dict.fromkeys(sorted(setup.tokenize(s)), value)


def _river_bow_nb() -> Any:
    from river import feature_extraction, naive_bayes

    return feature_extraction.BagOfWords() | naive_bayes.MultinomialNB()


def _river_nb() -> Any:
    from river import naive_bayes

    return naive_bayes.MultinomialNB()




def systems() -> dict[str, Callable[[Setup], Filter]]:
    """Every system by name: a function of the `Setup` that builds it empty."""
    out: dict[str, Callable[[Setup], Filter]] = {
        "bogofilter": lambda s: Bogofilter(s.directory),
        "spamprobe": lambda s: Spamprobe(s.directory),
        "sgd-logreg": lambda s: HashedLogisticRegression(s.tokenize),
        "river-mnb-bow": lambda s: RiverModel(_river_bow_nb(), lambda m: m.text),
        "river-mnb-tokens": lambda s: RiverModel(_river_nb(), _tokens(s, 1)),
    }
    for name, make in MODELS.items():  # every registered streamnb model, binary tokens
        # the spam filter reads raw text (below); a continuous model on tokens alone is
        # naive Bayes with nothing numeric beside it
        if name == "spam-filter" or name in CONTINUOUS:
            continue
        out[f"streamnb-{name}"] = lambda s, make=make: RiverModel(make(), _tokens(s, True))
        # the same model on one text attribute (the multinomial event model, docs/text.md)
        out[f"streamnb-{name}-text"] = lambda s, make=make: RiverModel(
            make(), lambda m, s=s: {"tokens": sorted(s.tokenize(m))})
    for name, make in streamnb_text_systems().items():
        out[name] = lambda s, make=make: TextModel(make())
    return out


DESCRIPTIONS = {
    "streamnb SpamFilter": "streamnb SpamFilter",
    "streamnb SpamFilter + PPM": "streamnb SpamFilter(" + ", ".join(
        f"{k}={v}" for k, v in PPM_SETTINGS.items()) + ")",
    "bogofilter": "bogofilter (CLI, own word list)",
    "spamprobe": "spamprobe (CLI, own database)",
    "sgd-logreg": "logistic regression, SGD, hashed tokens",
    "river-mnb-bow": "river BagOfWords | MultinomialNB (text)",
    "river-mnb-tokens": "river MultinomialNB (streamnb tokens)",
}


# -- the run and its scores -----------------------------------------------------------------------
@dataclass
class Result:
    """One system's prequential run."""

    name: str
    labels: list[str]
    scores: list[float]
    threshold: float
    seconds: float
    verdicts: str = ""
    metrics: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.metrics = score(self.labels, self.scores, self.threshold)
        self.metrics["messages/s"] = len(self.labels) / self.seconds if self.seconds else math.nan
        self.metrics["seconds"] = self.seconds


def score(labels: list[str], scores: list[float], threshold: float) -> dict[str, float]:
    """Accuracy, AUC, the TREC operating points with 1-ROCA %, ham called spam %, spam called
    ham % from per-message scores (a message is called spam iff its score is above
    ``threshold``)."""
    truth = np.asarray(labels) == SPAM
    values = np.asarray(scores, dtype=np.float64)
    if np.isnan(values).any():
        raise ValueError("NaN scores")
    called = values > threshold
    return {
        "accuracy": float(np.mean(called == truth)),
        "AUC": exact_auc(truth, values),
        **operating_points(truth, values),
        "ham misclassified %": 100 * float(np.mean(called[~truth])) if (~truth).any() else math.nan,
        "spam misclassified %": 100 * float(np.mean(~called[truth])) if truth.any() else math.nan,
    }


def run_system(name: str, build: Callable[[Setup], Filter], samples: list[Sample],
               setup: Setup) -> Result:
    """Score, then learn, every sample in order, from an empty system."""
    start = time.perf_counter()
    system = build(setup)
    scores = []
    try:
        for sample in samples:
            scores.append(system.score(sample))
            system.learn(sample)
    finally:
        system.close()
    seconds = time.perf_counter() - start
    return Result(name, [s.label for s in samples], scores, system.threshold, seconds,
                  system.verdicts())


def run(samples: list[Sample], chosen: dict[str, Callable[[Setup], Filter]], scratch: Path,
        tokenize: Callable[[Sample], frozenset[str]],
        report: Callable[[Result], None] | None = None) -> list[Result]:
    """Each chosen system on the samples, one after the other, each in its own scratch
    directory."""
    results = []
    for name, build in chosen.items():
        directory = scratch / "systems" / name.replace(" ", "_").replace("/", "_")
        directory.mkdir(parents=True)
        result = run_system(name, build, samples, Setup(directory, tokenize))
        results.append(result)
        if report is not None:
            report(result)
    return results


OPERATING_POINTS = [
    _results.column("system"),
    *(_results.column(f"spam miss % at ham loss {h:g} %", f"spam miss % at ham {h:g} %", ".2f")
      for h in HAM_LOSSES),
    *(_results.column(f"ham loss % at spam miss {m:g} %", f"ham loss % at spam {m:g} %", ".2f")
      for m in SPAM_MISSES),
    _results.column("1-ROCA %", fmt=".3f"),
]
AT_THRESHOLD = [
    _results.column("system"), _results.column("accuracy", fmt=".4f"),
    _results.column("AUC", fmt=".4f"),
    _results.column("ham misclassified %", fmt=".2f"),
    _results.column("spam misclassified %", fmt=".2f"),
    _results.column("messages/s", fmt=",.0f"), _results.column("seconds", fmt=",.1f"),
    _results.column("own verdicts"),
]
PRINTED = OPERATING_POINTS + AT_THRESHOLD[1:]
COLUMNS = [c["key"] for c in AT_THRESHOLD[1:-1]]  # the CSV's numbers
#: The systems of the summary table (README), when they ran.
SUMMARY = ("streamnb SpamFilter", "streamnb SpamFilter + PPM", "bogofilter", "spamprobe",
           "sgd-logreg", "river-mnb-bow")
SUMMARY_POINTS = ("spam miss % at ham loss 0.1 %", "ham loss % at spam miss 1 %", "1-ROCA %")
CORPUS_NAMES = {"spamassassin": "SpamAssassin", "sms": "SMS"}


def row(result: Result) -> dict[str, Any]:
    return {"system": DESCRIPTIONS.get(result.name, result.name), **result.metrics,
            "own verdicts": result.verdicts}


def tables(by_corpus: dict[str, list[Result]]) -> dict[str, dict[str, Any]]:
    """The results file's tables: per corpus its operating points and its numbers at each
    tool's own threshold, and a summary of the main systems over the corpora."""
    out = {}
    for corpus, results in by_corpus.items():
        out[f"{corpus}_operating_points"] = _results.table(OPERATING_POINTS, map(row, results))
        out[f"{corpus}_at_threshold"] = _results.table(AT_THRESHOLD, map(row, results))
    columns = [_results.column("system")]
    for corpus in by_corpus:
        label = CORPUS_NAMES.get(corpus, corpus)
        columns += [_results.column(f"{corpus}: {k}", f"{label}: {c['label']}", c["format"])
                    for k in SUMMARY_POINTS for c in OPERATING_POINTS if c["key"] == k]
    summary = []
    for name in SUMMARY:
        found = {corpus: r for corpus, results in by_corpus.items() for r in results
                 if r.name == name}
        if found:
            summary.append({"system": DESCRIPTIONS.get(name, name),
                            **{f"{corpus}: {k}": r.metrics[k] for corpus, r in found.items()
                               for k in SUMMARY_POINTS}})
    if summary:  # none of the main systems run (a --systems subset): a merge keeps the file's
        out["summary"] = _results.table(columns, summary)
    return out


def write_csv(results: list[Result], path: str) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["system", *COLUMNS, "own verdicts"])
        for r in results:
            writer.writerow([r.name, *(repr(r.metrics[c]) for c in COLUMNS), r.verdicts])


def write_scores(results: list[Result], samples: list[Sample], path: str) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["index", "label", *(r.name for r in results)])
        for i, sample in enumerate(samples):
            writer.writerow([sample.index, sample.label, *(repr(r.scores[i]) for r in results)])


def select(available: dict[str, Callable[[Setup], Filter]], patterns: str | None
           ) -> dict[str, Callable[[Setup], Filter]]:
    """The systems named in a comma-separated list (shell-style wildcards allowed), in the
    list's order; all of them for None."""
    if not patterns:
        return dict(available)
    chosen: dict[str, Callable[[Setup], Filter]] = {}
    for pattern in (p.strip() for p in patterns.split(",") if p.strip()):
        matched = fnmatch.filter(available, pattern)
        if not matched:
            raise SystemExit(f"no system matches {pattern!r}; systems: {', '.join(available)}")
        chosen.update((name, available[name]) for name in matched)
    return chosen


def tool_versions() -> dict[str, str]:
    """The installed mail filters' versions, for the results file."""
    versions = {}
    for tool, flag in (("bogofilter", "-V"), ("spamprobe", "-V")):
        if shutil.which(tool):
            done = subprocess.run([tool, flag], capture_output=True, text=True)
            # "bogofilter version 1.2.5", "SpamProbe v1.4d using null database."
            found = re.search(r"\bv(?:ersion )?(\d[\w.]*)", done.stdout + done.stderr)
            if found:
                versions[tool] = found.group(1)
    return versions


def main(argv: list[str] | None = None) -> None:
    known = corpora()
    available = systems()
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=",".join(known),
                        help=f"comma-separated corpora, run one after the other (default: all): "
                             f"{', '.join(known)}")
    parser.add_argument("--limit", type=int, default=None, help="first N messages only")
    parser.add_argument("--systems", default=None,
                        help=f"comma-separated names or wildcards (default: all): "
                             f"{', '.join(available)}")
    _results.add_arguments(parser, "spam_filters", merge=True)
    parser.add_argument("--csv", default=None, help="write the table to this CSV file")
    parser.add_argument("--scores", default=None,
                        help="write every system's per-message scores to this CSV file")
    args = parser.parse_args(argv)
    names = [c.strip() for c in args.corpus.split(",") if c.strip()]
    if unknown := [c for c in names if c not in known]:
        parser.error(f"unknown corpus {unknown[0]!r}; corpora: {', '.join(known)}")
    if (args.csv or args.scores) and len(names) > 1:
        parser.error("--csv and --scores take one --corpus")
    chosen = select(available, args.systems)
    by_corpus: dict[str, list[Result]] = {}
    for name in names:
        corpus = known[name]
        with tempfile.TemporaryDirectory(prefix="spam_filters_") as scratch:
            samples = write_samples(corpus, Path(scratch) / "messages", args.limit)
            n_spam = sum(s.label == SPAM for s in samples)
            print(f"\n{name}: {len(samples):,} messages in stream order "
                  f"({n_spam:,} spam, {len(samples) - n_spam:,} ham); prequential, one by one, "
                  f"full feedback\n")
            print(_results.render({"columns": PRINTED, "rows": []}), flush=True)
            results = run(samples, chosen, Path(scratch), corpus.tokenize,
                          report=lambda r: print(_results.render_row(PRINTED, row(r)),
                                                 flush=True))
        by_corpus[name] = results
        # written after each corpus, so that an interrupted run keeps the corpora it finished
        limited = [f"the first {args.limit:,} messages of each corpus" if args.limit else "",
                   # merged, the file holds every system: its parts say which run measured which
                   f"systems {args.systems} only" if args.systems and not args.merge else "",
                   f"corpora {', '.join(by_corpus)} only" if len(by_corpus) < len(names)
                   else ""]
        notes = "; ".join(x for x in limited if x)
        _results.write_from_args(args, "spam_filters", tables(by_corpus), argv=argv,
                                 script=__file__,
                                 notes=f"Limited run: {notes}." if notes else "",
                                 extra_machine=tool_versions(), merge_key=("system",))
        if args.csv:
            write_csv(results, args.csv)
            print(f"\ntable: {args.csv}", file=sys.stderr)
        if args.scores:
            write_scores(results, samples, args.scores)
            print(f"scores: {args.scores}", file=sys.stderr)


if __name__ == "__main__":
    main()
