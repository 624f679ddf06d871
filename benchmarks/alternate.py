"""Run benchmarks against two revisions of streamnb in alternation and compare their numbers.

``python benchmarks/alternate.py --old REV [--new REV] [--rounds R] BENCHMARK…`` checks both
revisions out with ``git worktree add`` into a temporary directory, installs each one's package
(C extensions built) with ``pip install --no-deps --target`` into a directory of its own, then
runs every benchmark R times on each, in the order old, new, new, old, old, new, … so that both
revisions see the same machine load on average, and writes
``benchmarks/results/alternated.json``: per benchmark and per measure, each revision's value
in every round, their medians and new / old, and whether the new one is worse beyond the
round-to-round spread (its best round worse than the old one's worst round).

Which script runs: the *new* revision's script, against both packages (``PYTHONPATH`` names
the package directory). Comparing two packages with one script measures the package and
nothing else: an old script would time other loops, other data or other settings, print other
tables and lack ``--results``, so its output would have to be parsed and matched by hand.
This works as long as the new script uses only public API that the old revision already had;
where it does not, the run on the old revision fails with the script's traceback and the
benchmark has no comparison (there is none to make: the old revision could not have done it).

Why an install and not the source tree on ``PYTHONPATH``: ``streamnb.consumers`` lives in
``consumers/`` (pyproject.toml's package-dir), so a source tree has no ``streamnb/consumers``
and the editable install's finder would serve the current one's instead; ``--target`` lays the
package out as installed, C extensions built in place.

A comparison is worthless if the old run silently imports the installed package instead:
every run goes through a launcher that prints where ``streamnb`` came from and, after the
script, checks that every ``streamnb`` module loaded came from the revision's directory; the
tool stops if either says otherwise.

Run in parts (one invocation per benchmark, each added to the results file with ``--merge``)
when the whole takes too long; ``--keep DIR`` keeps the checkouts and builds for the next part.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _results  # a sibling script, not a package

ROOT = Path(__file__).resolve().parent.parent
NAME = "alternated"


@dataclass(frozen=True)
class Measure:
    """Cells of one results table to compare: the rows (their label is the ``keys`` columns'
    values joined; ``rows``, a regex on it, keeps some), the value ``columns``, and which way
    is better."""

    table: str
    columns: tuple[str, ...]
    better: str  # "higher" or "lower"
    keys: tuple[str, ...] = ()  # default: the table's first column
    rows: str = ""


@dataclass(frozen=True)
class Benchmark:
    """A script of benchmarks/ with the options it runs with here and the cells compared."""

    script: str
    args: tuple[str, ...]
    measures: tuple[Measure, ...]


_HIGHER, _LOWER = "higher", "lower"

#: The benchmarks whose tables print speed: the options keep one run to about a minute on the
#: reference machine (the docs' defaults take several minutes each; ``--args`` changes them).
BENCHMARKS: dict[str, Benchmark] = {
    "bench_tan": Benchmark(
        "bench_tan.py", ("--n", "30000", "--pgmpy-n", "100", "--predict-n", "10000"),
        (Measure("tan", ("value",), _HIGHER, rows=r"^(learn_many|predict_proba_many)"),
         Measure("tan", ("value",), _LOWER, rows=r"^relearn"))),
    "bench_selective": Benchmark(
        "bench_selective.py", ("--quick",),
        (Measure("selection", ("info", "naive", "k2"), _LOWER, ("attributes",)),
         Measure("selection", ("total ratio", "eval ratio"), _HIGHER, ("attributes",)),
         Measure("relearn", ("SelectiveNB", "SelectiveTAN", "SelectiveBN (CB)"), _LOWER,
                 ("seen",)),
         Measure("relearn", ("rate",), _HIGHER, ("seen",)))),
    "bench_vocabulary": Benchmark(
        "bench_vocabulary.py", ("--sizes", "10000,100000", "--records", "1000"),
        (Measure("per_record", ("learn_one", "learn_many", "predict_proba_one",
                                "predict_proba_many", "prequential_many",
                                "prequential_encoded"), _LOWER),
         Measure("mixed", ("encoded twice", "encoded once"), _LOWER),
         Measure("mixed", ("ratio",), _HIGHER))),
    "bench_discriminant_one": Benchmark(
        "bench_discriminant_one.py", ("--n", "500", "--dims", "8", "--repeat", "1"),
        (Measure("one_by_one", ("records/s", "vs river"), _HIGHER, ("d", "model")),)),
    "continuous_vs_sklearn": Benchmark(
        "continuous_vs_sklearn.py", ("--datasets", "iris,wdbc", "--seeds", "1"),
        (Measure("pairs", ("learn ratio", "predict ratio"), _HIGHER, ("dataset", "pair")),)),
    "bench_service": Benchmark(
        "bench_service.py", ("--n", "2000", "--train", "1000", "--repeat", "1"),
        (Measure("whole_run", ("service", "ratio"), _HIGHER),
         Measure("steady_state", ("service", "ratio"), _HIGHER),
         Measure("cpu", ("ratio",), _HIGHER))),
    "bench_tokenizer": Benchmark(
        "bench_tokenizer.py", ("--repeat", "1", "--no-quality"),
        (Measure("ratios", ("CPU", "wall"), _HIGHER),)),
    "bench_poll": Benchmark(
        "bench_poll.py", ("--repeats", "3"),
        (Measure("poll_step", ("step", "classify", "learn"), _LOWER,
                 ("workload", "partitions")),)),
    "bench_naive_bayes": Benchmark(
        # river's BernoulliNB predicts in O(vocabulary): 20 records/s, so short windows
        "bench_naive_bayes.py", ("--n", "20000", "--repeat", "1", "--bernoulli-n", "300"),
        (Measure("ratios", ("measured",), _HIGHER),
         Measure("numpy_limit_ratios", ("measured",), _HIGHER))),
    "bench_spam_filter": Benchmark(
        "bench_spam_filter.py", ("--limit", "3000", "--repeat", "1"),
        (Measure("ratios", ("CPU", "wall"), _HIGHER),)),
}

#: Run by ``python -c`` with PYTHONPATH naming a revision's package directory: runs the
#: script as ``__main__`` with its own directory first on sys.path (as ``python script.py``
#: would, so its sibling imports work), says where streamnb came from, and exits 3 if any
#: streamnb module was loaded from elsewhere (an editable install's finder or the current
#: directory would otherwise take over silently).
LAUNCHER = """\
import os, runpy, sys
expected, script = os.path.realpath(sys.argv[1]), sys.argv[2]
sys.argv = sys.argv[2:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
import streamnb
print("alternate: streamnb from", os.path.realpath(streamnb.__file__), file=sys.stderr,
      flush=True)
try:
    runpy.run_path(script, run_name="__main__")
finally:
    stray = sorted(n for n, m in list(sys.modules.items())
                   if (n == "streamnb" or n.startswith("streamnb."))
                   and getattr(m, "__file__", None)
                   and not os.path.realpath(m.__file__).startswith(expected + os.sep))
    if stray:
        print("alternate: modules from outside", expected, ":", ", ".join(stray),
              file=sys.stderr, flush=True)
        os._exit(3)
"""
_FROM = re.compile(r"^alternate: streamnb from (.*)$", re.M)


class WrongPackage(RuntimeError):
    """A run imported streamnb from somewhere else than the revision's directory."""


@dataclass
class Side:
    """One revision: its name (``old``/``new``), the commit, and the directory holding its
    ``streamnb`` package."""

    name: str
    commit: str
    site: Path


@dataclass
class Cell:
    measure: str  # "table: row: column"
    better: str
    values: dict[str, list[float]] = field(default_factory=dict)  # side name -> per round


def order(rounds: int) -> list[tuple[int, str]]:
    """(round, side) in run order: old, new, new, old, old, new, …"""
    pairs = (("old", "new"), ("new", "old"))
    return [(r, side) for r in range(rounds) for side in pairs[r % 2]]


def run_once(side: Side, script: Path, args: Sequence[str], cwd: Path,
             log: Callable[[str], None] = print) -> dict[str, Any]:
    """One run of ``script`` on ``side``'s package; returns the results record it wrote."""
    results = cwd / f"{script.stem}-{side.name}.json"
    results.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(side.site)}
    command = [sys.executable, "-c", LAUNCHER, str(side.site), str(script), *args,
               "--results", str(results)]
    started = time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    where = _FROM.search(done.stderr)
    site = os.path.realpath(side.site)
    if where is None or not where.group(1).startswith(site + os.sep) or done.returncode == 3:
        found = where.group(1) if where else "nowhere (no launcher line)"
        raise WrongPackage(f"{script.name} on {side.name} ({side.commit}): streamnb came from "
                           f"{found}, not {site}\n{done.stderr[-2000:]}")
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} on {side.name} ({side.commit}) failed "
                           f"(exit {done.returncode}):\n{done.stderr[-4000:]}")
    log(f"  {script.name} on {side.name}: {seconds:.0f} s, streamnb from {where.group(1)}")
    return json.loads(results.read_text())


