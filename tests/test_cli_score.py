"""``streamnb score``: bogofilter's exit statuses, errors for what is no message, the
passthrough header, and the procmail and maildrop rules of docs/spam.md run as those rules run
them (the message on stdin of the rule's command, the status and output read back)."""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from streamnb import SpamFilter
from streamnb.cli_spam import with_header_fields
from streamnb.datasets import iter_sms_spam_stream, iter_spamassassin_stream
from streamnb.features import not_a_message

# each runs `streamnb score` in subprocesses (10-25 s on 2 cores): out of the fast loop
pytestmark = pytest.mark.slow

DOCS = Path(__file__).resolve().parents[1] / "docs" / "spam.md"
DOC_STATE = "$HOME/.streamnb/filter.snb"  # the state path the rules of docs/spam.md name
STATUS = {"spam": 0, "ham": 1, "unsure": 2}


@pytest.fixture(scope="module")
def messages():
    return list(iter_spamassassin_stream())


@pytest.fixture(scope="module")
def scoring(messages, tmp_path_factory):
    """A filter learned on the first 2,000 messages, saved; the library's own verdicts on the
    next 400, and a ``streamnb`` on PATH as an installed one would be."""
    root = tmp_path_factory.mktemp("score")
    model = SpamFilter()
    model.learn_many([m.raw for m in messages[:2000]], [m.label for m in messages[:2000]])
    state = root / "filter.snb"
    model.save(state)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "streamnb").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m streamnb "$@"\n')
    (bin_dir / "streamnb").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "HOME": str(root)}
    (root / ".streamnb").mkdir()
    (root / ".streamnb" / "filter.snb").symlink_to(state)
    verdicts = {}
    for m in messages[2000:2400]:
        verdicts.setdefault(model.verdict_one(m.raw), m.raw)
    assert set(verdicts) == set(STATUS)  # one message of each verdict to test with
    return model, state, env, verdicts


def score(state, stdin: bytes, *options: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "streamnb", "score", "--state", str(state),
                           *options], input=stdin, capture_output=True, env=env)


def test_the_statuses_are_bogofilters(scoring, tmp_path):
    """0 spam, 1 ham, 2 unsure: the table is checked against bogofilter itself (its terse
    verdict S/H/U beside its status), then streamnb's status against its printed verdict."""
    model, state, _, verdicts = scoring
    env = {**os.environ, "BOGOFILTER_DIR": str(tmp_path)}
    subprocess.run(["bogofilter", "-s"], input=verdicts["spam"], env=env, check=True)
    subprocess.run(["bogofilter", "-n"], input=verdicts["ham"], env=env, check=True)
    bogofilter = {}
    for raw in [*verdicts.values(), b"Subject: unseen\n\nzqxj wvpk\n"]:
        done = subprocess.run(["bogofilter", "-t"], input=raw, env=env, capture_output=True)
        bogofilter[done.stdout.split()[0]] = done.returncode
    assert bogofilter == {b"S": STATUS["spam"], b"H": STATUS["ham"], b"U": STATUS["unsure"]}
    for verdict, raw in verdicts.items():
        done = score(state, raw)
        printed, value = done.stdout.decode().split()
        assert (printed, done.returncode) == (verdict, STATUS[verdict])
        assert float(value) == pytest.approx(model.score_one(raw), abs=1e-6)
        assert done.stderr == b""
        assert score(state, raw, "--embed").returncode == 0


def test_every_corpus_message_is_a_message(messages):
    """The refusal never meets a real message: every SpamAssassin e-mail and SMS passes."""
    assert [m.id for m in messages if not_a_message(m.raw)] == []
    assert [m.text for m in iter_sms_spam_stream() if not_a_message(m.text)] == []


