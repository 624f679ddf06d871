"""Raw text of either kind a spam filter meets: an RFC-822 e-mail or a short text (an SMS).

A message is read as e-mail when it opens with a header field (``Name: value``, RFC 5322
field-name characters; an mbox ``From `` separator line before it is allowed) followed by
another header line or by the blank line that ends the header block; anything else is a short
text. A short text that
happens to start with ``Word:`` ("Note: call me") has no second header line and stays a short
text.
"""

from __future__ import annotations

import re

from .email import tokenize_email
from .sms import tokenize_sms

__all__ = ["is_email", "not_a_message", "tokenize_text"]

_FIELD = re.compile(r"[!-9;-~]+:")
# C0 controls that text does not hold (tab, line breaks, form feed and ESC, which ISO-2022
# encodings use, are text), and DEL
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]")
# the largest share of such bytes in a SpamAssassin corpus message is 0.8 %; random bytes have
# 10.5 %, executables, images and archives 10-50 %
_MOST_CONTROL = 0.05
_HEADER_LINES_LOOKED_AT = 50
# Characters of the head split into lines first, then more: two lines decide most messages,
# and splitting 8 KiB into lines costs more than the rest of the test.
_FIRST_LOOKS = (256, 1024)


def is_email(text: str | bytes) -> bool:
    """Whether ``text`` is an RFC-822 message (headers first) rather than a short text.

    >>> is_email("From: a@example.com\\nSubject: hi\\n\\nHello")
    True
    >>> is_email("Note: call me when you land")
    False
    >>> is_email("From tomorrow onwards eve 6 to 3 work.")
    False
    """
    # bytes are decoded as Latin-1 (a character a byte), only as far as they are looked at
    head = text[:8192].lstrip(b"\r\n" if isinstance(text, bytes) else "\r\n")
    for look in _FIRST_LOOKS:
        if len(head) <= look:
            break
        # the lines of a prefix, its last (maybe cut) one left out; a decision on them is the
        # whole head's
        decided = _decision(_latin1(head[:look]).splitlines()[:-1], complete=False)
        if decided is not None:
            return decided
    return bool(_decision(_latin1(head).splitlines(), complete=True))


def not_a_message(text: str | bytes) -> str | None:
    """Why ``text`` is plainly not a message (an e-mail or a short text), or None if it is one.

    A message is refused when it is empty (or white space only), or when it is binary data: it
    holds a NUL byte (RFC 5322 allows none in a message; executables, images and archives all
    have them, as git and grep's binary-file test assumes) or more than 5 % of its bytes are
    control characters. Anything else is a message however it is encoded: 8-bit text in an
    undeclared charset, broken MIME and stray control characters are common in spam and still
    get a score.

    >>> not_a_message("Subject: hi\\n\\nWin a prize \\xe9\\xe8!") is None
    True
    >>> not_a_message(b" \\n")
    'empty message'
    >>> not_a_message(b"\\x7fELF\\x02\\x01\\x01\\x00")
    'binary data (a NUL byte at offset 7), not a message'
    """
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    if not data.strip():
        return "empty message"
    nul = data.find(0)
    if nul >= 0:
        return f"binary data (a NUL byte at offset {nul}), not a message"
    control = len(_CONTROL.findall(data))
    if control > _MOST_CONTROL * len(data):
        return (f"binary data ({100 * control / len(data):.0f} % of its bytes control "
                "characters), not a message")
    return None


def _latin1(text: str | bytes) -> str:
    return text.decode("latin-1") if isinstance(text, bytes) else text


def _decision(lines: list[str], complete: bool) -> bool | None:
    """``is_email`` on the first lines of a text's head; None where lines that are not
    ``complete`` (the head goes on) end before the decision."""
    undecided = False if complete else None
    if not lines:
        return undecided
    if lines[0].startswith("From "):  # an mbox separator must be followed by a header
        lines = lines[1:]
        if not lines:
            return undecided
    if not _FIELD.match(lines[0]):
        return False
    lines = lines[1:]
    if not lines:
        return undecided
    for line in lines[:_HEADER_LINES_LOOKED_AT]:
        if not line.strip():
            return True  # the blank line after a header block
        if _FIELD.match(line):
            return True
        if line[0] not in " \t":  # neither a header nor a folded continuation
            return False
    return True if complete or len(lines) >= _HEADER_LINES_LOOKED_AT else None


def tokenize_text(text: str | bytes) -> frozenset[str]:
    """Presence tokens of an e-mail (`tokenize_email`) or a short text (`tokenize_sms`).

    Examples
    --------
    >>> sorted(tokenize_text("ok i'll c u l8r"))[:3]
    ['c', 'caps:none', "i'll"]
    >>> "subject:hello" in tokenize_text("Subject: hello\\nFrom: a@b.org\\n\\nHi")
    True
    """
    if is_email(text):
        return tokenize_email(text)
    return tokenize_sms(text.decode("utf-8", "replace") if isinstance(text, bytes) else text)
