"""CPU per message of ``streamnb score`` run once per message, as a procmail or maildrop rule
runs it, against ``bogofilter`` run the same way in the same run (docs/recipes/mail-rules.md).

Both filters learn the first ``--train`` SpamAssassin messages (``streamnb train`` into a state
file; ``bogofilter -M -s``/``-M -n`` into a word list); then each of the next ``--messages``
messages is piped to a fresh ``streamnb score --state …`` process and a fresh
``bogofilter -d …`` process, the two interleaved message by message, ``--repeat`` times. The
CPU time of the child processes (user + system; the machine is shared, CPU is the steadier
clock) is what a mail server pays per message; the start-up of the interpreter alone
(``python -c pass``) is measured beside them as the floor of any Python filter. The children
write and read bytecode caches (``PYTHONDONTWRITEBYTECODE`` is dropped, one untimed pass runs
first), as an installed package has them.

Run: ``python benchmarks/bench_score_startup.py [--train 2000] [--messages 40] [--repeat 2]``;
it writes ``benchmarks/results/bench_score_startup.json`` (``--results``, ``--no-results``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from streamnb.datasets import iter_spamassassin_stream

sys.path.insert(0, str(Path(__file__).parent))
import _results  # a sibling script, not a package
from bench_tokenizer import _timed, write_mbox

NAME = "bench_score_startup"
COLUMNS = [_results.column("command"),
           _results.column("cpu_ms", "CPU ms per message", ".1f"),
           _results.column("wall_ms", "wall-clock ms per message", ".1f"),
           _results.column("ratio", "CPU × bogofilter", ".1f")]


def streamnb_command() -> list[str]:
    """The installed ``streamnb`` script beside this interpreter (what a mail rule runs), else
    ``python -m streamnb``."""
    script = Path(sys.executable).parent / "streamnb"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "streamnb"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=int, default=2000, help="messages learned first")
    parser.add_argument("--messages", type=int, default=40, help="messages scored one by one")
    parser.add_argument("--repeat", type=int, default=2, help="passes over those messages")
    _results.add_arguments(parser, NAME)
    args = parser.parse_args(argv)
    if shutil.which("bogofilter") is None:
        parser.error("bogofilter is not installed")
    messages = list(iter_spamassassin_stream())
    learned, probes = messages[:args.train], messages[args.train:args.train + args.messages]
    streamnb = streamnb_command()
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        state = directory / "filter.snb"
        for label, flag in (("spam", "-s"), ("ham", "-n")):
            mbox = directory / f"{label}.mbox"
            write_mbox([m.raw for m in learned if m.label == label], mbox)
            _timed(["bogofilter", "-C", "-d", str(directory), "-M", flag], mbox)
            subprocess.run([*streamnb, "train", f"--{label}", str(mbox), "--state", str(state)],
                           check=True, capture_output=True)
        files = []
        for i, m in enumerate(probes):
            files.append(directory / f"message-{i}")
            files[-1].write_bytes(m.raw)
        runs = {"bogofilter -d WORDLIST < message": ["bogofilter", "-C", "-d", str(directory)],
                "streamnb score --state STATE < message": [*streamnb, "score", "--state",
                                                           str(state)],
                "python -c pass (the interpreter alone)": [sys.executable, "-c", "pass"]}
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the children inherit it
        for command in runs.values():
            _timed(command, files[0])
        cpu = dict.fromkeys(runs, 0.0)
        wall = dict.fromkeys(runs, 0.0)
        for _ in range(args.repeat):
            for path in files:
                for name, command in runs.items():
                    c, w, _out = _timed(command, path)
                    cpu[name] += c
                    wall[name] += w
    n = args.repeat * len(files)
    bogofilter = cpu["bogofilter -d WORDLIST < message"] / n
    rows = [{"command": name, "cpu_ms": 1e3 * cpu[name] / n, "wall_ms": 1e3 * wall[name] / n,
             "ratio": cpu[name] / n / bogofilter if bogofilter > 0 else float("inf")}
            for name in runs]
    tables = {"per_message": _results.table(COLUMNS, rows)}
    print(_results.render(tables["per_message"]))
    version = subprocess.run(["bogofilter", "-V"], capture_output=True, text=True).stdout
    _results.write_from_args(
        args, NAME, tables, argv=argv, script=__file__,
        notes=f"{len(learned)} messages learned, {len(files)} scored one process each, "
              f"{args.repeat} passes.",
        extra_machine={"bogofilter": version.split("\n")[0].removeprefix("bogofilter version ")})


if __name__ == "__main__":
    main()