def _worst_encoded(messages) -> dict:
    """The corpus's worst-encoded messages: the most 8-bit bytes, the most control characters,
    and the MIME structures Python's parser finds broken (no start boundary)."""
    def share(m, pattern: bytes) -> float:
        return len(re.findall(pattern, m.raw)) / len(m.raw)

    eight_bit = max(messages, key=lambda m: share(m, rb"[\x80-\xff]"))
    control = max(messages, key=lambda m: share(m, rb"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]"))
    broken = [m for m in messages if m.label == "spam" and any(
        type(d).__name__ == "StartBoundaryNotFoundDefect"
        for part in email.message_from_bytes(m.raw).walk() for d in part.defects)]
    assert share(eight_bit, rb"[\x80-\xff]") > 0.4 and broken  # what they are chosen for
    return {"8-bit": eight_bit, "control characters": control, "broken MIME": broken[0]}


def test_the_worst_encoded_messages_get_a_verdict(scoring, messages):
    model, state, _, _ = scoring
    for kind, m in _worst_encoded(messages).items():
        done = score(state, m.raw)
        printed, value = done.stdout.decode().split()
        assert printed == model.verdict_one(m.raw), kind
        assert done.returncode == STATUS[printed] and done.stderr == b"", kind
        assert float(value) == pytest.approx(model.score_one(m.raw), abs=1e-6)


@pytest.mark.parametrize("what, stdin, reason", [
    ("empty", b"", "stdin: empty message"),
    ("blank lines", b"\n \r\n", "stdin: empty message"),
    ("an executable", Path(sys.executable).resolve().read_bytes(), "stdin: binary data"),
    ("random bytes without NUL", bytes(range(1, 256)) * 4, "stdin: binary data"),
], ids=["empty", "blank", "executable", "control characters"])
def test_what_is_no_message_is_an_error(scoring, what, stdin, reason):
    """Status 3 and one line on stderr; nothing on stdout, or in passthrough the input
    unchanged (a rule that ignores the status still delivers it)."""
    _, state, _, _ = scoring
    done = score(state, stdin)
    assert done.returncode == 3 and done.stdout == b"", what
    assert done.stderr.decode().startswith(f"streamnb score: {reason}")
    assert len(done.stderr.decode().splitlines()) == 1
    for options in (["-p"], ["-p", "-e"]):
        passed = score(state, stdin, *options)
        assert (passed.returncode, passed.stdout) == (3, stdin), (what, options)


@pytest.mark.parametrize("argv, message", [
    (["--state", "/nonexistent.snb"], "streamnb score: /nonexistent.snb: no filter state"),
    (["--bogus"], "streamnb score: unrecognized arguments: --bogus"),
    (["--state"], "streamnb score: argument --state: expected one argument"),
])
def test_a_mistake_is_status_3_not_unsure(scoring, argv, message):
    """A wrong option or a missing state is an error (3), never argparse's 2, which a mail
    filter would read as "unsure"."""
    _, _, _, verdicts = scoring
    done = subprocess.run([sys.executable, "-m", "streamnb", "score", *argv],
                          input=verdicts["spam"], capture_output=True)
    assert done.returncode == 3 and done.stdout == b""
    assert done.stderr.decode().startswith(message)
    assert len(done.stderr.decode().splitlines()) == 1


def _without(output: bytes, fields: list[bytes]) -> bytes:
    for field in fields:
        assert output.count(field) == 1
        output = output.replace(field, b"", 1)
    return output


def test_passthrough_adds_two_header_fields_and_changes_no_byte(scoring):
    model, state, _, verdicts = scoring
    for verdict, raw in verdicts.items():
        crlf = re.sub(rb"\r?\n", b"\r\n", raw)
        for message, eol in ((raw, b"\n"), (crlf, b"\r\n")):
            done = score(state, message, "-p")
            assert done.returncode == STATUS[verdict] and done.stderr == b""
            z = model.score_one(message)
            flag = b"Yes" if verdict == "spam" else b"No"
            status = (b"X-Spam-Status: %s, score=%.2f required=%.2f"
                      % (flag, z, model.current_threshold) + eol)
            own = b"X-Streamnb-Score: %s %.6f" % (verdict.encode(), z) + eol
            assert _without(done.stdout, [status, own]) == message
            # at the end of the header block: right before its blank line
            assert done.stdout.index(status + own + eol) == message.index(eol + eol) + len(eol)