def cells(record: Mapping[str, Any], measures: Sequence[Measure]
          ) -> dict[str, tuple[str, float]]:
    """The values a benchmark's results record holds for ``measures``: label -> (better,
    value)."""
    found: dict[str, tuple[str, float]] = {}
    for m in measures:
        tab = record["tables"][m.table]
        keys = m.keys or (tab["columns"][0]["key"],)
        for row in tab["rows"]:
            label = ", ".join(str(row.get(k)) for k in keys)
            if m.rows and not re.search(m.rows, label):
                continue
            for col in m.columns:
                value = row.get(col)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    found[f"{m.table}: {label}: {col}"] = (m.better, float(value))
    return found


def compare(name: str, bench: Benchmark, sides: Mapping[str, Side], rounds: int,
            script_dir: Path, args: Sequence[str] | None = None, cwd: Path | None = None,
            log: Callable[[str], None] = print) -> list[Cell]:
    """Run ``bench`` ``rounds`` times on each side in alternation; its cells, per round."""
    script = script_dir / bench.script
    compared: dict[str, Cell] = {}
    with tempfile.TemporaryDirectory(prefix="alternate-") as tmp:
        for r, side in order(rounds):
            log(f"{name}: round {r + 1}/{rounds}")
            record = run_once(sides[side], script, bench.args if args is None else args,
                              cwd or Path(tmp), log)
            for label, (better, value) in cells(record, bench.measures).items():
                cell = compared.setdefault(label, Cell(label, better))
                cell.values.setdefault(side, []).append(value)
    # a cell missing from a run (a row one revision does not print) is not compared
    return [c for c in compared.values() if all(len(c.values.get(s, [])) == rounds
                                                 for s in ("old", "new"))]


