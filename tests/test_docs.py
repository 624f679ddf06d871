"""The documents speak of the product, not of its development. (Their code blocks run as tests
of their own: conftest.py; their results tables are the results files':
tests/test_benchmark_tables.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


# Development history: work periods, issue numbers, commit hashes (hex words with a digit and a
# letter), "before this change".
HISTORY = re.compile(r"\bsessions? \d+|\bthis session\b|\bissue \d+|before this change"
                     r"|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", re.I)


DOCUMENTS = ["README.md", "CHANGELOG.md",
             *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("name", DOCUMENTS)
def test_no_development_history(name):
    text = (ROOT / name).read_text()
    hits = [m.group(0) for m in HISTORY.finditer(text)]
    assert not hits, f"{name}: {hits[:5]}"


# A change narrated instead of the product described: history belongs in CHANGELOG.md.
NARRATED = re.compile(r"\bno longer\b|\b(?:it|they) now\b|\b(?:script's|code's) first version\b"
                      r"|\b(?:previous|old) (?:tokeniser|version|code|implementation|schedule)\b"
                      r"|\bone-pass rewrite\b|\bbefore its [\w-]+ rewrite\b", re.I)


@pytest.mark.parametrize("name", [d for d in DOCUMENTS if d != "CHANGELOG.md"])
def test_no_narrated_change(name):
    text = (ROOT / name).read_text()
    hits = [m.group(0) for m in NARRATED.finditer(text)]
    assert not hits, f"{name}: {hits[:5]}"
