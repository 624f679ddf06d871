"""The spam-filter habits of the command line: ``streamnb train``, ``streamnb score`` and
``streamnb explain --state`` on a saved :class:`~streamnb.SpamFilter`.

``train`` reads mbox files and maildirs (the standard library's :mod:`mailbox`; a plain
directory of one-message files too) into a filter state file, adding to it if it exists;
``score`` reads one message on stdin and prints its verdict and spam log-odds with
bogofilter's exit statuses (0 ham, 1 spam, 2 unsure; 3 for an error).
"""

from __future__ import annotations

import argparse
import mailbox
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["add_parsers", "cmd_explain_filter"]

DEFAULT_STATE = "streamnb-filter.snb"
_CHUNK = 500
EXIT_HAM, EXIT_SPAM, EXIT_UNSURE, EXIT_ERROR = 0, 1, 2, 3


class _Refused(Exception):
    """A command-line mistake: printed as one line, no traceback."""


def _messages(path: str) -> Iterator[bytes]:
    """The raw bytes of every message of an mbox file, a maildir, or a directory of files."""
    p = Path(path)
    if not p.exists():
        raise _Refused(f"{path}: no such file or directory")
    if p.is_dir():
        if all((p / sub).is_dir() for sub in ("cur", "new", "tmp")):
            box = mailbox.Maildir(p, factory=None, create=False)
            for key in sorted(box.keys()):
                yield box.get_bytes(key)
            return
        for f in sorted(q for q in p.iterdir() if q.is_file()):
            yield f.read_bytes()
        return
    with p.open("rb") as handle:
        head = handle.read(5)
    if head != b"From ":
        raise _Refused(f"{path}: not an mbox file (it does not start with 'From '), a maildir "
                       "or a directory of messages")
    box = mailbox.mbox(p, factory=None, create=False)
    try:
        for key in box.iterkeys():
            yield box.get_bytes(key)
    finally:
        box.close()


def _load(path: str, must_exist: bool):
    from streamnb import SpamFilter, StateFileError, load_model

    if not Path(path).exists():
        if must_exist:
            raise _Refused(f"{path}: no filter state; create one with 'streamnb train'")
        return SpamFilter()
    try:
        model = load_model(path)
    except (StateFileError, OSError) as exc:
        raise _Refused(f"{path}: {exc}") from None
    if not isinstance(model, SpamFilter):
        raise _Refused(f"{path}: holds a {type(model).__name__}, not a SpamFilter")
    return model


def cmd_train(args: argparse.Namespace) -> int:
    try:
        if not args.spam and not args.ham:
            raise _Refused("give at least one --spam or --ham mailbox")
        for path in [*args.spam, *args.ham]:
            if not Path(path).exists():
                raise _Refused(f"{path}: no such file or directory")
        model = _load(args.state, must_exist=False)
        if args.new:
            from streamnb import SpamFilter

            model = SpamFilter()
        counts = {}
        for label, paths in ((model.spam_label, args.spam), (model.ham_label, args.ham)):
            counts[label] = 0
            for path in paths:
                chunk: list[bytes] = []
                for raw in _messages(path):
                    chunk.append(raw)
                    if len(chunk) == _CHUNK:
                        model.learn_many(chunk, [label] * len(chunk))
                        counts[label] += len(chunk)
                        chunk = []
                if chunk:
                    model.learn_many(chunk, [label] * len(chunk))
                    counts[label] += len(chunk)
    except _Refused as exc:
        print(f"streamnb train: {exc}", file=sys.stderr)
        return 2
    Path(args.state).parent.mkdir(parents=True, exist_ok=True)
    model.save(args.state)
    print(f"learned {counts[model.spam_label]} spam and {counts[model.ham_label]} ham "
          f"messages; {args.state} now holds {model.n_learned} messages, "
          f"{len(model.stats.schema.text_values[0]) if model.stats.schema.n_text else 0} "
          "distinct tokens")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    try:
        model = _load(args.state, must_exist=True)
    except _Refused as exc:
        print(f"streamnb score: {exc}", file=sys.stderr)
        return EXIT_ERROR
    raw = sys.stdin.buffer.read()
    score = model.score_one(raw)
    verdict = model.verdict_one(raw)
    print(f"{verdict} {score:.6f}")
    if verdict == "unsure":
        return EXIT_UNSURE
    return EXIT_SPAM if verdict == model.spam_label else EXIT_HAM


def cmd_explain_filter(args: argparse.Namespace) -> int:
    """``streamnb explain --state PATH [--file MESSAGE]``: the tokens behind a filter's score."""
    try:
        model = _load(args.state, must_exist=True)
        if args.file:
            path = Path(args.file)
            if not path.is_file():
                raise _Refused(f"{args.file}: no such file")
            raw = path.read_bytes()
        else:
            raw = sys.stdin.buffer.read()
    except _Refused as exc:
        print(f"streamnb explain: {exc}", file=sys.stderr)
        return 2
    rows = model.explain_one(raw)
    present = model.tokens(raw)
    print(f"score {model.score_one(raw):+.4f} ({model.verdict_one(raw)}); "
          f"{len(present)} tokens, {len(rows)} known to the filter "
          f"({model.n_learned} messages learned)")
    print("Only the message's own (present) tokens move this score: the multinomial event "
          "model gives absent tokens no weight.")
    print(f"{'token':<40} {'log-ratio':>9} {'spamicity':>9} {'fisher':>6} {'spam':>7} "
          f"{'ham':>7}")
    for row in rows[: args.top]:
        print(f"+ {row['token'][:38]:<38} {row['log_ratio']:>+9.3f} {row['spamicity']:>9.3f} "
              f"{'kept' if row['in_fisher'] else '-':>6} {row['spam_messages']:>7.0f} "
              f"{row['ham_messages']:>7.0f}")
    return 0


def add_parsers(sub: argparse._SubParsersAction) -> None:
    train = sub.add_parser(
        "train", help="learn a spam filter from mbox files or maildirs",
        description="Learn the messages of mbox files, maildirs or directories of message files "
        "as spam or ham into a SpamFilter state file (added to it if it exists).")
    train.add_argument("--spam", action="append", default=[], metavar="PATH",
                       help="an mbox file, maildir or directory of spam (repeatable)")
    train.add_argument("--ham", action="append", default=[], metavar="PATH",
                       help="an mbox file, maildir or directory of ham (repeatable)")
    train.add_argument("--state", default=DEFAULT_STATE,
                       help="the filter's state file (default: %(default)s)")
    train.add_argument("--new", action="store_true",
                       help="start from an empty filter even if the state file exists")
    train.set_defaults(func=cmd_train)
    score = sub.add_parser(
        "score", help="classify one message read on stdin (exit 0 ham, 1 spam, 2 unsure)",
        description="Read one message (RFC-822 or a short text) on stdin, print its verdict "
        "and spam log-odds; the exit status is 0 for ham, 1 for spam, 2 for unsure and 3 for "
        "an error, as bogofilter's.")
    score.add_argument("--state", default=DEFAULT_STATE,
                       help="the filter's state file (default: %(default)s)")
    score.set_defaults(func=cmd_score)
