"""The text scans of the e-mail and SMS tokenisers (streamnb.features.email, .sms): words,
dotted names, link hosts and their parent domains, header fields and their tokens, HTML signals
and visible text: the C extension ``streamnb.features._scan`` when built, else the Python twins
here.

Both implementations give the same results and refuse the same arguments with the same errors;
tests/test_scan.py checks each pair. ``__all__`` is the list of kernels (``field_tokens``,
``EMAIL_DOMAIN`` and ``WORD_FIELDS`` are the tokeniser's Python helpers, not kernels);
``STREAMNB_PURE_PYTHON=1`` forces the twins (streamnb/_accel/choose.py).
"""

from __future__ import annotations

import operator
import re
import sys
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from streamnb._accel.choose import choose
from streamnb._accel.kernels import _ssize  # the C kernels' rule for an index argument

__all__ = ["email_hosts", "email_words", "header_fields", "header_tokens", "host_tokens",
           "html_signals", "html_text", "url_hosts"]


# E-mail words (streamnb.features.email): letters, digits and underscore (``\w``), "$", "!" and
# apostrophes; a word is a maximal run of them stripped of apostrophes at both ends.
_EMAIL_WORD = re.compile(r"[\w$!][\w$!']*")
_EMAIL_ASCII_WORD_CHARACTERS = (
    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$!'"
)
_EMAIL_NOT_WORD_TO_SPACE = bytes(c if c in _EMAIL_ASCII_WORD_CHARACTERS else 32
                                 for c in range(256))
_EMAIL_ONE_CHARACTER_WORDS = frozenset(map(chr, _EMAIL_ASCII_WORD_CHARACTERS))


def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def email_words(text: str, into: set[str] | None = None) -> set[str]:
    """The word set of lower-cased e-mail text: words of 2 to 40 characters as they are,
    longer ones as ``skip:<first char>:<length rounded down to 10>``, shorter ones dropped;
    added to the set `into` when given (which is returned)."""
    # PyArg_ParseTuple's messages, which call None "None"
    if not isinstance(text, str):
        raise TypeError(f"email_words() argument 1 must be str, not {_type_name(text)}")
    if into is not None and not isinstance(into, set):
        raise TypeError(f"email_words() argument 2 must be set, not {_type_name(into)}")
    if text.isascii():
        # Every character that cannot be in a word becomes a space (one C pass over the
        # bytes) and str.split cuts the rest: the regex's words, faster.
        words = set(text.encode("ascii").translate(_EMAIL_NOT_WORD_TO_SPACE).decode("ascii")
                    .split())
        words.difference_update(_EMAIL_ONE_CHARACTER_WORDS)
    else:
        # The regex starts a word after its leading apostrophes; trailing ones are stripped
        # below, which is cheaper than excluding them in the regex.
        words = set(_EMAIL_WORD.findall(text))
    # One pass over the distinct words, not the occurrences: most words need no fixing.
    odd = [word for word in words if not 2 <= len(word) <= 40 or "'" in word]
    words.difference_update(odd)
    for word in odd:
        word = word.strip("'")
        if len(word) > 40:
            # Encoded blobs and ASCII art: only their first character and length are evidence.
            words.add(f"skip:{word[0]}:{len(word) // 10 * 10}")
        elif len(word) >= 2:
            # Single characters carry no evidence in e-mail (unlike SMS: "u" for "you").
            words.add(word)
    if into is None:
        return words
    into.update(words)
    return into


_EMAIL_NOT_NAME_TO_SPACE = bytes(c if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "_.-")
                                 else 32 for c in range(256))


def email_hosts(text: str) -> set[str]:
    """The host names and addresses of e-mail text: maximal runs of ASCII letters, digits,
    "_", "." and "-" that hold a ".", stripped of "." and "-" at both ends (empty ones
    dropped)."""
    if not isinstance(text, str):
        raise TypeError(f"email_hosts: expected str, got {type(text).__name__}")
    # Every byte that cannot be in a name becomes a space (non-ASCII characters first become
    # "?"), and str.split cuts the runs.
    runs = set(text.encode("ascii", "replace").translate(_EMAIL_NOT_NAME_TO_SPACE)
               .decode("ascii").split())
    hosts = {run.strip(".-") for run in runs if "." in run}
    hosts.discard("")
    return hosts