def test_header_fields_go_where_each_shape_of_message_needs_them():
    fields = [("X-A", "1")]
    assert with_header_fields(b"From a@b Mon Jan  1 00:00:00 2024\nSubject: x\nTo: y\n\nhi\n",
                              fields) == (b"From a@b Mon Jan  1 00:00:00 2024\nSubject: x\n"
                                          b"To: y\nX-A: 1\n\nhi\n")
    # a header without a body, its last line without its line break
    assert with_header_fields(b"Subject: x\r\nTo: y", fields) == (b"Subject: x\r\nTo: y\r\n"
                                                                 b"X-A: 1\r\n")
    assert with_header_fields(b"\nSubject: x\nTo: y\n\n", fields) == (b"\nSubject: x\nTo: y\n"
                                                                      b"X-A: 1\n\n")
    # a short text gets a header block of its own
    assert with_header_fields(b"Note: call me", fields) == b"X-A: 1\n\nNote: call me"


def test_passthrough_of_every_corpus_message_keeps_its_bytes(messages):
    """What the fields are inserted into comes back byte for byte, at its header's end."""
    fields = [("X-Spam-Status", "No, score=0.00 required=0.00")]
    for m in messages:
        out = with_header_fields(m.raw, fields)
        eol = b"\r\n" if b"\r\nX-Spam-Status" in out else b"\n"
        field = b"X-Spam-Status: No, score=0.00 required=0.00" + eol
        at = out.index(field)
        assert out[:at] + out[at + len(field):] == m.raw
        head = email.message_from_bytes(out)
        assert head["X-Spam-Status"] == "No, score=0.00 required=0.00", m.id


# -- the rules of docs/spam.md ------------------------------------------------------------------

def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOCS.read_text(), re.DOTALL)


def _rules() -> dict:
    """The commands and header patterns of docs/spam.md's procmail and maildrop rules."""
    by_status, tagging = _blocks("procmail")
    (maildrop,) = _blocks("maildrop")
    return {
        "procmail ?": re.search(r"^\* \? (.+)$", by_status, re.MULTILINE).group(1),
        "procmail |": re.search(r"^\| (.+)$", tagging, re.MULTILINE).group(1),
        "procmail spam": re.search(r"^\* (\^X-Spam-Status: .+)$", tagging,
                                   re.MULTILINE).group(1),
        "procmail unsure": re.search(r"^\* (\^X-Streamnb-Score: .+)$", tagging,
                                     re.MULTILINE).group(1),
        "maildrop xfilter": re.search(r'^xfilter "(.+)"$', maildrop, re.MULTILINE).group(1),
        "maildrop spam": re.search(r"^if \(/(.+)/\)$", maildrop, re.MULTILINE).group(1),
    }


def test_the_docs_rules_file_by_status_and_by_header(scoring):
    """Each rule's command through a shell (as procmail and maildrop run it), the message on
    its stdin: `? command` holds (status 0) for spam only; the filters (-p -e) succeed on every
    verdict, and their output matches the rule's header pattern as the verdict says; on what
    is no message every command fails with 3 (procmail's `e` rule, maildrop's deferral)."""
    _, _, env, verdicts = scoring
    rules = _rules()
    assert all(DOC_STATE in rules[k] for k in ("procmail ?", "procmail |", "maildrop xfilter"))

    def run(command: str, raw: bytes) -> subprocess.CompletedProcess:
        return subprocess.run(["/bin/sh", "-c", command], input=raw, capture_output=True,
                              env=env)

    def matches(pattern: str, output: bytes) -> bool:
        header = output.split(b"\n\n", 1)[0].decode("latin-1")
        return re.search(pattern, header, re.MULTILINE) is not None

    for verdict, raw in verdicts.items():
        assert (run(rules["procmail ?"], raw).returncode == 0) == (verdict == "spam")
        for command in (rules["procmail |"], rules["maildrop xfilter"]):
            done = run(command, raw)
            assert done.returncode == 0, (command, verdict)
            assert matches(rules["procmail spam"], done.stdout) == (verdict == "spam")
            assert matches(rules["maildrop spam"], done.stdout) == (verdict == "spam")
            assert matches(rules["procmail unsure"], done.stdout) == (verdict == "unsure")
    for command in (rules["procmail ?"], rules["procmail |"], rules["maildrop xfilter"]):
        assert run(command, b"").returncode == 3


