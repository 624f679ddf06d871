"""streamnb train / score / explain --state: a SpamFilter from mailboxes, scored on stdin."""

from __future__ import annotations

import mailbox
import subprocess
import sys

import pytest

from streamnb import SpamFilter, load_model
from streamnb.cli import main
from streamnb.datasets import iter_spamassassin_stream


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The first 2,000 SpamAssassin messages as an mbox of spam and a maildir of ham, and the
    next 30 (22 ham, 8 spam) as single files."""
    root = tmp_path_factory.mktemp("mail")
    messages = list(iter_spamassassin_stream())
    train, test = messages[:2000], messages[2000:2030]
    spam = mailbox.mbox(root / "spam.mbox")
    for m in train:
        if m.label == "spam":
            spam.add(m.raw)
    spam.close()
    ham = mailbox.Maildir(root / "ham", create=True)
    for m in train:
        if m.label == "ham":
            ham.add(m.raw)
    files = []
    for i, m in enumerate(test):
        path = root / f"{i}.eml"
        path.write_bytes(m.raw)
        files.append((path, m))
    return root, train, files


def test_train_then_score_equals_the_library(corpus, capsys):
    root, train, files = corpus
    state = root / "filter.snb"
    assert main(["train", "--spam", str(root / "spam.mbox"), "--ham", str(root / "ham"),
                 "--state", str(state), "--new"]) == 0
    n_spam = sum(m.label == "spam" for m in train)
    assert f"learned {n_spam} spam and {len(train) - n_spam} ham" in capsys.readouterr().out
    reference = SpamFilter()
    reference.learn_many([m.raw for m in train if m.label == "spam"], ["spam"] * n_spam)
    reference.learn_many([m.raw for m in train if m.label == "ham"],
                         ["ham"] * (len(train) - n_spam))
    assert load_model(state).stats.to_dict() == reference.stats.to_dict()
    statuses = {"spam": 0, "ham": 1, "unsure": 2}  # bogofilter's
    seen = set()
    for path, _ in files:
        done = subprocess.run([sys.executable, "-m", "streamnb", "score", "--state", str(state)],
                              stdin=path.open("rb"), capture_output=True, text=True)
        verdict, score = done.stdout.split()
        assert verdict == reference.verdict_one(path.read_bytes())
        assert float(score) == pytest.approx(reference.score_one(path.read_bytes()), abs=1e-6)
        assert done.returncode == statuses[verdict]
        seen.add(verdict)
    assert {"spam", "ham"} <= seen  # the slice has both; a constant filter would fail here
    # learning more adds to the state
    assert main(["train", "--ham", str(files[0][0].parent / "ham"), "--state", str(state)]) == 0
    assert load_model(state).n_learned == len(train) + len(train) - n_spam


def test_explain_lists_the_tokens_behind_the_score(corpus, capsys):
    root, _, files = corpus
    state = root / "explain.snb"
    assert main(["train", "--spam", str(root / "spam.mbox"), "--ham", str(root / "ham"),
                 "--state", str(state)]) == 0
    capsys.readouterr()
    path, _ = files[3]
    assert main(["explain", "--state", str(state), "--file", str(path), "--top", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    model = load_model(state)
    rows = model.explain_one(path.read_bytes())
    assert out[0].startswith(f"score {model.score_one(path.read_bytes()):+.4f}")
    assert [line.split()[1] for line in out[3:]] == [r["token"][:38] for r in rows[:5]]


def test_train_keeps_the_ham_rate_the_operator_chose(corpus, capsys):
    """``train --max-ham-rate`` saves a filter that learns its threshold (the library's,
    chunk by chunk); another rate on the same state is refused in one line."""
    root, train, files = corpus
    state = root / "rate.snb"
    assert main(["train", "--spam", str(root / "spam.mbox"), "--ham", str(root / "ham"),
                 "--state", str(state), "--max-ham-rate", "0.01"]) == 0
    model = load_model(state)
    assert model.max_ham_rate == 0.01 and model.threshold_learned  # > 100 ham learned
    n_spam = sum(m.label == "spam" for m in train)
    reference = SpamFilter(max_ham_rate=0.01)
    for label, raws in (("spam", [m.raw for m in train if m.label == "spam"]),
                        ("ham", [m.raw for m in train if m.label == "ham"])):
        for i in range(0, len(raws), 500):  # the command's chunks
            reference.learn_many(raws[i:i + 500], [label] * len(raws[i:i + 500]))
    assert model.current_threshold == reference.current_threshold != 0.0
    assert len(raws) == len(train) - n_spam
    path, _ = files[0]
    done = subprocess.run([sys.executable, "-m", "streamnb", "score", "--state", str(state),
                           "-p"], stdin=path.open("rb"), capture_output=True)
    assert f"required={reference.current_threshold:.2f}".encode() in done.stdout
    capsys.readouterr()
    assert main(["train", "--ham", str(root / "ham"), "--state", str(state),
                 "--max-ham-rate", "0.05"]) == 2
    assert "holds a filter with max_ham_rate 0.01" in capsys.readouterr().err
    assert main(["train", "--ham", str(root / "ham"), "--state", str(state),
                 "--max-ham-rate", "1.5", "--new"]) == 2
    assert "--max-ham-rate: max_ham_rate must be" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["train", "--spam", "/nonexistent"], "streamnb train: /nonexistent: no such file"),
    (["train"], "streamnb train: give at least one --spam or --ham"),
    (["score", "--state", "/nonexistent.snb"], "streamnb score: /nonexistent.snb: no filter"),
    (["explain", "--file", "/nonexistent.eml"], "streamnb explain: /nonexistent.eml: no such"),
])
def test_mistakes_are_one_line_without_traceback(argv, message):
    done = subprocess.run([sys.executable, "-m", "streamnb", *argv], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL)
    assert done.returncode in (2, 3)
    assert done.stderr.strip().startswith(message) and len(done.stderr.strip().splitlines()) == 1


def test_train_refuses_a_file_that_is_no_mailbox(tmp_path, capsys):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("just some notes\n")
    assert main(["train", "--spam", str(bogus), "--state", str(tmp_path / "f.snb")]) == 2
    assert "not an mbox file" in capsys.readouterr().err
    assert not (tmp_path / "f.snb").exists()


def test_evaluate_sms_with_the_spam_filter_equals_the_library(tmp_path, capsys):
    """`streamnb evaluate --dataset sms --model spam-filter`: the same prequential numbers as
    the library on the same (sorted token) records."""
    from streamnb.datasets import iter_sms_spam_stream
    from streamnb.evaluate import prequential
    from streamnb.features import tokenize_sms

    assert main(["evaluate", "--protocol", "prequential", "--dataset", "sms", "--model",
                 "spam-filter", "--limit", "1500", "--out", str(tmp_path), "--no-progress"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("| spam-filter"))
    messages = list(iter_sms_spam_stream())[:1500]
    result = prequential(SpamFilter(), [(dict.fromkeys(sorted(tokenize_sms(m.text)), True),
                                         m.label) for m in messages], positive="spam")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == f"{100 * result.accuracy():.2f}"
    assert cells[5] == f"{result.auc():.4f}"
    majority = max(sum(m.label == "ham" for m in messages), sum(m.label == "spam" for m in
                                                                 messages)) / len(messages)
    assert result.accuracy() > majority


def test_score_imports_only_what_scoring_needs(tmp_path):
    """``streamnb score`` runs once per message (a mail rule): it parses its options without
    defining the other commands' (the service's configuration, the evaluation, train's mailbox
    reader) and loads the spam filter without the other models or the data-frame libraries."""
    model = SpamFilter()
    model.learn_many(["cheap pills buy now", "meeting at noon"] * 3, ["spam", "ham"] * 3)
    state = tmp_path / "filter.snb"
    model.save(state)
    script = ("import sys; from streamnb.cli import main; status = main(sys.argv[1:]); "
              "print(' '.join(sorted(sys.modules)), file=sys.stderr); raise SystemExit(status)")
    done = subprocess.run([sys.executable, "-c", script, "score", "--state", str(state)],
                          input=b"buy cheap pills", capture_output=True)
    assert done.returncode == 0 and done.stdout.decode().startswith("spam ")  # status 0: spam
    imported = set(done.stderr.decode().split())
    assert "streamnb.models.spam_filter" in imported  # the listing is of the scoring process
    service = {m for m in imported if m.startswith("streamnb.consumers.")}
    assert service == {"streamnb.consumers.commands"}  # its table entries, not its modules
    for module in ("mailbox", "tomllib", "streamnb.evaluate", "streamnb.datasets",
                   "streamnb.features.discretize", "streamnb.models.tan", "scipy", "pandas",
                   "sklearn"):
        assert module not in imported, module
