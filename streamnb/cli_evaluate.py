"""``streamnb evaluate``: any protocol, any registered data set, streamnb models and river
peers side by side, with markdown/CSV/PNG reports."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "model_factory", "run", "unreadable"]

PROTOCOLS = ("prequential", "cv", "holdout", "splits")
DEFAULT_MODELS = ["indifferent", "laplace", "tan", "aode"]
#: the records a model is first tried on, before the protocol runs
TRIAL = 50


def model_factory(spec: str) -> Callable[[], Any]:
    """A factory from a model name: a streamnb model (``streamnb.models.registry.MODELS``:
    indifferent, ml, laplace, m-estimate, bibl, tan, tan-ddr, aode, …) or a river peer
    ``river:<module>.<Class>``, several joined by ``|`` into a river pipeline (e.g.
    ``river:preprocessing.OneHotEncoder|naive_bayes.BernoulliNB``)."""
    from streamnb.models.registry import MODELS

    if spec in MODELS:
        return MODELS[spec]
    if not spec.startswith("river:"):
        raise ValueError(f"unknown model {spec!r}; choose one of {sorted(MODELS)} or "
                         "river:<module>.<Class>[|<module>.<Class>...]")
    steps = []
    for part in spec[len("river:"):].split("|"):
        module, _, name = part.strip().rpartition(".")
        try:
            steps.append(getattr(importlib.import_module(f"river.{module}"), name))
        except (ImportError, AttributeError, ValueError):
            raise ValueError(f"no river class {part!r} (in {spec!r})") from None

    def make() -> Any:
        from river import compose

        models = [step() for step in steps]
        return models[0] if len(models) == 1 else compose.Pipeline(*models)

    return make


def add_parser(sub: Any) -> None:
    """``evaluate`` in the command table ``sub`` (:class:`streamnb.cli.Commands`)."""
    sub.add_parser("evaluate", help="evaluate models on a data set: prequential, k-fold "
                   "cross-validation, holdout or random splits",
                   description="Evaluate models side by side with one protocol; writes "
                   "summary.md, scores.csv and PNG plots to --out.", define=_options)


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--protocol", choices=PROTOCOLS, default="cv")
    p.add_argument("--dataset", default="vote",
                   help="a registry name (python -m streamnb.datasets check lists them) or "
                   "'spamassassin' or 'sms' (the message streams, tokenised), or the path of "
                   "your own .arff or .csv file (header row; --target names the class column, "
                   "default the last)")
    p.add_argument("--target", default=None, help="the class column of an .arff/.csv --dataset")
    p.add_argument("--model", action="append", dest="models", metavar="NAME",
                   help="repeatable; a streamnb model name, river:<module>.<Class>[|...], or "
                   "all (every streamnb model that can learn the data set's records; the "
                   f"others are named and left out) (default: {', '.join(DEFAULT_MODELS)})")
    p.add_argument("--folds", type=int, default=10, help="cv: folds per repeat")
    p.add_argument("--repeats", type=int, default=None,
                   help="cv: repeats (default 1); splits: number of splits (default 30)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the folds, splits and the --feedback subset")
    p.add_argument("--train-fraction", type=float, default=1.0,
                   help="cv: train on this fraction of each training fold (Cerquides: 0.1)")
    p.add_argument("--train-size", type=int, default=None, help="splits: training records")
    p.add_argument("--test-size", type=int, default=None,
                   help="splits: test records (default: all the others)")
    p.add_argument("--test-fraction", type=float, default=0.3, help="holdout: test share")
    p.add_argument("--discretize", choices=("none", "equal-frequency", "mdl"),
                   default="none",
                   help="numeric attributes → intervals fitted on each training part, for "
                   "every model (cv, holdout, splits; none: each model reads floats its own "
                   "way, e.g. tan, aode and the selective ones in fine bins)")
    p.add_argument("--bins", type=int, default=5, help="equal-frequency intervals")
    p.add_argument("--limit", type=int, default=None, help="use the first N records only")
    p.add_argument("--delay", type=int, default=None, metavar="K",
                   help="prequential: delayed feedback, each label is learned after the next K "
                   "records have been predicted (default 0: immediately)")
    p.add_argument("--feedback", type=float, default=None, metavar="FRACTION",
                   help="prequential: partial feedback, only the labels of a random subset of "
                   "this share of the records (seeded by --seed) are learned; every record is "
                   "predicted and scored (default 1: all)")
    p.add_argument("--window", type=int, default=500, metavar="W",
                   help="prequential: the rolling accuracy curve is over the last W records "
                   "(default %(default)s)")
    p.add_argument("--baseline", default=None,
                   help="t-test every model against this one (default: the first)")
    p.add_argument("--test", choices=("paired", "unpaired", "corrected"), default="paired",
                   help="t-test for the comparison column")
    p.add_argument("--out", type=Path, default=None,
                   help="report directory (default out/evaluate/<dataset>-<protocol>)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def _data(name: str, limit: int | None, target: str | None = None
          ) -> tuple[list, list, Any, str | None]:
    """Records, labels, the positive class (of the message streams) and, for a file, the
    class column as the report names it (whether it was the default)."""
    if name in ("spamassassin", "sms"):
        from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
        from streamnb.features import tokenize_email, tokenize_sms

        if name == "spamassassin":
            messages = list(iter_spamassassin_stream())[:limit]
            tokens = [tokenize_email(m.text) for m in messages]
        else:
            messages = list(iter_sms_spam_stream())[:limit]
            tokens = [tokenize_sms(m.text) for m in messages]
        # sorted: a model's sums then do not depend on the string hash seed
        return ([dict.fromkeys(sorted(t), True) for t in tokens],
                [m.label for m in messages], "spam", None)
    from streamnb.datasets import load, load_file

    if Path(name).suffix.lower() not in (".arff", ".csv"):
        data = load(name)
        return data.records[:limit], data.labels[:limit], None, None
    data = load_file(name, target)
    last = "column" if name.lower().endswith(".csv") else "attribute"
    column = data.target if target is not None else (
        f"{data.target} (the last {last}: the default without --target)")
    return data.records[:limit], data.labels[:limit], None, column


def _check(args: argparse.Namespace) -> str | None:
    """The options' error, in one line, before anything runs (None when they are fine)."""
    from streamnb.evaluate import check_feedback

    if args.protocol != "prequential":
        given = [f"--{name}" for name in ("delay", "feedback")
                 if getattr(args, name) is not None]
        if given:
            return (f"{' and '.join(given)} appl{'y' if len(given) > 1 else 'ies'} to "
                    "--protocol prequential only")
    try:
        check_feedback(0 if args.delay is None else args.delay, args.feedback)
    except ValueError as exc:  # "delay must …" / "feedback must …": name the option
        return f"--{exc}"
    if args.window < 1:
        return f"--window must be a positive number of records, got {args.window}"
    import math

    checks = (
        ("--folds", args.folds, args.folds >= 2, "an integer >= 2"),
        ("--bins", args.bins, args.bins >= 2, "an integer >= 2"),
        ("--test-fraction", args.test_fraction,
         math.isfinite(args.test_fraction) and 0 < args.test_fraction < 1, "in (0, 1)"),
        ("--train-fraction", args.train_fraction,
         math.isfinite(args.train_fraction) and 0 < args.train_fraction <= 1, "in (0, 1]"),
        ("--repeats", args.repeats, args.repeats is None or args.repeats >= 1, "an integer >= 1"),
        ("--limit", args.limit, args.limit is None or args.limit >= 1, "an integer >= 1"),
        ("--train-size", args.train_size, args.train_size is None or args.train_size >= 1,
         "an integer >= 1"),
        ("--test-size", args.test_size, args.test_size is None or args.test_size >= 1,
         "an integer >= 1"),
    )
    for option, value, fine, allowed in checks:
        if not fine:
            return f"{option} must be {allowed}, got {value}"
    if args.protocol == "splits" and args.train_size is None:
        return "--protocol splits needs --train-size"
    for spec in args.models or ():
        try:
            if spec != "all":
                model_factory(spec)
        except ValueError as exc:
            return str(exc)
    specs = _specs(args.models)
    if args.baseline is not None and args.baseline not in specs:
        return f"--baseline {args.baseline} is not one of the models ({', '.join(specs)})"
    return _check_dataset(args.dataset)


