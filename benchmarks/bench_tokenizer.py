"""Speed and token quality of the e-mail tokeniser: `streamnb.features.tokenize_email` against a
reference tokeniser built on the standard library (the `email` package and an `html.parser` per
HTML part, `reference_tokenize_email` below) and against bogofilter on the same bytes (the
"Tokeniser" section of docs/benchmarks.md).

* Speed: every SpamAssassin message's raw bytes (``m.raw``), tokenised by each implementation
  in interleaved chunks of 250 messages, ``--repeat`` times: messages/s and MB/s of CPU time
  (the machine is shared: CPU time is the steadier clock) and of wall-clock time.
* bogofilter 1.2 on the same bytes written once as an mbox: ``bogolexer -q`` (tokenise only)
  and ``bogofilter -M -T`` (tokenise and score every message against a word list in which
  every message was registered once with ``-M -s``/``-M -n``); CPU time of the child processes
  and wall-clock time, ``--repeat`` times.
* Quality: prequential (score each message, then learn it) accuracy / exact AUC /
  ham-called-spam % of `streamnb.SpamFilter` on SpamAssassin (``m.raw``) and on the SMS
  collection (``m.text``; `tokenize_text` routes each text by `is_email`), and of
  `IndifferentNB` on SpamAssassin ``{token: True}`` (Bernoulli) and ``{"tokens": set}``
  (binary multinomial) records from ``m.text``; reference tokens against streamnb's, same run.

Run: ``python benchmarks/bench_tokenizer.py [--repeat 3] [--no-quality] [--no-bogofilter]``; it
writes ``benchmarks/results/bench_tokenizer.json`` (``--results``, ``--no-results``).
"""

from __future__ import annotations

import argparse
import binascii
import quopri
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from email import message_from_string
from email.message import Message
from email.policy import compat32
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

from streamnb import IndifferentNB, SpamFilter
from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
from streamnb.evaluate import exact_auc, prequential
from streamnb.features import is_email, tokenize_email, tokenize_sms

sys.path.insert(0, str(Path(__file__).parent))
import _results  # a sibling script, not a package

CHUNK = 250
REFERENCE = "reference (email + html.parser)"
STREAMNB = "streamnb tokenize_email"


# -- the reference tokeniser (the standard library's parsers; for this benchmark only) ----------
# compat32 rather than policy.default: header values stay plain strings, which we scan with
# regexes. policy.default parses every header it hands out into a structured object, which
# costs more and whose parsers have raised on malformed headers.
_POLICY = compat32

# Letters, digits and underscore (``\w``), "$" and "!", and apostrophes after the first
# character ("don't"); trailing ones (closing quotes) are stripped in `_words`, which is cheaper
# than excluding them here with a group that re would evaluate for every occurrence.
_WORD = re.compile(r"[\w$!][\w$!']*")
_MIN_WORD, _MAX_WORD = 2, 40
# Two literal-prefixed patterns rather than one alternation: re then skips ahead to "http" or
# "www." instead of trying the pattern at every character of the body.
_URL_HTTP = re.compile(r"https?://(?:[^\s/@<>\"']+@)?(\[?[\w-]+(?:\.[\w-]+)+)", re.ASCII)
_URL_WWW = re.compile(r"www\.[\w-]+(?:\.[\w-]+)+", re.ASCII)
_EMAIL_DOMAIN = re.compile(r"@([\w-]+(?:\.[\w-]+)+)")
_DOTTED = re.compile(r"[\w.-]*\.[\w.-]*", re.ASCII)
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_ADDRESS = re.compile(r"<[^>]*>|\S*@\S*")
_ENCODED_WORD = re.compile(r"=\?([^?\s]*)\?([bBqQ])\?([^?\s]*)\?=")
_ENCODED_WORD_GAP = re.compile(r"(\?=)\s+(=\?)")
_SURROGATE = re.compile("[\udc80-\udcff]")
_TAG = re.compile(r"<[^>]*>")
_SECOND_LEVEL_REGISTRIES = frozenset({"co", "com", "net", "org", "ac", "gov", "edu", "ne", "or"})
# name=, filename=, and their RFC 2231 forms (filename*=utf-8''a.pdf, filename*1*=...).
_FILENAME = re.compile(r"name(?:\*\d*)?\*?\s*=\s*\"?([^\";]*)", re.I)

