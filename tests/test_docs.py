"""The documents: README's results table is the one its results file gives, and README and
docs/ speak of the product, not of its development. (Their code blocks run as tests of their
own: conftest.py.)"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from benchmark_scripts import load_script

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "spam_operating_points.json"


@pytest.fixture(scope="module")
def operating_points():
    yield load_script("spam_operating_points")
    del sys.modules["spam_operating_points"]


def _readme_table() -> str:
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"<!-- results: spam_operating_points -->\n(.*?)\n<!-- end results -->",
                      readme, re.S)
    assert found, "README.md lost the markers around its results table"
    return found.group(1)


def test_readme_table_is_the_results_file_table(operating_points):
    results = json.loads(RESULTS.read_text())
    assert _readme_table() == operating_points.table(results)
    # the file says how, where and when it was measured, and covers every system on both corpora
    assert results["command"].startswith("python benchmarks/spam_operating_points.py run")
    assert results["machine"] and re.fullmatch(r"\d{4}-\d\d-\d\d", results["date"])
    for corpus in ("spamassassin", "sms"):
        assert set(results["corpora"][corpus]["systems"]) == set(results["systems"])


def test_operating_points_are_the_best_roc_point_within_the_ham_loss(operating_points):
    # 1,000 ham scored 0..999 and 10 spam: 5 above every ham, 5 among the top ham scores
    labels = ["ham"] * 1000 + ["spam"] * 10
    scores = [float(i) for i in range(1000)] + [2000.0] * 5 + [998.5, 995.5, 989.0, 980.0, 1.0]
    points = operating_points.operating_points(labels, scores)
    # 0.1 % of 1,000 ham is one ham: the threshold may pass ham 999, and 998.5 is then caught
    # too; 1 % is ten ham (990-999): 995.5 is caught as well, not 989.0 (tied with an
    # eleventh ham) nor those below
    assert points["spam_missed_percent"] == {"0.1": 40.0, "1.0": 30.0}
    # ham above each spam (a tie counts half): 1 + 4 + 10.5 + 19.5 + 998.5 of 10 x 1,000 pairs
    assert points["one_minus_roca_percent"] == pytest.approx(10.335)


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