def _check_dataset(name: str) -> str | None:
    from streamnb.datasets import names

    if name in ("spamassassin", "sms") or name in names():
        return None
    path = Path(name)
    if path.suffix.lower() in (".arff", ".csv"):
        return None if path.is_file() else f"--dataset {name}: no such file"
    return (f"unknown --dataset {name!r}: a registry name (python -m streamnb.datasets list), "
            "spamassassin, sms, or the path of an .arff or .csv file")


def run(args: argparse.Namespace) -> int:
    error = _check(args)
    if error is not None:
        print(f"streamnb evaluate: {error}", file=sys.stderr)
        return 2
    from streamnb.evaluate import (
        compare_prequential,
        cross_validate,
        validate_holdout,
        validate_random_splits,
    )
    from streamnb.evaluate.report import write_report
    from streamnb.features import EqualFrequencyDiscretizer, MDLDiscretizer

    specs = _specs(args.models)
    models = {spec: model_factory(spec) for spec in specs}
    try:
        records, labels, positive, column = _data(args.dataset, args.limit, args.target)
    except (ValueError, KeyError, OSError) as exc:  # a malformed file, an absent package
        print(f"streamnb evaluate: {str(exc).strip(chr(39))}", file=sys.stderr)
        return 2
    if column is not None:
        print(f"class column: {column}")
    discretizer = {"none": None, "mdl": MDLDiscretizer,
                   "equal-frequency": lambda: EqualFrequencyDiscretizer(bins=args.bins)
                   }[args.discretize]
    # "all" stands for the models that can read the data set; a model named is required to
    optional = set(specs) - set(args.models or ()) if "all" in (args.models or ()) else set()
    failure, left_out = _trial(models, records, labels, discretizer, optional)
    if failure is not None:
        print(f"streamnb evaluate: {failure}", file=sys.stderr)
        return 2
    for spec, why in left_out.items():
        print(f"--model all: {spec} left out: it cannot learn these records ({why})")
        del models[spec]
    if not models:
        print("streamnb evaluate: no model can learn these records", file=sys.stderr)
        return 2
    common = {"dataset": args.dataset, "progress": not args.no_progress}
    if args.protocol == "prequential":
        if discretizer is not None:
            print("streamnb evaluate: --discretize applies to cv, holdout and splits (a stream "
                  "discretises online: put a discretiser in a river pipeline)", file=sys.stderr)
            return 2
        result = compare_prequential(models, list(zip(records, labels, strict=True)),
                                     positive=positive, delay=args.delay or 0,
                                     feedback=args.feedback, seed=args.seed, **common)
    elif args.protocol == "cv":
        result = cross_validate(models, records, labels, k=args.folds,
                                repeats=args.repeats or 1, seed=args.seed,
                                train_fraction=args.train_fraction, discretizer=discretizer,
                                **common)
    elif args.protocol == "holdout":
        result = validate_holdout(models, records, labels, test_fraction=args.test_fraction,
                                  seed=args.seed, discretizer=discretizer, **common)
    else:
        result = validate_random_splits(models, records, labels, train_size=args.train_size,
                                        test_size=args.test_size, repeats=args.repeats or 30,
                                        seed=args.seed, discretizer=discretizer, **common)
    if column is not None:
        result.settings["class"] = column
    out = args.out or Path("out") / "evaluate" / f"{args.dataset}-{args.protocol}"
    written = write_report(result, out, baseline=args.baseline or next(iter(models)),
                           test=args.test, window=args.window)
    print(written["summary"].read_text())
    print("written: " + ", ".join(str(p) for p in written.values()))
    return 0