_DECODED_TRANSFER_ENCODINGS = frozenset(
    {"base64", "quoted-printable", "x-uuencode", "uuencode", "uue", "x-uue"}
)
# Tags after which a browser starts a new line: their boundaries separate words. Other tags
# (and comments) do not, which undoes the "V<!-- -->iagra" trick of splitting a word with markup.
# fmt: off
_BLOCK_TAGS = frozenset(
    {"br", "p", "div", "td", "th", "tr", "li", "ul", "ol", "table", "h1", "h2", "h3", "h4",
     "h5", "h6", "hr", "title", "blockquote", "pre", "center", "option", "body", "head"}
)
# fmt: on
_TAGS_AS_SIGNALS = frozenset({"img", "font", "form", "table", "iframe", "script", "embed"})
_INVISIBLE_TAGS = frozenset({"script", "style"})
_HEADER_FIELDS = frozenset(
    {"subject", "from", "to", "cc", "reply-to", "x-mailer", "received", "message-id"}
)


def reference_tokenize_email(raw: str | bytes) -> frozenset[str]:
    """The same token kinds as `streamnb.features.tokenize_email`, from the `email` object model."""
    eight_bit = isinstance(raw, bytes) and not raw.isascii()
    if isinstance(raw, bytes):
        # What email.message_from_bytes does: 8-bit bytes become lone surrogates, turned back
        # into bytes later and decoded with the charset of their header or part.
        text = raw.decode("ascii", "surrogateescape")
    elif raw.isascii():
        text = raw
    else:
        # Lone surrogates in a str would be mistaken for those escapes (and make the parser
        # raise): replace them.
        text = raw.encode("utf-8", "replace").decode("utf-8")
    if text.startswith("From "):
        text = text.partition("\n")[2]
    message = message_from_string(text, policy=_POLICY)
    tokens: set[str] = set()
    _add_header_tokens(message, tokens)
    for part in message.walk():
        if part.is_multipart():  # a container: its type is evidence, its parts are walked
            tokens.add("content-type:" + part.get_content_type())
        else:
            _add_part_tokens(part, tokens, eight_bit)
    return frozenset(tokens)


def _add_header_tokens(message: Message, tokens: set[str]) -> None:
    received: list[str] = []
    for name, value in message.raw_items():
        field = name.lower()
        if field not in _HEADER_FIELDS:
            continue
        if field == "received":
            received.append(value)  # host names are ASCII: no decoding needed
            continue
        if not value.isascii():
            # Raw 8-bit headers are written in the charset of the body, as mail clients assume.
            charset = next(filter(None, message.get_charsets()), None)
            value = _as_text(value, charset)
        value = _decode_encoded_words(value).lower()
        if field == "subject":
            tokens.update("subject:" + word for word in _words(value))
        elif field == "from":
            tokens.update("from:" + word for word in _words(_ADDRESS.sub(" ", value)))
            for domain in _EMAIL_DOMAIN.findall(value):
                tokens.update(_host_tokens("from:", domain))
        elif field == "x-mailer":
            tokens.update("x-mailer:" + word for word in _words(value))
        else:  # fields whose only evidence is the domain: to, cc, reply-to, message-id
            tokens.update(f"{field}:{domain}" for domain in _EMAIL_DOMAIN.findall(value))
    # The relay chain repeats the same hosts: collect the distinct names of all Received
    # headers at once. Their addresses are noise as words; one flag says they were there.
    for name_or_address in set(_DOTTED.findall(" ".join(received).lower())):
        tokens.update(_host_tokens("received:", name_or_address))


