"""Tokenise raw RFC-822 e-mail into a set of binary presence features.

The tokens follow the SpamBayes tradition: body words stay bare, header evidence is prefixed by
the field it came from (``subject:free`` is stronger evidence than ``free`` in the body), and
structure that spammers cannot hide (MIME types, charsets, link hosts, relay hosts) becomes
tokens of its own. Only presence matters, so the result is a ``frozenset``.
"""

from __future__ import annotations

import binascii
import quopri
import re
from email import message_from_string
from email.message import Message
from email.policy import compat32
from html.parser import HTMLParser

__all__ = ["tokenize_email"]

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


def tokenize_email(raw: str | bytes) -> frozenset[str]:
    """Tokenise a raw RFC-822 message into a set of lower-cased presence tokens.

    Never raises, whatever the input: broken MIME, unknown charsets and bad transfer encodings
    degrade to fewer or noisier tokens, never to an exception.

    Parameters
    ----------
    raw
        The message as delivered, headers included. An mbox ``From `` separator line is
        ignored. Pass ``bytes`` when you have them: 8-bit parts are then decoded with the
        charset each part declares rather than whatever decoding produced the ``str``.

    Returns
    -------
    frozenset[str]
        Tokens of these kinds:

        * body words (text/plain and text/html parts): 2 to 40 characters of letters,
          digits, ``$``, ``!`` and inner apostrophes; longer ones become
          ``skip:<first char>:<length rounded down to 10>``;
        * ``url:<host>`` and ``url:<parent domain>`` for every link (``url:ip`` for numeric
          hosts), ``email:<domain>`` for addresses in the body;
        * ``html:<tag>`` for a few markup signals (``html:img``, ``html:a-href``,
          ``html:font``, ...);
        * header tokens: ``subject:<word>``, ``from:<word>`` and ``from:<domain>``,
          ``to:``/``cc:``/``reply-to:``/``message-id:`` domains, ``x-mailer:<word>``,
          ``received:<host>`` and its parent domains plus a single ``received:ip`` flag;
        * structure: ``content-type:<type>`` and ``charset:<name>`` for every part,
          ``attachment:<type>`` and ``filename-ext:<ext>`` for attachments (whose bytes are
          not read).

    Examples
    --------
    >>> raw = (
    ...     "From: Deals <offers@promo.example.com>\\n"
    ...     "Subject: =?iso-8859-1?q?FREE_money!!!?=\\n"
    ...     "Content-Type: text/html; charset=iso-8859-1\\n"
    ...     "\\n"
    ...     '<p>Click <a href="http://win.example.net/x">here</a><img src="cid:1"></p>'
    ... )
    >>> tokens = tokenize_email(raw)
    >>> sorted(t for t in tokens if t.startswith(("subject:", "from:", "url:", "html:")))
    ['from:deals', 'from:example.com', 'from:promo.example.com', 'html:a-href', 'html:img',
     'subject:free', 'subject:money!!!', 'url:example.net', 'url:win.example.net']
    >>> {"click", "here", "charset:iso-8859-1", "content-type:text/html"} <= tokens
    True
    """
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
