"""benchmarks/spam_ham_errors.py on the stream's first 400 messages: the first three ham of
SpamAssassin in time order come after 134 spam and are called spam, each from a sender domain
the filter had never seen (docs/spam.md, issue 12)."""

from __future__ import annotations

import pytest
from benchmark_scripts import load_script

pytestmark = pytest.mark.slow


def test_the_first_ham_errors_come_from_unseen_senders():
    script = load_script("spam_ham_errors")
    errors, n = script.ham_errors(limit=400)
    assert n == 400
    first = [e for e in errors if e.position < 140]
    assert [e.position for e in first] == [134, 135, 138]
    for e in first:
        assert e.group == "hard-ham-1" and e.score > 3.0
        assert e.domains and all(h == s == 0.0 for h, s in e.domains.values())