def verdict(cell: Cell) -> str:
    """``worse`` when the new revision's best round is worse than the old one's worst (the
    ranges do not overlap), ``better`` the other way round, else ``same``."""
    sign = 1 if cell.better == _HIGHER else -1
    old = [sign * v for v in cell.values["old"]]
    new = [sign * v for v in cell.values["new"]]
    if max(new) < min(old):
        return "worse"
    if min(new) > max(old):
        return "better"
    return "same"


def rows(name: str, compared: Sequence[Cell], options: Sequence[str] = (),
         commits: tuple[str, str] = ("", "")) -> tuple[list[dict], list[dict]]:
    """The summary rows and the per-round rows of one benchmark run with ``options`` on the
    ``commits`` (old, new)."""
    summary, per_round = [], []
    for c in compared:
        old, new = statistics.median(c.values["old"]), statistics.median(c.values["new"])
        summary.append({"benchmark": name, "measure": c.measure, "better": c.better,
                        "old": old, "new": new, "ratio": new / old if old else float("nan"),
                        "old spread": _spread(c.values["old"]),
                        "new spread": _spread(c.values["new"]), "verdict": verdict(c)})
        per_round.append({"benchmark": name, "measure": c.measure,
                          "options": " ".join(options), "old commit": commits[0],
                          "new commit": commits[1],
                          "old rounds": c.values["old"], "new rounds": c.values["new"]})
    return summary, per_round