def _specs(models: list[str] | None) -> list[str]:
    """The ``--model`` options in order, ``all`` replaced by every registered streamnb model
    (sorted; each once), or the default models."""
    from streamnb.models.registry import MODELS

    specs: list[str] = []
    for spec in models or DEFAULT_MODELS:
        specs += [name for name in (sorted(MODELS) if spec == "all" else [spec])
                  if name not in specs]
    return specs


def unreadable(factory: Callable[[], Any], records: Sequence, labels: Sequence) -> str | None:
    """Why a fresh model of ``factory`` cannot learn ``records`` one by one and then predict
    the first (its exception's type and message, on one line), or None when it can: what
    ``--model all`` (here and in ``streamnb demo``) asks of each registered model."""
    model = factory()
    try:
        for x, y in zip(records, labels, strict=True):
            model.learn_one(x, y)
        model.predict_proba_one(records[0])
    except Exception as exc:  # whatever the model raises: its own message says what
        return f"{type(exc).__name__}: {str(exc).strip()[:200]}"
    return None


def _trial(models: dict[str, Callable[[], Any]], records: list, labels: list,
           discretizer: Callable[[], Any] | None, optional: set[str]
           ) -> tuple[str | None, dict[str, str]]:
    """Why a model cannot learn and predict the data set's first records as the protocol gives
    them (discretised if asked), in one line, or None when every model not ``optional`` can;
    and the ``optional`` ones that cannot, with why. Tried before the run: a model's own
    exception would otherwise end the run, late, in a traceback."""
    head_x, head_y = [dict(x) for x in records[:TRIAL]], list(labels[:TRIAL])
    if discretizer is not None:
        d = discretizer()
        d.fit(head_x, head_y)
        head_x = d.transform(head_x)
    nominal = any(isinstance(v, str) for x in head_x for v in x.values())
    left_out = {}
    for spec, factory in models.items():
        why = unreadable(factory, [dict(x) for x in head_x], head_y)
        if why is None:
            continue
        if spec in optional:
            left_out[spec] = why
            continue
        hint = ""
        if spec.startswith("river:") and nominal:
            hint = (f"; the data set has nominal attributes, which most river models take "
                    f"one-hot encoded: --model 'river:preprocessing.OneHotEncoder|"
                    f"{spec[len('river:'):]}'")
        return f"{spec} cannot learn these records ({why}){hint}", left_out
    return None, left_out
