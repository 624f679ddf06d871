"""Tokenisers that turn e-mail and SMS text into binary token attributes, and their river
transformers; discretisers of numeric attributes."""

from __future__ import annotations

from .discretize import EqualFrequencyDiscretizer, MDLDiscretizer
from .email import tokenize_email
from .sms import tokenize_sms
from .text import is_email, not_a_message, tokenize_text
from .transformers import EmailTokens, SMSTokens

__all__ = ["EmailTokens", "EqualFrequencyDiscretizer", "MDLDiscretizer", "SMSTokens",
           "is_email", "not_a_message", "tokenize_email", "tokenize_sms", "tokenize_text"]