@pytest.mark.skipif(not (shutil.which("procmail") and shutil.which("maildrop")),
                    reason="procmail and maildrop are not installed (apt-get install procmail "
                    "maildrop)")
def test_the_docs_rules_deliver_with_procmail_and_maildrop(scoring, tmp_path):
    """The rule files of docs/spam.md, verbatim, delivered by procmail and maildrop
    themselves into maildirs: spam in the spam folder, ham in the inbox, tagged."""
    _, _, env, verdicts = scoring
    home = Path(env["HOME"])
    by_status, tagging = _blocks("procmail")
    (maildrop,) = _blocks("maildrop")
    # both set HOME from the user's account: the rules' $HOME is the test's
    preamble = (f"PATH={env['PATH']}\nHOME={home}\nSHELL=/bin/sh\nMAILDIR={tmp_path}\n"
                f"DEFAULT={tmp_path}/inbox/\n")
    for folder in ("inbox", "spam", "unsure", "Maildir", "Maildir/.Spam"):
        for sub in ("cur", "new", "tmp"):
            (tmp_path / folder / sub).mkdir(parents=True, exist_ok=True)

    def delivered() -> dict:
        found = {}
        for folder in ("inbox", "spam", "unsure", "Maildir", "Maildir/.Spam"):
            for f in (tmp_path / folder / "new").iterdir():
                found[folder] = f.read_bytes()
                f.unlink()
        return found

    for name, rules in (("status", by_status), ("tagging", tagging)):
        rc = tmp_path / f"{name}.rc"
        # the docs' folders as maildirs (a trailing slash) under MAILDIR
        rc.write_text(preamble + re.sub(r"^(spam|unsure)$", r"\1/", rules, flags=re.MULTILINE))
        for verdict, raw in verdicts.items():
            subprocess.run(["procmail", "-m", str(rc)], input=raw, env=env, check=True)
            (folder, out), = delivered().items()
            want = {"spam": "spam", "unsure": "unsure" if name == "tagging" else "inbox"}
            assert folder == want.get(verdict, "inbox"), (name, verdict)
            assert (b"X-Streamnb-Score: " + verdict.encode() in out) == (name == "tagging")
    mailfilter = home / ".mailfilter"
    mailfilter.write_text(f'PATH="{env["PATH"]}"\nHOME="{home}"\nDEFAULT="{tmp_path}/Maildir/"\n'
                          + maildrop.replace("$HOME/Maildir/", f"{tmp_path}/Maildir/"))
    mailfilter.chmod(0o600)
    for verdict, raw in verdicts.items():
        subprocess.run(["maildrop", str(mailfilter)], input=raw, env=env, check=True)
        (folder, out), = delivered().items()
        assert folder == ("Maildir/.Spam" if verdict == "spam" else "Maildir"), verdict
        assert b"X-Streamnb-Score: " + verdict.encode() in out


def test_passthrough_states_the_learned_threshold(messages, tmp_path):
    """With ``max_ham_rate`` the threshold in force is learned: `required=` is that one, and
    the verdict and status follow it."""
    model = SpamFilter(max_ham_rate=0.01)
    model.learn_many([m.raw for m in messages[:2000]], [m.label for m in messages[:2000]])
    assert model.threshold_learned and round(model.current_threshold, 2) != 0.0
    state = tmp_path / "learned.snb"
    model.save(state)
    raw = messages[2000].raw
    done = score(state, raw, "-p")
    verdict = model.verdict_one(raw)
    assert done.returncode == STATUS[verdict]
    flag = b"Yes" if verdict == "spam" else b"No"
    assert b"X-Spam-Status: %s, score=%.2f required=%.2f\n" % (
        flag, model.score_one(raw), model.current_threshold) in done.stdout
