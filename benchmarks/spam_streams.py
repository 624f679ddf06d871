"""The SpamAssassin stream under both event models, as the spam benchmarks read it.

Tokens from the raw bytes, sorted (a frozenset's order follows the string hash seed, and with it
which tokens become candidates and how ties break); ``"bernoulli"``: one binary token attribute
per token, ``{token: True}``; ``"text"``: one text attribute, ``{"tokens": {token: 1}}``.
"""

from __future__ import annotations

from streamnb.datasets import Message, iter_spamassassin_stream
from streamnb.features import tokenize_email

__all__ = ["event_model_streams"]


def event_model_streams(limit: int | None = None
                        ) -> tuple[list[Message], dict[str, list[tuple[dict, str]]]]:
    """The first ``limit`` messages (all by default) and their ``{"bernoulli", "text"}``
    streams of ``(record, label)``."""
    messages = list(iter_spamassassin_stream())[:limit]
    tokens = [sorted(tokenize_email(m.raw)) for m in messages]
    return messages, {
        "bernoulli": [(dict.fromkeys(ts, True), m.label)
                      for ts, m in zip(tokens, messages, strict=True)],
        "text": [({"tokens": dict.fromkeys(ts, 1)}, m.label)
                 for ts, m in zip(tokens, messages, strict=True)],
    }
