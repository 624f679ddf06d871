"""The command line as a newcomer meets it: help that says what each command does, every
mistake one line on stderr with exit status 2 (``score``: 3, bogofilter's error), and
``evaluate`` on a CSV of categories: river models that need numbers refused in one line that
gives the pipeline that works, and the class column named in the report."""

from __future__ import annotations

import subprocess
import sys

import pytest

from streamnb.cli import build_parser, main

WEATHER = """outlook,temp,humidity,windy,play
sunny,hot,high,false,no
sunny,hot,high,true,no
overcast,hot,high,false,yes
rainy,mild,high,false,yes
rainy,cool,normal,false,yes
rainy,cool,normal,true,no
overcast,cool,normal,true,yes
sunny,mild,high,false,no
sunny,cool,normal,false,yes
rainy,mild,normal,false,yes
sunny,mild,normal,true,yes
overcast,mild,high,true,yes
overcast,hot,normal,false,yes
rainy,mild,high,true,no
"""


@pytest.fixture
def weather(tmp_path):
    path = tmp_path / "weather.csv"
    path.write_text(WEATHER)
    return path


def streamnb(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "streamnb", *argv], input=stdin,
                          capture_output=True)


def test_top_level_help_says_what_each_command_does():
    done = streamnb("--help")
    assert done.returncode == 0
    out = done.stdout.decode()
    commands = build_parser().commands
    assert set(commands) == {"demo", "explain", "evaluate", "train", "score", "serve", "broker"}
    for name, parser in commands.items():
        line = next(line for line in out.splitlines() if line.strip().startswith(name + " "))
        assert len(line.split()) > 3, name  # a sentence beside the name, not the name alone
        assert parser.description and len(parser.description.split()) > 8, name
        assert streamnb(name, "--help").returncode == 0
    assert "spam filter" in out and "Kafka" in out


@pytest.mark.parametrize("argv, status, message", [
    ([], 2, "streamnb: the following arguments are required: COMMAND"),
    (["nosuch"], 2, "streamnb: argument COMMAND: invalid choice: 'nosuch'"),
    (["demo", "--limit", "-5"], 2, "streamnb demo: argument --limit: must be an integer >= 0"),
    (["demo", "--batch", "x"], 2, "streamnb demo: argument --batch: must be an integer, got"),
    (["explain", "--top", "0"], 2, "streamnb explain: argument --top: must be an integer >= 1"),
    (["evaluate", "--bogus"], 2, "streamnb evaluate: unrecognized arguments: --bogus"),
    (["evaluate", "--folds", "x"], 2, "streamnb evaluate: argument --folds: invalid int"),
    (["evaluate", "--protocol", "splits"], 2,
     "streamnb evaluate: --protocol splits needs --train-size"),
    (["evaluate", "--baseline", "nosuch"], 2,
     "streamnb evaluate: --baseline nosuch is not one of the models"),
    (["train", "--ham", "/nonexistent"], 2, "streamnb train: /nonexistent: no such file"),
    (["serve", "--bogus"], 2, "streamnb serve: unrecognized arguments: --bogus"),
    (["score", "--bogus"], 3, "streamnb score: unrecognized arguments: --bogus"),
])
def test_every_mistake_is_one_line(argv, status, message):
    done = streamnb(*argv)
    err = done.stderr.decode()
    assert done.returncode == status, err
    assert err.startswith(message) and len(err.splitlines()) == 1, err
    assert done.stdout == b""


def test_a_path_that_cannot_be_written_is_one_line(weather, tmp_path):
    """An OSError of the user's paths (a report directory, a state file) is told in one line
    by whichever command meets it."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    done = streamnb("evaluate", "--dataset", str(weather), "--model", "indifferent", "--folds",
                    "2", "--no-progress", "--out", str(blocker / "report"))
    assert done.returncode == 2
    assert done.stderr.decode().startswith("streamnb evaluate: [Errno 20] Not a directory")
    assert len(done.stderr.decode().splitlines()) == 1
    mbox = tmp_path / "spam.mbox"
    mbox.write_text("From a@b Mon Jan  1 00:00:00 2024\nSubject: win\n\ncash now\n")
    done = streamnb("train", "--spam", str(mbox), "--state", str(blocker / "f.snb"))
    assert done.returncode == 2 and len(done.stderr.decode().splitlines()) == 1
    assert done.stderr.decode().startswith("streamnb train: [Errno ")


def test_a_river_model_that_needs_numbers_is_refused_with_the_pipeline_that_works(
        weather, tmp_path, capsys):
    done = streamnb("evaluate", "--dataset", str(weather), "--model",
                    "river:naive_bayes.MultinomialNB", "--folds", "2", "--no-progress",
                    "--out", str(tmp_path / "refused"))
    err = done.stderr.decode()
    assert done.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("streamnb evaluate: river:naive_bayes.MultinomialNB cannot learn "
                          "these records (TypeError: ")
    fix = "river:preprocessing.OneHotEncoder|naive_bayes.MultinomialNB"
    assert err.rstrip().endswith(f"--model '{fix}'")
    assert not (tmp_path / "refused").exists()  # refused before the run
    # the pipeline the line gives runs, beside a streamnb model, in every protocol
    for protocol in ("cv", "prequential"):
        assert main(["evaluate", "--dataset", str(weather), "--model", fix, "--model",
                     "indifferent", "--protocol", protocol, "--folds", "2", "--no-progress",
                     "--out", str(tmp_path / protocol)]) == 0
        out = capsys.readouterr().out
        row = next(line.replace("\\|", "/") for line in out.splitlines()
                   if line.startswith("| river:"))
        accuracy = float(row.split("|")[2].split("±")[0])
        assert 0 <= accuracy <= 100


def test_a_continuous_model_reads_nominal_fields_as_naive_bayes_factors(weather, tmp_path):
    done = streamnb("evaluate", "--dataset", str(weather), "--model", "lda", "--folds", "2",
                    "--no-progress", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr.decode()
    assert any(line.startswith("| lda") for line in done.stdout.decode().splitlines())


@pytest.mark.parametrize("target, named", [
    (None, "play (the last column: the default without --target)"),
    ("windy", "windy"),
])
def test_the_report_names_the_class_column(weather, tmp_path, capsys, target, named):
    argv = ["evaluate", "--dataset", str(weather), "--model", "indifferent", "--folds", "2",
            "--no-progress", "--out", str(tmp_path)]
    assert main(argv + (["--target", target] if target else [])) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"class column: {named}\n")
    summary = (tmp_path / "summary.md").read_text().splitlines()[0]
    assert summary.endswith(f"class={named})")


def test_the_version_is_written_once_and_reported_by_the_installed_metadata():
    """pyproject.toml reads the version from streamnb.__version__ (no second copy to drift);
    `streamnb --version` and the installed distribution agree with it."""
    import importlib.metadata
    import tomllib
    from pathlib import Path

    import streamnb

    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml")
                            .read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "streamnb.__version__"}
    assert importlib.metadata.version("streamnb") == streamnb.__version__
    done = subprocess.run([sys.executable, "-m", "streamnb", "--version"], capture_output=True)
    assert done.stdout.decode() == f"streamnb {streamnb.__version__}\n"