# Links (streamnb.features.email): two literal-prefixed patterns rather than one alternation, so
# that re skips ahead to "http" or "www." instead of trying the pattern at every character.
_URL_HTTP = re.compile(r"https?://(?:[^\s/@<>\"']+@)?(\[?[\w-]+(?:\.[\w-]+)+)", re.ASCII)
_URL_WWW = re.compile(r"www\.[\w-]+(?:\.[\w-]+)+", re.ASCII)


def url_hosts(text: str) -> set[str]:
    """The hosts of the links in text: ``http(s)://`` links' hosts (after an optional user part
    ending in "@"; a leading "[" kept) and ``www.`` names, as a set."""
    if not isinstance(text, str):
        raise TypeError(f"url_hosts: expected str, got {type(text).__name__}")
    hosts = set(_URL_HTTP.findall(text)) if "http" in text else set()
    if "www." in text:
        hosts.update(_URL_WWW.findall(text))
    return hosts


# An entity's header block (streamnb.features.email): field lines ("Name: value", RFC 5322
# field-name characters) and their folded continuations, up to the blank line or the first line
# that is neither (the body starts there, as in the `email` package). Possessive: no
# backtracking state per line. The fields read, each with its folded value, are found from the
# newline before the block, so that the literal "\n" lets re skip from line to line.
_HEADER_BLOCK = re.compile(r"(?:(?:[!-9;-~]+:|[ \t])[^\n]*+(?:\n|\Z))*+")
_HEADER_FIELDS = re.compile(
    r"\n(subject|from|to|cc|reply-to|x-mailer|received|message-id|content-type"
    r"|content-transfer-encoding|content-disposition):([^\n]*+(?:\n[ \t][^\n]*+)*+)",
    re.I,
)


def header_fields(text: str, start: int, end: int, max_value: int = sys.maxsize
                   ) -> tuple[int, list[tuple[str, str]], dict[str, str]]:
    """The header block of the entity at ``text[start:end]`` (``text[start - 1]`` a newline):
    ``(header_end, fields, content)``, where the line that ends the block starts (or ``end``);
    of its fields named in `_HEADER_FIELDS` (the name lower-cased, the value its folded lines
    cut to ``max_value`` characters), the ``(name, value)`` of the message fields in order,
    and ``{name: value}`` of the first of each content-* field."""
    if not isinstance(text, str):
        raise TypeError(f"header_fields() argument 1 must be str, not {type(text).__name__}")
    max_value = _ssize(operator.index(max_value))
    if max_value < 0:
        raise ValueError("header_fields: max_value must be >= 0")
    # as re reads pos and endpos: within the text, an end before start an empty block
    start = min(operator.index(start), len(text))
    end = max(min(operator.index(end), len(text)), start)
    if start < 1:
        raise ValueError(f"header_fields: start must be 1 or more (after the newline before "
                         f"the entity), got {start}")
    header_end = _HEADER_BLOCK.match(text, start, end).end()
    fields: list[tuple[str, str]] = []
    content: dict[str, str] = {}
    for name, value in _HEADER_FIELDS.findall(text, start - 1, header_end):
        name, value = name.lower(), value[:max_value]
        if name.startswith("content-"):
            content.setdefault(name, value)
        else:
            fields.append((name, value))
    return header_end, fields, content


# The tokens of header fields (streamnb.features.email): the words of subject, from and
# x-mailer values, the from value's with its addresses blanked; the domains after an "@".
_ADDRESS = re.compile(r"<[^<>]*>|(?<!\S)\S*@\S*")
# the domain of each address (the tokeniser's email:<domain> of the body too)
EMAIL_DOMAIN = re.compile(r"@([\w-]+(?:\.[\w-]+)+)")
# header fields whose words are tokens (their values may need decoding first)
WORD_FIELDS = frozenset({"subject", "from", "x-mailer"})
_DOMAIN_FIELDS = frozenset({"to", "cc", "reply-to", "message-id"})


