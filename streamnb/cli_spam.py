"""The spam-filter habits of the command line: ``streamnb train``, ``streamnb score`` and
``streamnb explain --state`` on a saved :class:`~streamnb.SpamFilter`.

``train`` reads mbox files and maildirs (the standard library's :mod:`mailbox`; a plain
directory of one-message files too) into a filter state file, adding to it if it exists;
``score`` reads one message on stdin and prints its verdict and spam log-odds (or, with
``--passthrough``, writes the message with its verdict in header fields) with bogofilter's exit
statuses: 0 spam, 1 ham, 2 unsure, 3 an error. Spam is 0 so that a mail filter's "run this
program; did it succeed?" test (procmail's ``* ? command``) means "is it spam?".
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["add_parsers", "cmd_explain_filter", "with_header_fields"]

DEFAULT_STATE = "streamnb-filter.snb"
_CHUNK = 500
EXIT_SPAM, EXIT_HAM, EXIT_UNSURE, EXIT_ERROR = 0, 1, 2, 3
#: The header fields ``--passthrough`` adds: SpamAssassin's (what mail clients and filter rules
#: already match) and streamnb's own, which carries the verdict (unsure too) and the score.
STATUS_FIELD, SCORE_FIELD = "X-Spam-Status", "X-Streamnb-Score"


class _Refused(Exception):
    """A command-line mistake: printed as one line, no traceback."""


def _messages(path: str) -> Iterator[bytes]:
    """The raw bytes of every message of an mbox file, a maildir, or a directory of files."""
    import mailbox  # train's alone: not imported by score, run per message

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


def _new_filter(max_ham_rate: float | None):
    from streamnb import SpamFilter

    try:
        return SpamFilter(max_ham_rate=max_ham_rate)
    except ValueError as exc:
        raise _Refused(f"--max-ham-rate: {exc}") from None


def cmd_train(args: argparse.Namespace) -> int:
    try:
        if not args.spam and not args.ham:
            raise _Refused("give at least one --spam or --ham mailbox")
        for path in [*args.spam, *args.ham]:
            if not Path(path).exists():
                raise _Refused(f"{path}: no such file or directory")
        model = _load(args.state, must_exist=False)
        if args.new or not model.n_learned:
            model = _new_filter(args.max_ham_rate)
        elif args.max_ham_rate is not None and args.max_ham_rate != model.max_ham_rate:
            raise _Refused(f"{args.state} holds a filter with max_ham_rate "
                           f"{model.max_ham_rate!r}; add --new to start a filter with "
                           f"--max-ham-rate {args.max_ham_rate!r}")
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


def _message(raw: bytes, source: str) -> bytes:
    """``raw``, refused (one line) when it is plainly not a message."""
    from streamnb.features import not_a_message

    problem = not_a_message(raw)
    if problem is not None:
        raise _Refused(f"{source}: {problem}")
    return raw


def with_header_fields(raw: bytes, fields: list[tuple[str, str]]) -> bytes:
    """``raw`` with ``fields`` added at the end of its header block, its bytes otherwise as they
    were; the fields' line ending is the header's (CRLF or LF). A short text (no header) gets a
    header block of its own before it.

    >>> with_header_fields(b"Subject: hi\\r\\n\\r\\nbody\\r\\n", [("X-A", "1")])
    b'Subject: hi\\r\\nX-A: 1\\r\\n\\r\\nbody\\r\\n'
    >>> with_header_fields(b"call me now", [("X-A", "1")])
    b'X-A: 1\\n\\ncall me now'
    """
    from streamnb.features import is_email

    def block(eol: bytes) -> bytes:
        return b"".join(f"{name}: {value}".encode("ascii") + eol for name, value in fields)

    if not is_email(raw):
        return block(b"\n") + b"\n" + raw
    # the header ends at its first empty line (the leading line breaks is_email skips are not
    # one); a message of header lines only ends at its last byte
    start = len(raw) - len(raw.lstrip(b"\r\n"))
    position = start
    while True:
        end = raw.find(b"\n", position)
        if end < 0:  # no body: the fields go after the last line, which may lack its break
            last = raw.rfind(b"\n")
            eol = b"\r\n" if last > 0 and raw[last - 1] == 13 else b"\n"  # 13: CR
            tail = b"" if raw.endswith(b"\n") else eol
            return raw + tail + block(eol)
        if raw[position:end] in (b"", b"\r"):  # the blank line: insert before it
            eol = b"\r\n" if raw[end - 1:end] == b"\r" else b"\n"
            return raw[:position] + block(eol) + raw[position:]
        position = end + 1


def cmd_score(args: argparse.Namespace) -> int:
    raw = b""
    try:
        raw = sys.stdin.buffer.read()
        model = _load(args.state, must_exist=True)
        _message(raw, "stdin")
        score = model.score_one(raw)
        verdict = model.verdict_one(raw)
    except (_Refused, OSError) as exc:
        return _score_failed(args, raw, str(exc))
    except Exception as exc:  # any failure must exit 3: a traceback's status, 1, means "ham"
        return _score_failed(args, raw, f"{type(exc).__name__}: {exc}")
    status = (EXIT_UNSURE if verdict == "unsure"
              else EXIT_SPAM if verdict == model.spam_label else EXIT_HAM)
    if args.passthrough:
        flag = "Yes" if status == EXIT_SPAM else "No"
        required = model.current_threshold  # learned, with max_ham_rate
        fields = [(STATUS_FIELD, f"{flag}, score={score:.2f} required={required:.2f}"),
                  (SCORE_FIELD, f"{verdict} {score:.6f}")]
        sys.stdout.buffer.write(with_header_fields(raw, fields))
        sys.stdout.flush()
    else:
        print(f"{verdict} {score:.6f}")
    return 0 if args.embed else status


def _score_failed(args: argparse.Namespace, raw: bytes, reason: str) -> int:
    """Exit status 3 with one line on stderr; in passthrough, the message goes on unchanged (a
    rule that ignores the status still delivers it)."""
    print(f"streamnb score: {reason}", file=sys.stderr)
    if args.passthrough:
        sys.stdout.buffer.write(raw)
        sys.stdout.flush()
    return EXIT_ERROR


def cmd_explain_filter(args: argparse.Namespace) -> int:
    """``streamnb explain --state PATH [--file MESSAGE]``: the tokens behind a filter's score."""
    try:
        model = _load(args.state, must_exist=True)
        if args.file:
            path = Path(args.file)
            if not path.is_file():
                raise _Refused(f"{args.file}: no such file")
            raw = _message(path.read_bytes(), args.file)
        else:
            raw = _message(sys.stdin.buffer.read(), "stdin")
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


