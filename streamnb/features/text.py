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

__all__ = ["is_email", "tokenize_text"]

_FIELD = re.compile(r"[!-9;-~]+:")
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