def _spread(values: Sequence[float]) -> float:
    """max / min over the rounds (1.0: every round equal)."""
    low = min(values)
    return max(values) / low if low > 0 else float("nan")


SUMMARY_COLUMNS = (
    _results.column("benchmark"), _results.column("measure"),
    _results.column("better", "better when"),
    # 6 significant digits: no exponent below a million, a second's fraction still shown
    _results.column("old", "old (median)", ",.6g"), _results.column("new", "new (median)", ",.6g"),
    _results.column("ratio", "new / old", ".3f"),
    _results.column("old spread", "old max / min", ".2f"),
    _results.column("new spread", "new max / min", ".2f"),
    _results.column("verdict", "beyond the spread"))
ROUND_COLUMNS = (_results.column("benchmark"), _results.column("measure"),
                 _results.column("options"), _results.column("old commit"),
                 _results.column("new commit"), _results.column("old rounds"),
                 _results.column("new rounds"))
OVERVIEW_COLUMNS = (
    _results.column("benchmark"), _results.column("revisions", "old → new"),
    _results.column("options"), _results.column("rounds"),
    _results.column("measures", "measures compared"),
    _results.column("median gain", "median gain", ".3f"),
    _results.column("lowest gain", "lowest gain", ".3f"),
    _results.column("worse", "worse beyond the spread"))