def _add_part_tokens(part: Message, tokens: set[str], eight_bit: bool) -> None:
    content_type = part.get_content_type()
    tokens.add("content-type:" + content_type)
    charset = part.get_content_charset()
    if charset:
        tokens.add("charset:" + charset)
    maintype, _, subtype = content_type.partition("/")
    disposition = str(part.get("content-disposition", "")).lower()
    if maintype not in ("text", "multipart", "message") or "attachment" in disposition:
        # An attachment's bytes are an image, a document or an executable: its type and name
        # carry the evidence, its contents would only flood the vocabulary with noise.
        tokens.add("attachment:" + content_type)
        extension = _filename_extension(f"{part.get('content-type', '')};{disposition}")
        if extension:
            tokens.add("filename-ext:" + extension)
        return
    body = _part_text(part, charset, eight_bit)
    if not body:
        return
    if subtype == "html":
        body = _add_html_tokens(body, tokens)
    body = body.lower()
    tokens.update(_words(body))
    _add_url_tokens(body, tokens)
    tokens.update("email:" + domain for domain in _EMAIL_DOMAIN.findall(body))


def _part_text(part: Message, charset: str | None, eight_bit: bool) -> str:
    encoding = str(part.get("content-transfer-encoding", "")).strip().lower()
    if eight_bit or encoding in _DECODED_TRANSFER_ENCODINGS:
        # With decode=True compat32 hands back bytes (the original ones for 8-bit parts), which
        # we decode ourselves: without it, it decodes 8-bit parts with their charset and only
        # survives unknown charsets, not codecs that reject errors="replace" (idna).
        data = part.get_payload(decode=True)
        return _decode(data, charset) if isinstance(data, bytes) else ""
    payload = part.get_payload()
    return payload if isinstance(payload, str) else ""


def _filename_extension(parameters: str) -> str | None:
    """The extension of the last ``name``/``filename`` parameter (RFC 2231 forms included)."""
    names = _FILENAME.findall(parameters)
    if not names or "." not in names[-1]:
        return None
    extension = names[-1].rsplit(".", 1)[1].strip().lower()
    return extension if extension.isalnum() and len(extension) <= 10 else None


def _as_text(value: str, charset: str | None) -> str:
    """Undo the parser's surrogate escapes: 8-bit bytes are decoded with `charset`."""
    if value.isascii() or _SURROGATE.search(value) is None:
        # Either pure ASCII, or part of a str the caller had already decoded.
        return value
    return _decode(value.encode("utf-8", "surrogateescape"), charset)


def _decode(data: bytes, charset: str | None) -> str:
    if charset:
        try:
            return data.decode(charset.strip("\"' "), "replace")
        except (LookupError, ValueError):
            # Unknown names ("default_charset", "3dwindows-1252") and codecs that are not text
            # encodings: fall through to the guesses below.
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # every byte is valid Latin-1: decoding cannot fail


def _decode_encoded_words(value: str) -> str:
    """Decode RFC 2047 encoded words (``=?charset?Q?...?=``), leaving broken ones as they are."""
    if "=?" not in value:
        return value
    return _ENCODED_WORD.sub(_decode_encoded_word, _ENCODED_WORD_GAP.sub(r"\1\2", value))


def _decode_encoded_word(match: re.Match[str]) -> str:
    charset, encoding, payload = match.groups()
    try:
        if encoding in "bB":
            data = binascii.a2b_base64(payload + "=" * (-len(payload) % 4))
        else:
            data = quopri.decodestring(payload.encode("ascii"), header=True)
    except ValueError:  # binascii.Error and non-ASCII payloads alike
        return match.group()
    return _decode(data, charset.partition("*")[0])  # drop an RFC 2231 language suffix