def add_parsers(sub: Any) -> None:
    """``train`` and ``score`` in the command table ``sub`` (:class:`streamnb.cli.Commands`)."""
    sub.add_parser(
        "train", help="learn a spam filter from mbox files or maildirs",
        description="Learn the messages of mbox files, maildirs or directories of message files "
        "as spam or ham into a SpamFilter state file (added to it if it exists).",
        define=_train_options)
    score = sub.add_parser(
        "score", help="classify one message read on stdin: exit 0 spam, 1 ham, 2 unsure, 3 "
        "error (bogofilter's statuses)",
        description="Read one message (RFC-822 or a short text) on stdin and print its verdict "
        "and spam log-odds (\"spam 4.210000\"). The exit status is bogofilter's: 0 spam, 1 "
        "ham, 2 unsure, 3 an error (no state, empty input or binary data, a wrong option), "
        "told in one line on stderr.", define=_score_options)
    score.error_status = EXIT_ERROR  # a wrong option too: 2 would read as "unsure"


def _train_options(train: argparse.ArgumentParser) -> None:
    train.add_argument("--spam", action="append", default=[], metavar="PATH",
                       help="an mbox file, maildir or directory of spam (repeatable)")
    train.add_argument("--ham", action="append", default=[], metavar="PATH",
                       help="an mbox file, maildir or directory of ham (repeatable)")
    train.add_argument("--state", default=DEFAULT_STATE,
                       help="the filter's state file (default: %(default)s)")
    train.add_argument("--new", action="store_true",
                       help="start from an empty filter even if the state file exists")
    train.add_argument("--max-ham-rate", type=float, default=None, metavar="R",
                       help="a new filter learns its threshold so that at most this share of "
                       "ham is called spam (e.g. 0.001; SpamFilter's max_ham_rate), saved with "
                       "it; default: the fixed threshold")
    train.set_defaults(func=cmd_train)


def _score_options(score: argparse.ArgumentParser) -> None:
    score.add_argument("--state", default=DEFAULT_STATE,
                       help="the filter's state file (default: %(default)s)")
    score.add_argument("-p", "--passthrough", action="store_true",
                       help=f"write the message to stdout with '{STATUS_FIELD}: Yes|No, "
                       f"score=... required=...' and '{SCORE_FIELD}: spam|ham|unsure SCORE' "
                       "added to its header, its bytes otherwise unchanged (unchanged on an "
                       "error)")
    score.add_argument("-e", "--embed", action="store_true",
                       help="exit 0 whenever the message got a verdict (3 on an error), for "
                       "filters that take any other status as a failure (procmail's :0fw, "
                       "maildrop's xfilter), as bogofilter -e")
    score.set_defaults(func=cmd_score)
