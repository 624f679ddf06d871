"""Regenerate the docs' results tables from the results files in benchmarks/results/.

Every Markdown file of the documentation (README.md and docs/**/*.md) may hold blocks
``<!-- table:NAME.TABLE -->`` … ``<!-- /table:NAME.TABLE -->``: the block is replaced by the
table ``TABLE`` of ``benchmarks/results/NAME.json``, under one line giving the date, the
command and the machine of that file. Run ``python benchmarks/tables.py`` after a benchmark
wrote its results; ``--check`` changes nothing and exits 1 when a table is out of date (the test
suite checks the same).
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


def documents(root: Path = ROOT) -> Iterator[Path]:
    """The Markdown files that may hold tables."""
    if (root / "README.md").exists():
        yield root / "README.md"
    yield from sorted((root / "docs").rglob("*.md"))


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
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
