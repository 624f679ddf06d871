"""Tokenise raw RFC-822 e-mail into a set of binary presence features.

The tokens follow the SpamBayes tradition: body words stay bare, header evidence is prefixed by
the field it came from (``subject:free`` is stronger evidence than ``free`` in the body), and
structure that spammers cannot hide (MIME types, charsets, link hosts, relay hosts) becomes
tokens of its own. Only presence matters, so the result is a ``frozenset``.

The message is read in one pass over its text, without the `email` object model or an HTML
parser: an entity's header block and the fields read are picked out in one scan, MIME parts
are cut at their boundary lines, only text parts are decoded (``binascii``; charsets with the
codec each part declares), and HTML is reduced to its visible text by tag stripping and
``html.unescape``. The scans over the most text (the header block, the words, the relay hosts
of the Received headers, the links' hosts and the visible text of HTML), the tokens of host
names and those of the header fields (all of them but the values that need decoding, which
are decoded here and read by the same rule, `field_tokens`) are C kernels with Python twins
(`streamnb.features.scan`). Every scan runs in time
linear in its input, and the work per message is bounded whatever the input (see
`_MAX_MESSAGE`, `_MAX_TEXT`, `_MAX_DEPTH`, `_MAX_PARTS`, `_MAX_HEADER`): about 6 times as
fast as the `email` + `html.parser` implementation it replaced, with the same kinds of tokens
(docs/benchmarks.md, "Tokeniser").
"""

from __future__ import annotations

import binascii
import html
import re
from functools import lru_cache

from streamnb.features.scan import (
    EMAIL_DOMAIN,
    WORD_FIELDS,
    email_words,
    field_tokens,
    header_fields,
    header_tokens,
    host_tokens,
    html_signals,
    html_text,
    url_hosts,
)

__all__ = ["tokenize_email"]

# Bounds on the work done per message, whatever the input. Characters after the first
# `_MAX_MESSAGE` are not read (SpamAssassin's largest message is 0.3 MB); at most `_MAX_TEXT`
# characters of decoded body text (HTML source included) are tokenised; MIME nesting deeper
# than `_MAX_DEPTH` levels and entities after the first `_MAX_PARTS` are not walked; a header
# field's value is read up to `_MAX_HEADER` characters.
_MAX_MESSAGE = 1 << 20
_MAX_TEXT = 256 * 1024
_MAX_DEPTH = 16
_MAX_PARTS = 256
_MAX_HEADER = 16 * 1024
# Boundary candidates ("\n--boundary" not followed by the end of the line) examined per
# multipart before its body is given up as cut short.
_MAX_DELIMITER_CANDIDATES = 4 * _MAX_PARTS

