"""Tokenise SMS text into a set of binary presence features.

SMS spam differs from e-mail spam: no headers, 160 characters, and the evidence is in shapes
rather than vocabulary — a 5-digit short code, an 11-digit premium-rate number, a "£" prize,
"!!!", a shouted "FREE". Digits are therefore replaced by their shape, and a few whole-message
shape flags are added.
"""

from __future__ import annotations

import re

from streamnb.features.scan import host_tokens

from .email import _add_url_tokens

__all__ = ["tokenize_sms"]

# Letters only (digits are shapes, see _NUMBER), with inner apostrophes ("don't", "i'll").
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")
_NUMBER = re.compile(r"\d+")
_CURRENCY = re.compile(r"[$£€¥₹]")
_EXCLAMATIONS = re.compile(r"!+")
# Bare domains ("getzed.co.uk", "txt82228.com"): restricted to the endings seen in SMS spam, as
# an open pattern would read "u.k" or "p.m" as host names.
_BARE_DOMAIN = re.compile(r"\b[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|biz|info|mobi|co\.uk|uk|tv)\b")
_LENGTH_BUCKETS = ((40, "len:0-39"), (80, "len:40-79"), (120, "len:80-119"), (160, "len:120-159"))


def tokenize_sms(text: str) -> frozenset[str]:
    """Tokenise an SMS message into a set of lower-cased presence tokens.

    Parameters
    ----------
    text
        The message body.

    Returns
    -------
    frozenset[str]
        Tokens of these kinds:

        * words: runs of letters (with inner apostrophes), single letters included ("u", "r"
          are evidence in SMS);
        * ``num:<n>digits`` for each run of digits ("87121" → ``num:5digits``);
        * ``currency:<symbol>`` for ``$ £ € ¥ ₹``;
        * ``url:<host>`` and ``url:<parent domain>`` for links and bare domains;
        * ``excl:1``, ``excl:2``, ``excl:3+`` for runs of "!";
        * ``caps:none``, ``caps:low``, ``caps:mid``, ``caps:high``: the share of words of two
          or more letters written in capitals (0, < 0.25, < 0.6, ≥ 0.6);
        * ``len:<range>``: the length in characters, in buckets of 40 up to the 160 of a
          single SMS (``len:0-39`` ... ``len:120-159``, ``len:160+``).

    Examples
    --------
    >>> sorted(tokenize_sms("WINNER!! Claim your £900 prize: call 09061701461 or www.win.co.uk"))
    ['call', 'caps:low', 'claim', 'co', 'currency:£', 'excl:2', 'len:40-79', 'num:11digits',
     'num:3digits', 'or', 'prize', 'uk', 'url:win.co.uk', 'url:www.win.co.uk', 'win', 'winner',
     'www', 'your']
    >>> sorted(tokenize_sms("ok i'll c u l8r"))
    ['c', 'caps:none', "i'll", 'l', 'len:0-39', 'num:1digits', 'ok', 'r', 'u']
    """
    lowered = text.lower()
    tokens = set(_WORD.findall(lowered))
    tokens.update(f"num:{len(number)}digits" for number in set(_NUMBER.findall(text)))
    tokens.update("currency:" + symbol for symbol in _CURRENCY.findall(text))
    for run in set(_EXCLAMATIONS.findall(text)):
        tokens.add("excl:3+" if len(run) >= 3 else f"excl:{len(run)}")
    _add_url_tokens(lowered, tokens)
    host_tokens("url:", _BARE_DOMAIN.findall(lowered), tokens)
    tokens.add(_capitals_flag(text))
    tokens.add(_length_flag(len(text)))
    return frozenset(tokens)


def _capitals_flag(text: str) -> str:
    words = [word for word in _WORD.findall(text) if len(word) > 1]
    shouted = sum(word.isupper() for word in words)
    if not shouted:
        return "caps:none"
    share = shouted / len(words)
    return "caps:low" if share < 0.25 else "caps:mid" if share < 0.6 else "caps:high"


def _length_flag(length: int) -> str:
    for limit, flag in _LENGTH_BUCKETS:
        if length < limit:
            return flag
    return "len:160+"
