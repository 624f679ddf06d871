"""Test collection at the repository root: doctests of the modules, and every code block of
README.md and docs/**/*.md (Sybil).

In the Markdown files a ```python block runs (one namespace per file, top to bottom); a block
that starts with ``>>>`` is a doctest whose shown output is checked. A ```console block runs
each ``$ command`` with bash and checks the lines after it against the command's output
(stdout and stderr, doctest's ELLIPSIS and whitespace rules; the exit status is not checked:
prose states it). Each file runs in a scratch directory of its own, with ``examples/`` of the
repository linked into it, so blocks may write files. A block that cannot run here is preceded
by ``<!-- skip: next "reason" -->``, and the reason is listed by pytest's ``-rs``; other
languages (bash, toml, json, text) are shown, not run.
"""

from __future__ import annotations

import doctest
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

# Doctest collection imports every module; a __main__ module would run its command line.
collect_ignore_glob = ["*/__main__.py"]

ROOT = Path(__file__).resolve().parent
_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
_SCRATCH = "__scratch_dir__"
_CWD = "__previous_cwd__"


def _enter_scratch_dir(namespace: dict[str, Any]) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="streamnb-docs-"))
    (scratch / "examples").symlink_to(ROOT / "examples")
    namespace[_SCRATCH] = scratch
    namespace[_CWD] = os.getcwd()
    os.chdir(scratch)


def _leave_scratch_dir(namespace: dict[str, Any]) -> None:
    os.chdir(namespace[_CWD])
    shutil.rmtree(namespace[_SCRATCH], ignore_errors=True)


def _commands(source: str) -> list[tuple[str, str]]:
    """``$ command`` lines (a trailing backslash continues one) and the output shown under each."""
    steps: list[tuple[str, list[str]]] = []
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = [line[2:]]
            while command[-1].endswith("\\") and i + 1 < len(lines):
                i += 1
                command.append(lines[i])
            steps.append(("\n".join(command), []))
        elif steps:
            steps[-1][1].append(line)
        else:
            raise ValueError(f"console block: output before any '$ ' command: {line!r}")
        i += 1
    return [(command, "\n".join(output).strip() + "\n") for command, output in steps]


def _run_console(example: Example) -> str | None:
    # the interpreter running the tests owns the `streamnb` script: its bin/ goes first
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    checker = doctest.OutputChecker()
    for command, expected in _commands(example.parsed):
        done = subprocess.run(["bash", "-c", command], cwd=example.namespace[_SCRATCH], env=env,
                              capture_output=True, text=True, timeout=600)
        got = (done.stdout + done.stderr).strip() + "\n"
        if expected.strip() == "":
            expected = "\n"
        if not checker.check_output(expected, got, _FLAGS):
            return (f"$ {command}\nexpected:\n{expected}got (exit status {done.returncode}):\n"
                    f"{got}")
    return None


pytest_collect_file = Sybil(
    parsers=[
        PythonCodeBlockParser(doctest_optionflags=_FLAGS),
        CodeBlockParser(language="console", evaluator=_run_console),
        SkipParser(),
    ],
    # Path.match from the right: README.md and docs/*.md, docs/*/*.md (the paper reproductions)
    patterns=["README.md", "docs/*.md", "docs/*/*.md"],
    path=str(ROOT),
    setup=_enter_scratch_dir,
    teardown=_leave_scratch_dir,
).pytest()