def _read_field(field: str, value: str, tokens: set, words: Callable, hosts: Callable) -> None:
    """`field_tokens` with the given word and host kernels (C, or the twins)."""
    if field == "from":
        tokens.update(map("from:".__add__, words(_ADDRESS.sub(" ", value))))
        hosts("from:", EMAIL_DOMAIN.findall(value), tokens)
    elif field in WORD_FIELDS:
        tokens.update(map((field + ":").__add__, words(value)))
    elif field in _DOMAIN_FIELDS:
        tokens.update(map((field + ":").__add__, EMAIL_DOMAIN.findall(value)))
    else:
        raise ValueError(f"header_tokens: no tokens are read from field {field!r}")


def field_tokens(field: str, value: str, tokens: set) -> None:
    """The tokens of one header field's decoded, lower-cased value (any characters), added to
    ``tokens``: what `header_tokens` gives for the fields it returns to be decoded. For
    subject and x-mailer, its words (`email_words`) as ``<field>:<word>``; for from, the words
    left once the addresses (``<...>`` and white-space-delimited runs holding an "@") are
    blanked, as ``from:<word>``, and the domains after an "@" with their parent domains
    (`host_tokens`) as ``from:<domain>``; for to, cc, reply-to and message-id, those domains
    as ``<field>:<domain>``."""
    _read_field(field, value, tokens, email_words, host_tokens)


def header_tokens(fields: Any, tokens: set) -> list[tuple[str, str]]:
    """The tokens of a message's header fields (`header_fields`' ``(name, value)`` list) added
    to ``tokens``; the fields whose value must be decoded first are returned, in order: a
    subject, from or x-mailer value that is not ASCII or holds an RFC 2047 encoded word
    ("=?"), and any other non-ASCII value but a received one. Received values are joined
    with a space and lower-cased, and their host names (`email_hosts`) give ``received:``
    tokens (`host_tokens`); every other value is lower-cased and read by `field_tokens`."""
    if not isinstance(tokens, set):
        raise TypeError(f"header_tokens() argument 2 must be set, not {_type_name(tokens)}")
    try:
        items = list(fields)
    except TypeError:
        raise TypeError("header_tokens: fields must be a sequence") from None
    rest: list[tuple[str, str]] = []
    received: list[str] = []
    for item in items:
        if not (type(item) is tuple and len(item) == 2 and isinstance(item[0], str)
                and isinstance(item[1], str)):
            raise TypeError(f"header_tokens: a field must be a (str, str) pair, got "
                            f"{type(item).__name__}")
        field, value = item
        if field not in WORD_FIELDS and field not in _DOMAIN_FIELDS and field != "received":
            raise ValueError(f"header_tokens: no tokens are read from field {field!r}")
        if field == "received":  # host names are ASCII: no decoding needed
            received.append(value)
        elif not value.isascii() or (field in WORD_FIELDS and "=?" in value):
            rest.append(item)
        else:
            _read_field(field, value.lower(), tokens, twin.email_words, twin.host_tokens)
    if received:
        twin.host_tokens("received:", twin.email_hosts(" ".join(received).lower()), tokens)
    return rest


# HTML's signal tags (streamnb.features.email), matched on the lower-cased source: a few tags,
# and links (an "a" tag with a non-empty href).
_HTML_SIGNAL = re.compile(
    r"<(img|font|form|table|iframe|script|embed|a(?=\s[^<>]*?(?<![\w-])href\s*=\s*[^\s>]))"
    r"(?![\w-])"
)


def html_signals(text: str) -> set[str]:
    """The names of the signal tags of HTML source ("a" for a link), as a set."""
    if not isinstance(text, str):
        raise TypeError(f"html_signals: expected str, got {type(text).__name__}")
    return set(_HTML_SIGNAL.findall(text))


# Host names (streamnb.features.email): a numeric address, DNS's longest name, and the
# second-level registries that are not evidence about a sender ("co.uk", "com.au").
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_MAX_HOST = 253
_SECOND_LEVEL_REGISTRIES = frozenset({"co", "com", "net", "org", "ac", "gov", "edu", "ne", "or"})


