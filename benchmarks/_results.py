"""Results files: what a benchmark measured, with the command, the machine and the date, once.

A benchmark whose numbers the docs quote builds its tables with `table` and writes them with
`write` to ``benchmarks/results/<name>.json``; ``python benchmarks/tables.py`` renders every
table into the docs between ``<!-- table:<name>.<table> -->`` and ``<!-- /table:<name>.<table> -->``
(`render` does the rendering, for the script's own printout too). A file holds::

    {"benchmark": name, "command": "python benchmarks/…", "date": "YYYY-MM-DD",
     "machine": {"cpu": …, "cores": …, "python": …, "numpy": …, …},
     "notes": "…",  # e.g. which options limited the run
     "tables": {table: {"columns": [{"key", "label", "format"}…], "rows": [{key: value}…]}},
     "parts": [{"command", "date", "load average", "notes"}…]}  # only in a merged file

A benchmark too slow to run whole at once runs in parts, each with ``--merge`` (`write` with
``merge_key``): a part's rows replace those of the file with the same key and its command is
added to the file's, so the file's ``command`` (the parts' commands joined by ``&&``) still
reproduces every row.

Values are stored unrounded (JSON numbers; ±∞ and NaN as strings); a column's ``format`` is a
`format` spec applied when the table is rendered.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"

#: Libraries whose versions can move a benchmark's numbers.
LIBRARIES = ("streamnb", "numpy", "scipy", "river", "scikit-learn", "pandas", "pyarrow",
             "confluent-kafka")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine(extra: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The CPU, core count, OS, Python and the versions of `LIBRARIES` that are installed,
    plus ``extra`` (e.g. an external tool's version), and the load average (1, 5, 15 min) when
    the results are written."""
    info: dict[str, Any] = {"cpu": cpu_model(), "cores": os.cpu_count(),
                            "os": f"{platform.system()} {platform.release()}",
                            "python": platform.python_version()}
    for name in LIBRARIES:
        try:
            info[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    info.update(extra or {})
    if hasattr(os, "getloadavg"):  # other jobs on the machine move the rates
        info["load average"] = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    return info


def column(key: str, label: str | None = None, fmt: str = "") -> dict[str, str]:
    """One column of a table: the row key, its heading and its `format` spec."""
    return {"key": key, "label": label if label is not None else key, "format": fmt}


def table(columns: Sequence[Mapping[str, str]], rows: Iterable[Mapping[str, Any]],
          title: str = "") -> dict[str, Any]:
    return {"title": title, "columns": [dict(c) for c in columns],
            "rows": [{c["key"]: _plain(row.get(c["key"])) for c in columns} for row in rows]}


def _plain(value: Any) -> Any:
    """A JSON value: numpy scalars as Python numbers, non-finite floats as strings."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "inf", "-inf", "nan": JSON has no literal for them
    return value


def command(argv: Sequence[str] | None = None, script: str | None = None) -> str:
    """The command line that reproduces a run, from the repository root."""
    script = script or sys.argv[0]
    path = Path(script).resolve()
    try:
        shown = path.relative_to(RESULTS.parent.parent).as_posix()
    except ValueError:
        shown = path.name
    args = sys.argv[1:] if argv is None else list(argv)
    return shlex.join(["python", shown, *args])


def write(name: str, tables: Mapping[str, Mapping[str, Any]], *, argv: Sequence[str] | None,
          script: str, notes: str = "", extra_machine: Mapping[str, str] | None = None,
          path: str | Path | None = None, merge_key: Sequence[str] | None = None) -> Path:
    """Write ``benchmarks/results/<name>.json`` (or ``path``); returns where it went.

    With ``merge_key`` (row keys) and an existing file, the file gains this run as one more
    part (see `merge`); ``notes`` then describe the merged tables."""
    target = Path(path) if path is not None else RESULTS / f"{name}.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    record = {"benchmark": name, "command": command(argv, script),
              "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
              "machine": machine(extra_machine), "notes": notes, "tables": dict(tables)}
    if merge_key is not None and target.exists():
        record = merge(json.loads(target.read_text()), record, merge_key)
    elif merge_key:  # the first part: which rows it wrote, for a later part to replace
        record["parts"] = [_part(record, merge_key)]
    target.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return target


def _part(record: Mapping[str, Any], key: Sequence[str] = ()) -> dict[str, Any]:
    """One run of a merged file; with ``key``, the keys of the rows it wrote (a part whose
    rows a later part all replaces is dropped: its command no longer made the file)."""
    part = {"command": record["command"], "date": record["date"],
            "load average": record["machine"].get("load average", ""),
            "notes": record.get("notes", "")}
    if key:
        part["rows"] = {name: [[row.get(k) for k in key] for row in table["rows"]]
                        for name, table in record["tables"].items()}
    return part


def _run_of(command: str) -> list[str]:
    """A part's command without ``--merge``: what it measures, whether or not it was merged."""
    return [word for word in shlex.split(command) if word != "--merge"]


def _replaced(part: Mapping[str, Any], run: Mapping[str, Any]) -> bool:
    """Whether every row ``part`` wrote is one ``run`` writes again (parts that say)."""
    mine, theirs = part.get("rows"), run.get("rows")
    if not mine or not theirs:
        return False
    return all(table in theirs and {tuple(k) for k in keys} <= {tuple(k) for k in theirs[table]}
               for table, keys in mine.items())


def merge(old: Mapping[str, Any], new: Mapping[str, Any], key: Sequence[str]
          ) -> dict[str, Any]:
    """``old`` with the rows of ``new``: a row of ``new`` replaces the row of ``old`` with the
    same values of ``key`` (in its place), the others are appended (an empty ``key``: a table
    of ``new`` replaces ``old``'s whole); tables only ``old`` has stay. The result's ``parts``
    list both records' parts and its ``command`` joins theirs."""
    tables = {name: dict(t) for name, t in old["tables"].items()}
    for name, tab in new["tables"].items():
        if name not in tables or not key:
            tables[name] = dict(tab)
            continue
        if [c["key"] for c in tables[name]["columns"]] != [c["key"] for c in tab["columns"]]:
            raise SystemExit(f"cannot merge table {name!r} of {old['benchmark']}: the columns "
                             "differ; run the benchmark whole")
        rows = list(tables[name]["rows"])
        where = {tuple(r.get(k) for k in key): i for i, r in enumerate(rows)}
        for row in tab["rows"]:
            at = where.get(tuple(row.get(k) for k in key))
            if at is None:
                rows.append(row)
            else:
                rows[at] = row
        tables[name] = {**tables[name], "rows": rows}
    # a part run again (with or without --merge) replaces its earlier run in its place, so the
    # joined command still runs the parts in the order that gives the file's row order
    parts, run = list(old.get("parts", [_part(old)])), _part(new, key)
    same = [i for i, p in enumerate(parts) if _run_of(p["command"]) == _run_of(run["command"])
            or _replaced(p, run)]
    if same:
        parts[same[0]] = run
        parts = [p for i, p in enumerate(parts) if i not in same[1:]]
    else:
        parts.append(run)
    return {**new, "command": " && ".join(p["command"] for p in parts),
            "date": max(p["date"] for p in parts), "tables": tables, "parts": parts}


def add_arguments(parser: argparse.ArgumentParser, name: str, merge: bool = False) -> None:
    """``--results PATH`` (default ``benchmarks/results/<name>.json``) and ``--no-results``;
    with ``merge``, also ``--merge`` (add this run's rows to the file as one more part)."""
    parser.add_argument("--results", default=str(RESULTS / f"{name}.json"),
                        help="the results file the docs' tables come from (default: %(default)s)")
    parser.add_argument("--no-results", action="store_true", help="write no results file")
    if merge:
        parser.add_argument("--merge", action="store_true",
                            help="add this run's rows to the results file (replacing rows of "
                                 "the same key) and its command to the file's commands")


def write_from_args(args: argparse.Namespace, name: str,
                    tables: Mapping[str, Mapping[str, Any]], *, argv: Sequence[str] | None,
                    script: str, notes: str = "",
                    extra_machine: Mapping[str, str] | None = None,
                    merge_key: Sequence[str] | None = None) -> None:
    """`write` as the options of `add_arguments` say, telling stderr where the file went
    (``merge_key``: the row keys a ``--merge`` run replaces rows by)."""
    if not args.no_results:
        path = write(name, tables, argv=argv, script=script, notes=notes,
                     extra_machine=extra_machine, path=args.results,
                     merge_key=merge_key if getattr(args, "merge", False) else None)
        print(f"results: {path}", file=sys.stderr)


def load(name: str, directory: Path = RESULTS) -> dict[str, Any]:
    return json.loads((directory / f"{name}.json").read_text())


# -- rendering ------------------------------------------------------------------------------------
_UNESCAPED_BAR = re.compile(r"(?<!\\)\|")


def cell(value: Any, fmt: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        try:
            number = float(value)  # "inf"/"nan" as stored
        except ValueError:
            return _UNESCAPED_BAR.sub(r"\\|", value)  # a bar inside a cell
        if math.isnan(number):
            return "–"
        return "∞" if number > 0 else "−∞"
    if isinstance(value, bool):
        return str(value)
    return format(value, fmt)


def render(tab: Mapping[str, Any]) -> str:
    """A Markdown table."""
    columns = tab["columns"]
    lines = ["| " + " | ".join(c["label"] for c in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    return "\n".join(lines + [render_row(columns, row) for row in tab["rows"]])


def render_row(columns: Sequence[Mapping[str, str]], row: Mapping[str, Any]) -> str:
    return "| " + " | ".join(cell(_plain(row.get(c["key"])), c["format"]) for c in columns) + " |"


def provenance(record: Mapping[str, Any]) -> str:
    """One line: date, machine and the command of a results file."""
    m = record["machine"]
    shown_apart = ("cpu", "cores", "os", "python", "load average")
    libs = ", ".join(f"{k} {m[k]}" for k in m if k not in shown_apart)
    load = f", load average {m['load average']}" if "load average" in m else ""
    if record.get("parts"):  # a merged file: each part ran under its own load
        loads = [p["load average"] or "not recorded" for p in record["parts"]]
        load = ", load average " + " and ".join(loads)
    line = (f"*Measured {record['date']} with `{record['command']}` on {m['cpu']} "
            f"({m['cores']} cores{load}), Python {m['python']}, {libs}.*")
    if record.get("notes"):
        line += f" *{record['notes']}*"
    return line