def overview(tables: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """One row per benchmark of a results file's ``summary`` and ``rounds`` tables: the
    options, how many measures, the median and the lowest gain (new / old where higher is
    better, old / new where lower is: > 1 means the new revision is better) and the measures
    worse beyond the spread."""
    runs = {r["benchmark"]: r for r in tables["rounds"]["rows"]}
    by: dict[str, list[Mapping[str, Any]]] = {}
    for row in tables["summary"]["rows"]:
        by.setdefault(row["benchmark"], []).append(row)
    found = []
    for name, summary in by.items():
        gains = [r["new"] / r["old"] if r["better"] == _HIGHER else r["old"] / r["new"]
                 for r in summary if r["old"] and r["new"]]
        worse = [r["measure"] for r in summary if r["verdict"] == "worse"]
        run = runs.get(name, {})
        found.append({"benchmark": name, "options": run.get("options", ""),
                      "rounds": len(run.get("old rounds", [])),
                      "revisions": f"{run.get('old commit', '')[:7]} → "
                                   f"{run.get('new commit', '')[:7]}",
                      "measures": len(summary), "median gain": statistics.median(gains),
                      "lowest gain": min(gains), "worse": "; ".join(worse) or "none"})
    return _results.table(OVERVIEW_COLUMNS, found)


# -- building the revisions -------------------------------------------------------------------
def build(rev: str, name: str, where: Path, repo: Path = ROOT,
          log: Callable[[str], None] = print) -> Side:
    """Check ``rev`` out into ``where/name/src`` (kept if it already holds that commit) and
    install its package, C extensions built, into ``where/name/site``."""
    commit = _git(repo, "rev-parse", "--verify", f"{rev}^{{commit}}")
    src, site = where / name / "src", where / name / "site"
    stamp = where / name / "commit"
    if stamp.exists() and stamp.read_text() == commit and (site / "streamnb").is_dir():
        log(f"{name}: {commit[:10]} already built in {site}")
        return Side(name, commit, site)
    if src.exists():
        _git(repo, "worktree", "remove", "--force", str(src))
    shutil.rmtree(where / name, ignore_errors=True)
    (where / name).mkdir(parents=True)
    _git(repo, "worktree", "add", "--detach", str(src), commit)
    log(f"{name}: building {commit[:10]} into {site}")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--disable-pip-version-check", "--target", str(site), str(src)],
                   check=True)
    stamp.write_text(commit)
    return Side(name, commit, site)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("benchmarks", nargs="+", choices=sorted(BENCHMARKS), metavar="BENCHMARK",
                        help=f"one of: {', '.join(sorted(BENCHMARKS))}")
    parser.add_argument("--old", required=True, help="the revision compared against")
    parser.add_argument("--new", default="HEAD", help="the revision measured (default HEAD)")
    parser.add_argument("--rounds", type=int, default=3)
    # one word: argparse would take an OPTIONS of one word ("--quick") for an option of its own
    parser.add_argument("--args", action="append", default=[], metavar="BENCHMARK=OPTIONS",
                        help="run BENCHMARK with OPTIONS (one string) instead of its own")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build the revisions here and keep them (default: a temporary "
                             "directory, removed at the end)")
    _results.add_arguments(parser, NAME, merge=True)
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if bad := [a for a in args.args if "=" not in a]:
        parser.error(f"--args takes BENCHMARK=OPTIONS, not {bad[0]!r}")
    options = {b: tuple(o.split()) for b, o in (a.split("=", 1) for a in args.args)}
    if unknown := sorted(set(options) - set(args.benchmarks)):
        parser.error(f"--args for a benchmark not run: {', '.join(unknown)}")
    where = args.keep or Path(tempfile.mkdtemp(prefix="alternate-"))
    try:
        sides = {n: build(rev, n, where) for n, rev in (("old", args.old), ("new", args.new))}
    except subprocess.CalledProcessError as e:
        print(f"alternate: cannot check out or build a revision: {e}", file=sys.stderr)
        return 1
    try:
        summary, per_round = [], []
        for name in args.benchmarks:
            bench = BENCHMARKS[name]
            run_args = options.get(name, bench.args)
            compared = compare(name, bench, sides, args.rounds,
                               sides["new"].site.parent / "src" / "benchmarks", run_args)
            s, p = rows(name, compared, run_args,
                        (sides["old"].commit, sides["new"].commit))
            summary += s
            per_round += p
            print(_results.render(_results.table(SUMMARY_COLUMNS, s)))
    finally:
        if args.keep is None:
            for side in ("old", "new"):
                _git(ROOT, "worktree", "remove", "--force", str(where / side / "src"))
            shutil.rmtree(where, ignore_errors=True)
    note = "The new revision's scripts on both packages, rounds alternated (old, new, new, old, …)."
    # the command names every benchmark's options, so that it reproduces the run even if the
    # defaults in BENCHMARKS change
    # commits, not names: "HEAD" or a branch would name other code tomorrow
    shown = [*args.benchmarks, "--old", sides["old"].commit[:10], "--new",
             sides["new"].commit[:10], "--rounds", str(args.rounds)]
    for name in args.benchmarks:
        shown += ["--args", f"{name}={' '.join(options.get(name, BENCHMARKS[name].args))}"]
    _results.write_from_args(
        args, NAME, {"summary": _results.table(SUMMARY_COLUMNS, summary),
                     "rounds": _results.table(ROUND_COLUMNS, per_round)},
        argv=shown + (["--merge"] if args.merge else []), script=__file__, notes=note,
        merge_key=("benchmark", "measure"))
    if not args.no_results:  # the overview covers every benchmark of the file, merged or not
        path = Path(args.results)
        record = json.loads(path.read_text())
        tables = {k: v for k, v in record["tables"].items() if k != "overview"}  # a merged one
        record["tables"] = {"overview": overview(tables), **tables}
        path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