def _words(text: str) -> set[str]:
    words = set(_WORD.findall(text))
    # One pass over the distinct words, not the occurrences: most words need no fixing.
    odd = [word for word in words if not _MIN_WORD <= len(word) <= _MAX_WORD or word[-1] == "'"]
    words.difference_update(odd)
    for word in odd:
        word = word.rstrip("'")
        if len(word) > _MAX_WORD:
            # Encoded blobs and ASCII art: only their first character and length are evidence.
            words.add(f"skip:{word[0]}:{len(word) // 10 * 10}")
        elif len(word) >= _MIN_WORD:
            # Single characters carry no evidence in e-mail (unlike SMS: "u" for "you").
            words.add(word)
    return words


def _add_url_tokens(text: str, tokens: set[str]) -> None:
    for host in {*_URL_HTTP.findall(text), *_URL_WWW.findall(text)}:
        tokens.update(_host_tokens("url:", host))


def _host_tokens(prefix: str, host: str) -> list[str]:
    """``prefix`` + the host and each parent domain with at least two labels.

    A numeric address gives the single token ``prefix + "ip"``; something that is neither an
    address nor a name ending in a letter label (a version number, "..") gives no tokens.
    """
    host = host.strip("[].-").lower()
    if _IPV4.fullmatch(host):
        return [prefix + "ip"]
    labels = host.split(".")
    if len(labels) < 2 or not labels[-1].isalpha():
        return []
    # "co.uk", "com.au" are registries, not evidence about a sender: stop before them.
    last = len(labels) - 2 if len(labels) > 2 and _is_registry(labels[-2:]) else len(labels) - 1
    return [prefix + ".".join(labels[i:]) for i in range(last)]


def _is_registry(labels: list[str]) -> bool:
    return len(labels[1]) == 2 and labels[0] in _SECOND_LEVEL_REGISTRIES


