"""The ``streamnb`` command line."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from streamnb import __version__, cli_evaluate, cli_spam

__all__ = ["main"]


def _progress(total: int, desc: str, enabled: bool):
    """A tqdm bar when tqdm is installed and wanted, else a silent callback."""
    if not enabled:
        return None, lambda: None
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is None:
        step = max(total // 20, 1)

        def report(i: int) -> None:
            if i % step == 0 or i == total:
                print(f"\r{desc}: {i}/{total}", end="", file=sys.stderr, flush=True)

        return report, lambda: print(file=sys.stderr)
    bar = tqdm(total=total, desc=desc, unit="msg", mininterval=0.2)

    def update(i: int) -> None:
        bar.n = i
        if i == total or i % 50 == 0:
            bar.refresh()

    return update, bar.close


def _print_result(title: str, result, seconds: float, n: int) -> dict:
    summary = result.summary()
    labels, matrix = result.confusion()
    print(f"\n== {title} ==")
    print(f"accuracy {summary['accuracy']:.4f}   AUC {summary['auc']:.4f}   "
          f"LogScore {summary['log_score']:.1f}   log-loss {summary['log_loss']:.4f}   "
          f"{n / seconds:,.0f} msg/s")
    print(f"TREC spam track: 1-ROCA {summary['one_minus_roca']:.4f}%   "
          f"ham misclassification {summary['ham_misclassification']:.2f}%   "
          f"spam misclassification {summary['spam_misclassification']:.2f}%")
    from streamnb.evaluate.metrics import HAM_LOSSES, SPAM_MISSES

    points = summary["operating_points"]
    print("TREC operating points: spam miss " + " / ".join(
        f"{points[f'spam miss % at ham loss {h:g} %']:.2f}%" for h in HAM_LOSSES)
        + f" at ham loss {' / '.join(f'{h:g}' for h in HAM_LOSSES)}%; ham loss "
        + " / ".join(f"{points[f'ham loss % at spam miss {s:g} %']:.2f}%" for s in SPAM_MISSES)
        + f" at spam miss {' / '.join(f'{s:g}' for s in SPAM_MISSES)}%")
    width = max(len(str(label)) for label in labels) + 2
    print("confusion (rows: true, columns: predicted)")
    print(" " * width + "".join(f"{label!s:>{width}}" for label in labels))
    for label, row in zip(labels, matrix, strict=True):
        print(f"{label!s:>{width}}" + "".join(f"{v:>{width}}" for v in row))
    return summary


#: The rolling accuracy of the demo's curves: over the last this many messages.
ROLLING_WINDOW = 500


def _write_plot(args: argparse.Namespace, results: dict, title: str) -> None:
    """The learning curve at ``--plot`` and, next to it, ``roc.csv``, ``roc.png`` (the ROC
    curves on the log-odds scores) and ``accuracy_curves.png`` (cumulative and rolling)."""
    if not args.plot:
        return
    from streamnb.evaluate.report import (
        plot_accuracy_curves,
        plot_learning_curves,
        plot_roc,
        write_roc_csv,
    )

    plot = Path(args.plot)
    curves = {name: r.curve for name, r in results.items()}
    roc = {name: r.roc_curve() for name, r in results.items()}
    window = min(ROLLING_WINDOW, max(r.n for r in results.values()))
    rolling = {name: r.rolling_curve(window) for name, r in results.items()}
    csv = write_roc_csv(roc, plot.with_name("roc.csv"))
    print(f"\nROC curve points written to {csv}")
    try:
        plot_learning_curves(curves, plot, title, xlabel="messages seen (time order)")
        roc_png = plot_roc(roc, plot.with_name("roc.png"), f"ROC, {title.split(',')[0]}")
        accuracy = plot_accuracy_curves(curves, rolling, plot.with_name("accuracy_curves.png"),
                                        title, window, xlabel="messages seen (time order)")
        print(f"learning curve written to {plot}; ROC curve to {roc_png}; cumulative and "
              f"last-{window} accuracy to {accuracy}")
    except ImportError:
        print("\nmatplotlib is not installed: pip install 'streamnb[plots]' for the PNGs",
              file=sys.stderr)


def cmd_demo(args: argparse.Namespace) -> int:
    from streamnb.datasets import iter_spamassassin_stream
    from streamnb.models.registry import MODELS

    # "all": every registered model that can read the messages (tried once they are loaded)
    names = sorted(MODELS) if args.model == "all" else args.model.split(",")
    from streamnb.consumers.options import MODEL_NAMES

    known = set(MODELS) if args.no_kafka else set(MODEL_NAMES)  # what the service runs
    for name in names:
        if name not in known:
            print(f"streamnb demo: unknown model {name!r}; choose from {sorted(known)}"
                  f"{' or all' if args.no_kafka else ''}", file=sys.stderr)
            return 2
    if not args.no_kafka and len(names) > 1:
        print("streamnb demo: the Kafka pipeline runs one model; use --no-kafka to compare "
              "several", file=sys.stderr)
        return 2
    messages = list(iter_spamassassin_stream(cache_dir=args.data_dir))
    if args.limit:
        messages = messages[: args.limit]
    if args.model == "all":
        names = _message_readers(names, messages)
    first, last = messages[0].timestamp, messages[-1].timestamp
    header = (f"SpamAssassin public corpus: {len(messages)} messages in time order "
              f"({first:%Y-%m-%d} .. {last:%Y-%m-%d}), "
              f"{sum(m.label == 'spam' for m in messages)} spam")
    if args.no_kafka:
        return _demo_in_process(args, names, messages, header)
    return _demo_kafka(args, names[0], messages, header)


def _message_readers(names: list[str], messages: list) -> list[str]:
    """The models of ``names`` that can learn the first messages as the demo gives them to
    each (``streamnb evaluate``'s check of ``--model all``); the others are named, with why."""
    from streamnb.features import tokenize_text
    from streamnb.models.registry import MODELS

    head = messages[: cli_evaluate.TRIAL]
    labels = [m.label for m in head]
    forms = {True: [m.text for m in head],
             False: [dict.fromkeys(tokenize_text(m.text), True) for m in head]}
    readers = []
    for name in names:
        why = cli_evaluate.unreadable(MODELS[name], forms["text input" in _tags(MODELS[name]())],
                                      labels)
        if why is None:
            readers.append(name)
        else:
            print(f"--model all: {name} left out: it cannot learn these messages ({why})")
    return readers


def _demo_kafka(args: argparse.Namespace, name: str, messages: list, header: str) -> int:
    from streamnb.consumers.broker import BrokerUnavailable
    from streamnb.consumers.demo import run_pipeline

    print(header)
    bar = None

    def progress(done: int, metrics: dict) -> None:
        nonlocal bar
        if args.no_progress:
            return
        if bar is None:  # after the set-up lines
            try:
                from tqdm import tqdm
            except ImportError:
                return
            bar = tqdm(total=len(messages), desc="predictions", unit="msg", mininterval=0.5)
        bar.n = done
        window = next((v for k, v in metrics.items()
                       if k.startswith("streamnb_prequential_accuracy[")), None)
        if metrics:
            bar.set_postfix(learned=int(metrics.get("streamnb_messages_learned_total", 0)),
                            accuracy=f"{window:.3f}" if window is not None else "-",
                            refresh=False)
        bar.refresh()

    try:
        run = run_pipeline(messages, model=name, bootstrap_servers=args.bootstrap_servers,
                           metrics_address=args.metrics_address,
                           max_poll_records=args.batch, progress=progress)
    except BrokerUnavailable as exc:
        print(f"streamnb demo: {exc}; or run the in-process demo: streamnb demo --no-kafka",
              file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.close()
    c = run.service_counts
    print(f"\nservice ({run.metrics_url}): "
          f"{int(c.get('streamnb_messages_consumed_total', 0))} consumed, "
          f"{int(c.get('streamnb_messages_learned_total', 0))} learned, "
          f"{int(c.get('streamnb_messages_predicted_total', 0))} predicted, "
          f"{int(c.get('streamnb_dead_letters_total', 0))} dead letters, "
          f"{int(c.get('streamnb_snapshots_total', 0))} snapshots")
    _print_result(f"{name} through Kafka (each poll of <= {args.batch} predicted, then "
                  "learned)", run.result, run.seconds, len(messages))
    if run.underflows:
        print(f"({run.underflows} true classes were published with probability 0.0, an "
              f"underflow; LogScore counts them as {sys.float_info.min:.1e})")
    _write_plot(args, {name: run.result},
                "SpamAssassin through Kafka, prequential (predict, then learn)")
    return 0


def _demo_in_process(args: argparse.Namespace, names: list[str], messages: list,
                     header: str) -> int:
    from streamnb.evaluate import prequential
    from streamnb.features import tokenize_text
    from streamnb.models.registry import make_model

    models = {name: make_model(name) for name in names}
    # a model tagged "text input" (SpamFilter) reads the raw message, as a user would give it;
    # the others get the {token: True} dicts the service makes of a text message
    tokens = None
    if any("text input" not in _tags(model) for model in models.values()):
        update, close = _progress(len(messages), "tokenising", not args.no_progress)
        tokens = []
        for i, m in enumerate(messages, start=1):
            tokens.append(dict.fromkeys(tokenize_text(m.text), True))
            if update:
                update(i)
        close()
    print(header)
    results = {}
    rows = []
    for name, model in models.items():
        if "text input" in _tags(model):
            stream = [(m.text, m.label) for m in messages]
        else:
            stream = list(zip(tokens, (m.label for m in messages), strict=True))
        update, close = _progress(len(stream), name, not args.no_progress)
        start = time.perf_counter()
        result = prequential(model, stream, positive="spam", every=max(len(stream) // 200, 1),
                             progress=update)
        seconds = time.perf_counter() - start
        close()
        results[name] = result
        summary = _print_result(f"{name}: {type(model).__name__}"
                                f"({getattr(model, 'estimator', '')!s})", result, seconds,
                                len(stream))
        rows.append((name, summary, seconds))
    if len(rows) > 1:
        print("\n| model | accuracy | AUC | 1-ROCA % | ham % | spam % | log-loss | LogScore | "
              "msg/s |\n|---|---|---|---|---|---|---|---|---|")
        for name, s, seconds in rows:
            print(f"| {name} | {s['accuracy']:.4f} | {s['auc']:.4f} | "
                  f"{s['one_minus_roca']:.4f} | {s['ham_misclassification']:.2f} | "
                  f"{s['spam_misclassification']:.2f} | {s['log_loss']:.4f} | "
                  f"{s['log_score']:.1f} | {len(stream) / seconds:,.0f} |")
    _write_plot(args, results, "SpamAssassin, prequential (predict, then learn)")
    return 0


def _tags(model) -> set:
    """river's estimator tags (``"text input"``: the model reads raw text)."""
    try:
        return set(model._tags)
    except AttributeError:
        return set()


def cmd_explain(args: argparse.Namespace) -> int:
    if args.state:
        return cli_spam.cmd_explain_filter(args)
    if args.file and not Path(args.file).is_file():
        print(f"streamnb explain: {args.file}: no such file", file=sys.stderr)
        return 2
    from streamnb.datasets import iter_spamassassin_stream
    from streamnb.features import tokenize_email
    from streamnb.models.tan import TAN

    messages = list(iter_spamassassin_stream(cache_dir=args.data_dir))
    if args.file:
        text = Path(args.file).read_text(encoding="utf-8", errors="replace")
        target, train = None, messages[: args.train]
    else:
        if not 0 <= args.message < len(messages):
            print(f"streamnb explain: --message must be in [0, {len(messages)})", file=sys.stderr)
            return 2
        target = messages[args.message]
        text = target.text
        train = [m for i, m in enumerate(messages[: args.train + 1]) if i != args.message]
        train = train[: args.train]
    model = TAN(weight=args.weight, relearn_every=0, max_candidates=args.candidates)
    half = len(train) // 2
    # the first half picks the candidate attributes, whose pairs are then counted on the second
    for part in (train[:half], train[half:]):
        model.learn_many([{t: True for t in tokenize_email(m.text)} for m in part],
                         [m.label for m in part])
        model.relearn()
    explanation = model.explain_one({t: True for t in tokenize_email(text)})
    where = (f"message {args.message} ({target.group}/{target.id}, true class {target.label!r})"
             if target else args.file)
    print(f"TAN({args.weight}) learned on {len(train)} SpamAssassin messages, tree over "
          f"{len(model.structure.parents) if model.structure else 0} candidate tokens;\n"
          f"explaining {where}\n")
    print(explanation.summary(top=args.top))
    return 0


class CommandParser(argparse.ArgumentParser):
    """argparse, with a mistake told in one line (no usage block, no traceback) and exit status
    ``error_status``: 2, which a command may change (``streamnb score`` exits 3, bogofilter's
    error, since its 2 means "unsure"). Every command's parser is one (argparse makes the
    sub-command parsers of the class of their parent)."""

    error_status = 2
    commands: dict[str, CommandParser]

    def error(self, message: str) -> NoReturn:
        self.exit(self.error_status, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer >= ``minimum`` (argparse names the option on a
    mistake)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        return value

    return parse


class Commands(argparse._SubParsersAction):
    """The table of sub-commands: each is made with its name, ``help`` and ``description``
    (what ``streamnb --help`` lists) and a ``define(parser)`` that adds its options, run when
    the command is the one chosen. A command thus imports only what it needs: ``streamnb
    score``, which a mail rule runs once per message, never imports the service's
    configuration or the evaluation's modules to parse its two options."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._defines: dict[str, Callable[[argparse.ArgumentParser], None]] = {}

    def add_parser(self, name: str, *, define: Callable[[argparse.ArgumentParser], None],
                   **kwargs: Any) -> argparse.ArgumentParser:
        parser = super().add_parser(name, **kwargs)
        self._defines[name] = define
        return parser

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        define = self._defines.pop(values[0], None)
        if define is not None:
            define(self._name_parser_map[values[0]])
        super().__call__(parser, namespace, values, option_string)


def build_parser() -> CommandParser:
    parser = CommandParser(
        prog="streamnb",
        description="Streaming Bayesian classifiers whose whole state is count statistics: a "
        "spam filter for mailboxes (train, score, explain --state), the evaluation of models "
        "on data sets (evaluate, demo), and a Kafka classification service (serve, broker).",
        epilog="'streamnb COMMAND --help' describes a command and its options.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, title="commands",
                                metavar="COMMAND", action=Commands)
    parser.commands = sub.choices
    sub.add_parser("demo", help="replay SpamAssassin in time order through Kafka and the "
                   "service (or in-process), prequentially, and report accuracy, AUC, LogScore",
                   description="Replay the SpamAssassin public corpus in time order into a "
                   "Kafka topic (an embedded tansu broker unless --bootstrap-servers is given) "
                   "classified and learned by `streamnb serve`: each message is predicted, then "
                   "learned. With --no-kafka, the same in one process, message by message.",
                   define=_demo_options)
    sub.add_parser("explain", help="why a message got its score: the tokens behind a saved "
                   "spam filter's score (--state), or a TAN's naive and dependence "
                   "contributions on a SpamAssassin message",
                   description="With --state, list the tokens of a message (--file or stdin) "
                   "that moved a saved SpamFilter's score. Without, learn a TAN on SpamAssassin "
                   "messages and explain its decision on one message: naive contributions, "
                   "dependence ratios ddr, DF, and whether the dependences flipped the naive "
                   "decision (Zhang's Theorem 2).", define=_explain_options)
    cli_evaluate.add_parser(sub)
    cli_spam.add_parsers(sub)
    # the service's commands (serve, broker) are defined beside the service: the library's
    # modules never import it (docs/architecture.md), the command line only dispatches to it
    # (this module imports none of the service's: Commands defines the one chosen)
    from streamnb.consumers.commands import add_parsers

    add_parsers(sub)
    return parser


def _demo_options(demo: argparse.ArgumentParser) -> None:
    demo.add_argument("--model", default="spam-filter",
                      help="spam-filter (streamnb.SpamFilter), indifferent, ml, laplace, "
                      "m-estimate, bibl, tan, aode; with --no-kafka any model of the registry, "
                      "a comma-separated list or all (default: spam-filter)")
    demo.add_argument("--no-kafka", action="store_true",
                      help="run in-process, without Kafka (the models of the registry)")
    demo.add_argument("--bootstrap-servers", default=None,
                      help="use this Kafka cluster instead of an embedded broker")
    demo.add_argument("--metrics-address", default="127.0.0.1:9108",
                      help="the service's metrics endpoint (another port if this one is "
                      "taken; default: %(default)s)")
    demo.add_argument("--batch", type=at_least(1), default=25,
                      help="records per poll of the service (default: %(default)s)")
    demo.add_argument("--limit", type=at_least(0), default=0,
                      help="only the first N messages (default 0: all)")
    demo.add_argument("--plot", default="out/learning_curve.png",
                      help="learning-curve PNG path, with roc.png, roc.csv and "
                      "accuracy_curves.png written next to it ('' for none; default: "
                      "%(default)s)")
    demo.add_argument("--data-dir", default=None,
                      help="dataset cache directory (default: $STREAMNB_DATA or ~/.cache/streamnb)")
    demo.add_argument("--no-progress", action="store_true", help="no progress bars")
    demo.set_defaults(func=cmd_demo)


def _explain_options(explain: argparse.ArgumentParser) -> None:
    explain.add_argument("--message", type=at_least(0), default=3000,
                         help="index in the time-ordered corpus (default: %(default)s)")
    explain.add_argument("--file", default=None, help="explain this raw RFC-822 message instead")
    explain.add_argument("--state", default=None,
                         help="explain the score of this saved SpamFilter (from 'streamnb "
                         "train') on --file or the message on stdin, instead of a TAN")
    explain.add_argument("--train", type=at_least(2), default=2000,
                         help="learn on the first N messages (default: %(default)s)")
    explain.add_argument("--weight", choices=["cmi", "ddr", "bayes"], default="cmi")
    explain.add_argument("--candidates", type=at_least(1), default=100,
                         help="tokens that may get a tree parent (default: %(default)s)")
    explain.add_argument("--top", type=at_least(1), default=8, help="attributes listed per line")
    explain.add_argument("--data-dir", default=None, help="dataset cache directory")
    explain.set_defaults(func=cmd_explain)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    # unknown options are the command's mistake, told with its exit status (argparse's own
    # parse_args would report them from the top-level parser)
    args, unknown = parser.parse_known_args(argv)
    command = parser.commands[args.command]
    if unknown:
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return args.func(args)
    except OSError as exc:  # a path given that cannot be read or written: the user's to fix
        print(f"{command.prog}: {exc}", file=sys.stderr)
        return command.error_status


if __name__ == "__main__":
    raise SystemExit(main())