def host_tokens(prefix: str, hosts: Any, tokens: set) -> None:
    """For each host name or address in ``hosts``: ``prefix`` + the host and each parent
    domain with at least two labels, added to ``tokens``, after stripping "[", "]", "." and
    "-" at both ends and lower-casing; a registry ("co.uk") is not a parent domain. A numeric
    address gives ``prefix + "ip"``; something that is neither an address nor a name ending
    in a letter label (a version number, "..") gives nothing, and neither does a name longer
    than DNS allows (253 characters; its parent domains would grow with the square of its
    length)."""
    if not isinstance(prefix, str):
        raise TypeError(f"host_tokens() argument 1 must be str, not {type(prefix).__name__}")
    if not isinstance(tokens, set):
        raise TypeError(f"host_tokens() argument 3 must be set, not {type(tokens).__name__}")
    for host in hosts:
        if not isinstance(host, str):
            raise TypeError(f"host_tokens: hosts must be str, got {type(host).__name__}")
        if len(host) <= _MAX_HOST + 4:
            tokens.update(_cached_host_tokens(prefix, host))


@lru_cache(maxsize=4096)
def _cached_host_tokens(prefix: str, host: str) -> tuple[str, ...]:
    """One host's tokens, cached: the same relays and link hosts recur from message to
    message."""
    host = host.strip("[].-").lower()
    if len(host) > _MAX_HOST:
        return ()
    last = host.rfind(".")
    if last < 0 or not host[last + 1 :].isalpha():
        return (prefix + "ip",) if _IPV4.fullmatch(host) else ()
    # The host, then the name after each dot but the last: every suffix of 2 labels or more.
    names = [prefix + host]
    dot = host.find(".")
    while dot < last:
        names.append(prefix + host[dot + 1 :])
        dot = host.find(".", dot + 1)
    # "co.uk", "com.au" are registries, not evidence about a sender: stop before them.
    labels = host[host.rfind(".", 0, last) + 1 :].split(".")
    if len(names) > 1 and len(labels[1]) == 2 and labels[0] in _SECOND_LEVEL_REGISTRIES:
        names.pop()
    return tuple(names)


# HTML (streamnb.features.email), matched on the lower-cased source. `[^<>]` in every tag
# pattern stops a match at the next "<": a "<" without its ">" cannot make re scan the rest of
# the text from every "<". Comments, scripts and style sheets are invisible. A comment ends at
# the next "-->" (it is only looked for before the last "-->": after it, "<!--" is a tag like
# "<!doctype", to its ">", as spam's "<!--#rotate>" is); an unterminated script or style sheet
# runs to the end, as in browsers.
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_HTML_SCRIPT = re.compile(r"<(script|style)(?![\w-]).*?(?:</\1|\Z)", re.S)
# Tags after which a browser starts a new line: their boundaries separate words. Other tags
# (and comments) do not, which undoes the "V<!-- -->iagra" trick of splitting a word with markup.
_HTML_BLOCK_TAG = re.compile(
    r"</?(?:br|p|div|td|th|tr|li|ul|ol|table|h[1-6]|hr|title|blockquote|pre|center|option"
    r"|body|head)(?![\w-])[^<>]*>?"
)
_HTML_TAG = re.compile(r"<(?:[/?]?[a-z]|!)[^<>]*>?")


def html_text(source: str) -> str:
    """The visible text of lower-cased HTML, entities not decoded: comments, scripts and style
    sheets removed, block tags replaced by a space, other tags removed."""
    if not isinstance(source, str):
        raise TypeError(f"html_text: expected str, got {type(source).__name__}")
    comments_end = source.rfind("-->") + 3
    if comments_end > 2:
        source = _HTML_COMMENT.sub("", source[:comments_end]) + source[comments_end:]
    if "<script" in source or "<style" in source:
        source = _HTML_SCRIPT.sub("", source)
    return _HTML_TAG.sub("", _HTML_BLOCK_TAG.sub(" ", source))


twin, ACCELERATED = choose(globals(), "streamnb.features._scan")