class _HTMLText(HTMLParser):
    """Collects the visible text of an HTML part, plus tag signals and link targets."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self.signals: set[str] = set()
        self.links: list[str] = []
        self._invisible_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_TAGS:
            self.chunks.append(" ")
        if tag in _INVISIBLE_TAGS:
            self._invisible_depth += 1
        if tag in _TAGS_AS_SIGNALS:
            self.signals.add("html:" + tag)
        for name, value in attrs:
            if name in ("href", "src", "action") and value:
                self.links.append(value)
                if tag == "a" and name == "href":
                    self.signals.add("html:a-href")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCK_TAGS:
            self.chunks.append(" ")
        if tag in _INVISIBLE_TAGS and self._invisible_depth:
            self._invisible_depth -= 1

    def handle_data(self, data: str) -> None:
        if not self._invisible_depth:
            self.chunks.append(data)


def _add_html_tokens(html: str, tokens: set[str]) -> str:
    """Add the tag signals and link hosts of `html` to `tokens`; return its visible text."""
    parser = _HTMLText()
    try:
        parser.feed(html)
        parser.close()
    except AssertionError:
        # html.parser asserts on unknown marked sections ("<![foo ...>"): keep the signals
        # seen so far and fall back to blunt tag stripping for the text.
        tokens.update(parser.signals)
        return _TAG.sub(" ", html)
    tokens.update(parser.signals)
    _add_url_tokens(" ".join(parser.links).lower(), tokens)
    return "".join(parser.chunks)


# -- speed ----------------------------------------------------------------------------------------
def tokeniser_speed(raws: list[bytes], repeat: int) -> dict[str, tuple[float, float]]:
    """Seconds of CPU and wall-clock time per tokeniser over ``repeat`` passes of ``raws``, in
    interleaved chunks so that both see the same machine load."""
    tokenisers: dict[str, Callable[[bytes], frozenset[str]]] = {
        REFERENCE: reference_tokenize_email, STREAMNB: tokenize_email}
    cpu = dict.fromkeys(tokenisers, 0.0)
    wall = dict.fromkeys(tokenisers, 0.0)
    for _ in range(repeat):
        for start in range(0, len(raws), CHUNK):
            chunk = raws[start:start + CHUNK]
            for name, tokenise in tokenisers.items():
                c, w = time.process_time(), time.perf_counter()
                for raw in chunk:
                    tokenise(raw)
                cpu[name] += time.process_time() - c
                wall[name] += time.perf_counter() - w
    return {name: (cpu[name], wall[name]) for name in tokenisers}


def write_mbox(raws: list[bytes], path: Path) -> None:
    """The messages as one mbox: a ``From `` line where a message has none, ``>From`` for
    body lines that would read as one, a blank line after each message."""
    with open(path, "wb") as out:
        for raw in raws:
            if not raw.startswith(b"From "):
                out.write(b"From streamnb@localhost  Thu Jan  1 00:00:00 2002\n")
            first, _, rest = raw.partition(b"\n")
            out.write(first + b"\n" + re.sub(rb"(?m)^From ", b">From ", rest))
            out.write(b"\n" if raw.endswith(b"\n") else b"\n\n")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(args: list[str], stdin: Path) -> tuple[float, float, bytes]:
    c, w = _children_cpu(), time.perf_counter()
    with open(stdin, "rb") as source:
        done = subprocess.run(args, stdin=source, capture_output=True, check=False)
    if done.returncode not in (0, 1, 2):  # bogofilter: 0 spam, 1 ham, 2 unsure, 3 error
        raise RuntimeError(f"{' '.join(args)}: {done.stderr.decode().strip()}")
    return _children_cpu() - c, time.perf_counter() - w, done.stdout


def bogofilter_speed(raws: list[bytes], labels: list[str], repeat: int
                     ) -> dict[str, tuple[float, float]]:
    """CPU (child processes) and wall-clock seconds of ``bogolexer -q`` and ``bogofilter -M -T``
    over ``repeat`` passes of the mbox of ``raws``; every message registered once before."""
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        mbox = directory / "all.mbox"
        write_mbox(raws, mbox)
        for label, flag in (("spam", "-s"), ("ham", "-n")):
            subset = directory / f"{label}.mbox"
            write_mbox([r for r, y in zip(raws, labels, strict=True) if y == label], subset)
            _timed(["bogofilter", "-C", "-d", str(directory), "-M", flag], subset)
        runs = {"bogolexer -q (tokenise only)": ["bogolexer", "-C", "-q"],
                "bogofilter -M -T (tokenise + score)":
                    ["bogofilter", "-C", "-d", str(directory), "-M", "-T"]}
        seconds = {}
        for name, args in runs.items():
            cpu = wall = 0.0
            for _ in range(repeat):
                c, w, out = _timed(args, mbox)
                cpu, wall = cpu + c, wall + w
            if name.startswith("bogofilter"):
                scored = out.count(b"\n")
                if scored != len(raws):
                    raise RuntimeError(f"bogofilter scored {scored} of {len(raws)} messages")
            seconds[name] = (cpu, wall)
    return seconds


# -- quality --------------------------------------------------------------------------------------
def spam_filter_measures(messages: list, text_of: Callable) -> tuple[float, float, float]:
    """Prequential SpamFilter: accuracy, exact AUC, ham called spam %."""
    f = SpamFilter()
    scores, spam = [], []
    for m in messages:
        x = text_of(m)
        scores.append(f.score_one(x))
        spam.append(m.label == "spam")
        f.learn_one(x, m.label)
    scores, spam = np.array(scores), np.array(spam)
    called = scores > 0
    return (float(np.mean(called == spam)), exact_auc(spam, scores),
            100 * float(called[~spam].mean()))


def reference_tokenize_text(text: str | bytes) -> frozenset[str]:
    """`streamnb.features.tokenize_text` with the reference e-mail tokeniser."""
    if is_email(text):
        return reference_tokenize_email(text)
    return tokenize_sms(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)


def quality() -> list[tuple[str, str, tuple[float, float, float]]]:
    spamassassin = list(iter_spamassassin_stream())
    sms = list(iter_sms_spam_stream())
    rows = []
    for name, tokenise, tokenise_text in (
            (REFERENCE, reference_tokenize_email, reference_tokenize_text),
            (STREAMNB, tokenize_email, None)):
        # streamnb's tokeniser through SpamFilter's own path (the raw text); the reference as the
        # {token: 1} mappings SpamFilter also accepts, which it learns as the same token sets.
        raw_of = (lambda m: m.raw) if tokenise_text is None else \
            (lambda m, t=tokenise: dict.fromkeys(t(m.raw), 1))
        text_of = (lambda m: m.text) if tokenise_text is None else \
            (lambda m, t=tokenise_text: dict.fromkeys(t(m.text), 1))
        rows.append((name, "SpamFilter, SpamAssassin (m.raw)",
                     spam_filter_measures(spamassassin, raw_of)))
        rows.append((name, "SpamFilter, SMS (m.text)", spam_filter_measures(sms, text_of)))
        tokens = [(tokenise(m.text), m.label) for m in spamassassin]
        for event_model, records in (
                ("Bernoulli {token: True}", [(dict.fromkeys(t, True), y) for t, y in tokens]),
                ("multinomial {tokens: set}", [({"tokens": t}, y) for t, y in tokens])):
            r = prequential(IndifferentNB(), records, positive="spam", every=len(records))
            rows.append((name, f"IndifferentNB {event_model}, SpamAssassin (m.text)",
                         (r.accuracy(), r.auc(), r.ham_misclassification())))
    return rows


SPEED = [_results.column("tokeniser"), _results.column("msg/s (CPU)", fmt=",.0f"),
         _results.column("MB/s (CPU)", fmt=".1f"), _results.column("msg/s (wall)", fmt=",.0f"),
         _results.column("MB/s (wall)", fmt=".1f")]
RATIOS = [_results.column("ratio"), _results.column("CPU", fmt=".2f"),
          _results.column("wall", fmt=".2f")]
QUALITY = [_results.column("tokeniser"), _results.column("model, corpus"),
           _results.column("accuracy", fmt=".5f"), _results.column("AUC", fmt=".6f"),
           _results.column("ham→spam %", fmt=".3f")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument("--no-bogofilter", action="store_true")
    _results.add_arguments(parser, "bench_tokenizer")
    args = parser.parse_args(argv)
    messages = list(iter_spamassassin_stream())
    raws, labels = [m.raw for m in messages], [m.label for m in messages]
    n, megabytes = len(raws) * args.repeat, sum(map(len, raws)) * args.repeat / 1e6
    print(f"SpamAssassin: {len(raws):,} messages, {megabytes / args.repeat:.1f} MB; "
          f"{args.repeat} passes\n")
    seconds = tokeniser_speed(raws, args.repeat)
    if not args.no_bogofilter and shutil.which("bogofilter") and shutil.which("bogolexer"):
        seconds |= bogofilter_speed(raws, labels, args.repeat)
    speed = [{"tokeniser": name, "msg/s (CPU)": n / cpu, "MB/s (CPU)": megabytes / cpu,
              "msg/s (wall)": n / wall, "MB/s (wall)": megabytes / wall}
             for name, (cpu, wall) in seconds.items()]
    ours = seconds[STREAMNB]
    ratios = [{"ratio": f"{STREAMNB} / {name}", "CPU": cpu / ours[0], "wall": wall / ours[1]}
              for name, (cpu, wall) in seconds.items() if name != STREAMNB]
    tables = {"speed": _results.table(SPEED, speed), "ratios": _results.table(RATIOS, ratios)}
    if not args.no_quality:
        tables["quality"] = _results.table(QUALITY, (
            {"tokeniser": name, "model, corpus": what, "accuracy": accuracy, "AUC": auc,
             "ham→spam %": ham_spam} for name, what, (accuracy, auc, ham_spam) in quality()))
    print("\n\n".join(_results.render(t) for t in tables.values()))
    notes = []
    if args.no_bogofilter or "bogolexer -q (tokenise only)" not in seconds:
        notes.append("bogofilter not run.")
    _results.write_from_args(args, "bench_tokenizer", tables, argv=argv, script=__file__,
                             notes=" ".join(notes))


if __name__ == "__main__":
    main()
