"""Tokenisers that turn e-mail and SMS text into binary token attributes, and their river
transformers; discretisers of numeric attributes.

The names below are imported when first used (PEP 562), as ``streamnb``'s: the spam filter,
which ``streamnb score`` loads once per message, imports the tokenisers alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from streamnb._lazy import lazy_names

# each public name: the module it is imported from
_SOURCES = {
    **dict.fromkeys(("EqualFrequencyDiscretizer", "MDLDiscretizer"),
                    "streamnb.features.discretize"),
    "tokenize_email": "streamnb.features.email",
    "tokenize_sms": "streamnb.features.sms",
    **dict.fromkeys(("is_email", "not_a_message", "tokenize_text"), "streamnb.features.text"),
    **dict.fromkeys(("EmailTokens", "SMSTokens"), "streamnb.features.transformers"),
}

__all__ = ["EmailTokens", "EqualFrequencyDiscretizer", "MDLDiscretizer", "SMSTokens",
           "is_email", "not_a_message", "tokenize_email", "tokenize_sms", "tokenize_text"]

__getattr__, __dir__ = lazy_names(__name__, globals(), _SOURCES, __all__)

if TYPE_CHECKING:
    from .discretize import EqualFrequencyDiscretizer, MDLDiscretizer
    from .email import tokenize_email
    from .sms import tokenize_sms
    from .text import is_email, not_a_message, tokenize_text
    from .transformers import EmailTokens, SMSTokens