# Words of 2 to 40 characters of letters, digits, underscore, "$", "!" and inner apostrophes;
# longer ones as "skip:<first char>:<length rounded down to 10>" (a C kernel, or its twin).
_words = email_words
_ENCODED_WORD = re.compile(r"=\?([^?\s]*)\?([bBqQ])\?([^?\s]*)\?=")
_ENCODED_WORD_GAP = re.compile(r"(\?=)\s+(=\?)")
# name=, filename=, and their RFC 2231 forms (filename*=utf-8''a.pdf, filename*1*=...).
_FILENAME = re.compile(r"name(?:\*\d*)?\*?\s*=\s*\"?([^\";]*)", re.I)
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([^\"';\s]+)", re.I)
_BOUNDARY = re.compile(r"boundary\s*=\s*(?:\"([^\"]*)\"|([^;\s]+))", re.I)

# The tokens of the tags that are signals, and of links (html_signals: a C scan or its twin).
_HTML_SIGNAL_TOKEN = {
    tag: "html:" + tag for tag in ("img", "font", "form", "table", "iframe", "script", "embed")
} | {"a": "html:a-href"}

_UUENCODINGS = frozenset({"x-uuencode", "uuencode", "uue", "x-uue"})
_BASE64_GARBAGE = re.compile(r"[^A-Za-z0-9+/]")


def tokenize_email(raw: str | bytes) -> frozenset[str]:
    """Tokenise a raw RFC-822 message into a set of lower-cased presence tokens.

    Never raises, whatever the input: broken MIME, unknown charsets and bad transfer encodings
    degrade to fewer or noisier tokens, never to an exception. The work is bounded whatever
    the input: the first MiB of the message is read (Mi characters of a ``str``), at most
    256 Ki characters of body text are tokenised, each header field up to 16 Ki characters,
    and MIME nesting is walked 16 levels deep (at most 256 entities; preambles and
    epilogues are not read).

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

        * body words (text/plain and text/html parts; of HTML, the visible text: tags,
          comments, scripts and style sheets stripped, entities decoded): 2 to 40 characters
          of letters, digits, ``$``, ``!`` and inner apostrophes; longer ones become
          ``skip:<first char>:<length rounded down to 10>``;
        * ``url:<host>`` and ``url:<parent domain>`` for every link, in the text or in the
          HTML source (``url:ip`` for numeric hosts), ``email:<domain>`` for addresses in the
          body;
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
    if isinstance(raw, bytes):
        # Latin-1 maps each byte to one character: the structure is read on the str, and
        # the 8-bit text of a part is turned back into its bytes to be decoded with the
        # charset it declares.
        text = raw[:_MAX_MESSAGE].decode("latin-1")
        from_bytes = True
    else:
        text = raw[:_MAX_MESSAGE]
        if not text.isascii():
            # Lone surrogates would be mistaken for undecodable bytes downstream: replace them.
            text = text.encode("utf-8", "replace").decode("utf-8")
        from_bytes = False
    if text.startswith("From "):
        newline = text.find("\n")
        text = text[newline:] if newline >= 0 else "\n"  # the separator alone: empty
    else:
        text = "\n" + text  # every header block is searched from the newline before it
    return _Reader(text, from_bytes).tokens()


class _Reader:
    """One message: walks its entities, collects header and structure tokens and the text."""

    __slots__ = ("budget", "entities", "from_bytes", "header_charset", "sources", "text",
                 "token_set", "visible")

    def __init__(self, text: str, from_bytes: bool) -> None:
        self.text = text  # text[0] == "\n"; the message starts at 1
        self.from_bytes = from_bytes
        self.token_set: set[str] = set()
        self.visible: list[str] = []  # lower-cased text of the text parts: words, addresses
        self.sources: list[str] = []  # lower-cased text and HTML source: links
        self.budget = _MAX_TEXT
        self.entities = 0
        self.header_charset: str | None = None

    def tokens(self) -> frozenset[str]:
        tokens = self.token_set
        self.entity(1, len(self.text), 0, "text/plain", top=True)
        if self.visible:
            visible = self.visible[0] if len(self.visible) == 1 else " ".join(self.visible)
            _words(visible, tokens)
            if "@" in visible:
                tokens.update(map("email:".__add__, EMAIL_DOMAIN.findall(visible)))
            sources = self.sources[0] if len(self.sources) == 1 else " ".join(self.sources)
            _add_url_tokens(sources, tokens)
        return frozenset(tokens)

    def entity(self, start: int, end: int, depth: int, default_type: str,
               top: bool = False) -> None:
        """Tokens of the entity (headers and body) in text[start:end]; text[start - 1] is
        a newline."""
        self.entities += 1
        text = self.text
        # the header block and the fields read: a C scan, or its twin (two regexes)
        body, message_fields, fields = header_fields(text, start, end, _MAX_HEADER)
        if text.startswith("\n", body):
            body += 1
        elif text.startswith("\r\n", body):
            body += 2
        if top and message_fields:
            self.header_tokens(message_fields)

        tokens = self.token_set
        content_type = fields.get("content-type", "")
        type_name = content_type.partition(";")[0].strip().lower()
        if type_name.count("/") != 1 or not type_name.isascii():
            type_name = default_type
        maintype, _, subtype = type_name.partition("/")
        if depth >= _MAX_DEPTH and (maintype == "multipart" or type_name == "message/rfc822"):
            tokens.add("content-type:" + type_name)  # too deep: neither opened nor read
            return
        if maintype == "multipart":
            parts = self.multipart_parts(content_type, body, end)
            if parts is not None:  # a container: its type is evidence, its parts are read
                tokens.add("content-type:" + type_name)
                child_type = "message/rfc822" if subtype == "digest" else "text/plain"
                for part_start, part_end in parts:
                    if self.entities >= _MAX_PARTS:
                        break
                    self.entity(part_start, part_end, depth + 1, child_type)
                return
        if type_name == "message/rfc822":
            tokens.add("content-type:" + type_name)
            if body < end and text[body - 1] == "\n":
                self.entity(body, end, depth + 1, "text/plain")
            return
        tokens.add("content-type:" + type_name)
        charset = _charset(content_type)
        if charset:
            tokens.add("charset:" + charset)
        disposition = fields.get("content-disposition", "").lower()
        if maintype not in ("text", "multipart", "message") or "attachment" in disposition:
            # An attachment's bytes are an image, a document or an executable: its type and name
            # carry the evidence, its contents would only flood the vocabulary with noise.
            tokens.add("attachment:" + type_name)
            extension = _filename_extension(f"{content_type};{disposition}")
            if extension:
                tokens.add("filename-ext:" + extension)
            return
        if self.budget <= 0 or body >= end:
            return
        encoding = fields.get("content-transfer-encoding", "").strip().lower()
        part = self.part_text(body, end, encoding, charset)[: self.budget]
        self.budget -= len(part)
        part = part.lower()
        if subtype == "html":
            self.sources.append(part)
            self.visible.append(_html_visible_text(part, tokens))
        else:
            self.sources.append(part)
            self.visible.append(part)

    def multipart_parts(self, content_type: str, start: int, end: int
                        ) -> list[tuple[int, int]] | None:
        """The (start, end) of each part of a multipart body in text[start:end], or None when
        it has no boundary or none of its lines is one (the body is then read as text).

        A part ends before the newline of the next delimiter line (``--boundary``, then
        ``--`` for the last one and optional white space); without the closing delimiter the
        last part runs to the end. Preamble and epilogue are not read."""
        match = _BOUNDARY.search(content_type)
        boundary = (match.group(1) if match.group(1) is not None else match.group(2)).rstrip() \
            if match else ""
        if not boundary:
            return None
        text = self.text
        delimiter = "\n--" + boundary
        parts: list[tuple[int, int]] = []
        part_start = -1
        found = False
        candidates = 0
        position = text.find(delimiter, start - 1, end)
        while position >= 0 and candidates < _MAX_DELIMITER_CANDIDATES:
            after = position + len(delimiter)
            line_end = text.find("\n", after, end)
            if line_end < 0:
                line_end = end
            rest = text[after:line_end]
            closing = rest.startswith("--")
            if not (rest[2:] if closing else rest).strip():
                found = True
                if part_start >= 0:
                    parts.append((part_start, position))
                if closing or len(parts) >= _MAX_PARTS:
                    return parts
                part_start = line_end + 1
            else:
                candidates += 1
            if line_end >= end:
                break
            position = text.find(delimiter, line_end, end)
        if not found:
            return None
        if part_start >= 0 and part_start <= end:
            parts.append((part_start, end))  # the closing delimiter is missing
        return parts

    def part_text(self, start: int, end: int, encoding: str, charset: str | None) -> str:
        # No more than the text budget is decoded (quoted-printable takes up to 3 characters
        # per byte, each byte up to one character).
        body = self.text[start:min(end, start + 3 * self.budget + 4)]
        if encoding == "base64":
            data = _base64_decode(body)
        elif encoding == "quoted-printable":
            if not body.isascii():
                body = body.encode("latin-1" if self.from_bytes else "utf-8", "replace")
            data = binascii.a2b_qp(body)
        elif encoding in _UUENCODINGS:
            data = _uudecode(body)
        elif self.from_bytes and not body.isascii():
            data = body.encode("latin-1")  # the part's own 8-bit bytes
        else:
            return body
        return _decode(data, charset)

    def header_tokens(self, fields: list[tuple[str, str]]) -> None:
        # The relay chain repeats the same hosts: the distinct names of all Received headers
        # are collected at once. Their addresses are noise as words; one token says they were
        # there (received:ip, from each address: the set keeps one). The fields that need
        # decoding come back, to be decoded here.
        tokens = self.token_set
        for field, value in header_tokens(fields, tokens):
            if field in WORD_FIELDS:  # words, their values decoded first
                if self.from_bytes and not value.isascii():
                    # Raw 8-bit headers are written in the charset of the body, as mail clients
                    # assume: the first charset the message declares.
                    value = _decode(value.encode("latin-1"), self.first_charset())
                value = _decode_encoded_words(value)
            field_tokens(field, value.lower(), tokens)

    def first_charset(self) -> str | None:
        if self.header_charset is None:
            match = _CHARSET.search(self.text)
            self.header_charset = match.group(1).lower() if match else ""
        return self.header_charset or None


def _charset(content_type: str) -> str | None:
    """The lower-cased ``charset`` parameter of a Content-Type value, if any."""
    if "harset" not in content_type and "HARSET" not in content_type:
        return None
    match = _CHARSET.search(content_type, content_type.find(";") + 1)
    if not match or not match.group(1).isascii():
        return None
    return match.group(1).lower()


def _filename_extension(parameters: str) -> str | None:
    """The extension of the last ``name``/``filename`` parameter (RFC 2231 forms included)."""
    names = _FILENAME.findall(parameters)
    if not names or "." not in names[-1]:
        return None
    extension = names[-1].rsplit(".", 1)[1].strip().lower()
    return extension if extension.isalnum() and len(extension) <= 10 else None


def _base64_decode(body: str) -> bytes:
    if not body.isascii():
        body = body.encode("ascii", "ignore").decode("ascii")
    try:
        return binascii.a2b_base64(body)
    except binascii.Error:
        # Bad padding or a cut-off last group: decode the complete groups of 4.
        data = _BASE64_GARBAGE.sub("", body.partition("=")[0])
        try:
            return binascii.a2b_base64(data[: len(data) // 4 * 4])
        except binascii.Error:  # pragma: no cover - complete groups always decode
            return b""


def _uudecode(body: str) -> bytes:
    """The data lines between ``begin`` and ``end`` (lines that do not decode are skipped)."""
    chunks = []
    lines = body.splitlines()
    inside = False
    for line in lines:
        if not inside:
            inside = line.startswith("begin ")
            continue
        if line.strip() == "end":
            break
        try:
            chunks.append(binascii.a2b_uu(line.encode("latin-1", "replace")))
        except binascii.Error:
            continue
    return b"".join(chunks)


@lru_cache(maxsize=256)
def _codec(charset: str) -> str | None:
    """``charset`` if Python has a text codec by that name, else None (cached: an unknown name
    costs a failed import each time it is looked up)."""
    name = charset.strip("\"' ")
    try:
        b"".decode(name)
    except (LookupError, ValueError, TypeError):
        # Unknown names ("default_charset", "3dwindows-1252") and codecs that are not text
        # encodings (rot13, base64).
        return None
    return name


def _decode(data: bytes, charset: str | None) -> str:
    codec = _codec(charset) if charset else None
    if codec:
        try:
            return data.decode(codec, "replace")
        except (UnicodeError, LookupError, ValueError, TypeError):
            pass  # codecs that refuse errors="replace" (idna, punycode): the guesses below
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
            data = binascii.a2b_qp(payload, header=True)
    except ValueError:  # binascii.Error and non-ASCII payloads alike
        return match.group()
    return _decode(data, charset.partition("*")[0])  # drop an RFC 2231 language suffix


def _html_visible_text(source: str, tokens: set[str]) -> str:
    """The visible text of lower-cased HTML; adds its tag signals to `tokens`."""
    if "<" not in source:
        return html.unescape(source) if "&" in source else source
    tokens.update(map(_HTML_SIGNAL_TOKEN.__getitem__, html_signals(source)))
    # Comments, scripts and style sheets removed, block tags ("<p>", "<td>", ...: a browser
    # starts a new line) replaced by a space, other tags removed ("V<b></b>iagra" is one word):
    # a C kernel, or its twin (streamnb._accel.kernels).
    visible = html_text(source)
    return html.unescape(visible) if "&" in visible else visible


def _add_url_tokens(text: str, tokens: set[str]) -> None:
    # the links' hosts, then their tokens: two C kernels, or their twins
    host_tokens("url:", url_hosts(text), tokens)
