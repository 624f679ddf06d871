"""Regenerate the docs' results tables from the results files in benchmarks/results/.

Every Markdown file of the documentation (README.md and docs/**/*.md), and benchmarks/*.md,
may hold blocks
``<!-- table:NAME.TABLE -->`` … ``<!-- /table:NAME.TABLE -->``: the block is replaced by the
table ``TABLE`` of ``benchmarks/results/NAME.json``, under one line giving the date, the
command and the machine of that file. Run ``python benchmarks/tables.py`` after a benchmark
wrote its results; ``--check`` changes nothing and exits 1 when a table is out of date (the test
suite checks the same).

A measurement carries its date only there: a date outside a table block (``2026-11-23``,
``23 November 2026``, ``Nov 23, 2026``) marks a number typed by hand, and ``--check`` reports
it too, unless the line is in `UNDATED` (a date that is not a measurement's).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import _results

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- table:(?P<name>[\w-]+)\.(?P<table>[\w-]+) -->\n)(?P<body>.*?)"
                   r"(<!-- /table:(?P=name)\.(?P=table) -->)", re.S)
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
DATE = re.compile(rf"\b(?:(?:19|20)\d\d-[01]\d-[0-3]\d|\d{{1,2}} {_MONTH} (?:19|20)\d\d|"
                  rf"{_MONTH} \d{{1,2}}, (?:19|20)\d\d)\b")
#: (document, a fragment of the line): dates outside the table blocks that are not the date of
#: a measurement, or that a page's owner has still to move into a results file.
UNDATED: tuple[tuple[str, str], ...] = (
    ("docs/accuracy.md", "2001-06-25 … 2002-12-04"),  # the corpus's time span
)


def documents(root: Path = ROOT) -> Iterator[Path]:
    """The Markdown files that may hold tables."""
    if (root / "README.md").exists():
        yield root / "README.md"
    yield from sorted((root / "docs").rglob("*.md"))
    # development records kept beside the benchmarks (not in the documentation site)
    yield from sorted((root / "benchmarks").glob("*.md"))


def block(name: str, table: str, results: Path, where: str = "") -> str:
    """What goes between the markers of ``NAME.TABLE``."""
    path = results / f"{name}.json"
    if not path.exists():
        raise SystemExit(f"{where}table {name}.{table}: no results file {path}")
    record = _results.load(name, results)
    if table not in record["tables"]:
        raise SystemExit(f"{where}table {name}.{table}: {path} has no table {table!r} "
                         f"(it has {', '.join(record['tables'])})")
    return f"\n{_results.provenance(record)}\n\n{_results.render(record['tables'][table])}\n\n"


def generate(text: str, results: Path = _results.RESULTS, where: str = "") -> str:
    """``text`` with every table block filled from ``results``."""
    return BLOCK.sub(lambda m: m.group(1) + block(m["name"], m["table"], results, where)
                     + m.group(5), text)


def dated_lines(text: str, document: str = "") -> list[tuple[int, str]]:
    """The lines (number, text) of ``text`` outside the table blocks that carry a date and are
    not in `UNDATED` for ``document`` (its path from the repository root)."""
    allowed = [fragment for doc, fragment in UNDATED if doc == document]
    inside = [(m.start(), m.end()) for m in BLOCK.finditer(text)]
    found, offset = [], 0
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        start, offset = offset, offset + len(line)
        if any(a <= start < b for a, b in inside) or not DATE.search(line):
            continue
        if not any(fragment in line for fragment in allowed):
            found.append((number, line.rstrip("\n")))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a table is out of date")
    args = parser.parse_args(argv)
    stale = []
    for path in documents():
        text = path.read_text()
        new = generate(text, where=f"{path.relative_to(ROOT)}: ")
        if new != text:
            stale.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(new)
    verb = "out of date" if args.check else "updated"
    for path in stale:
        print(f"{verb}: {path}", file=sys.stderr)
    dated = [(path, *line) for path in documents() for line in dated_lines(
        path.read_text(), path.relative_to(ROOT).as_posix())]
    for path, number, line in dated:
        print(f"{path.relative_to(ROOT)}:{number}: a date outside a results table: {line}",
              file=sys.stderr)
    return 1 if (stale and args.check) or dated else 0


if __name__ == "__main__":
    sys.exit(main())
