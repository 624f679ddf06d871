"""benchmarks/soak.py, briefly: every fault kind at least once in under a minute of producing,
and no labelled message lost without a reported gap or learned twice. The soak runs its own
embedded broker (it pauses it with SIGSTOP, which the session's broker must not suffer)."""

from __future__ import annotations

import pytest
from benchmark_scripts import load_script


def load_soak():
    return load_script("soak")


def test_a_short_soak_loses_and_duplicates_nothing(tmp_path):
    soak = load_soak()
    options = soak.parse_args(["--minutes", "0.75", "--messages", "2500", "--seed", "5",
                               "--fault-every", "6", "--work-dir", str(tmp_path)])
    figures = soak.soak(options)
    report = soak.report(figures, options)
    assert figures.lost == 0 and figures.duplicated == 0, report
    assert figures.model_equals_reference, report
    assert all(figures.faults[kind] >= 1 for kind in soak.FAULTS), report
    assert figures.refilled_resets >= 1, report
    assert figures.learned_once + figures.lost_in_reported_gaps["labelled"] == figures.produced[
        "labelled"], report


@pytest.mark.parametrize("argv, message", [
    (["--minutes", "0"], "argument --minutes: must be a finite number > 0, got '0'"),
    (["--messages", "many"], "argument --messages: 'many' is not an integer"),
    (["--sed", "1"], "unrecognized arguments: --sed 1"),
])
def test_a_bad_option_is_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        load_soak().parse_args(argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err == f"soak.py: error: {message}\n"
